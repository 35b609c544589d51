//! `base_state.json` (the conversation's `ConversationState`, events not in
//! it), its stats and metrics, and the agent server's `meta.json`.

use crate::json::{Dict, Item, Items, Str, Value};

use super::AGENT_KIND_ACP;

crate::json_object! {
    /// `base_state.json`: the conversation's state, rewritten on every
    /// change. Events are not in it.
    pub struct State<'a> {
        /// The conversation ID, dashed.
        id: Str<'a> = "id",
        /// The kind-tagged agent ([`State::agent_info`]).
        agent: Value<'a> = "agent",
        /// The kind-tagged workspace ([`State::working_dir`]).
        workspace: Value<'a> = "workspace",
        /// `idle`, `running`, `paused`, `waiting_for_confirmation`,
        /// `finished`, `error`, `stuck`, `deleting`.
        execution_status: Str<'a> = "execution_status",
        /// The kind-tagged confirmation policy.
        confirmation_policy: Value<'a> = "confirmation_policy",
        /// The head of the event tree (1.31.0+).
        leaf_event_id: Str<'a> = "leaf_event_id",
        /// Whether the head is deliberately empty (1.31.0+).
        head_is_empty: bool = "head_is_empty",
        /// Per-LLM metrics.
        stats: Stats<'a> = "stats",
    }
}

/// What the converter reads of the agent's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AgentInfo<'a> {
    /// `Agent`, or `ACPAgent` for an agent that drives an external ACP
    /// agent ([`AGENT_KIND_ACP`]).
    pub kind: Option<&'a str>,
    /// The LLM's model, as last saved (`acp-managed` for an ACP agent).
    pub model: Option<&'a str>,
    /// The LLM's usage ID (the legacy `service_id` when there is no
    /// `usage_id`).
    pub usage_id: Option<&'a str>,
    /// The LLM's reasoning effort.
    pub reasoning_effort: Option<&'a str>,
}

impl AgentInfo<'_> {
    /// Whether the agent drives an external ACP agent.
    pub fn is_acp(&self) -> bool {
        self.kind == Some(AGENT_KIND_ACP)
    }
}

impl<'a> State<'a> {
    /// Reads the agent's kind and LLM.
    pub fn agent_info(&self) -> AgentInfo<'a> {
        let agent = self.agent;
        let llm = agent.and_then(|a| a.get("llm"));
        let s = |v: Option<Value<'a>>, k: &str| v.and_then(|v| v.get(k)).and_then(|v| v.as_str());
        AgentInfo {
            kind: s(agent, "kind"),
            model: s(llm, "model"),
            usage_id: s(llm, "usage_id").or_else(|| s(llm, "service_id")),
            reasoning_effort: s(llm, "reasoning_effort"),
        }
    }

    /// Reads the workspace's working directory.
    pub fn working_dir(&self) -> Option<&'a str> {
        self.workspace?.get("working_dir")?.as_str()
    }
}

crate::json_object! {
    /// The conversation's per-LLM metrics, by usage ID: `agent`,
    /// `condenser`, an LLM's own usage ID, and the copies of sub-agents'
    /// metrics under `task:<id>` and `delegate:<id>`.
    pub struct Stats<'a> {
        /// The metrics by usage ID.
        usage_to_metrics: MetricsMap<'a> = "usage_to_metrics",
    }
}

/// `usage_to_metrics`, read value by value: a value that is not an object
/// is kept with its error. Entries keep their order, and their keys' raw
/// literals.
pub type MetricsMap<'a> = Dict<'a, Item<'a, Metrics<'a>>>;

crate::json_object! {
    /// One LLM's metrics: every call's token usage, latency and cost, and
    /// their totals.
    pub struct Metrics<'a> {
        /// The model (`default` for merged sub-agent metrics).
        model_name: Str<'a> = "model_name",
        /// The total cost.
        accumulated_cost: Value<'a> = "accumulated_cost",
        /// The budget.
        max_budget_per_task: Value<'a> = "max_budget_per_task",
        /// The sum of every call's token usage.
        accumulated_token_usage: TokenUsage<'a> = "accumulated_token_usage",
        /// One per call with a non-zero cost.
        costs: Items<'a, Cost<'a>> = "costs",
        /// One per call.
        response_latencies: Items<'a, Latency<'a>> = "response_latencies",
        /// One per call that reported tokens.
        token_usages: Items<'a, TokenUsage<'a>> = "token_usages",
    }
}

crate::json_object! {
    /// One call's cost. It names no response.
    pub struct Cost<'a> {
        /// The model.
        model: Str<'a> = "model",
        /// The cost ([`float`](super::float)).
        cost: Value<'a> = "cost",
        /// Unix seconds ([`float`](super::float)).
        timestamp: Value<'a> = "timestamp",
    }
}

crate::json_object! {
    /// One call's latency in seconds.
    pub struct Latency<'a> {
        /// The model.
        model: Str<'a> = "model",
        /// Seconds ([`float`](super::float)).
        latency: Value<'a> = "latency",
        /// The response (joins `llm_response_id` of events).
        response_id: Str<'a> = "response_id",
    }
}

crate::json_object! {
    /// One call's token counts ([`count`](super::count) reads each).
    /// `prompt_tokens` is litellm's, which counts cache reads and writes,
    /// except for an ACP agent, which counts them apart.
    pub struct TokenUsage<'a> {
        /// The model.
        model: Str<'a> = "model",
        /// Prompt tokens.
        prompt_tokens: Value<'a> = "prompt_tokens",
        /// Completion tokens.
        completion_tokens: Value<'a> = "completion_tokens",
        /// Tokens read from the prompt cache.
        cache_read_tokens: Value<'a> = "cache_read_tokens",
        /// Tokens written to the prompt cache.
        cache_write_tokens: Value<'a> = "cache_write_tokens",
        /// Reasoning tokens.
        reasoning_tokens: Value<'a> = "reasoning_tokens",
        /// The context window.
        context_window: Value<'a> = "context_window",
        /// Prompt plus completion tokens of the call.
        per_turn_token: Value<'a> = "per_turn_token",
        /// The response (the ACP session for an ACP agent).
        response_id: Str<'a> = "response_id",
    }
}

crate::json_object! {
    /// `meta.json`, the agent server's `StoredConversation` (written
    /// without `exclude_none`: absent values are `null`).
    pub struct Meta<'a> {
        /// The conversation ID, 32 hex digits.
        id: Str<'a> = "id",
        /// The title.
        title: Str<'a> = "title",
        /// UTC, with `Z`.
        created_at: Str<'a> = "created_at",
        /// UTC, with `Z`.
        updated_at: Str<'a> = "updated_at",
        /// The conversation this one was forked from, 32 hex digits (1.31.0+).
        forked_from_conversation_id: Str<'a> = "forked_from_conversation_id",
        /// The event it was forked at (1.31.0+; `null` for a whole copy).
        forked_from_event_id: Str<'a> = "forked_from_event_id",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Parser;
    use crate::openhands::usage::model_of;
    use crate::openhands::{Usage, count, float};

    /// What readers of the fields see of a state: every declared field of
    /// the state and of its metrics, as text.
    fn fields(s: &State<'_>) -> String {
        let raw = |v: &Option<Value<'_>>| v.map(|v| String::from_utf8_lossy(v.raw()).into_owned());
        let st = |v: &Option<Str<'_>>| v.as_ref().map(|s| s.as_str().to_owned());
        let tok = |t: &TokenUsage<'_>| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                st(&t.model),
                raw(&t.prompt_tokens),
                raw(&t.completion_tokens),
                raw(&t.cache_read_tokens),
                raw(&t.cache_write_tokens),
                raw(&t.reasoning_tokens),
                raw(&t.context_window),
                raw(&t.per_turn_token),
                st(&t.response_id),
            )
        };
        let mut out = format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}\n",
            st(&s.id),
            raw(&s.agent),
            raw(&s.workspace),
            st(&s.execution_status),
            raw(&s.confirmation_policy),
            st(&s.leaf_event_id),
            s.head_is_empty,
            s.agent_info(),
            s.working_dir(),
            s.stats.is_some(),
        );
        let map = s.stats.as_ref().and_then(|s| s.usage_to_metrics.as_ref());
        for (k, item) in map.into_iter().flat_map(|m| m.entries()) {
            let m = match item {
                Item::Ok(m) => m,
                Item::Bad { raw, error } => {
                    out += &format!(
                        "{k:?} bad {:?} {error}\n",
                        String::from_utf8_lossy(raw.raw())
                    );
                    continue;
                }
            };
            out += &format!(
                "{k:?} {:?} {:?} {:?} {:?} {:?} {}\n",
                st(&m.model_name),
                raw(&m.accumulated_cost),
                raw(&m.max_budget_per_task),
                m.accumulated_token_usage.as_ref().map(tok),
                Usage::of(m),
                model_of(m),
            );
            for c in m.costs.iter().flat_map(|l| l.iter()) {
                out += &match c {
                    Item::Ok(c) => format!(
                        " cost {:?} {:?} {:?}\n",
                        st(&c.model),
                        float(c.cost),
                        raw(&c.timestamp)
                    ),
                    Item::Bad { error, .. } => format!(" cost bad {error}\n"),
                };
            }
            for l in m.response_latencies.iter().flat_map(|l| l.iter()) {
                out += &match l {
                    Item::Ok(l) => format!(
                        " latency {:?} {:?} {:?}\n",
                        st(&l.model),
                        float(l.latency),
                        st(&l.response_id)
                    ),
                    Item::Bad { error, .. } => format!(" latency bad {error}\n"),
                };
            }
            for t in m.token_usages.iter().flat_map(|l| l.iter()) {
                out += &match t {
                    Item::Ok(t) => format!(" tokens {} {}\n", tok(t), count(t.prompt_tokens)),
                    Item::Bad { error, .. } => format!(" tokens bad {error}\n"),
                };
            }
        }
        out
    }

    fn same_fields(input: &[u8]) {
        let mut p = Parser::new();
        let doc = p.parse(input).unwrap();
        let full = State::decode(doc.root());
        let lean = State::decode_lean(doc.root());
        assert_eq!(
            full.is_some(),
            lean.is_some(),
            "{}",
            String::from_utf8_lossy(input)
        );
        if let (Some(f), Some(l)) = (full, lean) {
            assert_eq!(fields(&f), fields(&l), "{}", String::from_utf8_lossy(input));
            assert!(l.members.is_empty());
        }
    }

    /// `decode_lean` reads the same fields as `decode`: repeated names
    /// (the last decides, whatever it holds), `null`, members of another
    /// JSON type, escapes, elements that are not objects, and every
    /// corpus state.
    #[test]
    fn lean_decode_reads_the_fields_decode_reads() {
        for input in [
            &br#"[1, 2]"#[..],
            br#"{}"#,
            br#"{"id": "a\u0062", "id": 3, "execution_status": null, "head_is_empty": true}"#,
            br#"{"id": 3, "id": "x", "execution_status": "idle", "execution_status": 4}"#,
            br#"{"agent": {"kind": "Agent", "llm": {"model": "m\"1", "usage_id": "u"}},
                 "workspace": {"working_dir": "/w"}, "leaf_event_id": "e", "extra": [1]}"#,
            br#"{"stats": 3}"#,
            br#"{"stats": {"usage_to_metrics": []}}"#,
            br#"{"stats": {"usage_to_metrics": {"agent": 1, "agent": {"model_name": "a"},
                 "task:x": null, "b\u0041": {"model_name": 2, "model_name": "default",
                 "accumulated_cost": 1.5, "accumulated_cost": "x",
                 "accumulated_token_usage": {"model": "t", "prompt_tokens": 10, "prompt_tokens": 12.0},
                 "costs": [{"cost": 0.5, "model": "c"}, 3, {"cost": null}],
                 "response_latencies": {"a": 1},
                 "token_usages": [{"prompt_tokens": 1, "response_id": "r", "response_id": 5}, "s",
                                  {"completion_tokens": 2, "context_window": 9}]}}},
                 "stats": {"usage_to_metrics": {"z": {"token_usages": [{"model": "last"}]}}}}"#,
        ] {
            same_fields(input);
        }
        let mut n = 0;
        for conv in crate::openhands::test_corpus::sessions() {
            if let Ok(b) = std::fs::read(conv.join("base_state.json")) {
                same_fields(&b);
                n += 1;
            }
        }
        assert!(n >= 50, "{n} corpus states");
    }
}
