//! A conversation's turns: the user's messages, the tool calls that answer
//! them, condensations and sub-agents' tasks, until the conversation has
//! all its events.

use super::*;

impl Conv<'_> {
    pub(super) fn simple_event(&mut self, kind: &'static str) -> Result<(), GenError> {
        let ms = self.rng.range(50, 2_000);
        self.tick(ms);
        let Some(w) = self.start(kind, "user") else {
            return Ok(());
        };
        self.commit(w, false)?;
        Ok(())
    }

    pub(super) fn condense_if_needed(&mut self) -> Result<(), GenError> {
        let Some(cond) = self.plan.condenser else {
            return Ok(());
        };
        if self.view.len() <= cond.max_size || !self.room() {
            return Ok(());
        }
        let keep = cond.keep_first.min(self.view.len());
        let forget_n = (self.view.len() - keep) / 2;
        if forget_n == 0 {
            return Ok(());
        }
        let forgotten: Vec<ViewItem> = self.view.drain(keep..keep + forget_n).collect();
        let rid = self.llm_call(300.0, true);
        let Some(mut w) = self.start(KIND_CONDENSATION, "environment") else {
            return Ok(());
        };
        // Python writes the forgotten ids from a set: no useful order.
        let mut order: Vec<usize> = (0..forgotten.len()).collect();
        for i in (1..order.len()).rev() {
            let j = self.rng.below(i + 1);
            order.swap(i, j);
        }
        w.key("forgotten_event_ids");
        w.begin_arr();
        for &o in &order {
            w.elem();
            match forgotten.get(o) {
                Some(ViewItem::Event(e)) => w.str(self.id(*e)),
                Some(ViewItem::Summary(e)) => {
                    let mut sid = String::with_capacity(44);
                    sid.push_str(self.id(*e));
                    sid.push_str("-summary");
                    w.str(&sid);
                }
                None => w.str(""),
            }
        }
        w.end_arr();
        self.s1.clear();
        self.s1.push_str("USER_CONTEXT: ");
        let len = self.rng.length(180.0 * self.scale(), 0.8, 40, 16_000);
        text::prose(&mut self.trng, &mut self.s1, len);
        self.s1.push_str("\nPENDING: ");
        text::phrase(&mut self.trng, &mut self.s1, 6);
        w.kv_str("summary", &self.s1);
        w.kv_int("summary_offset", keep as i64);
        w.kv_str("llm_response_id", &rid);
        let idx = self.commit(w, false)?;
        self.view.insert(keep, ViewItem::Summary(idx));
        self.context_tokens =
            self.context_tokens * (self.view.len() as i64) / (self.view.len() + forget_n) as i64;
        Ok(())
    }

    /// One LLM response with tool calls, and their observations.
    pub(super) fn tool_response(&mut self) -> Result<bool, GenError> {
        let rid = self.llm_call(150.0, false);
        if self.rng.below(60) == 0 {
            self.failed_call(&rid)?;
            return Ok(true);
        }
        let n = if self.plan.is_subagent {
            1
        } else {
            1 + self.rng.weighted(&[80, 10, 6, 4])
        };
        let mut calls = std::mem::take(&mut self.calls);
        calls.clear();
        for _ in 0..n {
            let tool = if self.subagents_due > 0 && self.rng.below(6) == 0 {
                self.subagents_due -= 1;
                Tool::Task
            } else {
                let tools = if self.plan.is_subagent {
                    &[60u32, 30, 0, 10][..]
                } else {
                    &[52u32, 34, 6, 8][..]
                };
                [
                    Tool::Terminal,
                    Tool::FileEditor,
                    Tool::TaskTracker,
                    Tool::Think,
                ][self.rng.weighted(tools).min(3)]
            };
            let c = self.prepare(tool);
            calls.push(c);
        }
        let mut written = 0;
        for (i, c) in calls.iter_mut().enumerate() {
            if !self.action_event(c, &rid, i == 0)? {
                break;
            }
            written += 1;
        }
        let mut rejected = false;
        if self.plan.confirm && self.rng.below(8) == 0 {
            self.execution_status = "waiting_for_confirmation";
            for c in calls.iter_mut() {
                c.rejected = true;
            }
            rejected = true;
        }
        for c in calls.iter_mut().take(written) {
            if c.tool == Some(Tool::Task) {
                self.run_task(c)?;
            }
            if c.tool == Some(Tool::TaskTracker) && c.command == "plan" {
                // The observation shows the list as planned.
            }
            self.observation_event(c)?;
        }
        self.calls = calls;
        Ok(!rejected)
    }

    /// A sub-agent run (1.58: its own conversation under `subagents/`).
    pub(super) fn run_task(&mut self, c: &mut Call) -> Result<(), GenError> {
        self.tasks_spawned += 1;
        let task_id = format!("task_{:08}", self.tasks_spawned);
        c.path = task_id.clone();
        if self.legacy() {
            return Ok(());
        }
        let sub_seed = derive(self.rng.next_u64(), 0x5AB);
        let rng = Rng::new(sub_seed);
        let plan = Plan {
            sdk: self.plan.sdk,
            events: self.rng.range(7, 16),
            model: self.plan.model,
            condenser: None,
            confirm: false,
            subagents: 0,
            branch: false,
            meta: false,
            is_subagent: true,
            task_prompt: c.a.clone(),
        };
        let parent_dir = self.dir.clone();
        let sub_root = format!("{}/subagents", self.persistence_dir);
        let workspace = self.workspace.clone();
        let (calls, answer, counters) = {
            let mut sub = Conv::new(
                self.cfg,
                self.prompts,
                rng,
                plan,
                Some(&parent_dir),
                self.now_us + 100_000,
                self.user,
                workspace,
                &sub_root,
                &mut *self.sink,
            );
            sub.run()?;
            let mut all = sub.agent_calls.clone();
            all.extend(sub.condenser_calls.iter().cloned());
            let end = sub.now_us;
            (all, (sub.final_answer.clone(), end), sub.counters)
        };
        self.counters.files += counters.files;
        self.counters.bytes += counters.bytes;
        self.counters.subagents += 1 + counters.subagents;
        self.now_us = self.now_us.max(answer.1);
        c.b = if answer.0.is_empty() {
            "The sub-agent finished without a final message.".to_string()
        } else {
            answer.0
        };
        self.task_metrics.push(TaskMetrics {
            key: format!("task:{task_id}"),
            calls,
        });
        Ok(())
    }

    pub(super) fn finish_response(&mut self) -> Result<(), GenError> {
        let rid = self.llm_call(120.0, false);
        let mut c = self.prepare(Tool::Finish);
        if self.action_event(&mut c, &rid, true)? {
            self.final_answer.clear();
            self.final_answer.push_str(&c.a);
            self.observation_event(&c)?;
            self.execution_status = "finished";
        }
        Ok(())
    }

    /// One user turn: the message, then agent steps until it answers (or
    /// is paused/interrupted/rejected).
    pub(super) fn turn(&mut self, first: bool) -> Result<(), GenError> {
        if !first && self.plan.branch && self.user_messages.len() >= 2 && self.rng.below(4) == 0 {
            // navigate_to: the new message continues from an older point,
            // leaving the events after it as an abandoned branch.
            self.plan.branch = false;
            let k = self.rng.below(self.user_messages.len());
            if let Some(&u) = self.user_messages.get(k) {
                self.head = if u == 0 { None } else { Some(u - 1) };
            }
        }
        self.user_message()?;
        let steps = self.rng.length(7.0, 1.0, 1, 60);
        for s in 0..steps {
            if !self.room() {
                return Ok(());
            }
            self.condense_if_needed()?;
            if self.rng.below(150) == 0 {
                self.simple_event(KIND_PAUSE)?;
                self.execution_status = "paused";
                return Ok(());
            }
            if !self.legacy() && self.rng.below(250) == 0 {
                self.simple_event(KIND_INTERRUPT)?;
                self.execution_status = "paused";
                return Ok(());
            }
            if s + 1 == steps {
                break;
            }
            if !self.tool_response()? {
                // Rejected: the agent answers and waits for the user.
                let rid = self.llm_call(60.0, false);
                return self.agent_message(&rid);
            }
        }
        if self.rng.below(10) < 3 {
            self.finish_response()
        } else {
            let rid = self.llm_call(120.0, false);
            self.agent_message(&rid)
        }
    }

    /// A sub-agent's run: the task prompt, single tool calls while three
    /// events are left, and a final answer (which the parent's
    /// `TaskObservation` reports), so `planned - 1` or `planned` events.
    pub(super) fn sub_turn(&mut self) -> Result<(), GenError> {
        self.user_message()?;
        while self.plan.events.saturating_sub(self.len()) >= 3 {
            self.tool_response()?;
        }
        let rid = self.llm_call(120.0, false);
        self.agent_message(&rid)
    }

    /// Writes the whole conversation.
    pub(crate) fn run(&mut self) -> Result<(), GenError> {
        self.mkdir("")?;
        self.mkdir("events")?;
        self.system_prompt()?;
        if self.plan.is_subagent {
            self.sub_turn()?;
        }
        let mut first = true;
        while self.room() && !self.plan.is_subagent {
            self.turn(first)?;
            first = false;
        }
        crate::synth::state::write_sidecars(self)?;
        Ok(())
    }
}
