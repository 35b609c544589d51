//! Token usage and cost, by model, from `base_state.json`'s
//! `stats.usage_to_metrics`, counted so that a store's total counts every
//! call once.
//!
//! A parent conversation keeps a copy of each sub-agent's metrics under
//! `task:<id>` (the task tool, 1.12.0+) or `delegate:<id>` (the delegate
//! tool), and the sub-agent's own `base_state.json`, under the parent's
//! `subagents/`, holds the same calls. [`Conversation::usage`] therefore
//! leaves the copies out when the conversation has sub-agents' directories
//! (their own files are counted when they are read), and counts them when it
//! has none (the copies are then the only record of those calls).

use std::collections::BTreeMap;

use crate::json::{Item, Parser};

use super::conversation::Conversation;
use super::error::DecodeError;
use super::state::{Metrics, State};
use super::{count, float};

/// Token counts and cost of one model's calls.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Usage {
    /// Calls: the length of `token_usages`.
    pub calls: u64,
    /// Prompt tokens as recorded (litellm's count, cache reads and writes
    /// included for most models).
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_tokens: u64,
    /// `accumulated_cost`; 0 when absent, negative or not finite.
    pub cost: f64,
}

/// Usage by model name, sorted.
pub type UsageByModel = BTreeMap<String, Usage>;

impl Usage {
    /// The totals of one metrics entry: token counts from
    /// `accumulated_token_usage` (each read by [`count`]), calls from
    /// `token_usages`, cost from `accumulated_cost`.
    pub fn of(metrics: &Metrics<'_>) -> Usage {
        let [prompt, completion, cache_read, cache_write, reasoning] = metrics
            .accumulated_token_usage
            .as_ref()
            .map_or([0; 5], |u| {
                [
                    count(u.prompt_tokens),
                    count(u.completion_tokens),
                    count(u.cache_read_tokens),
                    count(u.cache_write_tokens),
                    count(u.reasoning_tokens),
                ]
            });
        let cost = float(metrics.accumulated_cost).filter(|c| c.is_finite() && *c >= 0.0);
        Usage {
            calls: metrics.token_usages.as_ref().map_or(0, |l| l.len() as u64),
            prompt_tokens: prompt,
            completion_tokens: completion,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            reasoning_tokens: reasoning,
            cost: cost.unwrap_or(0.0),
        }
    }

    /// Adds `other` (counts saturate).
    pub fn add(&mut self, other: &Usage) {
        self.calls = self.calls.saturating_add(other.calls);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cost += other.cost;
    }
}

/// `a += &b`: [`Usage::add`] (counts saturate, costs add).
impl std::ops::AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, other: &Usage) {
        Usage::add(self, other);
    }
}

/// `a += b`: [`Usage::add`].
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        Usage::add(self, &other);
    }
}

/// `a + b`: [`Usage::add`].
impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(mut self, other: Usage) -> Usage {
        Usage::add(&mut self, &other);
        self
    }
}

/// The total of many: `usages.iter().sum::<Usage>()`.
impl<'a> std::iter::Sum<&'a Usage> for Usage {
    fn sum<I: Iterator<Item = &'a Usage>>(iter: I) -> Usage {
        let mut total = Usage::default();
        for u in iter {
            Usage::add(&mut total, u);
        }
        total
    }
}

/// The total of many, owned: `by_model.into_values().sum::<Usage>()`.
impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        let mut total = Usage::default();
        for u in iter {
            Usage::add(&mut total, &u);
        }
        total
    }
}

/// The model a metrics entry is counted under: its `model_name`, or, when
/// that is absent, empty or the merged `"default"`, its
/// `accumulated_token_usage.model`; `"unknown"` when neither names one.
pub(crate) fn model_of(metrics: &Metrics<'_>) -> String {
    let name = metrics.model_name.as_ref().map(|s| s.as_str());
    let token_model = metrics
        .accumulated_token_usage
        .as_ref()
        .and_then(|u| u.model.as_ref())
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty());
    match name {
        Some(n) if !n.is_empty() && n != "default" => n.to_owned(),
        _ => token_model.or(name).unwrap_or("unknown").to_owned(),
    }
}

/// Whether a `usage_to_metrics` key holds a parent's copy of a sub-agent's
/// metrics (`task:<id>`, `delegate:<id>`).
pub fn is_subagent_copy(usage_id: &str) -> bool {
    usage_id.starts_with("task:") || usage_id.starts_with("delegate:")
}

/// One `usage_to_metrics` entry, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageEntry {
    /// The usage ID (the entry's key).
    pub usage_id: String,
    /// The model it is counted under: the entry's `model_name`, or, when
    /// that is absent, empty or the merged `"default"`, its
    /// `accumulated_token_usage.model`; `"unknown"` when neither names one.
    pub model: String,
    /// Whether it is a parent's copy of a sub-agent's metrics
    /// ([`is_subagent_copy`]).
    pub subagent_copy: bool,
    /// Its totals.
    pub usage: Usage,
}

/// The usage a state records: every `usage_to_metrics` entry that is an
/// object, in order ([`Conversation::usage`] says which to count).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StateUsage {
    entries: Vec<UsageEntry>,
}

impl StateUsage {
    /// Reads the entries of `state` (entries that are not objects count
    /// nothing).
    pub fn of(state: &State<'_>) -> StateUsage {
        let mut out = StateUsage::default();
        let Some(map) = state
            .stats
            .as_ref()
            .and_then(|s| s.usage_to_metrics.as_ref())
        else {
            return out;
        };
        for (key, item) in map.entries() {
            let Item::Ok(m) = item else { continue };
            out.entries.push(UsageEntry {
                usage_id: key.as_str().to_owned(),
                model: model_of(m),
                subagent_copy: is_subagent_copy(key.as_str()),
                usage: Usage::of(m),
            });
        }
        out
    }

    /// Every entry, in order.
    pub fn entries(&self) -> &[UsageEntry] {
        &self.entries
    }

    /// The entries to count for the conversation, in order: its own, and
    /// the copies of its sub-agents' only when `has_subagent_dirs` is false
    /// (otherwise the sub-agents' own states count those calls).
    pub fn counted(&self, has_subagent_dirs: bool) -> impl Iterator<Item = &UsageEntry> {
        self.entries
            .iter()
            .filter(move |e| !(has_subagent_dirs && e.subagent_copy))
    }
}

impl Conversation {
    /// The conversation's token usage and cost by model, from its
    /// `base_state.json`, without counting a sub-agent twice. A parent keeps
    /// a copy of each sub-agent's metrics under `task:<id>` (the task tool,
    /// 1.12.0+) or `delegate:<id>` (the delegate tool), and the sub-agent's
    /// own `base_state.json` under `subagents/` holds the same calls: the
    /// copies are left out when the conversation has sub-agents'
    /// directories, and counted when it has none, where they are the only
    /// record of those calls ([`StateUsage::counted`]). Summing this
    /// over every conversation a [`Store`](super::Store) yields, sub-agents
    /// included, counts each call once.
    ///
    /// Empty when the directory has no state; an error when the state does
    /// not read as a JSON object.
    pub fn usage(&self, parser: &mut Parser) -> Result<UsageByModel, DecodeError> {
        let Some(doc) = self.state().map(|f| f.open(parser)) else {
            return Ok(UsageByModel::new());
        };
        let doc = doc?;
        // The lean decode: the usage needs no raw literal.
        let usage = StateUsage::of(&State::decode_lean(doc.root()).unwrap_or_default());
        let mut total = UsageByModel::new();
        for e in usage.counted(!self.subagents().is_empty()) {
            total.entry(e.model.clone()).or_default().add(&e.usage);
        }
        Ok(total)
    }
}
