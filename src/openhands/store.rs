//! A whole store, for indexers: every conversation (sub-agents included)
//! one at a time, in a deterministic order, with memory bounded by the
//! largest conversation whatever the store's size; in parallel across
//! conversations with the results in the same order; and a listing from
//! directory names alone.
//!
//! # Streaming
//!
//! [`Store::open`] finds the conversation directories under a root as
//! [`find_sessions`] does. [`Store::stream`] then reads them one by one
//! with one [`Reader`] into one [`Conversation`], so its buffers (the event
//! bytes, the envelopes, the file names, the parser's tape and arena) are
//! reused from one conversation to the next and only grow to the largest
//! one. [`Stream::next`] lends each conversation until the next call (a
//! lending iterator: `while let Some(item) = stream.next()`), with the
//! reader's parser to decode its events ([`StoreItem`]).
//!
//! Sub-agents' conversations (`subagents/<hex>/`, nested at any depth) are
//! items of their own, right after their parent and before the parent's
//! next sibling (depth first, sorted by name), with their parent noted
//! ([`StoreItem::parent`], [`StoreItem::depth`]). A conversation that cannot be read
//! is an `Err` item ([`StoreError`]) and the stream goes on.
//!
//! # Parallel
//!
//! With the `parallel` feature, [`Store::par_map`] reads the top-level
//! conversations on rayon's thread pool, each thread with its own reader
//! (taken from a pool, so buffers are reused across conversations), and
//! returns the results in the stream's order, whatever the scheduling.
//! [`Store::par_for_each`] hands the results to a callback in that same
//! order while reading ahead at most a window of conversations, so memory
//! stays bounded for a store of any size. Both read the conversations'
//! directories ahead of the readers with a few I/O threads
//! ([`crate::readahead`]: on a cold page cache the storage is kept busy,
//! the results are the same); [`Store::with_read_ahead`] sets the depth, or
//! turns it off.
//!
//! # Listing
//!
//! [`list`] walks the same directories without opening an event file: for
//! each conversation its event count, file counts and gap come from the
//! names of `events/` alone ([`EventFiles`]), which is what a store
//! browser needs before reading anything.
//!
//! # Limits
//!
//! Sub-agents nested more than [`MAX_SUBAGENT_DEPTH`] deep are not read
//! (a link loop under `subagents/` would otherwise never end); each is
//! reported as [`StoreError::TooDeep`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::json::{Document, Parser};
use crate::readahead::ReadAhead;
use crate::source::dir::ListBuf;

use super::conversation::Conversation;
use super::discover::{entry_is_dir, is_conversation_dir_with, walk_sessions};
use super::error::ReadError;
use super::event_files::{EventFiles, NamePattern, parse_event_name};
use super::reader::{Parsed, Reader};
use super::{DIR_EVENTS, DIR_SUBAGENTS, find_sessions};

mod owned;

pub use owned::{Conversations, StoreConversation};

/// How deep sub-agents' conversations are followed under `subagents/`.
pub const MAX_SUBAGENT_DEPTH: usize = 16;

/// Why an item of a store could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The conversation could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A sub-agent's conversation nested deeper than
    /// [`MAX_SUBAGENT_DEPTH`], not read.
    #[error("{}: sub-agent nested more than {MAX_SUBAGENT_DEPTH} deep (a link loop?), not read", path.display())]
    TooDeep {
        /// The sub-agent's directory.
        path: PathBuf,
    },
}

impl StoreError {
    /// The directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            StoreError::Read(ReadError::Io { path, .. })
            | StoreError::Read(ReadError::NoConversation { path })
            | StoreError::Read(ReadError::NotAConversationFile { path })
            | StoreError::Read(ReadError::OcChatStore { path })
            | StoreError::TooDeep { path } => path,
        }
    }
}

/// The conversations of a store: their directories, found once, read on
/// demand.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    dirs: Vec<PathBuf>,
    pattern: NamePattern,
    read_ahead: ReadAhead,
}

impl Store {
    /// Finds the conversation directories under `root` ([`find_sessions`]:
    /// sorted by path; sub-agents come with their parent when read). Fails
    /// when `root` cannot be examined or listed, and when it is an OC Chat
    /// sessions directory with no OpenHands conversation under it
    /// ([`ReadError::OcChatStore`]; [`crate::open`] tells the formats apart).
    /// Another directory with no conversation is an empty store.
    pub fn open(root: impl AsRef<Path>) -> Result<Store, ReadError> {
        let root = root.as_ref();
        let dirs = find_sessions(root)?;
        if dirs.is_empty() && root.is_dir() && crate::occhat::is_sessions_dir(root) {
            return Err(ReadError::OcChatStore {
                path: root.to_path_buf(),
            });
        }
        Ok(Store {
            root: root.to_path_buf(),
            dirs,
            pattern: NamePattern::default(),
            read_ahead: ReadAhead::default(),
        })
    }

    /// A store of the given conversation directories, read in the order
    /// given (`root` is only reported).
    pub fn from_dirs(root: impl Into<PathBuf>, dirs: Vec<PathBuf>) -> Store {
        Store {
            root: root.into(),
            dirs,
            pattern: NamePattern::default(),
            read_ahead: ReadAhead::default(),
        }
    }

    /// Reads event file names with `pattern` (the SDK 1.30+ one by
    /// default).
    pub fn with_pattern(mut self, pattern: NamePattern) -> Store {
        self.pattern = pattern;
        self
    }

    /// The file-name pattern.
    pub fn pattern(&self) -> NamePattern {
        self.pattern
    }

    /// Reads conversations ahead of the parallel scans' readers as
    /// `read_ahead` says ([`ReadAhead::default`] unless set;
    /// [`ReadAhead::off`] for none).
    pub fn with_read_ahead(mut self, read_ahead: ReadAhead) -> Store {
        self.read_ahead = read_ahead;
        self
    }

    /// The read-ahead of the parallel scans.
    pub fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    /// The root the store was opened at.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The top-level conversation directories, in reading order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// How many top-level conversations there are (sub-agents aside).
    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    /// Whether the store has no conversation.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// Reads the conversations one at a time (see the module docs): a
    /// lending iterator (`while let Some(item) = stream.next()`), each
    /// conversation lent until the next call. For an [`Iterator`] of owned
    /// conversations (a `for` loop, adapters), see
    /// [`conversations`](Self::conversations).
    pub fn stream(&self) -> Stream<'_> {
        Stream {
            dirs: &self.dirs,
            next: 0,
            cursor: StreamCursor::new(self.pattern),
        }
    }

    /// Calls `f` with every item of the [`stream`](Self::stream), in order.
    pub fn for_each(&self, mut f: impl FnMut(Result<StoreItem<'_>, StoreError>)) {
        let mut s = self.stream();
        while let Some(item) = s.next() {
            f(item);
        }
    }
}

/// One conversation of a store, lent by [`Stream::next`] until the next
/// call.
#[derive(Debug)]
pub struct StoreItem<'a> {
    /// The conversation as read.
    pub conversation: &'a Conversation,
    /// The reader's parser, to decode the conversation's events and files
    /// with ([`Event::open`](super::Event::open)).
    pub parser: &'a mut Parser,
    /// For a sub-agent's conversation, the directory of the conversation
    /// whose `subagents/` holds it.
    pub parent: Option<&'a Path>,
    /// 0 for a top-level conversation, 1 for its sub-agents, 2 for theirs…
    pub depth: usize,
}

/// A sub-agent waiting to be read.
#[derive(Debug)]
struct PendingSubagent {
    dir: PathBuf,
    depth: usize,
}

/// What reading a store's conversations one at a time keeps.
#[derive(Debug)]
struct StreamCursor {
    reader: Reader,
    conv: Conversation,
    pending: Vec<PendingSubagent>,
    current: PathBuf,
}

impl StreamCursor {
    fn new(pattern: NamePattern) -> StreamCursor {
        StreamCursor {
            reader: Reader::with_pattern(pattern),
            conv: Conversation::new(),
            pending: Vec::new(),
            current: PathBuf::new(),
        }
    }

    /// The next item: a pending sub-agent, or the next of `dirs`.
    fn advance(
        &mut self,
        dirs: &[PathBuf],
        next: &mut usize,
        visit: &mut dyn FnMut(Parsed, &Document<'_>),
    ) -> Option<Result<StoreItem<'_>, StoreError>> {
        let StreamCursor {
            reader,
            conv,
            pending,
            current,
        } = self;
        let (read, depth, parent) = match pending.pop() {
            Some(p) => {
                *current = p.dir;
                if p.depth > MAX_SUBAGENT_DEPTH {
                    return Some(Err(StoreError::TooDeep {
                        path: current.clone(),
                    }));
                }
                let parent = current.parent().and_then(Path::parent);
                (
                    reader.read_into_with(&*current, conv, visit),
                    p.depth,
                    parent,
                )
            }
            None => {
                let dir = dirs.get(*next)?;
                *next += 1;
                (reader.read_into_with(dir, conv, visit), 0, None)
            }
        };
        if let Err(e) = read {
            return Some(Err(e.into()));
        }
        // Sorted names, popped from the end: push in reverse.
        for s in conv.subagents().iter().rev() {
            let mut dir = conv.dir().join(DIR_SUBAGENTS);
            dir.push(s);
            pending.push(PendingSubagent {
                dir,
                depth: depth + 1,
            });
        }
        Some(Ok(StoreItem {
            conversation: conv,
            parser: reader.parser(),
            parent,
            depth,
        }))
    }
}

/// The conversations of a [`Store`], read one at a time into reused
/// buffers ([`Store::stream`]).
#[derive(Debug)]
pub struct Stream<'s> {
    dirs: &'s [PathBuf],
    next: usize,
    cursor: StreamCursor,
}

impl Stream<'_> {
    /// The next conversation, lent until the next call; `None` at the end.
    /// A conversation that cannot be read is an `Err` item, and the stream
    /// goes on after it.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<StoreItem<'_>, StoreError>> {
        self.cursor
            .advance(self.dirs, &mut self.next, &mut |_, _| {})
    }

    /// Like [`next`](Self::next), handing `visit` each file of the
    /// conversation that parses as a JSON object while it is read (see
    /// [`Reader::read_into_with`]): members beyond the envelope without a
    /// second parse.
    pub fn next_with(
        &mut self,
        mut visit: impl FnMut(Parsed, &Document<'_>),
    ) -> Option<Result<StoreItem<'_>, StoreError>> {
        self.cursor.advance(self.dirs, &mut self.next, &mut visit)
    }

    /// How many top-level conversations are still to be read.
    pub fn remaining(&self) -> usize {
        self.dirs.len().saturating_sub(self.next)
    }
}

#[cfg(feature = "parallel")]
mod par {
    use std::convert::Infallible;

    use smallvec::SmallVec;

    use super::*;
    use crate::parallel::for_each_ordered_ahead;

    /// Reads one top-level conversation and its sub-agents.
    fn one<T, F>(cursor: &mut StreamCursor, dir: &PathBuf, f: &F) -> SmallVec<[T; 1]>
    where
        F: Fn(Result<StoreItem<'_>, StoreError>) -> T,
    {
        let mut out = SmallVec::new();
        let dirs = std::slice::from_ref(dir);
        let mut next = 0;
        while let Some(item) = cursor.advance(dirs, &mut next, &mut |_, _| {}) {
            out.push(f(item));
        }
        out
    }

    impl Store {
        /// Reads every conversation in parallel (rayon's pool) and returns
        /// `f` of each item in the order [`stream`](Self::stream) gives
        /// them.
        pub fn par_map<T, F>(&self, f: F) -> Vec<T>
        where
            T: Send,
            F: Fn(Result<StoreItem<'_>, StoreError>) -> T + Sync,
        {
            let mut out = Vec::new();
            self.par_for_each(self.dirs.len().max(1), f, |t| out.push(t));
            out
        }

        /// Like [`par_map`](Self::par_map), handing each result to `sink`
        /// on the calling thread in the stream's order, with at most
        /// `window` top-level conversations read ahead of the sink (0: 16
        /// per thread of the pool). Memory stays bounded by the window
        /// whatever the store's size. The store's
        /// [`read_ahead`](Self::read_ahead) reads the next conversations'
        /// directories into the page cache ahead of the readers.
        pub fn par_for_each<T, F, S>(&self, window: usize, f: F, mut sink: S)
        where
            T: Send,
            F: Fn(Result<StoreItem<'_>, StoreError>) -> T + Sync,
            S: FnMut(T),
        {
            let pattern = self.pattern;
            let Ok(()) = for_each_ordered_ahead::<_, _, _, Infallible>(
                &self.dirs,
                window,
                self.read_ahead,
                || StreamCursor::new(pattern),
                |cursor, dir| one(cursor, dir, &f),
                |part| {
                    part.into_iter().for_each(&mut sink);
                    Ok(())
                },
            );
        }
    }
}

/// One conversation of a [`Listing`], known from directory names alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The conversation directory.
    pub dir: PathBuf,
    /// For a sub-agent's conversation, the position of its parent in the
    /// listing.
    pub parent: Option<usize>,
    /// 0 for a top-level conversation, 1 for its sub-agents…
    pub depth: usize,
    /// How many events the sequence has (indexes 0 up to the first missing
    /// one): what reading it gives, malformed files included.
    pub events: usize,
    /// How many files of `events/` are named `event-*.json`.
    pub event_files: usize,
    /// How many files `events/` holds, sidecars aside.
    pub files: usize,
    /// The first missing index, when files of larger indexes exist.
    pub gap: Option<u64>,
    /// How many sub-agents' conversations it has.
    pub subagents: usize,
}

/// The conversations under `root` as [`Store::stream`] reads them (same
/// directories, same order, sub-agents after their parent), known from
/// directory listings alone: no event file is opened (a directory whose
/// `events/` names no event file is a conversation only if its
/// `base_state.json` is OpenHands' state, which is then read). Event file
/// names are matched with the SDK 1.30+ pattern. Fails only when `root`
/// cannot be examined or listed.
pub fn list(root: impl AsRef<Path>) -> Result<Listing, ReadError> {
    list_with(root, NamePattern::default())
}

/// [`list`] with a file-name pattern.
pub fn list_with(root: impl AsRef<Path>, pattern: NamePattern) -> Result<Listing, ReadError> {
    let mut ctx = ListCtx {
        pattern,
        files: EventFiles::default(),
        parser: Parser::new(),
        buf: Vec::new(),
        path: PathBuf::new(),
        listing: ListBuf::default(),
    };
    let (top, unreadable) = walk_sessions(root.as_ref(), ReadAhead::default(), |dir, _| {
        ctx.probe(dir, 0)
    })?;
    let mut out = Vec::with_capacity(top.len());
    for (dir, node) in top {
        flatten(&mut out, dir, node, None, 0);
    }
    Ok(Listing {
        conversations: out,
        unreadable,
    })
}

/// What [`list`] found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The conversations, in the order [`Store::stream`] reads them.
    pub conversations: Vec<Listed>,
    /// The directories of the walk that could not be listed (see
    /// [`discover`](super::discover)).
    pub unreadable: Vec<ReadError>,
}

impl Listing {
    /// How many events all the conversations have (by their names).
    pub fn events(&self) -> usize {
        self.conversations.iter().map(|c| c.events).sum()
    }
}

/// A conversation found by the listing walk, with its sub-agents.
#[derive(Debug, Default)]
struct WalkNode {
    events: usize,
    event_files: usize,
    files: usize,
    gap: Option<u64>,
    subs: Vec<(PathBuf, WalkNode)>,
}

fn flatten(
    out: &mut Vec<Listed>,
    dir: PathBuf,
    node: WalkNode,
    parent: Option<usize>,
    depth: usize,
) {
    let me = out.len();
    out.push(Listed {
        dir,
        parent,
        depth,
        events: node.events,
        event_files: node.event_files,
        files: node.files,
        gap: node.gap,
        subagents: node.subs.len(),
    });
    for (d, n) in node.subs {
        flatten(out, d, n, Some(me), depth + 1);
    }
}

struct ListCtx {
    pattern: NamePattern,
    files: EventFiles,
    parser: Parser,
    buf: Vec<u8>,
    path: PathBuf,
    listing: ListBuf,
}

impl ListCtx {
    /// Whether `dir` is a conversation (as [`is_conversation_dir`] tells),
    /// with its counts and sub-agents.
    ///
    /// [`is_conversation_dir`]: super::is_conversation_dir
    fn probe(&mut self, dir: &Path, depth: usize) -> Option<WalkNode> {
        self.path.as_mut_os_string().clear();
        self.path.push(dir);
        self.path.push(DIR_EVENTS);
        let listed = self
            .files
            .rescan_with(&self.path, &mut self.listing, self.pattern)
            .is_ok();
        if !listed {
            self.files.reset(self.pattern);
            self.files.finish();
        }
        // The test `is_conversation_dir` makes: a name of the SDK 1.30+
        // pattern, whatever pattern the counts use.
        let has_event = listed
            && self.files.files().any(|f| {
                f.id().is_some()
                    || parse_event_name(f.name(), NamePattern::FiveOrMoreDigits).is_ok()
            });
        if !has_event && !is_conversation_dir_with(dir, &mut self.parser, &mut self.buf) {
            return None;
        }
        let mut node = WalkNode {
            events: self.files.len(),
            event_files: self.files.event_file_count(),
            files: self.files.files().len(),
            gap: self.files.gap(),
            subs: Vec::new(),
        };
        let subagents = dir.join(DIR_SUBAGENTS);
        if depth < MAX_SUBAGENT_DEPTH
            && let Ok(rd) = fs::read_dir(&subagents)
        {
            let mut subs: Vec<PathBuf> = rd
                .flatten()
                .filter(entry_is_dir)
                .map(|e| e.path())
                .collect();
            subs.sort();
            for sub in subs {
                if let Some(n) = self.probe(&sub, depth + 1) {
                    node.subs.push((sub, n));
                }
            }
        }
        Some(node)
    }
}
