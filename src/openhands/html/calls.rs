//! Each model call's token counts, cost and latency, as `base_state.json`'s
//! `stats.usage_to_metrics` records them, found by the response ID the
//! events carry (`llm_response_id`).
//!
//! `token_usages` and `response_latencies` name their response; `costs`
//! does not. The SDK appends a cost only for a call that cost something,
//! and a latency for every call, so when an entry has as many costs as
//! latencies, the n-th cost is the n-th latency's call; otherwise no call
//! of that entry is given a cost (the page says it is not recorded per
//! call).

use std::collections::HashMap;

use crate::json::{Parser, Value};
use crate::openhands::{Conversation, count, float};

/// One model call as the state records it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CallRecord {
    /// Prompt tokens of this call (the whole context sent).
    pub(crate) prompt: u64,
    /// Completion tokens of this call.
    pub(crate) completion: u64,
    /// Prompt tokens read from the cache.
    pub(crate) cache_read: u64,
    /// Prompt tokens written to the cache.
    pub(crate) cache_write: u64,
    /// Reasoning tokens.
    pub(crate) reasoning: u64,
    /// Whether `token_usages` holds the call.
    pub(crate) has_tokens: bool,
    /// Cost in dollars, when it can be told.
    pub(crate) cost: Option<f64>,
    /// Seconds until the response.
    pub(crate) latency: Option<f64>,
}

/// The calls of a conversation's state, by response ID.
#[derive(Debug, Default)]
pub(crate) struct CallBook {
    by_response: HashMap<String, CallRecord>,
}

impl CallBook {
    /// Reads the calls of `conv`'s `base_state.json` (none when it has no
    /// state or the state does not parse).
    pub(crate) fn of(conv: &Conversation, parser: &mut Parser) -> CallBook {
        let mut book = CallBook::default();
        let Some(state) = conv.state() else {
            return book;
        };
        let Ok(doc) = parser.parse(state.raw()) else {
            return book;
        };
        let Some(map) = doc
            .root()
            .get("stats")
            .and_then(|s| s.get("usage_to_metrics"))
            .and_then(|m| m.as_object())
        else {
            return book;
        };
        for member in map.iter() {
            book.add_metrics(member.value);
        }
        book
    }

    fn add_metrics(&mut self, metrics: Value<'_>) {
        let list = |k: &str| {
            metrics
                .get(k)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        for u in list("token_usages") {
            let Some(id) = response_id(u) else {
                continue;
            };
            let rec = self.by_response.entry(id.to_owned()).or_default();
            if rec.has_tokens {
                continue;
            }
            rec.has_tokens = true;
            rec.prompt = count(u.get("prompt_tokens"));
            rec.completion = count(u.get("completion_tokens"));
            rec.cache_read = count(u.get("cache_read_tokens"));
            rec.cache_write = count(u.get("cache_write_tokens"));
            rec.reasoning = count(u.get("reasoning_tokens"));
        }
        let latencies = list("response_latencies");
        let costs = list("costs");
        let paired = costs.len() == latencies.len();
        for (n, l) in latencies.iter().enumerate() {
            let Some(id) = response_id(*l) else {
                continue;
            };
            let rec = self.by_response.entry(id.to_owned()).or_default();
            if rec.latency.is_none() {
                rec.latency = float(l.get("latency")).filter(|x| x.is_finite() && *x >= 0.0);
            }
            if paired && rec.cost.is_none() {
                rec.cost = costs
                    .get(n)
                    .and_then(|c| float(c.get("cost")))
                    .filter(|x| x.is_finite() && *x >= 0.0);
            }
        }
    }

    /// The call that gave the response `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&CallRecord> {
        self.by_response.get(id)
    }
}

/// The `response_id` of a metrics record, when it names one.
fn response_id(v: Value<'_>) -> Option<&str> {
    v.get("response_id")
        .and_then(|r| r.as_str())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_costs_with_latencies_only_when_counts_match() {
        let mut p = Parser::new();
        let raw = br#"{"token_usages":[{"prompt_tokens":10,"completion_tokens":2,"cache_read_tokens":4,"response_id":"a"},{"prompt_tokens":20,"completion_tokens":3,"response_id":"b"}],
            "response_latencies":[{"latency":0.5,"response_id":"a"},{"latency":1.5,"response_id":"b"}],
            "costs":[{"cost":0.01},{"cost":0.02}]}"#;
        let doc = p.parse(raw).expect("json");
        let mut book = CallBook::default();
        book.add_metrics(doc.root());
        let a = book.get("a").expect("a");
        assert_eq!((a.prompt, a.completion, a.cache_read), (10, 2, 4));
        assert_eq!((a.cost, a.latency), (Some(0.01), Some(0.5)));
        assert_eq!(book.get("b").and_then(|b| b.cost), Some(0.02));

        let raw = br#"{"token_usages":[{"prompt_tokens":1,"response_id":"c"}],
            "response_latencies":[{"latency":0.5,"response_id":"c"},{"latency":1,"response_id":"d"}],
            "costs":[{"cost":0.01}]}"#;
        let mut p2 = Parser::new();
        let doc = p2.parse(raw).expect("json");
        let mut book = CallBook::default();
        book.add_metrics(doc.root());
        assert_eq!(book.get("c").and_then(|c| c.cost), None);
        assert_eq!(book.get("d").map(|d| d.has_tokens), Some(false));
    }
}
