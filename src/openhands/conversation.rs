//! One conversation as read ([`Conversation`]): its state and meta files,
//! its events in index order, every file of `events/` with its status, its
//! other files and directories, and its sub-agents. [`Reader`] fills it.

use std::path::{Path, PathBuf};

use super::envelope::{EventRec, Events};
use super::error::ReadError;
use super::event_files::{EventFiles, File, NameList, NamePattern};
use super::json_file::JsonFile;
use super::{DIR_SUBAGENTS, Event};

/// One conversation directory as read: its state, meta, events in index
/// order, every file of `events/` with its status, its other files and
/// directories, and its sub-agents.
///
/// # Counting events
///
/// [`len`](Self::len) is *the* event count: the events of the sequence
/// (indexes 0, 1, 2… up to the first missing one), what
/// [`events`](Self::events) yields and what `agentlog ls` shows. The two
/// others answer narrower questions:
///
/// | count | what | differs from `len` when |
/// |---|---|---|
/// | [`len`](Self::len) | events of the sequence, malformed ones included | — |
/// | [`parsed_event_count`](Self::parsed_event_count) | those that read as JSON objects (what the SDK's iteration yields) | an event file is malformed (fewer) |
/// | [`event_file_count`](Self::event_file_count) | files named `event-*.json`, in the sequence or not (what the SDK counts before appending) | a file comes after a gap, is a duplicate or is badly named (more) |
///
/// A gap (a missing index) is [`event_files`](Self::event_files)`().gap()`.
#[derive(Debug, Default)]
pub struct Conversation {
    pub(super) dir: PathBuf,
    pub(super) name: String,
    pub(super) state: JsonFile,
    pub(super) meta: JsonFile,
    pub(crate) files: EventFiles,
    pub(super) events: Vec<EventRec>,
    pub(crate) blob: Vec<u8>,
    pub(crate) strings: String,
    pub(super) others: NameList,
    pub(super) dirs: NameList,
    pub(super) subagents: NameList,
    /// Links under `subagents/` that lead back to this conversation or
    /// above it: not read (that would never end), but recorded.
    pub(super) subagent_loops: Vec<String>,
    /// The sub-agents' directory names as listed (read from disk), in the
    /// order of `subagents`; empty for a conversation made by [`parse`].
    pub(super) subagent_os: Vec<std::ffi::OsString>,
    pub(super) subagents_error: Option<ReadError>,
    pub(super) events_error: Option<ReadError>,
}

impl Conversation {
    /// An empty conversation, to read into ([`Reader::read_into`](super::Reader::read_into)).
    pub fn new() -> Self {
        Self::default()
    }

    pub(super) fn clear(&mut self) {
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

    /// The directory (for [`parse`](super::parse), the name it was given).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory's name: the conversation ID as 32 hex digits.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `base_state.json`, when the directory has one: its bytes
    /// ([`JsonFile::raw`]), why it did not read as a JSON object
    /// ([`JsonFile::error`]), and its decoding ([`JsonFile::open`], then
    /// [`Doc::state`](super::Doc::state)).
    pub fn state(&self) -> Option<&JsonFile> {
        self.state.present.then_some(&self.state)
    }

    /// `meta.json` (agent server), when the directory has one, as
    /// [`state`](Self::state) gives `base_state.json` (decoded with
    /// [`Doc::meta`](super::Doc::meta)).
    pub fn meta(&self) -> Option<&JsonFile> {
        self.meta.present.then_some(&self.meta)
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

    /// How many events the sequence has, malformed ones included: the event
    /// count (see "Counting events" above; what [`events`](Self::events)
    /// yields;
    /// [`parsed_event_count`](Self::parsed_event_count) leaves them out).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the sequence has no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How many events of the sequence read as JSON objects (malformed ones
    /// left out, unlike [`len`](Self::len)): what the SDK's
    /// iteration yields (`len(list(state.events))`) when it can load the
    /// conversation at all (it skips an empty file, and fails on any other
    /// malformed one).
    pub fn parsed_event_count(&self) -> usize {
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
