//! Discovery that keeps what it listed: each conversation's `events/`
//! names, handed to the reader so that a one-pass read does not list the
//! directory a second time.
//!
//! Telling a conversation directory from another lists its `events/` (an
//! event file's name makes it one). On ext4 a directory's listing is the
//! costly part of opening it: every name is hashed and kept in a tree built
//! for that open directory, a one-block directory included. A pass that
//! reads every conversation it found would list each `events/` twice:
//! [`discover_listed`] keeps the first listing ([`EventsListing`]) and
//! [`Reader::prime_events`](super::Reader::prime_events) gives it to the
//! read of that directory.
//!
//! # Guarantees
//!
//! - **The same conversations.** [`discover_listed`] finds exactly what
//!   [`discover_with`](super::discover_with) finds, in the same order.
//! - **Only whole listings.** A listing is kept only when the directory was
//!   listed to its end; one that failed part way is not kept, and the
//!   reader lists that directory itself (and reports its error).
//! - **Bounded.** The listings kept take at most [`LISTED_BUDGET`] bytes of
//!   names, all in one buffer (not an allocation per conversation left to
//!   fragment the heap of the thread that reads them); the conversations
//!   past it are read by listing, as without it.
//! - **A snapshot.** A kept listing is the directory as discovery saw it:
//!   an event file written between discovery and the read is not read in
//!   that pass, as if the pass had listed a moment earlier, and one removed
//!   in between is reported as a file that could not be read, as one
//!   removed between any listing and the read of the file is. A pass that
//!   must account for each change it has seen (a checkpoint's marks) does
//!   not prime its reader.

use std::ffi::OsStr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::json::Parser;
use crate::readahead::ReadAhead;

use super::discover::{Discovery, conversation_listing_at, walk_sessions};
use super::error::ReadError;
use super::event_files::EventFiles;

/// The most bytes of names [`discover_listed`] keeps, for all the
/// conversations of one discovery (64 MiB: about a million event files).
pub const LISTED_BUDGET: usize = 64 << 20;

/// Listed names, in order, in one buffer: each with whether it was valid
/// UTF-8 (a name that was not is kept lossily, as the reader keeps it).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct NameList {
    names: String,
    /// Each name's end in `names`, and whether it was not UTF-8.
    ends: Vec<(u32, bool)>,
}

impl NameList {
    /// Adds a listed name; `false` when the names would pass 4 GiB (the
    /// list is then incomplete and must not be used).
    pub(crate) fn push(&mut self, name: &OsStr) -> bool {
        let (text, not_utf8) = match name.to_str() {
            Some(s) => (std::borrow::Cow::Borrowed(s), false),
            None => (name.to_string_lossy(), true),
        };
        self.names.push_str(&text);
        match u32::try_from(self.names.len()) {
            Ok(end) => {
                self.ends.push((end, not_utf8));
                true
            }
            Err(_) => false,
        }
    }

    /// How many names.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes the list holds (its names and their ends).
    fn size(&self) -> usize {
        self.names.len() + self.ends.len() * std::mem::size_of::<(u32, bool)>()
    }

    /// Where name `i` starts in `names`: where the name before it ends.
    fn start(&self, i: usize) -> usize {
        i.checked_sub(1)
            .and_then(|p| self.ends.get(p))
            .map_or(0, |&(e, _)| e as usize)
    }

    /// Cuts the list back to its first `n` names.
    fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            self.names.truncate(self.start(n));
            self.ends.truncate(n);
        }
    }

    /// Name `i` and whether it was not UTF-8.
    fn get(&self, i: usize) -> Option<(&str, bool)> {
        let &(end, not_utf8) = self.ends.get(i)?;
        Some((self.names.get(self.start(i)..end as usize)?, not_utf8))
    }
}

/// The names a conversation's `events/` held when it was listed, in the
/// listing's order (a name that was not UTF-8 kept lossily, as the reader
/// keeps it). The listings of one discovery share one buffer, freed with
/// the last of them. A listing is the directory as it was when listed (see
/// the module docs).
#[derive(Debug, Default, Clone)]
pub struct EventsListing {
    list: Arc<NameList>,
    range: Range<usize>,
}

impl EventsListing {
    /// The names, in the listing's order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.range
            .clone()
            .map(|i| self.list.get(i).map_or("", |(name, _)| name))
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether the directory listed no name.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Sorts the names into `files` as a listing of the directory would
    /// (`files` reset to its pattern first, finished after).
    pub(crate) fn fill(&self, files: &mut EventFiles) {
        let pattern = files.pattern();
        files.reset(pattern);
        for i in self.range.clone() {
            if let Some((name, not_utf8)) = self.list.get(i) {
                files.add(name, not_utf8);
            }
        }
        files.finish();
    }
}

/// What [`discover_listed`] found: the discovery, and beside each
/// conversation directory the listing of its `events/` when one was kept.
#[derive(Debug, Default)]
pub struct ListedDiscovery {
    /// What [`discover_with`](super::discover_with) finds.
    pub discovery: Discovery,
    /// One per conversation directory, in the same order: its `events/` as
    /// discovery listed it, or `None` (no `events/`, a listing that failed,
    /// or one past [`LISTED_BUDGET`]).
    pub events: Vec<Option<EventsListing>>,
}

/// [`discover_with`](super::discover_with), keeping each conversation's
/// `events/` listing for its read (see the module docs).
pub fn discover_listed(
    root: impl AsRef<Path>,
    read_ahead: ReadAhead,
) -> Result<ListedDiscovery, ReadError> {
    let mut parser = Parser::new();
    let mut buf = Vec::new();
    // Every kept listing in one buffer, each listed straight into it: one
    // allocation to grow and free, not two per conversation left to
    // fragment the heap of the thread that reads them.
    let mut all = NameList::default();
    let (found, unreadable) = walk_sessions(root.as_ref(), read_ahead, |dir, at| {
        let start = all.len();
        let (is_conv, whole) = conversation_listing_at(at, dir, &mut parser, &mut buf, &mut all);
        let keep = is_conv && whole && all.size() <= LISTED_BUDGET;
        let range = start..all.len();
        if !keep {
            all.truncate(start);
        }
        is_conv.then(|| keep.then_some(range))
    })?;
    all.names.shrink_to_fit();
    all.ends.shrink_to_fit();
    let all = Arc::new(all);
    let (conversations, events): (Vec<PathBuf>, Vec<Option<EventsListing>>) = found
        .into_iter()
        .map(|(dir, range)| {
            let events = range.map(|range| EventsListing {
                list: Arc::clone(&all),
                range,
            });
            (dir, events)
        })
        .unzip();
    Ok(ListedDiscovery {
        discovery: Discovery {
            conversations,
            unreadable,
        },
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_back_in_order_with_their_utf8_flag() {
        let mut l = NameList::default();
        assert_eq!(l.len(), 0);
        assert!(l.push(OsStr::new("event-00001-a.json")));
        assert!(l.push(OsStr::new(".eventlog.lock")));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert!(l.push(OsStr::from_bytes(b"event-00002-\xff.json")));
        }
        let mut all = NameList::default();
        assert!(all.push(OsStr::new("before")));
        for name in ["event-00001-a.json", ".eventlog.lock"] {
            assert!(all.push(OsStr::new(name)));
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert!(all.push(OsStr::from_bytes(b"event-00002-\xff.json")));
        }
        assert_eq!(all.len(), l.len() + 1);
        let listing = EventsListing {
            range: 1..all.len(),
            list: Arc::new(all.clone()),
        };
        let names: Vec<&str> = listing.names().collect();
        assert_eq!(names[..2], ["event-00001-a.json", ".eventlog.lock"]);
        #[cfg(unix)]
        {
            assert_eq!(names[2], "event-00002-\u{fffd}.json");
            assert_eq!(all.get(3), Some(("event-00002-\u{fffd}.json", true)));
        }
        assert_eq!(all.get(1), Some(("event-00001-a.json", false)));
        all.truncate(1);
        assert_eq!(all, {
            let mut one = NameList::default();
            one.push(OsStr::new("before"));
            one
        });
        l.truncate(0);
        assert_eq!(l.len(), 0);
        assert!(EventsListing::default().is_empty());
    }
}
