//! Checkpoints: what a scan of a store has read, so that the next scan
//! reads only what changed ([`Store::changes_since`](super::Store::changes_since)).
//!
//! A [`Checkpoint`] records, for the store's root (its path and identity)
//! and for every directory the discovery walk went through, the
//! directory's identity and modification time with the names it held; and
//! for every conversation (sub-agents included, each under its own path):
//!
//! - the identity of its directory, of `events/` and `subagents/`
//!   ([`Stamp`]: device, inode, size, modification time with nanoseconds);
//! - how far the event sequence was read: the next index, the last file's
//!   name and identity, a digest of the sequence's names, and a digest of
//!   the stamps of the event files handed out ([`ConversationMark::stamps`],
//!   what [`ScanOptions::verify_files`](super::ScanOptions::verify_files)
//!   checks);
//! - the files of the sequence that were malformed when read (a torn file
//!   of a live writer among them), with their identity, to read again when
//!   it changes;
//! - the identity and a digest of `base_state.json` and `meta.json`;
//! - the conversation's ID, as the CLI's `export` prints it.
//!
//! # The file
//!
//! [`Checkpoint::save`] writes two lines: a header,
//! `{"format":"agentlog-checkpoint","version":3,"sha256":"…"}`, and the
//! body, one JSON object whose SHA-256 the header holds. The file is
//! written atomically (a temporary file in the same directory, synced, then
//! renamed over the old one, and the directory synced), as state the tool
//! owns ([`OutputPath::classify_entry`](crate::output::OutputPath::classify_entry)):
//! a symbolic link at the path is replaced by the file, never written
//! through, and nothing but a regular file is ever replaced. Loading refuses
//! a link there ([`CheckpointError::Link`]), dangling or not: the
//! checkpoint is the regular file at the path given. An empty regular file
//! is no checkpoint yet ([`Checkpoint::load_or_none`]).
//!
//! [`Checkpoint::load`] refuses, with a typed [`CheckpointError`], never
//! misreading: a file that is not a checkpoint, a checkpoint of a newer
//! format version, one whose body does not match its digest or does not
//! hold what a checkpoint holds (corrupt); and
//! [`Store::changes_since`](super::Store::changes_since) refuses a
//! checkpoint of another store (another root path or root directory).

mod decode;
mod encode;
mod file;
mod marks;
mod write;

pub(crate) use encode::{as_u64, obj, uint};
#[cfg(feature = "follow")]
pub(crate) use encode::{hex, stamp_value, unhex, value_stamp};
#[cfg(feature = "follow")]
pub(crate) use file::parse_file_bytes;
pub(crate) use file::{FileKind, checked_body, no_file_yet, read_file, to_file_bytes};
pub(crate) use marks::Marks;
pub(crate) use write::write_atomic;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::json::{Map, Number, OwnedValue, Style};

use super::event_files::NamePattern;
use crate::hash::sha256_hex;
use crate::source::dir::EntryStat;

/// The format version this crate writes. It reads this one and every
/// earlier one: version 1 recorded no inode change times, so its stamps are
/// never taken as unchanged (the first scan from it lists and reads again
/// what it looks at, and hands out only what changed, as from any
/// checkpoint); versions 1 and 2 recorded no digest of the event files'
/// stamps ([`ConversationMark::stamps`]): a scan with
/// [`ScanOptions::verify_files`](super::ScanOptions::verify_files) records
/// it (an edit made before that scan is not seen), one without leaves it
/// unrecorded.
pub const CHECKPOINT_VERSION: u64 = 3;

/// The `format` member of a checkpoint file's header.
pub(crate) const FORMAT: &str = "agentlog-checkpoint";

/// Why a checkpoint could not be loaded, saved or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The path is not a regular file (a directory, a FIFO, a device, a
    /// link to one): never read as, or replaced by, a checkpoint.
    #[error("{}: not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The path is a symbolic link: a checkpoint is state the tool owns,
    /// read and written only as the regular file at the path given.
    #[error("{}: a symbolic link; a checkpoint is read and written only as the regular file at the path given (remove the link, or give the file it leads to)", path.display())]
    Link {
        /// The path.
        path: PathBuf,
    },
    /// The checkpoint could not be written (the message names the path).
    #[error(transparent)]
    Write(crate::output::OutputError),
    /// The file is not an agentlog checkpoint.
    #[error("{}: not an agentlog checkpoint", path.display())]
    NotACheckpoint {
        /// The file.
        path: PathBuf,
    },
    /// The checkpoint was written by a newer format version.
    #[error("{}: checkpoint format version {found}; this agentlog reads versions 1 to {CHECKPOINT_VERSION}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The version the file declares.
        found: u64,
    },
    /// The checkpoint is damaged: its body does not match its digest, or
    /// does not hold what a checkpoint holds.
    #[error("{}: corrupt checkpoint: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file is a checkpoint of another kind of store (an OC Chat
    /// sessions directory's given for an OpenHands store, or the reverse).
    #[error("{}: a checkpoint of {found}, not of {wanted}", path.display())]
    OtherKind {
        /// The file.
        path: PathBuf,
        /// What it is a checkpoint of.
        found: &'static str,
        /// What a checkpoint was wanted of.
        wanted: &'static str,
    },
    /// The checkpoint is of another store.
    #[error("checkpoint of another store: it was taken of {} ({}), this store is {} ({})", taken.display(), taken_what, here.display(), here_what)]
    OtherStore {
        /// The root the checkpoint was taken of.
        taken: PathBuf,
        /// What differs about it (`path`, `directory`, `pattern`).
        taken_what: &'static str,
        /// The root scanned now.
        here: PathBuf,
        /// What differs about it.
        here_what: &'static str,
    },
}

/// The identity of a file or directory: device, inode, size, modification
/// time and inode change time (seconds and nanoseconds since the Unix
/// epoch), as `stat` gives them (following symbolic links). The change
/// time tells a file rewritten in place whose size and modification time
/// were put back (`touch -r`): nothing but the kernel sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Stamp {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The size in bytes.
    pub size: u64,
    /// The modification time, whole seconds since the Unix epoch.
    pub mtime: i64,
    /// The nanoseconds of the modification time.
    pub mtime_nsec: u32,
    /// The inode change time, whole seconds since the Unix epoch and
    /// nanoseconds; `None` when not recorded (a checkpoint of format
    /// version 1): such a stamp is never taken as unchanged.
    pub ctime: Option<(i64, u32)>,
}

impl Stamp {
    /// The stamp of a file's metadata (no device or inode outside Unix:
    /// size and modification time only).
    pub fn of(meta: &fs::Metadata) -> Stamp {
        Stamp::of_entry(EntryStat::of(meta))
    }

    /// The stamp of what `stat` told of a directory's entry.
    pub(crate) fn of_entry(s: EntryStat) -> Stamp {
        Stamp {
            dev: s.dev,
            ino: s.ino,
            size: s.size,
            mtime: s.mtime,
            mtime_nsec: s.mtime_nsec,
            ctime: Some(s.ctime),
        }
    }

    /// The stamp of `path` (following links); `None` when it is not there.
    pub(crate) fn stat(path: &Path) -> io::Result<Option<Stamp>> {
        crate::source::opens::stat();
        match fs::metadata(path) {
            Ok(m) => Ok(Some(Stamp::of(&m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The modification time in nanoseconds since the epoch.
    pub fn mtime_ns(&self) -> i128 {
        i128::from(self.mtime) * 1_000_000_000 + i128::from(self.mtime_nsec)
    }

    /// Whether the same file or directory (same device and inode).
    pub fn same_object(&self, other: &Stamp) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

/// The term of an event file named `name` of stamp `s` in
/// [`ConversationMark::stamps`]: the SHA-256 of the name, a zero byte,
/// and the inode, size, modification time and change time (little-endian
/// integers; no device: a checkpoint of another device's store is refused),
/// read as a little-endian integer of 256 bits.
pub fn stamps_term(name: &str, s: &Stamp) -> [u8; 32] {
    let mut b = Vec::with_capacity(name.len() + 48);
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    b.extend_from_slice(&s.ino.to_le_bytes());
    b.extend_from_slice(&s.size.to_le_bytes());
    b.extend_from_slice(&s.mtime.to_le_bytes());
    b.extend_from_slice(&s.mtime_nsec.to_le_bytes());
    let (c, n) = s.ctime.unwrap_or((0, u32::MAX));
    b.extend_from_slice(&c.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    crate::hash::sha256(&b)
}

/// `a + b` modulo 2^256, both little-endian.
pub(crate) fn add256(a: &mut [u8; 32], b: &[u8; 32]) {
    let mut carry = 0u16;
    for (x, y) in a.iter_mut().zip(b) {
        let s = u16::from(*x) + u16::from(*y) + carry;
        *x = s as u8;
        carry = s >> 8;
    }
}

/// `a - b` modulo 2^256, both little-endian.
pub(crate) fn sub256(a: &mut [u8; 32], b: &[u8; 32]) {
    let mut borrow = 0i16;
    for (x, y) in a.iter_mut().zip(b) {
        let d = i16::from(*x) - i16::from(*y) - borrow;
        *x = d.rem_euclid(256) as u8;
        borrow = i16::from(d < 0);
    }
}

/// How close to a checkpoint's time a modification time must be for the
/// stamp not to be trusted: a directory or file modified within this of the
/// scan (or after it) may have changed again in the same clock tick of a
/// file system with coarse timestamps (FAT keeps 2 s, ext3 and many
/// network file systems 1 s), so the next scan lists or reads it again.
pub const RACY_MARGIN_NS: i128 = 2_000_000_000;

/// A file recorded by name and identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMark {
    /// The index of the event in the sequence (for `retry`), or 0.
    pub index: u64,
    /// The file name in `events/`.
    pub name: String,
    /// Its identity when read.
    pub stamp: Stamp,
}

/// `base_state.json` or `meta.json` as last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonMark {
    /// Its identity when read.
    pub stamp: Stamp,
    /// The SHA-256 of its bytes (hex digits in the file).
    pub sha256: [u8; 32],
}

/// What a checkpoint records of one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConversationMark {
    /// The conversation's ID as the CLI's `export` prints it
    /// (`base_state.json`'s `id`, else `meta.json`'s, as 32 hex digits, else
    /// the directory's name).
    pub id: String,
    /// 0 for a top-level conversation, 1 for a sub-agent's…
    pub depth: usize,
    /// The identity of the conversation directory.
    pub dir: Stamp,
    /// The identity of `events/`, when there is one.
    pub events_dir: Option<Stamp>,
    /// The identity of `subagents/`, when there is one.
    pub subagents_dir: Option<Stamp>,
    /// The names under `subagents/` that are sub-agents' conversations,
    /// sorted.
    pub subagents: Vec<String>,
    /// The next index of the sequence to read: every event below it was
    /// handed out.
    pub next: u64,
    /// The file of index `next - 1`.
    pub last: Option<FileMark>,
    /// The SHA-256 of that file's bytes, when it read as an event (hex
    /// digits in the file; not recorded by format version 1): a last file
    /// whose change or modification time moved (a `touch`, a `chmod`, a
    /// restore) is read again and compared with it, so that only a file
    /// whose bytes changed is a rewrite.
    pub last_sha256: Option<[u8; 32]>,
    /// The SHA-256 of the names of the sequence's files 0 to `next - 1`,
    /// each followed by a line break (hex digits in the file): a file of
    /// the read history renamed, replaced by another name or removed
    /// changes it.
    pub names: [u8; 32],
    /// The files of the sequence below `next` that were malformed (torn,
    /// empty, not JSON) when handed out: read again when they change.
    pub retry: Vec<FileMark>,
    /// The digest of the stamps of the sequence's files 0 to `next - 1`
    /// ([`stamps_term`] of each, added modulo 2^256: the order of the
    /// files does not count, and a file's term can be taken out and put in
    /// again when its stamp changes), each file's stamp as this mark
    /// records it (the last file's and the retried ones' as in
    /// [`last`](Self::last) and [`retry`](Self::retry)) or as the `fstat`
    /// of its read told. A scan keeps it from the stamps it has anyway; a
    /// scan with [`ScanOptions::verify_files`](super::ScanOptions::verify_files)
    /// takes the stamp of every file and hands the conversation out again
    /// when the digest differs. `None` when not recorded (a checkpoint of
    /// format version 1 or 2, kept by scans without `verify_files`).
    pub stamps: Option<[u8; 32]>,
    /// Whether `events/` must be listed next time whatever its stamp:
    /// files were there past the sequence read (after a gap, or held back
    /// while a writer was still writing them).
    pub unsettled: bool,
    /// The first missing index when files of larger indexes were there.
    pub gap: Option<u64>,
    /// `base_state.json` as last read.
    pub state: Option<JsonMark>,
    /// `meta.json` as last read.
    pub meta: Option<JsonMark>,
}

/// What a checkpoint records of a directory the discovery walk went
/// through (one that is not a conversation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirMark {
    /// Its identity when listed; `None` to list it again next time.
    pub stamp: Option<Stamp>,
    /// The names of its directories the walk took (conversations and
    /// directories walked into), sorted.
    pub children: Vec<String>,
}

/// What a scan of a store read, for the next scan to read only what
/// changed (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Checkpoint {
    /// The root as given to the scan.
    pub(crate) root: PathBuf,
    /// The root made absolute with links resolved.
    pub(crate) canonical: PathBuf,
    /// The root directory's device and inode.
    pub(crate) root_id: (u64, u64),
    /// The event-name pattern the scan used.
    pub(crate) pattern: NamePattern,
    /// When the scan started (nanoseconds since the epoch).
    pub(crate) taken: i128,
    /// The directories walked, by path relative to the root.
    pub(crate) dirs: BTreeMap<PathBuf, DirMark>,
    /// The conversations, by path relative to the root (a sub-agent's is
    /// `<parent>/subagents/<name>`), each mark packed.
    pub(crate) conversations: Marks,
}

impl Checkpoint {
    /// The root the checkpoint was taken of, as given to the scan.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// When the scan that made it started, nanoseconds since the epoch.
    pub fn taken_ns(&self) -> i128 {
        self.taken
    }

    /// The conversations recorded, by path relative to the root (a
    /// sub-agent's is `<parent>/subagents/<name>`), in path order. The
    /// marks are kept packed in memory and unpacked as they are iterated
    /// over.
    pub fn conversations(&self) -> impl Iterator<Item = (&Path, ConversationMark)> {
        self.conversations.iter()
    }

    /// The mark of the conversation at `rel` (relative to the root),
    /// unpacked.
    pub fn conversation(&self, rel: impl AsRef<Path>) -> Option<ConversationMark> {
        self.conversations.get(rel.as_ref())
    }

    /// How many conversations are recorded (sub-agents included).
    pub fn len(&self) -> usize {
        self.conversations.len()
    }

    /// Whether no conversation is recorded.
    pub fn is_empty(&self) -> bool {
        self.conversations.is_empty()
    }

    /// How many events are recorded as read, over every conversation.
    pub fn events(&self) -> u64 {
        self.conversations.iter().map(|(_, m)| m.next).sum()
    }

    /// Whether a stamp recorded by this checkpoint cannot be trusted to
    /// tell a change (see [`RACY_MARGIN_NS`]; the modification time is what
    /// counts, so that a tree set back in time is trusted; a stamp without
    /// a change time, of a version 1 checkpoint, is never trusted).
    pub(crate) fn racy(&self, s: &Stamp) -> bool {
        s.ctime.is_none() || s.mtime_ns() >= self.taken - RACY_MARGIN_NS
    }

    /// Whether saving this checkpoint in place of `old` would tell the next
    /// scan nothing `old` does not: the same root, name pattern,
    /// directories and conversation marks (only the scan time differs),
    /// and no stamp of `old` that its own scan time makes untrustworthy
    /// ([`RACY_MARGIN_NS`]; such a stamp is trusted once a later scan
    /// saves it again). A rescan that found nothing changed need not
    /// rewrite its checkpoint then: keeping `old` is exactly as safe, as
    /// its earlier scan time only makes more stamps checked, never fewer.
    pub fn records_nothing_new(&self, old: &Checkpoint) -> bool {
        if self.root != old.root
            || self.canonical != old.canonical
            || self.root_id != old.root_id
            || self.pattern != old.pattern
            || self.dirs != old.dirs
            || self.conversations != old.conversations
        {
            return false;
        }
        let racy = |s: &Stamp| old.racy(s);
        if old
            .dirs
            .values()
            .any(|d| d.stamp.as_ref().is_some_and(racy))
        {
            return false;
        }
        !old.conversations.iter().any(|(_, m)| {
            racy(&m.dir)
                || m.events_dir.as_ref().is_some_and(racy)
                || m.subagents_dir.as_ref().is_some_and(racy)
                || m.last.as_ref().is_some_and(|f| racy(&f.stamp))
                || m.retry.iter().any(|f| racy(&f.stamp))
                || m.state.as_ref().is_some_and(|j| racy(&j.stamp))
                || m.meta.as_ref().is_some_and(|j| racy(&j.stamp))
        })
    }

    /// The checkpoint as the bytes [`save`](Self::save) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let capacity = 256 + self.conversations.len() * 512;
        to_file_bytes(FileKind::OpenHands, &self.to_value(), capacity)
    }

    /// Reads a checkpoint from the bytes [`to_bytes`](Self::to_bytes)
    /// gives; `path` is only reported in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Checkpoint, CheckpointError> {
        let body = checked_body(bytes, path, FileKind::OpenHands)?;
        Checkpoint::from_body(body).map_err(|r| CheckpointError::corrupt(path, &r))
    }

    /// Loads the checkpoint saved at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Checkpoint, CheckpointError> {
        let path = path.as_ref();
        Checkpoint::from_bytes(&read_file(path)?, path)
    }

    /// Loads the checkpoint at `path`, or `None` when there is none yet (a
    /// first run): nothing at `path`, or an empty regular file (one made
    /// ready with `touch`; a save never leaves one). A symbolic link there,
    /// dangling or not, is refused ([`CheckpointError::Link`]).
    pub fn load_or_none(path: impl AsRef<Path>) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = path.as_ref();
        if no_file_yet(path) {
            return Ok(None);
        }
        Checkpoint::load(path).map(Some)
    }

    /// Saves the checkpoint at `path` atomically (see the [module
    /// docs](self)): a reader sees the old file or the new one, never a
    /// part; a failure leaves the old file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        write_atomic(path.as_ref(), &self.to_bytes())
    }
}

#[cfg(test)]
mod tests;
