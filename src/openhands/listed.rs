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
//!   names; the conversations past it are read by listing, as without it.
//! - **A snapshot.** A kept listing is the directory as discovery saw it:
//!   an event file written between discovery and the read is not read in
//!   that pass, as if the pass had listed a moment earlier. A pass that
//!   must account for each change it has seen (a checkpoint's marks) does
//!   not prime its reader.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::json::Parser;
use crate::readahead::ReadAhead;

use super::discover::{Discovery, conversation_listing_at, walk_sessions};
use super::error::ReadError;
use super::event_files::EventFiles;

/// The most bytes of names [`discover_listed`] keeps, for all the
/// conversations of one discovery (64 MiB: about a million event files).
pub const LISTED_BUDGET: usize = 64 << 20;

/// The names a conversation's `events/` held when it was listed, in the
/// listing's order, each with whether it was valid UTF-8 (a name that was
/// not is kept lossily, as the reader keeps it).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EventsListing {
    names: String,
    /// Each name's end in `names`, and whether it was not UTF-8.
    ends: Vec<(u32, bool)>,
}

impl EventsListing {
    /// Adds a listed name; `false` when the names would pass 4 GiB (the
    /// listing is then incomplete and must not be used).
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

    /// Empties the listing, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        self.names.clear();
        self.ends.clear();
    }

    /// The names, in the listing's order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |&(end, _)| {
            let end = end as usize;
            let s = self.names.get(start..end).unwrap_or_default();
            start = end;
            s
        })
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the directory listed no name.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes the listing holds (its names and their ends).
    pub fn size(&self) -> usize {
        self.names.len() + self.ends.len() * std::mem::size_of::<(u32, bool)>()
    }

    /// Sorts the names into `files` as a listing of the directory would
    /// (`files` reset to its pattern first, finished after).
    pub(crate) fn fill(&self, files: &mut EventFiles) {
        let pattern = files.pattern();
        files.reset(pattern);
        for (name, &(_, not_utf8)) in self.names().zip(&self.ends) {
            files.add(name, not_utf8);
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
    let mut left = LISTED_BUDGET;
    let mut listing = EventsListing::default();
    let (found, unreadable) = walk_sessions(root.as_ref(), read_ahead, |dir, at| {
        let (is_conv, whole) =
            conversation_listing_at(at, dir, &mut parser, &mut buf, &mut listing);
        is_conv.then(|| {
            let keep = whole && listing.size() <= left;
            keep.then(|| {
                left -= listing.size();
                let mut kept = std::mem::take(&mut listing);
                kept.names.shrink_to_fit();
                kept.ends.shrink_to_fit();
                kept
            })
        })
    })?;
    let (conversations, events): (Vec<PathBuf>, Vec<Option<EventsListing>>) =
        found.into_iter().unzip();
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
        let mut l = EventsListing::default();
        assert!(l.is_empty());
        assert!(l.push(OsStr::new("event-00001-a.json")));
        assert!(l.push(OsStr::new(".eventlog.lock")));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert!(l.push(OsStr::from_bytes(b"event-00002-\xff.json")));
        }
        let names: Vec<&str> = l.names().collect();
        assert_eq!(names[..2], ["event-00001-a.json", ".eventlog.lock"]);
        #[cfg(unix)]
        {
            assert_eq!(names[2], "event-00002-\u{fffd}.json");
            assert!(l.ends[2].1);
        }
        assert!(l.size() >= l.names.len());
        l.clear();
        assert!(l.is_empty() && l.names().next().is_none());
    }
}
