//! Reading a conversation directory, or its files' contents.
//!
//! A [`Reader`] owns what can be reused from one conversation to the next:
//! one JSON [`Parser`], a path buffer, and the size of the last
//! conversation's event bytes (to reserve the next one's buffer at once).
//! Every event file of a conversation is read back to back into one byte
//! buffer the [`Conversation`] owns (`source::read_into`: open, `fstat`,
//! read, with the [`MAX_SIZE`](crate::MAX_SIZE) limit checked before
//! reading), parsed once, up to the reader's budget for one conversation
//! ([`EVENT_BUDGET`] unless [`Reader::set_event_budget`] says otherwise):
//! what the conversation holds of its event files is never more than the
//! budget, and a file past it is left unread and recorded as
//! [`FileStatus::Unreadable`](super::FileStatus::Unreadable) with
//! [`SourceError::OverBudget`]. Each event's envelope is taken in one pass
//! over the root object's members ([`Event`]). Reading an event costs no heap allocation
//! beyond the growth of the conversation's buffers, and the standard
//! library's directory listing (which allocates each entry's name);
//! [`Reader::read_into`] reuses a conversation's buffers as well (the
//! `openhands_alloc` test counts).
//!
//! `base_state.json` and `meta.json` are rewritten in place by their
//! writers, so they are always read into memory, never mapped; each keeps
//! its raw bytes and its own error ([`JsonFile`]).
//!
//! Reading fails only when the directory cannot be listed or holds no
//! conversation (no `base_state.json`, no `meta.json`, and no file of
//! `events/` named like an event file). Every other fault is recorded where
//! it happened: a file's [`FileError`], `events/` or `subagents/` that
//! cannot be listed.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::json::{Document, Parser};
use crate::source::SourceError;
use crate::source::dir::{Dir, DirEntryKind, EntryStat, FileFault, ListBuf};

use super::conversation::Conversation;
use super::discover::{conversation_dir_cow, is_conversation_dir_at, marks_conversation};
use super::envelope::{EventRec, Txt};
use super::error::ReadError;
use super::event_files::NamePattern;
use super::json_file::{Bad, in_memory_check};
use super::listed::EventsListing;
use super::{DIR_EVENTS, DIR_SUBAGENTS, FILE_BASE_STATE, FILE_META, MAX_SIZE};

/// The error of a path that should be a directory and is a file.
pub(super) fn not_a_directory() -> io::Error {
    io::Error::new(io::ErrorKind::NotADirectory, "not a directory")
}

fn push_txt(strings: &mut String, s: &str) -> Option<Txt> {
    let len = u32::try_from(s.len()).ok()?;
    let start = strings.len();
    strings.push_str(s);
    Some(Txt { start, len })
}

/// Which file of a conversation a document handed to a visitor is
/// ([`Reader::read_into_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parsed {
    /// `base_state.json`.
    State,
    /// `meta.json`.
    Meta,
    /// The event of this index.
    Event {
        /// Its index in the sequence.
        index: u64,
    },
}

/// Parses an event file's bytes and takes its envelope, in one pass over
/// the root object's members.
fn ingest(
    parser: &mut Parser,
    bytes: &[u8],
    strings: &mut String,
    rec: &mut EventRec,
    visit: &mut dyn FnMut(Parsed, &Document<'_>),
) -> Result<(), Bad> {
    let doc = parser.parse(bytes).map_err(Bad::Json)?;
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        return Err(Bad::NotAnObject(root.json_type()));
    };
    for m in obj.iter() {
        let slot = match m.key {
            "kind" => &mut rec.kind,
            "id" => &mut rec.id,
            "timestamp" => &mut rec.timestamp,
            "source" => &mut rec.source,
            "parent_id" => {
                rec.has_parent = !m.value.is_null();
                &mut rec.parent_id
            }
            _ => continue,
        };
        *slot = m.value.as_str().and_then(|s| push_txt(strings, s));
    }
    visit(Parsed::Event { index: rec.index }, &doc);
    Ok(())
}

fn new_rec(file: u32, index: u64, start: usize) -> EventRec {
    EventRec {
        file,
        index,
        raw: (start, start),
        kind: None,
        id: None,
        timestamp: None,
        source: None,
        parent_id: None,
        has_parent: false,
        ok: false,
    }
}

/// One file given to [`parse`]: its path relative to the conversation
/// directory (with `/`) and its contents. Implemented for pairs of anything
/// string-like and anything byte-like, and references to such pairs, so
/// that maps and vectors of files can be passed by value or by reference.
pub trait FileEntry {
    /// The relative path.
    fn path(&self) -> &str;
    /// The contents.
    fn bytes(&self) -> &[u8];
}

impl<K: AsRef<str>, V: AsRef<[u8]>> FileEntry for (K, V) {
    fn path(&self) -> &str {
        self.0.as_ref()
    }
    fn bytes(&self) -> &[u8] {
        self.1.as_ref()
    }
}

impl<K: AsRef<str>, V: AsRef<[u8]>> FileEntry for &(K, V) {
    fn path(&self) -> &str {
        self.0.as_ref()
    }
    fn bytes(&self) -> &[u8] {
        self.1.as_ref()
    }
}

/// The most bytes of event files a [`Reader`] holds for one conversation
/// unless told otherwise ([`Reader::set_event_budget`]): 1 GiB, the
/// [`MAX_SIZE`] of one file.
pub const EVENT_BUDGET: u64 = MAX_SIZE;

/// Reads conversations, keeping its buffers from one to the next.
#[derive(Debug)]
pub struct Reader {
    parser: Parser,
    pattern: NamePattern,
    path: PathBuf,
    scratch: Vec<u8>,
    hint: usize,
    listing: ListBuf,
    /// Events below this index are not read (left out of the
    /// conversation): the changes-since scan reads only what is new.
    pub(crate) skip_below: u64,
    budget: u64,
    /// The event files read by the last read, by index, with what their
    /// `fstat` told before reading them (those whose size was the bytes
    /// read): the changes-since scan takes a file's stamp from here
    /// instead of a `stat` of its own.
    read_stats: Vec<(u64, EntryStat)>,
    /// `events/` of the last [`read_events_into`](Self::read_events_into),
    /// kept open to `stat` its files relative to it.
    events_kept: Option<Dir>,
    /// The `events/` listing the next read of this directory takes instead
    /// of listing it ([`prime_events`](Self::prime_events)).
    primed: Option<(PathBuf, EventsListing)>,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            parser: Parser::default(),
            pattern: NamePattern::default(),
            path: PathBuf::new(),
            scratch: Vec::new(),
            hint: 0,
            listing: ListBuf::default(),
            budget: EVENT_BUDGET,
            skip_below: 0,
            read_stats: Vec::new(),
            events_kept: None,
            primed: None,
        }
    }
}

/// The largest event buffer a [`Reader`] reserves ahead from the last
/// conversation's size.
const MAX_HINT: usize = 64 << 20;

impl Reader {
    /// A reader matching event file names with the SDK 1.30+ pattern.
    pub fn new() -> Self {
        Self::default()
    }

    /// A reader matching event file names with `pattern`.
    pub fn with_pattern(pattern: NamePattern) -> Self {
        Reader {
            pattern,
            ..Self::default()
        }
    }

    /// The file-name pattern.
    pub fn pattern(&self) -> NamePattern {
        self.pattern
    }

    /// Sets the file-name pattern.
    pub fn set_pattern(&mut self, pattern: NamePattern) {
        self.pattern = pattern;
    }

    /// The most bytes of event files the reader holds for one conversation
    /// (sub-agents are conversations of their own): [`EVENT_BUDGET`] unless
    /// set.
    pub fn event_budget(&self) -> u64 {
        self.budget
    }

    /// Sets the most bytes of event files the reader holds for one
    /// conversation. The event files are read in index order; one that
    /// would take the conversation's event bytes past the budget is not
    /// read, and is [`FileStatus::Unreadable`](super::FileStatus::Unreadable)
    /// with a [`SourceError::OverBudget`], as is every later one that does
    /// not fit in what is left. The budget bounds the event bytes; the
    /// state and the meta are held besides (each at most [`MAX_SIZE`]).
    pub fn set_event_budget(&mut self, bytes: u64) {
        self.budget = bytes;
    }

    /// Gives the next read of `dir` (by [`read_into_with`](Self::read_into_with)
    /// and the reads built on it, the same path) the names of its `events/`
    /// as [`discover_listed`](super::discover_listed) listed them, so that it
    /// does not list the directory again. The read of any other path drops
    /// them. A listing is a snapshot: see [`EventsListing`].
    pub fn prime_events(&mut self, dir: &Path, events: EventsListing) {
        let mut path = self.primed.take().map(|(p, _)| p).unwrap_or_default();
        path.clear();
        path.push(dir);
        self.primed = Some((path, events));
    }

    /// The reader's JSON parser, to decode with between reads.
    pub fn parser(&mut self) -> &mut Parser {
        &mut self.parser
    }

    /// Reads the conversation directory `path` names, or the conversation
    /// of the file it names ([`conversation_dir`](super::conversation_dir)).
    pub fn read(&mut self, path: impl AsRef<Path>) -> Result<Conversation, ReadError> {
        let mut conv = Conversation::new();
        conv.blob.reserve(self.hint.min(MAX_HINT));
        self.read_into(path, &mut conv)?;
        Ok(conv)
    }

    /// Like [`read`](Self::read), into `conv`, reusing its buffers. On error
    /// `conv` is left empty.
    ///
    /// Files are opened relative to their open directory and directories
    /// listed into the reader's reused buffer (see [`source`](crate::source)), so that
    /// reading one more conversation of the same shape costs no heap
    /// allocation (sub-agents aside: finding one allocates its paths).
    pub fn read_into(
        &mut self,
        path: impl AsRef<Path>,
        conv: &mut Conversation,
    ) -> Result<(), ReadError> {
        self.read_into_with(path, conv, |_, _| {})
    }

    /// Like [`read_into`](Self::read_into), handing `visit` each file that
    /// parses as a JSON object while its parsed document is at hand:
    /// `base_state.json`, `meta.json`, then each event in index order. An
    /// indexer that needs a few members beyond the envelope takes them
    /// here instead of parsing the file a second time ([`Event::open`](super::Event::open)).
    pub fn read_into_with(
        &mut self,
        path: impl AsRef<Path>,
        conv: &mut Conversation,
        mut visit: impl FnMut(Parsed, &Document<'_>),
    ) -> Result<(), ReadError> {
        conv.clear();
        self.forget_files();
        let primed = self
            .primed
            .take()
            .filter(|(dir, _)| dir.as_path() == path.as_ref())
            .map(|(_, events)| events);
        let r = self.read_into_inner(path.as_ref(), primed.as_ref(), conv, &mut visit);
        if r.is_err() {
            conv.clear();
        }
        r
    }

    fn read_into_inner(
        &mut self,
        path: &Path,
        primed: Option<&EventsListing>,
        conv: &mut Conversation,
        visit: &mut dyn FnMut(Parsed, &Document<'_>),
    ) -> Result<(), ReadError> {
        // A directory is opened at once (most paths read are one); any
        // other path, or one that cannot be opened, takes the way that
        // names it (a file of a conversation) or its error.
        let (dir, d) = match Dir::open(path) {
            Ok(d) => (Cow::Borrowed(path), d),
            Err(_) => {
                let dir = conversation_dir_cow(path)?;
                let d = Dir::open(&dir).map_err(|e| ReadError::io(&dir, e))?;
                (dir, d)
            }
        };
        conv.dir.push(&*dir);
        if let Some(n) = dir.file_name() {
            conv.name.push_str(&n.to_string_lossy());
        }
        let (mut has_events, mut has_subagents) = (false, false);
        let (mut has_state, mut has_meta) = (false, false);
        // `events` or `subagents` that is there but is not a directory.
        let (mut events_not_dir, mut subagents_not_dir) = (false, false);
        let listed = d.for_each(&mut self.listing, |name, kind| {
            let s = name.to_string_lossy();
            match &*s {
                FILE_BASE_STATE => has_state = true,
                FILE_META => has_meta = true,
                _ if d.is_dir(name, kind) => {
                    has_events |= s == DIR_EVENTS;
                    has_subagents |= s == DIR_SUBAGENTS;
                    conv.dirs.push(&s);
                }
                _ => {
                    events_not_dir |= s == DIR_EVENTS;
                    subagents_not_dir |= s == DIR_SUBAGENTS;
                    conv.others.push(&s);
                }
            }
        });
        listed.map_err(|e| ReadError::io(&dir, e))?;
        conv.others.sort();
        conv.dirs.sort();
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        path.push(&conv.dir);
        if has_state {
            conv.state
                .read_at(&d, FILE_BASE_STATE, &path, &mut self.parser, &mut |doc| {
                    visit(Parsed::State, doc)
                });
        }
        if has_meta {
            conv.meta
                .read_at(&d, FILE_META, &path, &mut self.parser, &mut |doc| {
                    visit(Parsed::Meta, doc)
                });
        }
        path.push(DIR_EVENTS);
        conv.files.reset(self.pattern);
        let mut events_dir = None;
        if has_events {
            let listed = match d.open_dir(OsStr::new(DIR_EVENTS)) {
                Ok(ev) => {
                    let r = match primed {
                        // Discovery's listing: sorted out as this one would be.
                        Some(names) => {
                            names.fill(&mut conv.files);
                            Ok(())
                        }
                        None => conv.files.rescan_dir(&ev, &mut self.listing, self.pattern),
                    };
                    events_dir = Some(ev);
                    r
                }
                // Gone since the listing: as if it never was.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    conv.files.finish();
                    Ok(())
                }
                Err(e) => Err(e),
            };
            if let Err(e) = listed {
                conv.events_error = Some(ReadError::io(&path, e));
                conv.files.reset(self.pattern);
                conv.files.finish();
                events_dir = None;
            }
        } else {
            conv.files.finish();
            if events_not_dir {
                conv.events_error = Some(ReadError::io(&path, not_a_directory()));
            }
        }
        let any_event_name = conv.files.files().any(|f| f.id().is_some());
        // An `events/` that cannot be listed may hold events; an `events`
        // that is a file holds none, and alone makes no conversation.
        let unlisted = has_events && conv.events_error.is_some();
        if !has_state && !has_meta && !any_event_name && !unlisted {
            self.path = path;
            return Err(ReadError::NoConversation {
                path: conv.dir.clone(),
            });
        }
        self.read_events(conv, events_dir.as_ref(), &mut path, visit);
        path.pop();
        if has_subagents {
            path.push(DIR_SUBAGENTS);
            // Sub-agents are few: their names are kept as listed (not UTF-8
            // included), so each stays reachable by its real name.
            // (name, is a link), as listed.
            let mut listed_names: Vec<(std::ffi::OsString, bool)> = Vec::new();
            let listed = d.open_dir(OsStr::new(DIR_SUBAGENTS)).and_then(|sd| {
                sd.for_each(&mut self.listing, |name, kind| {
                    if sd.is_dir(name, kind) {
                        let link = match kind {
                            DirEntryKind::Dir => false,
                            DirEntryKind::Symlink => true,
                            // The listing did not say: ask.
                            _ => fs::symlink_metadata(path.join(name))
                                .is_ok_and(|m| m.file_type().is_symlink()),
                        };
                        listed_names.push((name.to_os_string(), link));
                    }
                })?;
                Ok(sd)
            });
            match listed {
                Ok(sd) => {
                    // This conversation's real path, when a link needs it.
                    let mut here: Option<Option<PathBuf>> = None;
                    let mut found: Vec<(String, std::ffi::OsString)> = Vec::new();
                    for (os, link) in listed_names {
                        let name = os.to_string_lossy().into_owned();
                        path.push(&os);
                        // A link back to this conversation, or above it:
                        // recorded, never followed.
                        let loops = link
                            && here
                                .get_or_insert_with(|| fs::canonicalize(&conv.dir).ok())
                                .as_ref()
                                .zip(fs::canonicalize(&path).ok())
                                .is_some_and(|(here, target)| here.starts_with(&target));
                        if loops {
                            conv.subagent_loops.push(name);
                        } else if is_conversation_dir_at(
                            Some((&sd, &os)),
                            &path,
                            &mut self.parser,
                            &mut self.scratch,
                        ) {
                            found.push((name, os));
                        }
                        path.pop();
                    }
                    found.sort_unstable();
                    for (name, os) in found {
                        conv.subagents.push(&name);
                        conv.subagent_os.push(os);
                    }
                    conv.subagent_loops.sort_unstable();
                }
                Err(e) => conv.subagents_error = Some(ReadError::io(&path, e)),
            }
            path.pop();
        } else if subagents_not_dir {
            path.push(DIR_SUBAGENTS);
            conv.subagents_error = Some(ReadError::io(&path, not_a_directory()));
            path.pop();
        }
        self.hint = conv.blob.len();
        self.path = path;
        Ok(())
    }

    /// Reads the files of the sequence, from index
    /// [`skip_below`](Self::skip_below) on, from `events_dir` (the open
    /// `events/`; `None` when it could not be opened: each file is then
    /// unreadable), `path` naming it in errors.
    fn read_events(
        &mut self,
        conv: &mut Conversation,
        events_dir: Option<&Dir>,
        path: &mut PathBuf,
        visit: &mut dyn FnMut(Parsed, &Document<'_>),
    ) {
        conv.events.reserve(conv.files.len());
        self.read_stats.clear();
        for i in 0..conv.files.len() {
            let Some(&pos) = conv.files.sequence_positions().get(i) else {
                break;
            };
            if (i as u64) < self.skip_below {
                continue;
            }
            let start = conv.blob.len();
            let mut rec = new_rec(pos, i as u64, start);
            let name = conv.files.name_of(pos);
            let left = self.budget.saturating_sub(conv.blob.len() as u64);
            let read = match events_dir {
                Some(ev) => ev.read_file_meta_within(OsStr::new(name), &mut conv.blob, left),
                None => Err(FileFault::NotAFile),
            };
            match read {
                Ok((n, meta)) => {
                    if n as u64 == meta.len() {
                        self.read_stats.push((i as u64, EntryStat::of(&meta)));
                    }
                    rec.raw = (start, conv.blob.len());
                    let bytes = conv.blob.get(start..).unwrap_or(&[]);
                    if let Err(b) =
                        ingest(&mut self.parser, bytes, &mut conv.strings, &mut rec, visit)
                    {
                        path.push(name);
                        conv.files.mark_bad(pos, b.at(path));
                        path.pop();
                    } else {
                        rec.ok = true;
                    }
                }
                Err(f) => {
                    path.push(name);
                    let e = f.at(path);
                    path.pop();
                    conv.files.mark_bad(pos, e.into());
                }
            }
            conv.events.push(rec);
        }
    }

    /// Reads only the event files of the conversation directory `dir`,
    /// from index [`skip_below`](Self::skip_below) on, into `conv`: the
    /// directory itself is not listed, `base_state.json`, `meta.json` and
    /// `subagents/` are not read (the conversation holds none of them).
    /// For the changes-since scan, which knows from their stamps that
    /// they did not change. Fails when `events/` cannot be opened or
    /// listed (`conv` is then left empty).
    pub(crate) fn read_events_into(
        &mut self,
        dir: &Path,
        conv: &mut Conversation,
    ) -> io::Result<()> {
        conv.clear();
        self.forget_files();
        conv.dir.push(dir);
        if let Some(n) = dir.file_name() {
            conv.name.push_str(&n.to_string_lossy());
        }
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        path.push(dir);
        path.push(DIR_EVENTS);
        let listed = Dir::open(&path).and_then(|ev| {
            conv.files
                .rescan_dir(&ev, &mut self.listing, self.pattern)?;
            Ok(ev)
        });
        let r = match listed {
            Ok(ev) => {
                self.read_events(conv, Some(&ev), &mut path, &mut |_, _| {});
                self.hint = conv.blob.len();
                self.events_kept = Some(ev);
                Ok(())
            }
            Err(e) => {
                conv.clear();
                Err(e)
            }
        };
        self.path = path;
        r
    }

    /// What the `fstat` of the event file of index `index` told when the
    /// last read read it whole; `None` when it did not.
    pub(crate) fn read_stat(&self, index: u64) -> Option<EntryStat> {
        // Pushed in the sequence's order, so sorted by index.
        let at = self
            .read_stats
            .binary_search_by_key(&index, |&(i, _)| i)
            .ok()?;
        self.read_stats.get(at).map(|&(_, s)| s)
    }

    /// `events/` of the last [`read_events_into`](Self::read_events_into),
    /// if it succeeded and no read came after it.
    pub(crate) fn events_dir(&self) -> Option<&Dir> {
        self.events_kept.as_ref()
    }

    /// Forgets what the last read kept of its files (their stats, the
    /// open `events/`).
    fn forget_files(&mut self) {
        self.read_stats.clear();
        self.events_kept = None;
    }

    /// Reads a conversation from its files' contents, without touching the
    /// file system: `base_state.json` and `meta.json` by name, each file of
    /// `events/` as `events/<name>`, other top-level files by name, and any
    /// deeper file by its relative path (`subagents/<hex>/base_state.json`
    /// makes `<hex>` a sub-agent when it is a conversation). `name` is the
    /// directory's name. Paths use `/`; a path given twice counts once (the
    /// last contents).
    ///
    /// The result is what [`read`](Self::read) gives for a directory holding
    /// those files, except that a directory with no file is not seen, and no
    /// conversation is an empty one rather than an error.
    pub fn parse<I>(&mut self, name: &str, files: I) -> Conversation
    where
        I: IntoIterator,
        I::Item: FileEntry,
    {
        let mut conv = Conversation::new();
        self.parse_into(name, files, &mut conv);
        conv
    }

    /// Like [`parse`](Self::parse), into `conv`, reusing its buffers.
    pub fn parse_into<I>(&mut self, name: &str, files: I, conv: &mut Conversation)
    where
        I: IntoIterator,
        I::Item: FileEntry,
    {
        conv.clear();
        self.forget_files();
        conv.dir.push(name);
        conv.name.push_str(name);
        let items: Vec<I::Item> = files.into_iter().collect();
        // Last contents of each path, sorted by path.
        let mut paths: Vec<(&str, &[u8])> = Vec::with_capacity(items.len());
        for f in items.iter() {
            paths.push((f.path(), f.bytes()));
        }
        paths.reverse();
        paths.sort_by(|a, b| a.0.cmp(b.0));
        paths.dedup_by(|a, b| a.0 == b.0);
        let lookup = |p: &str| -> Option<&[u8]> {
            paths
                .binary_search_by(|e| e.0.cmp(p))
                .ok()
                .and_then(|i| paths.get(i))
                .map(|e| e.1)
        };
        let mut event_names: Vec<&str> = Vec::new();
        let mut sub_names: Vec<&str> = Vec::new();
        // `base_state.json` or `meta.json` given only by deeper paths: a
        // directory, which `read` finds and cannot read.
        let (mut state_is_dir, mut meta_is_dir) = (false, false);
        for &(p, _) in &paths {
            match p.split_once('/') {
                None => match p {
                    FILE_BASE_STATE | FILE_META => {}
                    _ => conv.others.push(p),
                },
                Some((d, _)) if d == FILE_BASE_STATE => state_is_dir = true,
                Some((d, _)) if d == FILE_META => meta_is_dir = true,
                Some((d, rest)) => {
                    if conv.dirs.last() != Some(d) {
                        conv.dirs.push(d);
                    }
                    let first = rest.split('/').next().unwrap_or(rest);
                    if d == DIR_EVENTS {
                        event_names.push(first);
                    } else if d == DIR_SUBAGENTS {
                        sub_names.push(first);
                    }
                }
            }
        }
        // Paths are sorted whole, not by their first component: `events/`,
        // `events/.t` and `events//` give the names "", ".t" and "" in that
        // order, so a plain dedup would keep "" twice.
        conv.dirs.sort();
        conv.dirs.dedup();
        event_names.sort_unstable();
        event_names.dedup();
        sub_names.sort_unstable();
        sub_names.dedup();
        let base = PathBuf::from(name);
        if let Some(b) = lookup(FILE_BASE_STATE) {
            conv.state
                .set(&base.join(FILE_BASE_STATE), b, &mut self.parser);
        } else if state_is_dir {
            conv.state.not_a_file(&base.join(FILE_BASE_STATE));
        }
        if let Some(b) = lookup(FILE_META) {
            conv.meta.set(&base.join(FILE_META), b, &mut self.parser);
        } else if meta_is_dir {
            conv.meta.not_a_file(&base.join(FILE_META));
        }
        conv.files.reset(self.pattern);
        for n in &event_names {
            conv.files.add(n, false);
        }
        conv.files.finish();
        conv.events.reserve(conv.files.len());
        let events_dir = base.join(DIR_EVENTS);
        let mut key = String::new();
        for i in 0..conv.files.len() {
            let Some(&pos) = conv.files.sequence_positions().get(i) else {
                break;
            };
            let fname = conv.files.name_of(pos);
            key.clear();
            key.push_str(DIR_EVENTS);
            key.push('/');
            key.push_str(fname);
            let path = events_dir.join(fname);
            let start = conv.blob.len();
            let mut rec = new_rec(pos, i as u64, start);
            let left = self.budget.saturating_sub(conv.blob.len() as u64);
            let checked = match lookup(&key) {
                Some(b) => in_memory_check(&path, b).and_then(|()| {
                    if b.len() as u64 > left {
                        Err(SourceError::OverBudget {
                            path: path.clone(),
                            size: b.len() as u64,
                            left,
                        })
                    } else {
                        Ok(b)
                    }
                }),
                // Only deeper paths: a directory.
                None => Err(SourceError::NotAFile { path: path.clone() }),
            };
            match checked {
                Ok(b) => {
                    conv.blob.extend_from_slice(b);
                    rec.raw = (start, conv.blob.len());
                    let bytes = conv.blob.get(start..).unwrap_or(&[]);
                    match ingest(
                        &mut self.parser,
                        bytes,
                        &mut conv.strings,
                        &mut rec,
                        &mut |_, _| {},
                    ) {
                        Ok(()) => rec.ok = true,
                        Err(b) => conv.files.mark_bad(pos, b.at(&path)),
                    }
                }
                Err(e) => conv.files.mark_bad(pos, e.into()),
            }
            conv.events.push(rec);
        }
        for s in sub_names {
            let prefix = format!("{DIR_SUBAGENTS}/{s}/");
            let state = lookup(&format!("{prefix}{FILE_BASE_STATE}"))
                .is_some_and(|b| marks_conversation(&mut self.parser, b));
            // As `is_conversation_dir` finds a sub-agent on disk: an entry of
            // its `events/` (a file or a directory) named by the SDK 1.30+
            // pattern, whatever the reader's own pattern.
            let events_prefix = format!("{prefix}{DIR_EVENTS}/");
            let has_event = state
                || paths.iter().any(|(p, _)| {
                    p.strip_prefix(&events_prefix).is_some_and(|n| {
                        let entry = n.split('/').next().unwrap_or(n);
                        super::parse_event_name(entry, NamePattern::FiveOrMoreDigits).is_ok()
                    })
                });
            if has_event {
                conv.subagents.push(s);
            }
        }
    }
}

/// Reads the conversation directory `path` names, or the conversation of
/// the file it names, with a fresh [`Reader`]. A file that cannot be read
/// or parsed is recorded on the conversation, never fatal: this fails only
/// when the directory cannot be listed or holds no conversation.
pub fn read_conversation(path: impl AsRef<Path>) -> Result<Conversation, ReadError> {
    Reader::new().read(path)
}

/// Reads a conversation from its files' contents, without touching the file
/// system (see [`Reader::parse`]).
pub fn parse<I>(name: &str, files: I) -> Conversation
where
    I: IntoIterator,
    I::Item: FileEntry,
{
    Reader::new().parse(name, files)
}
