//! Events and a state decoded for a view from another reader's parse of
//! them, kept until the view is built
//! ([`View::build_early`](super::View::build_early)) instead of being parsed
//! again there.

use super::event::ViewEvent;
use super::state::StateInfo;
use super::state::state_info;
use super::version::Detector;
use {super::event, crate::json::Value};

/// Events decoded for a view from another reader's parse of them (the
/// reader hands them each event while its buffer still grows, so their
/// strings are owned), kept until the view is built (the Parquet export's
/// `View::build_early`, the ASF converter's `View::build_at_heads`) instead
/// of being parsed again there.
#[derive(Debug, Default)]
pub(crate) struct EarlyEvents {
    /// The events, in index order.
    pub(super) events: Vec<ViewEvent<'static>>,
    /// The version evidence of those events, in their order.
    pub(super) det: Detector,
    /// Set when an event that parses could not be added: the view then
    /// parses every event itself.
    pub(super) spoilt: bool,
}

impl EarlyEvents {
    /// Decodes the event of `index`, parsed from `raw` into `root`, and
    /// gives it back (`None` when it came out of order: the events are
    /// then not used). Events come in index order, each event that parses
    /// as a JSON object once.
    pub(crate) fn add(
        &mut self,
        index: u64,
        raw: &[u8],
        root: Value<'_>,
    ) -> Option<&ViewEvent<'static>> {
        match usize::try_from(index) {
            Ok(i) if self.events.last().is_none_or(|l| l.index < i) => {
                let ev = event::decode_parsed(i, raw, root, &mut self.det);
                self.events.push(ev);
                self.events.last()
            }
            _ => {
                self.spoil();
                None
            }
        }
    }

    /// Whether an event could not be added ([`spoil`](Self::spoil)): the
    /// events are then not used.
    pub(crate) fn is_spoilt(&self) -> bool {
        self.spoilt
    }

    /// Records that an event that parses is missing (or came out of
    /// order): these events are not used.
    pub(crate) fn spoil(&mut self) {
        self.spoilt = true;
    }

    /// Forgets every event (for the next conversation).
    pub(crate) fn clear(&mut self) {
        self.events.clear();
        self.det = Detector::default();
        self.spoilt = false;
    }
}

/// What the view takes from `base_state.json`, read from the caller's
/// parse of it (the Parquet export's `View::build_early`, the ASF
/// converter's `View::build_at_heads`) instead of a parse of its own.
#[derive(Debug)]
pub(crate) struct EarlyState<'a> {
    pub(super) info: StateInfo<'a>,
    /// The state's version evidence.
    pub(super) det: Detector,
}

impl<'a> EarlyState<'a> {
    /// Reads the state from its bytes `raw` and the root of their parse;
    /// `None` when the root is not an object (the view then reads the state
    /// itself, and reports it).
    pub(crate) fn read(raw: &'a [u8], root: Value<'_>) -> Option<EarlyState<'a>> {
        let obj = root.as_object()?;
        let mut det = Detector::default();
        let info = state_info(raw, obj, &mut det);
        Some(EarlyState { info, det })
    }
}

// `View::build_early`, which these test, is the Parquet export's alone.
#[cfg(all(test, feature = "parquet"))]
mod tests {
    use super::super::*;
    use super::*;
    use crate::json::Parser;

    /// The view built with events decoded from another parse (strings
    /// owned, the file id given afterwards) against the view built from
    /// the files, on every conversation of the corpus and on events with
    /// no `id`, escapes, a file that is not JSON and one that is not an
    /// object, a kind this crate does not know and kinds spelt with
    /// escapes.
    #[test]
    fn early_events_build_the_same_view() {
        fn check(input: &ViewInput<'_>) {
            let mut p = Parser::new();
            let mut early = EarlyEvents::default();
            for e in &input.events {
                if let Ok(doc) = p.parse(e.raw)
                    && doc.root().as_object().is_some()
                {
                    early.add(e.index as u64, doc.input(), doc.root());
                }
            }
            let state = input.base_state.and_then(|raw| {
                let doc = p.parse(raw).ok()?;
                EarlyState::read(raw, doc.root())
            });
            let plain = View::build(input, &ViewOptions::default());
            let early = View::build_early(input, &ViewOptions::default(), &mut p, early, state);
            assert_eq!(format!("{plain:#?}"), format!("{early:#?}"));
            let wire = |v: &View<'_>| {
                v.wire_messages()
                    .iter()
                    .map(|m| m.to_string_styled(crate::json::Style::COMPACT))
                    .collect::<Vec<_>>()
            };
            assert_eq!(wire(&plain), wire(&early));
            message::tests::check_written_wire(&plain.messages);
        }
        let system = br#"{"id":"s","timestamp":"t","source":"agent","system_prompt":{"cache_prompt":false,"type":"text","text":"You are\nhelpful."},"tools":[],"kind":"SystemPromptEvent"}"#;
        let no_id = br#"{"timestamp":"t","source":"user","llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"Hi"}],"thinking_blocks":[]},"kind":"MessageEvent"}"#;
        let input = ViewInput {
            events: vec![
                EventInput {
                    index: 0,
                    file_id: "s",
                    raw: system,
                },
                EventInput {
                    index: 1,
                    file_id: "f1",
                    raw: no_id,
                },
                EventInput {
                    index: 2,
                    file_id: "f2",
                    raw: b"{\"id\":",
                },
                EventInput {
                    index: 3,
                    file_id: "f3",
                    raw: b"[1]",
                },
                EventInput {
                    index: 4,
                    file_id: "f4",
                    raw: br#"{"id":"u","timestamp":"t","source":"agent","kind":"FancyNewEvent"}"#,
                },
                EventInput {
                    index: 5,
                    file_id: "f5",
                    raw: br#"{"id":"e","timestamp":"t","source":"user","llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"Again"}],"thinking_blocks":[]},"kind":"Message\u0045vent"}"#,
                },
                EventInput {
                    index: 6,
                    file_id: "f6",
                    raw: br#"{"id":"x","timestamp":"t","source":"agent","kind":"Fancy\u004eewEvent"}"#,
                },
            ],
            ..Default::default()
        };
        check(&input);
        for conv in crate::openhands::test_corpus::conversations() {
            check(&ViewInput::from_conversation(&conv));
        }
    }
}
