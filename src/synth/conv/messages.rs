//! The messages: the system prompt, the user's and the agent's messages,
//! the LLM calls behind them, and the small values they hold.

use super::*;

impl Conv<'_> {
    pub(super) fn thinking_blocks(&mut self, w: &mut Jw, with: bool) {
        w.key("thinking_blocks");
        w.begin_arr();
        if with {
            let n = self.rng.range(1, 2);
            for _ in 0..n {
                w.elem();
                self.s1.clear();
                if self.rng.below(5) == 0 {
                    let n = self.rng.range(24, 400);
                    text::base64ish(&mut self.trng, &mut self.s1, n);
                    w.begin(None);
                    w.kv_str("type", "redacted_thinking");
                    w.kv_str("data", &self.s1);
                    w.end();
                } else {
                    let len = self.rng.length(120.0 * self.scale(), 1.2, 10, 8_000);
                    text::prose(&mut self.trng, &mut self.s1, len);
                    self.s2.clear();
                    let n = self.rng.range(28, 360);
                    text::base64ish(&mut self.trng, &mut self.s2, n);
                    w.begin(None);
                    w.kv_str("type", "thinking");
                    w.kv_str("thinking", &self.s1);
                    w.kv_str("signature", &self.s2);
                    w.end();
                }
            }
        }
        w.end_arr();
    }

    pub(super) fn system_prompt(&mut self) -> Result<(), GenError> {
        let Some(mut w) = self.start(KIND_SYSTEM_PROMPT, "agent") else {
            return Ok(());
        };
        let v = self.rng.below(self.prompts.len());
        if let Some(p) = self.prompts.get(v) {
            w.kv_raw("system_prompt", &p.system_prompt);
            w.key("tools");
            w.raw(&p.tools_head);
            if !p.tools_tail.is_empty() {
                let mut esc = Vec::with_capacity(self.workspace.len() + 2);
                crate::json::write::write_str(&mut esc, &self.workspace, self.sp.ascii);
                w.raw(esc.get(1..esc.len().saturating_sub(1)).unwrap_or(b""));
                w.raw(&p.tools_tail);
            }
        }
        self.commit(w, true)?;
        Ok(())
    }

    pub(super) fn user_message(&mut self) -> Result<(), GenError> {
        let ms = self.rng.range(5_000, 600_000);
        self.tick(ms);
        let Some(mut w) = self.start(KIND_MESSAGE, "user") else {
            return Ok(());
        };
        self.s1.clear();
        if self.plan.is_subagent && self.user_messages.is_empty() {
            self.s1.push_str(&self.plan.task_prompt);
        } else {
            let len = self.rng.length(45.0 * self.scale(), 1.3, 8, 20_000);
            text::prose(&mut self.trng, &mut self.s1, len);
            if self.rng.below(4) == 0 {
                self.s1.push_str(" The file is ");
                text::rel_path(&mut self.trng, &mut self.s1);
                self.s1.push('.');
            }
        }
        let image = self.rng.below(40) == 0;
        w.key("llm_message");
        w.begin(None);
        w.kv_str("role", "user");
        w.key("content");
        w.begin_arr();
        w.elem();
        w.text_content(&self.s1);
        if image {
            self.s2.clear();
            self.s2
                .push_str("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA");
            let n = self.rng.range(200, 1200);
            text::base64ish(&mut self.trng, &mut self.s2, n);
            w.elem();
            w.begin(None);
            w.kv_bool("cache_prompt", false);
            w.kv_str("type", "image");
            w.kv_str_arr("image_urls", &[&self.s2]);
            w.end();
        }
        w.end_arr();
        if self.legacy() {
            w.kv_bool("cache_enabled", false);
            w.kv_bool("vision_enabled", false);
            w.kv_bool("function_calling_enabled", false);
            w.kv_bool("force_string_serializer", false);
        }
        w.kv_empty_arr("thinking_blocks");
        w.end();
        w.kv_empty_arr("activated_skills");
        w.kv_empty_arr("extended_content");
        let idx = self.commit(w, true)?;
        self.last_user_message = Some(idx);
        self.user_messages.push(idx);
        self.execution_status = "running";
        Ok(())
    }

    /// Records one LLM call and returns its response id.
    pub(super) fn llm_call(&mut self, completion_median: f64, condenser: bool) -> String {
        self.responses += 1;
        let latency_ms = self.rng.length(2500.0, 1.2, 150, 120_000);
        self.tick(latency_ms);
        let mut rid = String::with_capacity(48);
        rid.push_str("chatcmpl-");
        if self.plan.model.anthropic {
            push_uuid(&mut self.rng, &mut rid, true);
        } else {
            text::alnum(&mut self.trng, &mut rid, 29);
        }
        let prompt_tokens = 6_000 + self.context_tokens.max(0);
        let completion_tokens = self.rng.length(completion_median, 1.0, 8, 16_000) as i64;
        let cache_read = if self.responses <= 1 {
            0
        } else {
            prompt_tokens * (70 + self.rng.below(28) as i64) / 100
        };
        let reasoning_tokens = if self.rng.below(3) == 0 {
            completion_tokens / 3
        } else {
            0
        };
        let m = self.plan.model;
        let cost = prompt_tokens as f64 * m.input_cost + completion_tokens as f64 * m.output_cost;
        let call = LlmCall {
            response_id: rid.clone(),
            prompt_tokens,
            completion_tokens,
            cache_read_tokens: cache_read,
            reasoning_tokens,
            latency: latency_ms as f64 / 1000.0 + self.rng.unit() * 0.001,
            cost,
            timestamp: self.epoch_secs(),
            model: m.name,
        };
        if condenser {
            self.condenser_calls.push(call);
        } else {
            self.agent_calls.push(call);
        }
        rid
    }

    pub(super) fn agent_message(&mut self, rid: &str) -> Result<(), GenError> {
        let Some(mut w) = self.start(KIND_MESSAGE, "agent") else {
            return Ok(());
        };
        self.s1.clear();
        let len = self.rng.length(40.0 * self.scale(), 1.2, 4, 20_000);
        text::prose(&mut self.trng, &mut self.s1, len);
        self.final_answer.clear();
        self.final_answer.push_str(&self.s1);
        let reasoning = self.rng.below(10) == 0;
        let thinking = self.rng.below(20) == 0;
        w.key("llm_message");
        w.begin(None);
        w.kv_str("role", "assistant");
        w.kv_text_list("content", &self.s1);
        if self.legacy() {
            w.kv_bool("cache_enabled", false);
            w.kv_bool("vision_enabled", false);
            w.kv_bool("function_calling_enabled", false);
            w.kv_bool("force_string_serializer", false);
        }
        if reasoning {
            self.s2.clear();
            let len = self.rng.length(90.0 * self.scale(), 1.0, 8, 8_000);
            text::prose(&mut self.trng, &mut self.s2, len);
            w.kv_str("reasoning_content", &self.s2);
        }
        self.thinking_blocks(&mut w, thinking);
        w.end();
        w.kv_str("llm_response_id", rid);
        w.kv_empty_arr("activated_skills");
        w.kv_empty_arr("extended_content");
        self.commit(w, true)?;
        self.execution_status = "finished";
        Ok(())
    }

    pub(super) fn tool_call_id(&mut self, out: &mut String) {
        if self.plan.model.anthropic {
            out.push_str("toolu_01");
            text::alnum(&mut self.trng, out, 22);
        } else {
            out.push_str("call_");
            text::alnum(&mut self.trng, out, 24);
        }
    }

    pub(super) fn abs_path(&mut self, out: &mut String) {
        out.push_str(&self.workspace);
        out.push('/');
        text::rel_path(&mut self.trng, out);
    }
}
