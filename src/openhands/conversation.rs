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

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::json::{Document, FieldValue, JsonError, JsonType, Parser, Value};
use crate::source::dir::{Dir, FileFault, ListBuf};
use crate::source::{self, SourceError};

use super::discover::{conversation_dir_cow, is_conversation_dir_with, marks_conversation};
use super::event::{EventRec, Events, Txt};
use super::events::{EventFiles, File, NameList, NamePattern};
use super::state::{Meta, State};
use super::stored::{
    ActionEvent, AgentErrorEvent, Condensation, MessageEvent, ObservationEvent, SystemPromptEvent,
    UserRejectObservation,
};
use super::{DIR_EVENTS, DIR_SUBAGENTS, Event, FILE_BASE_STATE, FILE_META, MAX_SIZE};

/// Why a file of a conversation did not read as a JSON object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read: an I/O error, over
    /// [`MAX_SIZE`](crate::MAX_SIZE), empty, or not a regular file.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The file is not JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error, with its byte offset.
        source: JsonError,
    },
    /// The file is JSON but not an object.
    #[error("{}: a JSON {} where an object was expected", path.display(), found.as_str())]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// What it holds instead.
        found: JsonType,
    },
}

impl FileError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FileError::Source(e) => e.path(),
            FileError::Json { path, .. } | FileError::NotAnObject { path, .. } => path,
        }
    }

    /// The byte offset of the fault in the file, when known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            FileError::Json { source, .. } => source.offset(),
            _ => None,
        }
    }

    /// Whether the file's bytes could not be had: the operating system
    /// refused to open or read it, or it is over what was left of the
    /// reader's budget ([`Reader::set_event_budget`]). Such a file is not
    /// known to be malformed.
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            FileError::Source(SourceError::Io { .. } | SourceError::OverBudget { .. })
        )
    }

    /// Whether the file was empty (which the SDK's iteration skips
    /// silently).
    pub fn is_empty_file(&self) -> bool {
        matches!(self, FileError::Source(SourceError::Empty { .. }))
            || matches!(self, FileError::Json { source, .. } if source.kind() == crate::json::JsonErrorKind::Empty)
    }
}

/// Why a conversation could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The path could not be examined, or the directory listed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The directory holds no conversation.
    #[error("{}: no conversation here (no base_state.json, meta.json or event file)", path.display())]
    NoConversation {
        /// The directory.
        path: PathBuf,
    },
    /// The path is a file that is not one a conversation directory is
    /// found by (`base_state.json`, `meta.json`, an event file).
    #[error("{}: not a file of a conversation directory", path.display())]
    NotAConversationFile {
        /// The file.
        path: PathBuf,
    },
}

impl ReadError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        ReadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Why a file could not be opened for decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The file could not be read (see its [`FileError`]).
    #[error("the file could not be read")]
    Unread,
    /// The bytes are not JSON.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// The JSON is not an object.
    #[error("a JSON {} where an object was expected", .0.as_str())]
    NotAnObject(JsonType),
}

impl DecodeError {
    pub(crate) fn from_file_error(e: &FileError) -> Self {
        match e {
            FileError::Source(_) => DecodeError::Unread,
            FileError::Json { source, .. } => DecodeError::Json(source.clone()),
            FileError::NotAnObject { found, .. } => DecodeError::NotAnObject(*found),
        }
    }
}

/// A parsed JSON object of a conversation (an event, the state, the meta),
/// whose members the typed views decode on demand, borrowing it.
#[derive(Debug)]
pub struct Doc<'p> {
    doc: Document<'p>,
}

impl<'p> Doc<'p> {
    /// Parses `bytes`, which must hold a JSON object.
    pub fn open(parser: &'p mut Parser, bytes: &'p [u8]) -> Result<Doc<'p>, DecodeError> {
        let doc = parser.parse(bytes)?;
        let t = doc.root().json_type();
        if t != JsonType::Object {
            return Err(DecodeError::NotAnObject(t));
        }
        Ok(Doc { doc })
    }

    /// The parsed document.
    pub fn document(&self) -> &Document<'p> {
        &self.doc
    }

    /// The root object, as a value.
    pub fn root(&self) -> Value<'_> {
        self.doc.root()
    }

    /// Decodes the root object as any lossless type (a
    /// [`json_object!`](crate::json_object) type, or one implementing
    /// [`FieldValue`]).
    pub fn decode<'s, T: FieldValue<'s>>(&'s self) -> Option<T> {
        T::decode_field(self.doc.root())
    }

    /// Decodes a `MessageEvent` (whatever the `kind`: check it first).
    pub fn message(&self) -> MessageEvent<'_> {
        MessageEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `ActionEvent`.
    pub fn action(&self) -> ActionEvent<'_> {
        ActionEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `ObservationEvent`.
    pub fn observation(&self) -> ObservationEvent<'_> {
        ObservationEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `AgentErrorEvent`.
    pub fn agent_error(&self) -> AgentErrorEvent<'_> {
        AgentErrorEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `Condensation`.
    pub fn condensation(&self) -> Condensation<'_> {
        Condensation::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `SystemPromptEvent`.
    pub fn system_prompt(&self) -> SystemPromptEvent<'_> {
        SystemPromptEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `UserRejectObservation`.
    pub fn user_reject(&self) -> UserRejectObservation<'_> {
        UserRejectObservation::decode(self.root()).unwrap_or_default()
    }

    /// Decodes `base_state.json`.
    pub fn state(&self) -> State<'_> {
        State::decode(self.root()).unwrap_or_default()
    }

    /// Decodes `meta.json`.
    pub fn meta(&self) -> Meta<'_> {
        Meta::decode(self.root()).unwrap_or_default()
    }
}

/// `base_state.json` or `meta.json` as read: its raw bytes, and why it did
/// not read as a JSON object.
#[derive(Debug, Default)]
pub struct JsonFile {
    raw: Vec<u8>,
    error: Option<FileError>,
    present: bool,
}

impl JsonFile {
    /// The bytes as read (empty when the file could not be read).
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Why the file did not read as a JSON object.
    pub fn error(&self) -> Option<&FileError> {
        self.error.as_ref()
    }

    /// Whether the file read as a JSON object.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// Parses the file for decoding ([`Doc::state`], [`Doc::meta`]).
    pub fn open<'p>(&'p self, parser: &'p mut Parser) -> Result<Doc<'p>, DecodeError> {
        if let Some(e) = &self.error {
            return Err(DecodeError::from_file_error(e));
        }
        Doc::open(parser, &self.raw)
    }

    fn clear(&mut self) {
        self.raw.clear();
        self.error = None;
        self.present = false;
    }

    /// Reads and checks a file (always read, never mapped).
    fn read(&mut self, path: &Path, parser: &mut Parser) {
        self.present = true;
        if let Err(e) = source::read_into(path, &mut self.raw) {
            self.error = Some(e.into());
            return;
        }
        self.error = check_object(parser, &self.raw).err().map(|b| b.at(path));
    }

    /// Reads and checks the file `name` of the open directory `dir`,
    /// whose path is `dir_path` (always read, never mapped).
    fn read_at(
        &mut self,
        dir: &Dir,
        name: &str,
        dir_path: &Path,
        parser: &mut Parser,
        visit: &mut dyn FnMut(&Document<'_>),
    ) {
        self.present = true;
        if let Err(f) = dir.read_file(OsStr::new(name), &mut self.raw) {
            self.error = Some(f.at(&dir_path.join(name)).into());
            return;
        }
        self.error = check_object_with(parser, &self.raw, visit)
            .err()
            .map(|b| b.at(&dir_path.join(name)));
    }

    /// Records a path that is there but is not a file (a directory).
    fn not_a_file(&mut self, path: &Path) {
        self.present = true;
        self.error = Some(
            SourceError::NotAFile {
                path: path.to_path_buf(),
            }
            .into(),
        );
    }

    /// Takes a file's contents.
    fn set(&mut self, path: &Path, bytes: &[u8], parser: &mut Parser) {
        self.present = true;
        if let Err(e) = in_memory_check(path, bytes) {
            self.error = Some(e.into());
            return;
        }
        self.raw.extend_from_slice(bytes);
        self.error = check_object(parser, &self.raw).err().map(|b| b.at(path));
    }
}

/// Reads the `base_state.json` of `dir`: `Ok` only when it is a JSON object.
pub fn read_state(dir: &Path) -> Result<JsonFile, FileError> {
    let mut f = JsonFile::default();
    f.read(&dir.join(FILE_BASE_STATE), &mut Parser::new());
    match f.error.take() {
        Some(e) => Err(e),
        None => Ok(f),
    }
}

/// A fault found parsing a file, before its path is attached.
enum Bad {
    Json(JsonError),
    NotAnObject(JsonType),
}

impl Bad {
    fn at(self, path: &Path) -> FileError {
        match self {
            Bad::Json(source) => FileError::Json {
                path: path.to_path_buf(),
                source,
            },
            Bad::NotAnObject(found) => FileError::NotAnObject {
                path: path.to_path_buf(),
                found,
            },
        }
    }
}

fn check_object(parser: &mut Parser, bytes: &[u8]) -> Result<(), Bad> {
    check_object_with(parser, bytes, &mut |_| {})
}

/// [`check_object`], handing the parsed object to `visit`.
fn check_object_with(
    parser: &mut Parser,
    bytes: &[u8],
    visit: &mut dyn FnMut(&Document<'_>),
) -> Result<(), Bad> {
    let doc = parser.parse(bytes).map_err(Bad::Json)?;
    match doc.root().json_type() {
        JsonType::Object => {
            visit(&doc);
            Ok(())
        }
        t => Err(Bad::NotAnObject(t)),
    }
}

/// The limits `source::read_into` applies to a file, for contents given in
/// memory.
fn in_memory_check(path: &Path, bytes: &[u8]) -> Result<(), SourceError> {
    if bytes.len() as u64 > MAX_SIZE {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    if bytes.is_empty() {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The error of a path that should be a directory and is a file.
fn not_a_directory() -> io::Error {
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

/// One conversation directory as read: its state, meta, events in index
/// order, every file of `events/` with its status, its other files and
/// directories, and its sub-agents.
#[derive(Debug, Default)]
pub struct Conversation {
    dir: PathBuf,
    name: String,
    state: JsonFile,
    meta: JsonFile,
    pub(crate) files: EventFiles,
    events: Vec<EventRec>,
    pub(crate) blob: Vec<u8>,
    pub(crate) strings: String,
    others: NameList,
    dirs: NameList,
    subagents: NameList,
    /// Links under `subagents/` that lead back to this conversation or
    /// above it: not read (that would never end), but recorded.
    subagent_loops: Vec<String>,
    /// The sub-agents' directory names as listed (read from disk), in the
    /// order of `subagents`; empty for a conversation made by [`parse`].
    subagent_os: Vec<std::ffi::OsString>,
    subagents_error: Option<ReadError>,
    events_error: Option<ReadError>,
}

impl Conversation {
    /// An empty conversation, to read into ([`Reader::read_into`]).
    pub fn new() -> Self {
        Self::default()
    }

    fn clear(&mut self) {
        self.dir.clear();
        self.name.clear();
        self.state.clear();
        self.meta.clear();
        self.files.reset(NamePattern::default());
        self.events.clear();
        self.blob.clear();
        self.strings.clear();
        self.others.clear();
        self.dirs.clear();
        self.subagents.clear();
        self.subagent_loops.clear();
        self.subagent_os.clear();
        self.subagents_error = None;
        self.events_error = None;
    }

    /// The directory (for [`parse`], the name it was given).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory's name: the conversation ID as 32 hex digits.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the directory has a `base_state.json`.
    pub fn has_state(&self) -> bool {
        self.state.present
    }

    /// `base_state.json`, when the directory has one.
    pub fn state_file(&self) -> Option<&JsonFile> {
        self.state.present.then_some(&self.state)
    }

    /// The raw bytes of `base_state.json`.
    pub fn state_raw(&self) -> Option<&[u8]> {
        self.state_file().map(JsonFile::raw)
    }

    /// Why `base_state.json` did not read as a JSON object.
    pub fn state_error(&self) -> Option<&FileError> {
        self.state.error()
    }

    /// Parses `base_state.json` for decoding ([`Doc::state`]); `None` when
    /// the directory has none.
    pub fn open_state<'p>(
        &'p self,
        parser: &'p mut Parser,
    ) -> Option<Result<Doc<'p>, DecodeError>> {
        self.state_file().map(|f| f.open(parser))
    }

    /// Whether the directory has a `meta.json` (agent server).
    pub fn has_meta(&self) -> bool {
        self.meta.present
    }

    /// `meta.json`, when the directory has one.
    pub fn meta_file(&self) -> Option<&JsonFile> {
        self.meta.present.then_some(&self.meta)
    }

    /// The raw bytes of `meta.json`.
    pub fn meta_raw(&self) -> Option<&[u8]> {
        self.meta_file().map(JsonFile::raw)
    }

    /// Why `meta.json` did not read as a JSON object.
    pub fn meta_error(&self) -> Option<&FileError> {
        self.meta.error()
    }

    /// Parses `meta.json` for decoding ([`Doc::meta`]); `None` when the
    /// directory has none.
    pub fn open_meta<'p>(&'p self, parser: &'p mut Parser) -> Option<Result<Doc<'p>, DecodeError>> {
        self.meta_file().map(|f| f.open(parser))
    }

    /// The events OpenHands reads, in index order from 0 up to the first
    /// missing index. A malformed file in the sequence is an event with an
    /// [`error`](Event::error).
    pub fn events(&self) -> Events<'_> {
        Events {
            conv: self,
            iter: self.events.iter(),
        }
    }

    /// The event at `index`.
    pub fn event(&self, index: usize) -> Option<Event<'_>> {
        self.events.get(index).map(|rec| Event { conv: self, rec })
    }

    /// How many events the sequence has (malformed ones included).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the sequence has no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How many events of the sequence read as JSON objects: what the SDK's
    /// iteration yields (`len(list(state.events))`) when it can load the
    /// conversation at all (it skips an empty file, and fails on any other
    /// malformed one).
    pub fn event_count(&self) -> usize {
        self.events.iter().filter(|e| e.ok).count()
    }

    /// How many files of `events/` are named `event-*.json`, matching the
    /// pattern or not (what the SDK counts before appending).
    pub fn event_file_count(&self) -> usize {
        self.files.event_file_count()
    }

    /// Every file of `events/` but the sidecars, by name, with its status.
    pub fn files(&self) -> impl ExactSizeIterator<Item = File<'_>> + DoubleEndedIterator {
        self.files.files()
    }

    /// The `events/` scan: files, sequence, gap, sidecars.
    pub fn event_files(&self) -> &EventFiles {
        &self.files
    }

    /// The names in `events/` starting with `.` (lock file, length marker,
    /// temp files), sorted.
    pub fn sidecars(&self) -> &[String] {
        self.files.sidecars()
    }

    /// Why `events/` could not be listed (the events are then none).
    pub fn events_error(&self) -> Option<&ReadError> {
        self.events_error.as_ref()
    }

    /// The directory's other files (not `base_state.json`, `meta.json`),
    /// sorted.
    pub fn others(&self) -> &[String] {
        self.others.as_slice()
    }

    /// The directory's directories (`events`, `subagents`, `observations`…),
    /// sorted.
    pub fn dirs(&self) -> &[String] {
        self.dirs.as_slice()
    }

    /// The directories under `subagents/` that hold a conversation of their
    /// own, sorted (a name that is not UTF-8 is decoded lossily here; use
    /// [`subagent_dirs`](Self::subagent_dirs) to reach it). Each reads as a
    /// conversation.
    ///
    /// A symbolic link under `subagents/` that leads back to this
    /// conversation or a directory above it is not a sub-agent (following it
    /// would never end). Links between two conversations' `subagents/` can
    /// still make a cycle: a walker that follows sub-agents should remember
    /// the directories it has read.
    pub fn subagents(&self) -> &[String] {
        self.subagents.as_slice()
    }

    /// The names of the symbolic links under `subagents/` that lead back to
    /// this conversation or a directory above it, in name order: not read as
    /// sub-agents (a loop), reported here instead.
    pub fn subagent_loops(&self) -> &[String] {
        &self.subagent_loops
    }

    /// The paths of the sub-agents' conversations, by their names as listed.
    pub fn subagent_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let base = self.dir.join(DIR_SUBAGENTS);
        self.subagents()
            .iter()
            .enumerate()
            .map(move |(i, s)| match self.subagent_os.get(i) {
                Some(os) => base.join(os),
                None => base.join(s),
            })
    }

    /// Why `subagents/` could not be listed.
    pub fn subagents_error(&self) -> Option<&ReadError> {
        self.subagents_error.as_ref()
    }

    /// The number of units the conversation accounts for: `base_state.json`,
    /// `meta.json`, each file of `events/` (sidecars aside) and each other
    /// file.
    pub fn units(&self) -> usize {
        usize::from(self.state.present)
            + usize::from(self.meta.present)
            + self.files.files().len()
            + self.others.as_slice().len()
    }

    /// The bytes of every event file read, back to back.
    pub fn event_bytes(&self) -> &[u8] {
        &self.blob
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
    budget: u64,
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
    /// listed into the reader's reused buffer (see [`source`]), so that
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
    /// here instead of parsing the file a second time ([`Event::open`]).
    pub fn read_into_with(
        &mut self,
        path: impl AsRef<Path>,
        conv: &mut Conversation,
        mut visit: impl FnMut(Parsed, &Document<'_>),
    ) -> Result<(), ReadError> {
        conv.clear();
        let r = self.read_into_inner(path.as_ref(), conv, &mut visit);
        if r.is_err() {
            conv.clear();
        }
        r
    }

    fn read_into_inner(
        &mut self,
        path: &Path,
        conv: &mut Conversation,
        visit: &mut dyn FnMut(Parsed, &Document<'_>),
    ) -> Result<(), ReadError> {
        let dir = conversation_dir_cow(path)?;
        let d = Dir::open(&dir).map_err(|e| ReadError::io(&dir, e))?;
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
                    let r = conv.files.rescan_dir(&ev, &mut self.listing, self.pattern);
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
        conv.events.reserve(conv.files.len());
        for i in 0..conv.files.len() {
            let Some(&pos) = conv.files.sequence_positions().get(i) else {
                break;
            };
            let start = conv.blob.len();
            let mut rec = new_rec(pos, i as u64, start);
            let name = conv.files.name_of(pos);
            let left = self.budget.saturating_sub(conv.blob.len() as u64);
            let read = match &events_dir {
                Some(ev) => ev.read_file_within(OsStr::new(name), &mut conv.blob, left),
                None => Err(FileFault::NotAFile),
            };
            match read {
                Ok(_) => {
                    rec.raw = (start, conv.blob.len());
                    let bytes = conv.blob.get(start..).unwrap_or(&[]);
                    if let Err(b) =
                        ingest(&mut self.parser, bytes, &mut conv.strings, &mut rec, visit)
                    {
                        path.push(name);
                        conv.files.mark_bad(pos, b.at(&path));
                        path.pop();
                    } else {
                        rec.ok = true;
                    }
                }
                Err(f) => {
                    path.push(name);
                    let e = f.at(&path);
                    path.pop();
                    conv.files.mark_bad(pos, e.into());
                }
            }
            conv.events.push(rec);
        }
        path.pop();
        if has_subagents {
            path.push(DIR_SUBAGENTS);
            // Sub-agents are few: their names are kept as listed (not UTF-8
            // included), so each stays reachable by its real name.
            let mut listed_names: Vec<std::ffi::OsString> = Vec::new();
            let listed = d.open_dir(OsStr::new(DIR_SUBAGENTS)).and_then(|sd| {
                sd.for_each(&mut self.listing, |name, kind| {
                    if sd.is_dir(name, kind) {
                        listed_names.push(name.to_os_string());
                    }
                })
            });
            match listed {
                Ok(()) => {
                    let here = fs::canonicalize(&conv.dir).ok();
                    let mut found: Vec<(String, std::ffi::OsString)> = Vec::new();
                    for os in listed_names {
                        let name = os.to_string_lossy().into_owned();
                        path.push(&os);
                        // A link back to this conversation, or above it:
                        // recorded, never followed.
                        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
                            && let (Some(here), Ok(target)) = (&here, fs::canonicalize(&path))
                            && here.starts_with(&target)
                        {
                            conv.subagent_loops.push(name);
                        } else if is_conversation_dir_with(
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
