//! What the conversion needs of one event, from one parse of it: the
//! members the attribution reads, its timestamp, the ids a condensation
//! forgets, and the event in canonical form for its `openhands:event`
//! record.

use crate::asf::canon::canonical_value;
use crate::json::{Parser, Value};

/// One event, parsed once.
#[derive(Debug, Default)]
pub(super) struct EventFacts {
    /// `tool_call_id`.
    pub tool_call_id: Option<String>,
    /// `rejection_reason`.
    pub rejection_reason: Option<String>,
    /// `llm_response_id`.
    pub llm_response_id: Option<String>,
    /// `llm_message.role`.
    pub sender: Option<String>,
    /// `llm_message.content[0].text`.
    pub first_text: Option<String>,
    /// `timestamp`, as a canonical `ts` ([`super::ts_of`]).
    pub ts: Option<String>,
    /// `forgotten_event_ids` (read for condensations only).
    pub forgotten: Vec<String>,
    /// The event's canonical form; `None` when it has none (not I-JSON),
    /// and the record goes through the appender's normalisation.
    pub canonical: Option<Vec<u8>>,
}

impl EventFacts {
    /// The facts of the event `raw`; `None` when it is not JSON.
    /// `condensation`: read `forgotten_event_ids` too.
    pub(super) fn of(raw: &[u8], condensation: bool, parser: &mut Parser) -> Option<EventFacts> {
        let doc = parser.parse(raw).ok()?;
        Some(EventFacts::from_root(doc.root(), condensation))
    }

    /// The facts of an event from its parsed document's root.
    pub(super) fn from_root(root: Value<'_>, condensation: bool) -> EventFacts {
        let [
            tool_call_id,
            rejection_reason,
            llm_response_id,
            message,
            timestamp,
            forgotten,
        ] = match root.as_object() {
            Some(o) => o.get_many([
                "tool_call_id",
                "rejection_reason",
                "llm_response_id",
                "llm_message",
                "timestamp",
                "forgotten_event_ids",
            ]),
            None => [None; 6],
        };
        let text = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map(str::to_owned);
        let mut canonical = Vec::with_capacity(root.raw().len());
        let canonical = canonical_value(root, &mut canonical)
            .is_ok()
            .then_some(canonical);
        EventFacts {
            tool_call_id: text(tool_call_id),
            rejection_reason: text(rejection_reason),
            llm_response_id: text(llm_response_id),
            sender: text(message.and_then(|m| m.get("role"))),
            first_text: text(
                message
                    .and_then(|m| m.get("content"))
                    .and_then(|c| c.as_array())
                    .and_then(|a| a.get(0))
                    .and_then(|p| p.get("text")),
            ),
            ts: timestamp.and_then(|v| v.as_str()).and_then(super::ts_of),
            forgotten: if condensation {
                forgotten
                    .and_then(|v| v.as_array())
                    .into_iter()
                    .flat_map(|a| a.iter())
                    .filter_map(|v| v.as_str())
                    .map(str::to_owned)
                    .collect()
            } else {
                Vec::new()
            },
            canonical,
        }
    }
}
