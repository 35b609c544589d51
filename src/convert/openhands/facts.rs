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
    /// Where the event's canonical form is in the conversation's buffer of
    /// them (the one [`EventFacts::from_root`] wrote it into; read with
    /// [`EventFacts::canonical_in`]); `None` when it has none (not I-JSON),
    /// and the record goes through the appender's normalisation.
    pub canonical: Option<std::ops::Range<usize>>,
}

impl EventFacts {
    /// The facts of the event `raw`; `None` when it is not JSON.
    /// `condensation`: read `forgotten_event_ids` too. Its canonical form
    /// is appended to `canonicals`.
    pub(super) fn of(
        raw: &[u8],
        condensation: bool,
        parser: &mut Parser,
        canonicals: &mut Vec<u8>,
    ) -> Option<EventFacts> {
        let doc = parser.parse(raw).ok()?;
        Some(EventFacts::from_root(doc.root(), condensation, canonicals))
    }

    /// The facts of an event from its parsed document's root. Its
    /// canonical form is appended to `canonicals`, one buffer for all the
    /// events of a conversation (not an allocation for each).
    pub(super) fn from_root(
        root: Value<'_>,
        condensation: bool,
        canonicals: &mut Vec<u8>,
    ) -> EventFacts {
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
        let start = canonicals.len();
        let canonical = match canonical_value(root, canonicals) {
            Ok(()) => Some(start..canonicals.len()),
            Err(_) => {
                canonicals.truncate(start);
                None
            }
        };
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

    /// The event's canonical form, in the buffer [`EventFacts::from_root`]
    /// wrote it into.
    pub(super) fn canonical_in<'b>(&self, canonicals: &'b [u8]) -> Option<&'b [u8]> {
        canonicals.get(self.canonical.clone()?)
    }
}
