//! Events and a state decoded for a view from another reader's parse of
//! them, kept until the view is built
//! ([`View::build_early`](super::View::build_early)) instead of being parsed
//! again there.

use super::event::ViewEvent;
use super::state::StateInfo;
use super::version::Detector;
use {super::event, crate::json::Value};
// What `EarlyState::read`, the Parquet export's alone, needs besides.
#[cfg(feature = "parquet")]
use super::state::state_info;

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
/// parse of it ([`View::build_early`](super::View::build_early)) instead of a
/// parse of its own.
#[derive(Debug)]
pub(crate) struct EarlyState<'a> {
    pub(super) info: StateInfo<'a>,
    /// The state's version evidence.
    pub(super) det: Detector,
}

#[cfg(feature = "parquet")]
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
