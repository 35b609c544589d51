//! The changes-since scan: what changed in a store since a [`Checkpoint`],
//! at the cost of what changed.
//!
//! [`Store::changes_since`] walks the store as [`find_sessions`] does and
//! yields, one conversation at a time through a reused reader (a lending
//! iterator, like [`Store::stream`]), only what changed:
//!
//! - a conversation that is new ([`ChangeKind::New`]: every event);
//! - new events after the checkpoint, in index order, through the same
//!   lazy envelopes ([`Change::events`]), a gap that filled among them
//!   ([`Change::gap_filled`]);
//! - events that were malformed (torn, empty) when handed out and now read,
//!   or whose file changed while still malformed ([`Change::repaired`]);
//! - a `base_state.json` or `meta.json` whose bytes changed
//!   ([`Change::state_changed`], [`Change::meta_changed`]);
//! - a conversation whose history no longer matches the checkpoint — an
//!   event file already handed out renamed, replaced by another name or
//!   removed, the last one replaced, the directory replaced, its ID
//!   changed: [`ChangeKind::Rewrite`], with every event, so that an
//!   indexer rebuilds it;
//! - a conversation removed ([`ChangeKind::Removed`]).
//!
//! At the end, [`Changes::checkpoint`] is the checkpoint of what was
//! handed out: saved (after the caller has made what it did with the
//! changes durable), it makes the next scan start there.
//!
//! # What an unchanged conversation costs
//!
//! Three `stat` calls (the directory, `events/`, `base_state.json`; one
//! more each for `meta.json` and `subagents/` where they exist, and one
//! per file kept for retry), and no open: a directory whose identity and
//! modification time are those of the checkpoint is not listed (its names
//! are the checkpoint's), a file whose stamp is the checkpoint's is not
//! read. A stamp whose modification time lies within [`RACY_MARGIN_NS`](super::checkpoint::RACY_MARGIN_NS) of
//! the checkpoint's time (or after it) is not trusted — on a file system
//! with coarse timestamps a change in the same tick would not show — and
//! is listed or read again; so is a conversation whose `events/` held
//! files past the sequence read (after a gap, or held back by the settle
//! rule), and one with directories under `subagents/` that are not yet
//! conversations.
//!
//! # What a conversation with new events costs
//!
//! When only `events/` changed — the conversation directory,
//! `base_state.json`, `meta.json` and `subagents/` keep stamps the
//! checkpoint trusts — the stat calls above (each entry looked up once;
//! one the checkpoint recorded absent is not looked up, its directory's
//! trusted stamp saying it is still absent), one listing of `events/` (to
//! find the new names, and to tell a file of the history renamed or
//! removed), a `stat` of the last file read before (relative to the open
//! `events/`), and an open of each new (or retried) event file, whose
//! stamp is what the `fstat` of its read told: the conversation directory
//! is not listed, its state and meta are not read again, and the digest
//! of the sequence's names is checked and extended in one pass. Anything
//! else — a state or meta whose stamp changed, a
//! directory whose names changed — reads the conversation as
//! [`Reader::read_into`] does (its event files from the first new one on).
//!
//! # Guarantees
//!
//! - Every event is handed out once over a chain of scans, each scan
//!   starting from the previous one's checkpoint: the events below the
//!   checkpoint's next index are never handed out again, except in a
//!   rewrite (all of them) or a repair (that one).
//! - A scan stopped early gives a checkpoint that records only what was
//!   handed out ([`Changes::checkpoint`] at any point); the walk's
//!   directories are then listed again by the next scan, a removal not yet
//!   handed out is found again, and an ID not yet handed out again in full
//!   (see [Applying the changes](#applying-the-changes)) is rewritten by
//!   the next scan. What the stopped scan and the next one hand out,
//!   applied in turn, is what one scan to the end would give.
//! - With a settle time ([`ScanOptions::settle`]), an event file that is
//!   malformed and was modified within that time — a writer still writing
//!   it — is held back, with every later index, and read again by the next
//!   scan; it is handed out as malformed only once it has been left alone
//!   that long.
//! - See [What is and is not detected](#what-is-and-is-not-detected).
//!
//! # What is and is not detected
//!
//! The last event file handed out, where a writer writes, is looked at by
//! every scan: replaced, or rewritten in place with another inode change
//! time and other bytes, the conversation is a
//! [`Rewrite`](ChangeKind::Rewrite) (a last file only touched — its times
//! moved, its bytes kept, by their SHA-256 — is not).
//!
//! An earlier event file rewritten in place under the same name — even to
//! the same size with its modification time put back (`touch -r`) — is
//! seen only by a scan with [`ScanOptions::verify_files`]: it takes the
//! stamp (inode, size, modification and change times) of every file
//! handed out and compares their digest
//! ([`ConversationMark::stamps`](super::checkpoint::ConversationMark::stamps))
//! with the checkpoint's; any difference makes the conversation a
//! `Rewrite`. A stamp is what is compared, not the bytes (they are not
//! kept): a file whose times moved with its bytes kept (a `touch`, a
//! `chmod`, a hard link made to it) is handed out again too, an event
//! handed out twice, never one missed. A checkpoint of format version 1
//! or 2, or one saved by scans without `verify_files`, holds no such
//! digest: the first scan with it records the stamps as they are then,
//! so an edit made before that scan is not seen.
//!
//! Not detected by any scan: an event file rewritten in place with its
//! inode change time put back (only possible by setting the clock, or by
//! writing the device underneath the file system); an earlier file
//! rewritten within the same timestamp tick as the scan that read it (on
//! a file system with coarse timestamps); a `base_state.json`,
//! `meta.json` or `subagents/` recorded absent that comes while the
//! conversation directory keeps its stamp (a dangling symbolic link whose
//! target appears); and a change within one tick of a file system whose
//! timestamps are coarser than
//! [`RACY_MARGIN_NS`](super::checkpoint::RACY_MARGIN_NS).
//!
//!
//! # Applying the changes
//!
//! What a consumer holds is keyed by conversation ID (and an event by its
//! index within the ID), not by directory: a renamed directory is the same
//! ID under a new path, and a copied directory is a second directory
//! holding an ID. Applying each change in the order handed out:
//!
//! - a [`Rewrite`](ChangeKind::Rewrite) drops everything held of the ID;
//!   the change's events follow (all of them);
//! - a [`Removed`](ChangeKind::Removed) drops everything held of the ID;
//! - every event handed out ([`Change::events`]) sets the event at its
//!   index of the ID, an event handed out again (a repair, a rewrite)
//!   replacing what was held;
//!
//! gives, over a chain of scans, what reading the whole store gives: for
//! every ID its events, at each index the event of one of the directories
//! holding the ID. To that end each scan settles, at its end, the IDs whose
//! directories changed:
//!
//! - a new directory whose ID was held before (a rename, a copy, a
//!   directory put back) is a `Rewrite` of the ID, never its events added
//!   after what is held;
//! - `Removed` comes at the end of the scan, and only for an ID that no
//!   directory holds any more: never after the events of another directory
//!   of the same ID (a rename hands its events out once, as the new
//!   directory's `Rewrite`);
//! - an ID that lost a directory while others still hold it, or that was
//!   rewritten while other directories hold it too, is handed out again in
//!   full at the end of the scan: its first directory (in path order) as a
//!   `Rewrite`, every other one as an [`Updated`](ChangeKind::Updated)
//!   change from index 0, each with [`Change::again`] set (the directory
//!   itself did not change; a consumer that keeps per-directory state can
//!   skip it, one keyed by ID must apply it).
//!
//! A scan stopped before its end leaves the rest of this settling to the
//! next scan ([`Changes::checkpoint`]).
//!
//! [`find_sessions`]: super::find_sessions

mod process;
mod reconcile;
mod walk;

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::json::{Document, Parser};

use super::checkpoint::{
    Checkpoint, CheckpointError, ConversationMark, DirMark, FileMark, JsonMark, Stamp,
};
use super::conversation::Conversation;
use super::discover::{SKIPPED_DIRS, conversation_dir, dir_key, is_conversation_dir_with};
use super::error::ReadError;
use super::event_files::{FileStatus, NamePattern};
use super::reader::{Parsed, Reader};
use super::store::{MAX_SUBAGENT_DEPTH, Store, StoreError};
use super::{DIR_EVENTS, DIR_SUBAGENTS, Event, FILE_BASE_STATE, FILE_META, hex_id};
use crate::hash::{Sha256Stream, sha256};

/// Why a changes-since scan could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChangesError {
    /// The root could not be examined or listed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The checkpoint cannot be used for this store.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// How a changes-since scan reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanOptions {
    /// Hold back a malformed event file modified less than this long ago
    /// (a writer may still be writing it); `None` hands it out as
    /// malformed at once.
    pub settle: Option<Duration>,
    /// The event-name pattern (the SDK 1.30+ one by default); a checkpoint
    /// taken with another is refused.
    pub pattern: NamePattern,
    /// Take the stamp of every event file already handed out (one `stat`
    /// each, relative to the open `events/`; `events/` of an unchanged
    /// conversation is listed) and hand a conversation out again, as a
    /// [`ChangeKind::Rewrite`], when one of them changed in place since
    /// (see [What is and is not detected](self#what-is-and-is-not-detected)).
    /// Off, a scan keeps the digest this compares with
    /// ([`ConversationMark::stamps`]) from the stamps it has anyway, at no
    /// further cost.
    pub verify_files: bool,
}

/// What happened to a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Not in the checkpoint: every event is new.
    New,
    /// In the checkpoint: new events, repaired ones, a new state or meta.
    Updated,
    /// Its history no longer matches the checkpoint: every event is handed
    /// out again, to rebuild it.
    Rewrite,
    /// Gone from the store (or no longer a conversation).
    Removed,
}

impl ChangeKind {
    /// The kind as a word: `new`, `updated`, `rewrite`, `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::New => "new",
            ChangeKind::Updated => "updated",
            ChangeKind::Rewrite => "rewrite",
            ChangeKind::Removed => "removed",
        }
    }
}

/// One changed conversation, lent by [`Changes::next`] until the next
/// call.
#[derive(Debug)]
pub struct Change<'a> {
    /// What happened.
    pub kind: ChangeKind,
    /// The conversation directory.
    pub dir: &'a Path,
    /// Its path relative to the store's root (the checkpoint's key).
    pub rel: &'a Path,
    /// Its ID as the CLI's `export` prints it.
    pub id: &'a str,
    /// For a sub-agent's conversation, the ID of its parent.
    pub parent: Option<&'a str>,
    /// 0 for a top-level conversation, 1 for its sub-agents…
    pub depth: usize,
    /// The conversation as read: the events from the first one handed out
    /// on (earlier ones are not read), and its state and meta unless they
    /// are known unchanged (an updated conversation whose directory,
    /// `base_state.json`, `meta.json` and `subagents/` keep the
    /// checkpoint's stamps has only its event files read: its
    /// [`state`](Conversation::state) and [`meta`](Conversation::meta) are
    /// then `None`, and [`state_changed`](Self::state_changed) and
    /// [`meta_changed`](Self::meta_changed) false); `None` for a removed
    /// one.
    pub conversation: Option<&'a Conversation>,
    /// The reader's parser, to decode events with.
    pub parser: &'a mut Parser,
    /// Whether `base_state.json`'s bytes changed (or it is new).
    pub state_changed: bool,
    /// Whether `meta.json`'s bytes changed (or it is new).
    pub meta_changed: bool,
    /// Whether files past a gap became events (the missing index came).
    pub gap_filled: bool,
    /// The indexes, below the checkpoint's next index, of events that were
    /// malformed when handed out and now read as objects, or whose file
    /// changed since (its stamp) while still malformed: handed out again.
    pub repaired: &'a [u64],
    /// The new events: indexes `from..to`.
    pub from: u64,
    /// One past the last new event.
    pub to: u64,
    /// Whether the directory is handed out again in full only because
    /// another directory of its ID was added, removed or rewritten (see
    /// [Applying the changes](self#applying-the-changes)): the directory
    /// itself did not change. A `Rewrite` (the first directory of the ID)
    /// or an `Updated` change from index 0.
    pub again: bool,
}

impl<'a> Change<'a> {
    /// The events to hand out, in index order: the repaired ones, then the
    /// new ones (`from..to`).
    pub fn events(&self) -> impl Iterator<Item = Event<'a>> + 'a {
        let (from, to) = (self.from, self.to);
        let repaired = self.repaired;
        self.conversation.into_iter().flat_map(move |c| {
            c.events().filter(move |e| {
                let i = e.index();
                (from..to).contains(&i) || repaired.contains(&i)
            })
        })
    }
}

/// A conversation to look at.
#[derive(Debug, Clone)]
struct Task {
    path: PathBuf,
    rel: PathBuf,
    depth: usize,
    parent: Option<String>,
}

/// A removed conversation to report (or a conversation whose ID changed:
/// its old ID lost a directory).
#[derive(Debug, Clone)]
struct Gone {
    rel: PathBuf,
    path: PathBuf,
    id: String,
    parent: Option<String>,
    depth: usize,
}

/// What the last item lends.
#[derive(Debug, Default)]
struct Current {
    kind: Option<ChangeKind>,
    path: PathBuf,
    rel: PathBuf,
    id: String,
    parent: Option<String>,
    depth: usize,
    state_changed: bool,
    meta_changed: bool,
    gap_filled: bool,
    repaired: Vec<u64>,
    from: u64,
    to: u64,
    has_conv: bool,
    again: bool,
}

enum ScanStep {
    Skip,
    Yield,
    Fail(StoreError),
}

/// The changes of a store since a checkpoint ([`Store::changes_since`]).
#[derive(Debug)]
pub struct Changes {
    since: Checkpoint,
    new: Checkpoint,
    opts: ScanOptions,
    /// The top-level conversations found, by path relative to `base`
    /// (only that: a scan holds one for each conversation of the store).
    tops: Vec<PathBuf>,
    /// The directory the top-level conversations' paths are relative to:
    /// the root, or the conversation directory of a root that is a file.
    base: PathBuf,
    next_top: usize,
    pending: Vec<Task>,
    gone: VecDeque<Gone>,
    gone_done: HashSet<PathBuf>,
    tops_done: bool,
    finished: bool,
    unreadable: Vec<ReadError>,
    reader: Reader,
    conv: Conversation,
    cur: Current,
    /// Whether `cur` was handed out by the last [`next`](Changes::next)
    /// (and is not taken yet: the consumer may refuse it).
    lent: bool,
    parser2: Parser,
    buf: Vec<u8>,
    held: usize,
    /// The top-level conversations (relative paths) with a file held back.
    held_in: Vec<PathBuf>,
    /// The top-level conversation being looked at (its sub-agents follow it).
    cur_top: PathBuf,
    /// Only the given conversations are looked at ([`Store::changes_in`]).
    partial: bool,
    /// The conversation IDs the scan settles at its end
    /// ([`reconcile`](self::reconcile)).
    ids: reconcile::IdChanges,
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// A directory stamp no directory has (inode 0): the next scan takes the
/// conversation's directory as replaced, a [`ChangeKind::Rewrite`].
fn unmatchable(dir: Stamp) -> Stamp {
    Stamp {
        dev: 0,
        ino: 0,
        ..dir
    }
}

fn join_rel(rel: &Path, name: &str) -> PathBuf {
    if rel.as_os_str().is_empty() {
        PathBuf::from(name)
    } else {
        rel.join(name)
    }
}

impl Store {
    /// What changed under `root` since `since` (everything, without a
    /// checkpoint): see [`changes`](super::changes). The walk of
    /// [`find_sessions`](super::find_sessions) is made here, listing only
    /// the directories that changed, so the store need not be opened
    /// first. Fails when `root` cannot be examined or listed, and refuses a
    /// checkpoint of another store ([`CheckpointError::OtherStore`]).
    pub fn changes_since(
        root: impl AsRef<Path>,
        since: Option<&Checkpoint>,
        opts: ScanOptions,
    ) -> Result<Changes, ChangesError> {
        let (mut ch, is_dir) = Changes::start(root.as_ref(), since, opts)?;
        let root = ch.new.root.clone();
        ch.walk(&root, is_dir)?;
        Ok(ch)
    }

    /// [`changes_since`](Self::changes_since) taking the checkpoint, so
    /// that no copy of it is made (a follower's memory); a failure gives
    /// it back.
    #[cfg(feature = "follow")]
    #[allow(clippy::result_large_err)]
    pub(crate) fn changes_since_owned(
        root: &Path,
        since: Option<Checkpoint>,
        opts: ScanOptions,
    ) -> Result<Changes, (ChangesError, Option<Checkpoint>)> {
        let (mut ch, is_dir) = Changes::start_owned(root, since, opts)?;
        let root = ch.new.root.clone();
        match ch.walk(&root, is_dir) {
            Ok(()) => Ok(ch),
            Err(e) => Err((e.into(), Some(ch.since))),
        }
    }

    /// What changed in the top-level conversations `conversations` of
    /// `root` (each named by its path relative to `root`, as
    /// [`Checkpoint::conversations`] names them; their sub-agents
    /// included) since `since`; every other conversation is taken as it
    /// is in `since`, unlooked at. For a caller that knows where the store
    /// changed — a follower woken by file-system events — so that a scan
    /// costs only the conversations touched.
    ///
    /// Nothing else is walked: a path that is not a top-level conversation
    /// of `since` is ignored, so a new conversation (or one whose
    /// directory was replaced by a directory that is not one) shows only
    /// in a [`changes_since`](Self::changes_since) scan; a conversation
    /// named here that is gone is reported removed. The checkpoint keeps
    /// the time `since` was taken (the stamps of the conversations not
    /// looked at are trusted no further than they were). Refuses a
    /// checkpoint of another store as `changes_since` does.
    pub fn changes_in(
        root: impl AsRef<Path>,
        since: &Checkpoint,
        opts: ScanOptions,
        conversations: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Changes, ChangesError> {
        Self::changes_in_owned(root.as_ref(), since.clone(), opts, conversations)
            .map_err(|(e, _)| e)
    }

    /// [`changes_in`](Self::changes_in) taking the checkpoint: the marks of
    /// the conversations not looked at move into the new checkpoint, no
    /// copy of them is made (a follower's memory); a failure gives the
    /// checkpoint back.
    #[allow(clippy::result_large_err)]
    pub(crate) fn changes_in_owned(
        root: &Path,
        since: Checkpoint,
        opts: ScanOptions,
        conversations: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Changes, (ChangesError, Option<Checkpoint>)> {
        let (mut ch, _) = Changes::start_owned(root, Some(since), opts)?;
        ch.partial = true;
        ch.new.taken = ch.since.taken;
        ch.new.dirs = std::mem::take(&mut ch.since.dirs);
        let mut tops: Vec<PathBuf> = conversations
            .into_iter()
            .filter(|rel| ch.since.conversations.depth(rel) == Some(0))
            .collect();
        tops.sort();
        tops.dedup();
        // Only the named conversations' marks stay in `since` (a partial
        // scan looks at nothing else of it).
        ch.since
            .conversations
            .move_all(&mut ch.new.conversations, |k| {
                tops.iter().any(|t| k.starts_with(t))
            });
        ch.tops = tops;
        Ok(ch)
    }
}

impl Changes {
    /// A scan of `root` from `since`, nothing walked yet; and whether
    /// `root` is a directory.
    fn start(
        root: &Path,
        since: Option<&Checkpoint>,
        opts: ScanOptions,
    ) -> Result<(Changes, bool), ChangesError> {
        Self::start_owned(root, since.cloned(), opts).map_err(|(e, _)| e)
    }

    /// [`start`](Self::start) taking the checkpoint (no copy of it is
    /// made); a failure gives it back.
    #[allow(clippy::result_large_err)]
    fn start_owned(
        root: &Path,
        since: Option<Checkpoint>,
        opts: ScanOptions,
    ) -> Result<(Changes, bool), (ChangesError, Option<Checkpoint>)> {
        let taken = now_ns();
        match Self::check_root(root, since.as_ref(), opts) {
            Ok((meta, canonical, root_id)) => Ok(Self::started(
                root,
                since,
                opts,
                (meta, canonical, root_id),
                taken,
            )),
            Err(e) => Err((e, since)),
        }
    }

    /// The root's metadata, canonical path and identity; refuses a
    /// checkpoint of another store.
    fn check_root(
        root: &Path,
        since: Option<&Checkpoint>,
        opts: ScanOptions,
    ) -> Result<(fs::Metadata, PathBuf, (u64, u64)), ChangesError> {
        let meta = fs::metadata(root).map_err(|e| ReadError::io(root, e))?;
        let canonical = fs::canonicalize(root).map_err(|e| ReadError::io(root, e))?;
        let st = Stamp::of(&meta);
        let root_id = (st.dev, st.ino);
        if let Some(c) = since {
            let other = |what: &'static str| CheckpointError::OtherStore {
                taken: c.canonical.clone(),
                taken_what: what,
                here: canonical.clone(),
                here_what: what,
            };
            if c.canonical != canonical {
                return Err(other("path").into());
            }
            if c.root_id != root_id {
                return Err(other("directory").into());
            }
            if c.pattern != opts.pattern {
                return Err(other("pattern").into());
            }
        }
        Ok((meta, canonical, root_id))
    }

    fn started(
        root: &Path,
        since: Option<Checkpoint>,
        opts: ScanOptions,
        (meta, canonical, root_id): (fs::Metadata, PathBuf, (u64, u64)),
        taken: i128,
    ) -> (Changes, bool) {
        let since = since.unwrap_or_default();
        let new = Checkpoint {
            root: root.to_path_buf(),
            canonical,
            root_id,
            pattern: opts.pattern,
            taken,
            ..Checkpoint::default()
        };
        let ch = Changes {
            since,
            new,
            opts,
            tops: Vec::new(),
            base: root.to_path_buf(),
            next_top: 0,
            pending: Vec::new(),
            gone: VecDeque::new(),
            gone_done: HashSet::new(),
            tops_done: false,
            finished: false,
            unreadable: Vec::new(),
            reader: Reader::with_pattern(opts.pattern),
            conv: Conversation::new(),
            cur: Current::default(),
            lent: false,
            parser2: Parser::new(),
            buf: Vec::new(),
            held: 0,
            held_in: Vec::new(),
            cur_top: PathBuf::new(),
            partial: false,
            ids: reconcile::IdChanges::default(),
        };
        let mut ch = ch;
        ch.ids.since_empty = ch.since.conversations.is_empty();
        (ch, meta.is_dir())
    }

    /// The directories of the walk that could not be listed.
    pub fn unreadable(&self) -> &[ReadError] {
        &self.unreadable
    }

    /// Takes the directories of the walk that could not be listed (the
    /// follower hands them out as errors of its scan).
    #[cfg(feature = "follow")]
    pub(crate) fn take_unreadable(&mut self) -> Vec<ReadError> {
        std::mem::take(&mut self.unreadable)
    }

    /// How many top-level conversations the walk found.
    pub fn top_level(&self) -> usize {
        self.tops.len()
    }

    /// The next changed conversation, lent until the next call; `None` at
    /// the end. A conversation that cannot be read is an `Err` item (its
    /// checkpoint marks are kept, so the next scan tries again) and the
    /// scan goes on.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<Change<'_>, StoreError>> {
        self.lent = false;
        loop {
            if let Some(g) = self.gone.pop_front() {
                // Told at the end, once the IDs still held are known.
                self.gone_done.insert(g.rel.clone());
                self.new.conversations.remove(&g.rel);
                self.ids.lost.push(g);
                continue;
            }
            if let Some(step) = self.reconcile_step() {
                match step {
                    ScanStep::Skip => continue,
                    ScanStep::Yield => break,
                    ScanStep::Fail(e) => return Some(Err(e)),
                }
            }
            let task = match self.pending.pop() {
                Some(t) => t,
                None => match self.tops.get(self.next_top) {
                    Some(rel) => {
                        self.next_top += 1;
                        self.cur_top = rel.clone();
                        let path = if rel.as_os_str().is_empty() {
                            self.base.clone()
                        } else {
                            self.base.join(rel)
                        };
                        Task {
                            path,
                            rel: rel.clone(),
                            depth: 0,
                            parent: None,
                        }
                    }
                    None if !self.tops_done && self.partial => {
                        self.tops_done = true;
                        continue;
                    }
                    None if !self.tops_done => {
                        self.tops_done = true;
                        let found: HashSet<&Path> =
                            self.tops.iter().map(PathBuf::as_path).collect();
                        let gone: Vec<PathBuf> = self
                            .since
                            .conversations
                            .depths()
                            .filter(|(k, d)| *d == 0 && !found.contains(k))
                            .map(|(k, _)| k.to_path_buf())
                            .collect();
                        for rel in gone {
                            let path = if rel.as_os_str().is_empty() {
                                self.new.root.clone()
                            } else {
                                self.new.root.join(&rel)
                            };
                            self.queue_gone(&rel, &path, None);
                        }
                        continue;
                    }
                    None if !self.ids.planned => {
                        self.ids.planned = true;
                        self.plan_reconcile();
                        continue;
                    }
                    None => {
                        self.finished = true;
                        return None;
                    }
                },
            };
            match self.process(task) {
                ScanStep::Skip => continue,
                ScanStep::Yield => break,
                ScanStep::Fail(e) => return Some(Err(e)),
            }
        }
        self.lent = true;
        let c = &self.cur;
        Some(Ok(Change {
            kind: c.kind.unwrap_or(ChangeKind::Updated),
            dir: &c.path,
            rel: &c.rel,
            id: &c.id,
            parent: c.parent.as_deref(),
            depth: c.depth,
            conversation: c.has_conv.then_some(&self.conv),
            parser: self.reader.parser(),
            state_changed: c.state_changed,
            meta_changed: c.meta_changed,
            gap_filled: c.gap_filled,
            repaired: &c.repaired,
            from: c.from,
            to: c.to,
            again: c.again,
        }))
    }

    /// How many conversations had an event file held back by the settle
    /// rule ([`ScanOptions::settle`]) so far: a follower scans again once
    /// the settle time has passed.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The top-level conversations (paths relative to the root, as
    /// [`Checkpoint::conversations`] names them) in which a file was held
    /// back by the settle rule so far: what a follower scans again once
    /// the settle time has passed ([`Store::changes_in`]).
    pub fn held_in(&self) -> &[PathBuf] {
        &self.held_in
    }

    /// Whether the scan has handed out everything.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The checkpoint of what was handed out so far: at the end of the
    /// scan, the store as read; before, the marks of what was handed out
    /// over the old checkpoint's, with the walk's directories to be listed
    /// again.
    ///
    /// Before the end, what the end of the scan would still hand out is
    /// not recorded as done: a removed directory whose
    /// [`Removed`](ChangeKind::Removed) is not handed out yet keeps the old
    /// checkpoint's mark (the next scan finds it gone again), and every
    /// directory of an ID still to be handed out again in full (see
    /// [Applying the changes](self#applying-the-changes)) gets a mark that
    /// cannot match its directory, so that the next scan hands it out as a
    /// [`Rewrite`](ChangeKind::Rewrite) and settles the ID again.
    pub fn checkpoint(&self) -> Checkpoint {
        if self.finished {
            return self.new.clone();
        }
        let mut cp = self.new.clone();
        for (k, m) in self.since.conversations.iter() {
            if !cp.conversations.contains_key(k) && !self.gone_done.contains(k) {
                cp.conversations.insert(k.to_path_buf(), &m);
            }
        }
        let (unsettled, lost) = self.unsettled(&cp);
        for (rel, id) in lost {
            match cp.conversations.get(&rel) {
                // Its ID changed: the next scan sees the old one lost again.
                Some(mut m) if m.id != id => {
                    m.id = id;
                    m.dir = unmatchable(m.dir);
                    cp.conversations.insert(rel, &m);
                }
                Some(_) => {}
                None => self.keep_old_mark(&mut cp, &rel),
            }
        }
        if !unsettled.is_empty() {
            let keys: Vec<PathBuf> = cp
                .conversations
                .iter()
                .filter(|(_, m)| unsettled.contains(&m.id))
                .map(|(k, _)| k.to_path_buf())
                .collect();
            for k in keys {
                if let Some(mut m) = cp.conversations.get(&k) {
                    m.dir = unmatchable(m.dir);
                    cp.conversations.insert(k, &m);
                }
            }
        }
        for d in cp.dirs.values_mut() {
            d.stamp = None;
        }
        // A conversation whose sub-agents were not all looked at lists
        // `subagents/` again.
        let keys: Vec<PathBuf> = cp.conversations.keys().map(Path::to_path_buf).collect();
        for k in keys {
            let missing = cp.conversations.get(&k).is_some_and(|m| {
                m.subagents.iter().any(|s| {
                    !cp.conversations
                        .contains_key(&join_rel(&k, DIR_SUBAGENTS).join(s))
                })
            });
            if missing && let Some(mut m) = cp.conversations.get(&k) {
                m.unsettled = true;
                m.subagents_dir = None;
                cp.conversations.insert(k, &m);
            }
        }
        cp
    }

    /// Puts the old checkpoint's mark of the conversation at `rel`, which
    /// the scan found gone, back into `cp`: the next scan finds it gone
    /// again (a sub-agent's named among its parent's, which the next scan
    /// looks at).
    fn keep_old_mark(&self, cp: &mut Checkpoint, rel: &Path) {
        let Some(m) = self.since.conversations.get(rel) else {
            return;
        };
        if m.depth > 0
            && let (Some(name), Some(parent)) = (
                rel.file_name().and_then(|n| n.to_str()),
                rel.parent().and_then(Path::parent),
            )
            && let Some(mut pm) = cp.conversations.get(parent)
            && let Err(at) = pm.subagents.binary_search_by(|s| s.as_str().cmp(name))
        {
            pm.subagents.insert(at, name.to_owned());
            cp.conversations.insert(parent.to_path_buf(), &pm);
        }
        cp.conversations.insert(rel.to_path_buf(), &m);
    }

    /// The checkpoint, consuming the scan, for a consumer that did not take
    /// the change [`next`](Self::next) handed out last (it refused it): as
    /// [`into_checkpoint`](Self::into_checkpoint), but that change is not
    /// recorded as handed out, so that the next scan hands it out again —
    /// a removed conversation as removed (its old mark kept; a sub-agent's
    /// whose parent's removal was taken, with its parent's again), any other as
    /// a [`Rewrite`](ChangeKind::Rewrite) of the whole conversation (its
    /// mark made to match no directory). After an `Err` item, or with
    /// nothing lent, it is
    /// [`into_checkpoint`](Self::into_checkpoint).
    pub fn into_checkpoint_refusing_last(self) -> Checkpoint {
        if !self.lent {
            return self.into_checkpoint();
        }
        let mut cp = self.checkpoint();
        let rel = &self.cur.rel;
        if self.cur.kind == Some(ChangeKind::Removed) {
            // With the marks of its parents whose removal was taken: a
            // removed sub-agent is found through its top-level
            // conversation's mark (whose removal then comes again too, which
            // drops nothing more).
            let mut chain = vec![rel.clone()];
            let mut at = rel.as_path();
            while let Some(m) = self.since.conversations.get(at)
                && m.depth > 0
                && let Some(parent) = at.parent().and_then(Path::parent)
                && !cp.conversations.contains_key(parent)
            {
                chain.push(parent.to_path_buf());
                at = parent;
            }
            for r in chain.iter().rev() {
                self.keep_old_mark(&mut cp, r);
            }
            return cp;
        }
        // A sub-agent's mark is looked at whenever its parent's is (the
        // parent's mark names it).
        if let Some(mut m) = cp.conversations.get(rel) {
            m.dir = unmatchable(m.dir);
            cp.conversations.insert(rel.clone(), &m);
        }
        cp
    }

    /// The checkpoint, consuming the scan (see [`checkpoint`](Self::checkpoint)).
    pub fn into_checkpoint(self) -> Checkpoint {
        if self.finished {
            self.new
        } else {
            self.checkpoint()
        }
    }
}
