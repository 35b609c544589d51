//! Which wire message of a view each event of its context produced: the
//! SDK merges an assistant turn's actions into one message, a user message
//! into the user message before it, and puts a condensation's summary at its
//! offset, so events and messages are not one to one.

use foldhash::{HashMap, HashMapExt};

use crate::openhands::Conversation;
use crate::openhands::Kind;
use crate::openhands::view::{Role, View, ViewEntry, WireShape};

use super::facts::EventFacts;

/// The attribution of one view's wire messages to its events.
#[derive(Debug, Default)]
pub(super) struct Attribution {
    /// Event position (in [`View::events`]) → the wire message it is in.
    pub attributed: HashMap<usize, usize>,
    /// Wire message → the `llm_response_id` of the model call that wrote it
    /// (assistant messages only).
    pub response_of: HashMap<usize, String>,
    /// Call id → the reason of a user's rejection of it.
    pub rejected: HashMap<String, String>,
}

/// The raw bytes of the event at view position `p`.
pub(super) fn raw_of<'c>(conv: &'c Conversation, view: &View<'_>, p: usize) -> &'c [u8] {
    conv.event(view.events()[p].index)
        .map(|e| e.raw())
        .unwrap_or_default()
}

/// Attributes the wire messages `wire` of `view` (its `wire_shapes`) to
/// the events of its context; `facts` holds each event's facts by its
/// position in [`View::events`] (`None`: not JSON, or not read).
pub(super) fn attribute(
    view: &View<'_>,
    wire: &[WireShape<'_>],
    facts: &[Option<EventFacts>],
) -> Attribution {
    let events = view.events();
    // Each map sized at once for what it can hold (about a call per wire
    // message, an event per context entry), not grown by rehashing.
    let mut out = Attribution {
        attributed: HashMap::with_capacity(view.context().len()),
        response_of: HashMap::with_capacity(wire.len()),
        rejected: HashMap::new(),
    };
    let mut assistant_by_call: HashMap<&str, usize> = HashMap::with_capacity(wire.len());
    let mut tool_by_call: HashMap<&str, usize> = HashMap::with_capacity(wire.len());
    for (k, m) in wire.iter().enumerate() {
        for c in m.tool_calls.unwrap_or_default() {
            assistant_by_call.insert(&c.id, k);
        }
        if let Some((id, _)) = m.tool {
            tool_by_call.insert(id, k);
        }
    }
    let role = |k: usize| wire[k].role;
    let mut w = usize::from(wire.first().is_some_and(|m| m.role == Role::System));
    let mut last_user: Option<usize> = None;
    for &entry in view.context() {
        let p = match entry {
            ViewEntry::Summary(_) => {
                if w < wire.len() {
                    w += 1;
                }
                last_user = None;
                continue;
            }
            ViewEntry::Event(p) => p,
        };
        let Some(f) = facts.get(p).and_then(Option::as_ref) else {
            continue;
        };
        let k = match &events[p].kind {
            Some(Kind::SystemPrompt) => Some(0),
            Some(Kind::Action) => f
                .tool_call_id
                .as_deref()
                .and_then(|c| assistant_by_call.get(c).copied()),
            Some(Kind::Observation | Kind::UserReject | Kind::AgentError) => {
                let c = f.tool_call_id.as_deref();
                if events[p].kind == Some(Kind::UserReject)
                    && let Some(c) = c
                {
                    out.rejected
                        .insert(c.to_owned(), f.rejection_reason.clone().unwrap_or_default());
                }
                c.and_then(|c| tool_by_call.get(c).copied())
            }
            Some(Kind::Message) => {
                let sender = f.sender.as_deref();
                let first_text = f.first_text.as_deref().unwrap_or("");
                let contains = |k: usize| wire[k].part_texts().any(|t| t.contains(first_text));
                match (sender, last_user) {
                    (Some("user"), Some(u)) if contains(u) && (w >= wire.len() || !contains(w)) => {
                        Some(u)
                    }
                    _ if w < wire.len() => Some(w),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(k) = k else { continue };
        out.attributed.insert(p, k);
        if k > 0 {
            w = w.max(k + 1);
        }
        last_user = (role(k) == Role::User).then_some(k);
        if let Some(r) = &f.llm_response_id
            && role(k) == Role::Assistant
        {
            out.response_of.insert(k, r.clone());
        }
    }
    out
}
