//! What a conversion takes from another reader's parse of each event (the
//! OpenHands reader's, [`Reader::read_into_with`](crate::openhands::Reader::read_into_with)):
//! the view's decoded event and the conversion's own facts, so that no
//! event is parsed a second time. The conversion made with them is the one
//! made from the files.

use crate::json::Document;
use crate::openhands::view::EarlyEvents;
use crate::openhands::{Conversation, Kind};

use super::facts::EventFacts;
use super::tools::{SystemTools, system_tools};

/// What [`convert_parsed`](super::convert_parsed) takes from the reader's
/// parse of a conversation's events: filled while the reader has each event
/// parsed ([`Reader::read_into_with`](crate::openhands::Reader::read_into_with)
/// hands it as [`Parsed::Event`](crate::openhands::Parsed::Event)), so that
/// the conversion parses none of them again. One value serves a whole
/// store: the conversion takes what it holds, and it is empty again for
/// the next conversation ([`clear`](Self::clear) it when a conversation
/// read is not converted).
#[derive(Debug, Default)]
pub struct ParsedEvents {
    /// The events decoded for the view.
    pub(super) view: EarlyEvents,
    /// Each event's index, the length of the bytes it was parsed from, its
    /// facts and (a system prompt's) its tools: one for each event of
    /// `view`, in the same order.
    pub(super) facts: Vec<(usize, usize, EventFacts, Option<SystemTools>)>,
    /// The events' canonical forms, one after another (each event's facts
    /// say where its own is).
    pub(super) canonicals: Vec<u8>,
    /// A converted file's allocation, given back for the next conversion
    /// to write into ([`recycle`](Self::recycle)).
    pub(super) spare: Vec<u8>,
}

impl ParsedEvents {
    /// Nothing read yet.
    pub fn new() -> ParsedEvents {
        ParsedEvents::default()
    }

    /// Forgets what was read (for the next conversation).
    pub fn clear(&mut self) {
        self.view.clear();
        self.facts.clear();
        self.canonicals.clear();
    }

    /// Gives back a converted file's bytes once they are written: the next
    /// [`convert_parsed`](super::convert_parsed) writes its file into the
    /// same allocation (emptied) instead of a new one, which a store of
    /// many conversations would allocate, grow and free once for each.
    pub fn recycle(&mut self, bytes: Vec<u8>) {
        if bytes.capacity() > self.spare.capacity() {
            self.spare = bytes;
        }
    }

    /// Reads the event of `index` from its parsed document. Events are
    /// given in index order, each event that parsed as a JSON object once:
    /// what [`Reader::read_into_with`](crate::openhands::Reader::read_into_with)
    /// hands its visitor. An event out of order makes every event read so
    /// far unused: the conversion then parses them itself.
    pub fn add(&mut self, index: u64, doc: &Document<'_>) {
        let root = doc.root();
        let Some(ev) = self.view.add(index, doc.input(), root) else {
            return;
        };
        let (i, kind) = (ev.index, ev.kind.as_ref());
        let facts = EventFacts::from_root(
            root,
            kind == Some(&Kind::Condensation),
            &mut self.canonicals,
        );
        let tools = (kind == Some(&Kind::SystemPrompt)).then(|| system_tools(root));
        self.facts.push((i, doc.input().len(), facts, tools));
    }

    /// Whether these are usable for `conv`: nothing spoilt them, and they
    /// are one for each of its events that read, in order, of the same
    /// index and length (the events a reader of `conv` hands over).
    pub(super) fn fits(&self, conv: &Conversation) -> bool {
        if self.view.is_spoilt() {
            return false;
        }
        let mut ok = conv
            .events()
            .filter(|e| e.is_ok())
            .map(|e| (usize::try_from(e.index()).ok(), e.raw().len()));
        self.facts
            .iter()
            .all(|&(i, len, ..)| ok.next() == Some((Some(i), len)))
            && ok.next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::openhands::{Options, convert_parsed, convert_with};
    use crate::openhands::{Parsed, Reader};

    /// Reads the conversation of `dir`, filling `parsed` from the reader's
    /// parse of each event.
    fn read(dir: &std::path::Path, parsed: &mut ParsedEvents) -> Option<Conversation> {
        let mut conv = Conversation::default();
        parsed.clear();
        Reader::new()
            .read_into_with(dir, &mut conv, |p, doc| {
                if let Parsed::Event { index } = p {
                    parsed.add(index, doc);
                }
            })
            .ok()?;
        Some(conv)
    }

    #[test]
    fn conversion_from_the_readers_parse_is_the_one_from_the_files() {
        let root = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/corpus/openhands"
        ));
        let (mut condensed, mut taken, mut recycled, mut kept) = (0, 0, 0, 0);
        let mut parsed = ParsedEvents::new();
        let mut previous: Option<ParsedEvents> = None;
        for dir in crate::openhands::find_sessions(root).expect("corpus") {
            let Some(conv) = read(&dir, &mut parsed) else {
                continue;
            };
            let options = Options::default();
            let files = convert_with(&conv, &options);
            // Taken from the reader's parse: not parsed again.
            if parsed.fits(&conv) && !parsed.facts.is_empty() {
                taken += 1;
            }
            if conv.events().any(|e| e.kind() == Some(Kind::Condensation)) {
                condensed += 1;
            }
            // The file before's bytes, given back: written into again.
            let spare = parsed.spare.capacity();
            let early = convert_parsed(&conv, &options, &mut parsed);
            assert!(parsed.facts.is_empty(), "{}: taken", dir.display());
            assert_eq!(parsed.spare.capacity(), 0, "{}: spare taken", dir.display());
            // The canonical forms' buffer is kept, emptied, for the next.
            assert!(parsed.canonicals.is_empty(), "{}", dir.display());
            if parsed.canonicals.capacity() > 0 {
                kept += 1;
            }
            match (files, early) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.session_id, b.session_id, "{}", dir.display());
                    assert_eq!(a.report, b.report, "{}", dir.display());
                    assert!(a.bytes == b.bytes, "{}: bytes differ", dir.display());
                    if spare > 0 {
                        assert!(b.bytes.capacity() >= spare, "{}: new buffer", dir.display());
                        recycled += 1;
                    }
                    parsed.recycle(b.bytes);
                }
                (a, b) => assert_eq!(a.err(), b.err(), "{}", dir.display()),
            }
            // Another conversation's events are not used.
            if let Some(mut other) = previous.take()
                && !other.facts.is_empty()
            {
                let again = convert_parsed(&conv, &options, &mut other);
                let files = convert_with(&conv, &options);
                if let (Ok(a), Ok(b)) = (files, again) {
                    assert!(a.bytes == b.bytes, "{}: another's events", dir.display());
                }
            }
            let mut next = ParsedEvents::new();
            read(&dir, &mut next);
            previous = Some(next);
        }
        assert!(
            taken > 40,
            "only {taken} conversations took the reader's parse"
        );
        assert!(
            recycled > 40,
            "only {recycled} files written into a given-back buffer"
        );
        assert!(kept > 40, "the canonical forms' buffer kept {kept} times");
        assert!(
            condensed >= 4,
            "only {condensed} conversations with a condensation"
        );
    }
}
