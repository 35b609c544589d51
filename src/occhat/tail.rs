//! Crash recovery: incomplete message tails and what to do with them.
//!
//! The rules are `persistence.py`'s, exactly: OC Chat's synthetic variable-context
//! user message (content starting with [`VARIABLE_CONTEXT_SENTINEL`]) is
//! ignored; only three tail shapes are reported. Where `persistence.py` would raise
//! on a malformed message (a message that is not an object, `tool_calls`
//! that is a number), a message is read as if it were `{}` and
//! `tool_calls` that is not a list names no call.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::str::FromStr;

use crate::json::{Map, OwnedValue};

use super::py;

/// The prefix of OC Chat's synthetic variable-context user message.
///
/// The real constant lives in OC Chat's `session` module, which is not
/// public; this is the value the corpus's reference run used (recorded in
/// every oracle as `reference.variable_context_sentinel`).
pub const VARIABLE_CONTEXT_SENTINEL: &str = "[OC_CHAT_VARIABLE_CONTEXT]";

/// The shape of an incomplete tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TailKind {
    /// The conversation ends with a user message without an answer.
    OrphanedUser,
    /// An assistant's tool calls lack tool responses.
    OrphanedToolCalls,
    /// The conversation ends with an empty assistant message.
    TruncatedAssistant,
}

impl TailKind {
    /// `persistence.py`'s name: `orphaned_user`, `orphaned_tool_calls`,
    /// `truncated_assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            TailKind::OrphanedUser => "orphaned_user",
            TailKind::OrphanedToolCalls => "orphaned_tool_calls",
            TailKind::TruncatedAssistant => "truncated_assistant",
        }
    }
}

impl fmt::Display for TailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A crash-recovery report (`persistence.py`'s dict: `kind`, `tail_indexes`,
/// `summary`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailReport {
    /// The tail's shape.
    pub kind: TailKind,
    /// Indexes (into the messages) of the tail, in order.
    pub tail_indexes: Vec<usize>,
    /// A one-line description.
    pub summary: String,
}

impl TailReport {
    /// `persistence.py`'s dict, with exactly its keys.
    pub fn to_value(&self) -> OwnedValue {
        let mut m = Map::new();
        let e = m.entries_mut();
        e.push(("kind".into(), self.kind.as_str().into()));
        e.push((
            "tail_indexes".into(),
            OwnedValue::Array(
                self.tail_indexes
                    .iter()
                    .map(|&i| OwnedValue::Number((i as u64).into()))
                    .collect(),
            ),
        ));
        e.push(("summary".into(), self.summary.as_str().into()));
        OwnedValue::Object(m)
    }
}

fn member<'a>(msg: &'a OwnedValue, key: &str) -> Option<&'a OwnedValue> {
    msg.as_object().and_then(|m| m.get(key))
}

fn role(msg: &OwnedValue) -> Option<&str> {
    member(msg, "role").and_then(OwnedValue::as_str)
}

fn is_variable_context(msg: &OwnedValue) -> bool {
    role(msg) == Some("user")
        && member(msg, "content")
            .and_then(OwnedValue::as_str)
            .is_some_and(|c| c.starts_with(VARIABLE_CONTEXT_SENTINEL))
}

fn tool_call_ids(msg: &OwnedValue) -> Vec<&str> {
    let Some(calls) = member(msg, "tool_calls").and_then(OwnedValue::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|c| member(c, "id").and_then(OwnedValue::as_str))
        .collect()
}

fn has_content(msg: &OwnedValue) -> bool {
    member(msg, "content")
        .and_then(OwnedValue::as_str)
        .is_some_and(|c| !py::strip(c).is_empty())
}

fn tool_tail(messages: &[OwnedValue], indexes: &[usize]) -> Option<TailReport> {
    let mut pos = indexes.len();
    let mut tail = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    while pos > 0 {
        let index = *indexes.get(pos - 1)?;
        let msg = messages.get(index)?;
        if role(msg) != Some("tool") {
            break;
        }
        tail.push(index);
        if let Some(id) = member(msg, "tool_call_id").and_then(OwnedValue::as_str) {
            seen.insert(id);
        }
        pos -= 1;
    }
    if pos == 0 {
        return None;
    }
    let assistant_index = *indexes.get(pos - 1)?;
    let assistant = messages.get(assistant_index)?;
    if role(assistant) != Some("assistant") {
        return None;
    }
    let required: BTreeSet<&str> = tool_call_ids(assistant).into_iter().collect();
    if required.is_empty() {
        return None;
    }
    let missing: Vec<&str> = required.difference(&seen).copied().collect();
    if missing.is_empty() {
        return None;
    }
    let mut ordered = vec![assistant_index];
    ordered.extend(tail.iter().rev());
    Some(TailReport {
        kind: TailKind::OrphanedToolCalls,
        tail_indexes: ordered,
        summary: format!(
            "Assistant tool call(s) missing tool response(s): {}.",
            missing.join(", ")
        ),
    })
}

/// Reports an incomplete tail, or `None` when the conversation ends well.
///
/// Ignoring variable-context messages, the last message decides:
/// - a user message: `orphaned_user`, that message;
/// - tool messages: walking back over them to the assistant before, whose
///   tool call ids are not all answered by them: `orphaned_tool_calls`,
///   the assistant and the tool messages;
/// - an assistant message with tool calls: `orphaned_tool_calls`, that
///   message (ids sorted, duplicates kept, as `persistence.py` lists them);
/// - an assistant message whose content is not a non-blank string:
///   `truncated_assistant`.
pub fn detect_incomplete_tail(messages: &[OwnedValue]) -> Option<TailReport> {
    let indexes: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| !is_variable_context(m))
        .map(|(i, _)| i)
        .collect();
    let &last_index = indexes.last()?;
    let last = messages.get(last_index)?;
    match role(last) {
        Some("user") => Some(TailReport {
            kind: TailKind::OrphanedUser,
            tail_indexes: vec![last_index],
            summary: "Session ends with a user message that has no assistant response.".into(),
        }),
        Some("tool") => tool_tail(messages, &indexes),
        Some("assistant") => {
            let mut ids = tool_call_ids(last);
            if !ids.is_empty() {
                ids.sort_unstable();
                return Some(TailReport {
                    kind: TailKind::OrphanedToolCalls,
                    tail_indexes: vec![last_index],
                    summary: format!(
                        "Assistant tool call(s) missing tool response(s): {}.",
                        ids.join(", ")
                    ),
                });
            }
            if !has_content(last) {
                return Some(TailReport {
                    kind: TailKind::TruncatedAssistant,
                    tail_indexes: vec![last_index],
                    summary: "Session ends with an empty assistant message.".into(),
                });
            }
            None
        }
        _ => None,
    }
}

/// What to do with an incomplete tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecoveryChoice {
    /// Remove the tail [`detect_incomplete_tail`] reports.
    Drop,
    /// Keep everything.
    Keep,
    /// Start over: keep only a leading system message.
    Fresh,
}

/// A recovery choice that is none of `drop`, `keep`, `fresh`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unsupported recovery choice: {0}")]
pub struct UnknownChoice(pub String);

impl FromStr for RecoveryChoice {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "drop" => Ok(RecoveryChoice::Drop),
            "keep" => Ok(RecoveryChoice::Keep),
            "fresh" => Ok(RecoveryChoice::Fresh),
            other => Err(UnknownChoice(other.to_owned())),
        }
    }
}

impl RecoveryChoice {
    /// `drop`, `keep` or `fresh`.
    pub fn as_str(self) -> &'static str {
        match self {
            RecoveryChoice::Drop => "drop",
            RecoveryChoice::Keep => "keep",
            RecoveryChoice::Fresh => "fresh",
        }
    }
}

/// The indexes of the messages [`apply_tail_recovery`] keeps.
pub fn recovery_indexes(messages: &[OwnedValue], choice: RecoveryChoice) -> Vec<usize> {
    match choice {
        RecoveryChoice::Keep => (0..messages.len()).collect(),
        RecoveryChoice::Fresh => match messages.first() {
            Some(m) if role(m) == Some("system") => vec![0],
            _ => Vec::new(),
        },
        RecoveryChoice::Drop => match detect_incomplete_tail(messages) {
            None => (0..messages.len()).collect(),
            Some(r) => {
                // A set: the tail can be most of a hostile log (a million
                // tool messages), and a scan per message would be quadratic.
                let tail: HashSet<usize> = r.tail_indexes.iter().copied().collect();
                (0..messages.len()).filter(|i| !tail.contains(i)).collect()
            }
        },
    }
}

/// The messages after a recovery choice: `keep` all of them, `fresh` only
/// a leading system message, `drop` all but the reported tail.
pub fn apply_tail_recovery(messages: &[OwnedValue], choice: RecoveryChoice) -> Vec<OwnedValue> {
    recovery_indexes(messages, choice)
        .into_iter()
        .filter_map(|i| messages.get(i).cloned())
        .collect()
}
