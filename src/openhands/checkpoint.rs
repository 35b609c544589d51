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
//!   name and identity, and a digest of the sequence's names;
//! - the files of the sequence that were malformed when read (a torn file
//!   of a live writer among them), with their identity, to read again when
//!   it changes;
//! - the identity and a digest of `base_state.json` and `meta.json`;
//! - the conversation's ID, as the CLI's `export` prints it.
//!
//! # The file
//!
//! [`Checkpoint::save`] writes two lines: a header,
//! `{"format":"agentlog-checkpoint","version":1,"sha256":"…"}`, and the
//! body, one JSON object whose SHA-256 the header holds. The file is
//! written atomically (a temporary file in the same directory, synced, then
//! renamed over the old one, and the directory synced), through a symbolic
//! link to its target, and never over anything but a regular file.
//!
//! [`Checkpoint::load`] refuses, with a typed [`CheckpointError`], never
//! misreading: a file that is not a checkpoint, a checkpoint of a newer
//! format version, one whose body does not match its digest or does not
//! hold what a checkpoint holds (corrupt); and
//! [`Store::changes_since`](super::Store::changes_since) refuses a
//! checkpoint of another store (another root path or root directory).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::json::{Map, Number, OwnedValue, Style};

use super::event_files::NamePattern;
use crate::hash::sha256_hex;

/// The format version this crate writes and reads.
pub const CHECKPOINT_VERSION: u64 = 1;

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
    /// The file is not an agentlog checkpoint.
    #[error("{}: not an agentlog checkpoint", path.display())]
    NotACheckpoint {
        /// The file.
        path: PathBuf,
    },
    /// The checkpoint was written by a newer format version.
    #[error("{}: checkpoint format version {found}; this agentlog reads version {CHECKPOINT_VERSION}", path.display())]
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

/// The identity of a file or directory: device, inode, size and
/// modification time (seconds and nanoseconds since the Unix epoch), as
/// `stat` gives them (following symbolic links).
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
}

impl Stamp {
    /// The stamp of a file's metadata.
    #[cfg(unix)]
    pub fn of(meta: &fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        }
    }

    /// The stamp of a file's metadata (no device or inode outside Unix:
    /// size and modification time only).
    #[cfg(not(unix))]
    pub fn of(meta: &fs::Metadata) -> Stamp {
        let (mtime, mtime_nsec) = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((0, 0), |d| {
                (i64::try_from(d.as_secs()).unwrap_or(0), d.subsec_nanos())
            });
        Stamp {
            dev: 0,
            ino: 0,
            size: meta.len(),
            mtime,
            mtime_nsec,
        }
    }

    /// The stamp of `path` (following links); `None` when it is not there.
    pub(crate) fn stat(path: &Path) -> io::Result<Option<Stamp>> {
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
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
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
    /// The SHA-256 (hex) of the names of the sequence's files 0 to
    /// `next - 1`, each followed by a line break: a file of the read
    /// history renamed, replaced by another name or removed changes it.
    pub names: String,
    /// The files of the sequence below `next` that were malformed (torn,
    /// empty, not JSON) when handed out: read again when they change.
    pub retry: Vec<FileMark>,
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
    /// `<parent>/subagents/<name>`).
    pub(crate) conversations: BTreeMap<PathBuf, ConversationMark>,
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
    /// sub-agent's is `<parent>/subagents/<name>`), in path order.
    pub fn conversations(&self) -> impl Iterator<Item = (&Path, &ConversationMark)> {
        self.conversations.iter().map(|(p, m)| (p.as_path(), m))
    }

    /// The mark of the conversation at `rel` (relative to the root).
    pub fn conversation(&self, rel: impl AsRef<Path>) -> Option<&ConversationMark> {
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
        self.conversations.values().map(|m| m.next).sum()
    }

    /// Whether a stamp recorded by this checkpoint cannot be trusted to
    /// tell a change (see [`RACY_MARGIN_NS`]).
    pub(crate) fn racy(&self, s: &Stamp) -> bool {
        s.mtime_ns() >= self.taken - RACY_MARGIN_NS
    }

    /// The checkpoint as the bytes [`save`](Self::save) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(256 + self.conversations.len() * 512);
        self.to_value().write_to(&mut body, Style::COMPACT);
        let header = obj(vec![
            ("format", OwnedValue::string(FORMAT)),
            ("version", uint(CHECKPOINT_VERSION)),
            ("sha256", OwnedValue::string(sha256_hex(&body))),
        ]);
        let mut out = Vec::with_capacity(body.len() + 128);
        header.write_to(&mut out, Style::COMPACT);
        out.push(b'\n');
        out.extend_from_slice(&body);
        out.push(b'\n');
        out
    }

    /// Reads a checkpoint from the bytes [`to_bytes`](Self::to_bytes)
    /// gives; `path` is only reported in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Checkpoint, CheckpointError> {
        let not = || CheckpointError::NotACheckpoint {
            path: path.to_path_buf(),
        };
        let corrupt = |reason: &str| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason: reason.to_owned(),
        };
        let nl = bytes.iter().position(|&b| b == b'\n').ok_or_else(not)?;
        let (head, rest) = bytes.split_at(nl);
        let header = OwnedValue::parse(head).map_err(|_| not())?;
        match header.get("format").and_then(OwnedValue::as_str) {
            Some(FORMAT) => {}
            #[cfg(feature = "follow")]
            Some(crate::follow::sessions_checkpoint::FORMAT) => {
                return Err(CheckpointError::OtherKind {
                    path: path.to_path_buf(),
                    found: "an OC Chat sessions directory",
                    wanted: "an OpenHands store",
                });
            }
            _ => return Err(not()),
        }
        let version = header
            .get("version")
            .and_then(as_u64)
            .ok_or_else(|| corrupt("the header has no version"))?;
        if version > CHECKPOINT_VERSION {
            return Err(CheckpointError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        if version != CHECKPOINT_VERSION {
            return Err(corrupt("unknown format version"));
        }
        let body = rest.get(1..).unwrap_or(&[]);
        let body = body.strip_suffix(b"\n").unwrap_or(body);
        let digest = header
            .get("sha256")
            .and_then(OwnedValue::as_str)
            .ok_or_else(|| corrupt("the header has no digest"))?;
        if sha256_hex(body) != digest {
            return Err(corrupt("the body does not match its digest"));
        }
        let v = OwnedValue::parse(body).map_err(|e| corrupt(&format!("body: {e}")))?;
        Checkpoint::from_value(&v).map_err(|r| corrupt(&r))
    }

    /// Loads the checkpoint saved at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Checkpoint, CheckpointError> {
        let path = path.as_ref();
        let io_err = |source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = fs::metadata(path).map_err(io_err)?;
        if !meta.is_file() {
            return Err(CheckpointError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let mut bytes = Vec::new();
        crate::source::read_into(path, &mut bytes).map_err(|e| match e {
            crate::source::SourceError::Empty { .. } => CheckpointError::NotACheckpoint {
                path: path.to_path_buf(),
            },
            crate::source::SourceError::NotAFile { .. } => CheckpointError::NotAFile {
                path: path.to_path_buf(),
            },
            other => CheckpointError::Io {
                path: path.to_path_buf(),
                source: io::Error::other(other.to_string()),
            },
        })?;
        Checkpoint::from_bytes(&bytes, path)
    }

    /// Loads the checkpoint at `path`, or `None` when there is no file
    /// there (a first run).
    pub fn load_or_none(path: impl AsRef<Path>) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = path.as_ref();
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            // A dangling link: no checkpoint yet, saved through the link.
            Ok(m) if m.file_type().is_symlink() && fs::metadata(path).is_err() => Ok(None),
            _ => Checkpoint::load(path).map(Some),
        }
    }

    /// Saves the checkpoint at `path` atomically (see the [module
    /// docs](self)): a reader sees the old file or the new one, never a
    /// part; a failure leaves the old file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        write_atomic(path.as_ref(), &self.to_bytes())
    }

    fn to_value(&self) -> OwnedValue {
        let dirs = self
            .dirs
            .iter()
            .map(|(p, d)| {
                obj(vec![
                    ("path", path_value(p)),
                    (
                        "stamp",
                        d.stamp.as_ref().map_or(OwnedValue::Null, stamp_value),
                    ),
                    (
                        "children",
                        OwnedValue::Array(d.children.iter().map(OwnedValue::string).collect()),
                    ),
                ])
            })
            .collect();
        let convs = self
            .conversations
            .iter()
            .map(|(p, m)| conv_value(p, m))
            .collect();
        obj(vec![
            ("root", path_value(&self.root)),
            ("canonical", path_value(&self.canonical)),
            (
                "root_id",
                OwnedValue::Array(vec![uint(self.root_id.0), uint(self.root_id.1)]),
            ),
            (
                "pattern",
                OwnedValue::string(match self.pattern {
                    NamePattern::FiveDigits => "five",
                    NamePattern::FiveOrMoreDigits => "five-or-more",
                }),
            ),
            ("taken", OwnedValue::string(self.taken.to_string())),
            ("dirs", OwnedValue::Array(dirs)),
            ("conversations", OwnedValue::Array(convs)),
        ])
    }

    fn from_value(v: &OwnedValue) -> Result<Checkpoint, String> {
        let o = v.as_object().ok_or("the body is not an object")?;
        let root_id = o
            .get("root_id")
            .and_then(OwnedValue::as_array)
            .ok_or("no root_id")?;
        let (Some(dev), Some(ino)) = (
            root_id.first().and_then(as_u64),
            root_id.get(1).and_then(as_u64),
        ) else {
            return Err("bad root_id".into());
        };
        let pattern = match o.get("pattern").and_then(OwnedValue::as_str) {
            Some("five") => NamePattern::FiveDigits,
            Some("five-or-more") => NamePattern::FiveOrMoreDigits,
            _ => return Err("bad pattern".into()),
        };
        let taken = o
            .get("taken")
            .and_then(OwnedValue::as_str)
            .and_then(|s| s.parse::<i128>().ok())
            .ok_or("bad taken")?;
        let mut dirs = BTreeMap::new();
        for d in o
            .get("dirs")
            .and_then(OwnedValue::as_array)
            .ok_or("no dirs")?
        {
            let path = d.get("path").ok_or("a dir without path")?;
            let path = value_path(path).ok_or("bad dir path")?;
            let stamp = match d.get("stamp") {
                Some(OwnedValue::Null) | None => None,
                Some(s) => Some(value_stamp(s).ok_or("bad dir stamp")?),
            };
            let children = strings(d.get("children")).ok_or("bad dir children")?;
            dirs.insert(path, DirMark { stamp, children });
        }
        let mut conversations = BTreeMap::new();
        for c in o
            .get("conversations")
            .and_then(OwnedValue::as_array)
            .ok_or("no conversations")?
        {
            let (p, m) = value_conv(c).ok_or("bad conversation")?;
            conversations.insert(p, m);
        }
        Ok(Checkpoint {
            root: value_path(o.get("root").ok_or("no root")?).ok_or("bad root")?,
            canonical: value_path(o.get("canonical").ok_or("no canonical")?)
                .ok_or("bad canonical")?,
            root_id: (dev, ino),
            pattern,
            taken,
            dirs,
            conversations,
        })
    }
}

fn obj(members: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.entries_mut().push((k.to_owned(), v));
    }
    OwnedValue::Object(m)
}

fn uint(v: u64) -> OwnedValue {
    OwnedValue::Number(Number::from(v))
}

fn as_u64(v: &OwnedValue) -> Option<u64> {
    v.as_number()?.as_str().parse().ok()
}

fn strings(v: Option<&OwnedValue>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// A path: a string when it is UTF-8, else `{"bytes": "<hex>"}`.
fn path_value(p: &Path) -> OwnedValue {
    match p.to_str() {
        Some(s) => OwnedValue::string(s),
        None => {
            let bytes = os_bytes(p.as_os_str());
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            obj(vec![("bytes", OwnedValue::string(hex))])
        }
    }
}

fn value_path(v: &OwnedValue) -> Option<PathBuf> {
    if let Some(s) = v.as_str() {
        return Some(PathBuf::from(s));
    }
    let hex = v.get("bytes")?.as_str()?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    Some(PathBuf::from(os_from_bytes(bytes?)))
}

#[cfg(unix)]
fn os_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    s.to_string_lossy().into_owned().into_bytes()
}

#[cfg(unix)]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(b)
}

#[cfg(not(unix))]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&b).into_owned())
}

fn stamp_value(s: &Stamp) -> OwnedValue {
    OwnedValue::Array(vec![
        uint(s.dev),
        uint(s.ino),
        uint(s.size),
        OwnedValue::int(s.mtime),
        uint(u64::from(s.mtime_nsec)),
    ])
}

fn value_stamp(v: &OwnedValue) -> Option<Stamp> {
    let a = v.as_array()?;
    if a.len() != 5 {
        return None;
    }
    let nsec = u32::try_from(as_u64(a.get(4)?)?).ok()?;
    if nsec >= 1_000_000_000 {
        return None;
    }
    Some(Stamp {
        dev: as_u64(a.first()?)?,
        ino: as_u64(a.get(1)?)?,
        size: as_u64(a.get(2)?)?,
        mtime: a.get(3)?.as_number()?.as_i64()?,
        mtime_nsec: nsec,
    })
}

fn opt_stamp(v: Option<&Stamp>) -> OwnedValue {
    v.map_or(OwnedValue::Null, stamp_value)
}

fn value_opt_stamp(v: Option<&OwnedValue>) -> Option<Option<Stamp>> {
    match v {
        None | Some(OwnedValue::Null) => Some(None),
        Some(s) => value_stamp(s).map(Some),
    }
}

fn file_value(f: &FileMark) -> OwnedValue {
    obj(vec![
        ("index", uint(f.index)),
        ("name", OwnedValue::string(&*f.name)),
        ("stamp", stamp_value(&f.stamp)),
    ])
}

fn value_file(v: &OwnedValue) -> Option<FileMark> {
    Some(FileMark {
        index: as_u64(v.get("index")?)?,
        name: v.get("name")?.as_str()?.to_owned(),
        stamp: value_stamp(v.get("stamp")?)?,
    })
}

fn json_value(j: Option<&JsonMark>) -> OwnedValue {
    match j {
        None => OwnedValue::Null,
        Some(j) => obj(vec![
            ("stamp", stamp_value(&j.stamp)),
            ("sha256", OwnedValue::string(&*j.sha256)),
        ]),
    }
}

fn value_json(v: Option<&OwnedValue>) -> Option<Option<JsonMark>> {
    match v {
        None | Some(OwnedValue::Null) => Some(None),
        Some(j) => Some(Some(JsonMark {
            stamp: value_stamp(j.get("stamp")?)?,
            sha256: j.get("sha256")?.as_str()?.to_owned(),
        })),
    }
}

fn conv_value(p: &Path, m: &ConversationMark) -> OwnedValue {
    obj(vec![
        ("path", path_value(p)),
        ("id", OwnedValue::string(&*m.id)),
        ("depth", uint(m.depth as u64)),
        ("dir", stamp_value(&m.dir)),
        ("events_dir", opt_stamp(m.events_dir.as_ref())),
        ("subagents_dir", opt_stamp(m.subagents_dir.as_ref())),
        (
            "subagents",
            OwnedValue::Array(m.subagents.iter().map(OwnedValue::string).collect()),
        ),
        ("next", uint(m.next)),
        ("last", m.last.as_ref().map_or(OwnedValue::Null, file_value)),
        ("names", OwnedValue::string(&*m.names)),
        (
            "retry",
            OwnedValue::Array(m.retry.iter().map(file_value).collect()),
        ),
        ("unsettled", OwnedValue::Bool(m.unsettled)),
        ("gap", m.gap.map_or(OwnedValue::Null, uint)),
        ("state", json_value(m.state.as_ref())),
        ("meta", json_value(m.meta.as_ref())),
    ])
}

fn value_conv(v: &OwnedValue) -> Option<(PathBuf, ConversationMark)> {
    let last = match v.get("last")? {
        OwnedValue::Null => None,
        f => Some(value_file(f)?),
    };
    let retry: Option<Vec<FileMark>> = v.get("retry")?.as_array()?.iter().map(value_file).collect();
    let m = ConversationMark {
        id: v.get("id")?.as_str()?.to_owned(),
        depth: usize::try_from(as_u64(v.get("depth")?)?).ok()?,
        dir: value_stamp(v.get("dir")?)?,
        events_dir: value_opt_stamp(v.get("events_dir"))?,
        subagents_dir: value_opt_stamp(v.get("subagents_dir"))?,
        subagents: strings(v.get("subagents"))?,
        next: as_u64(v.get("next")?)?,
        last,
        names: v.get("names")?.as_str()?.to_owned(),
        retry: retry?,
        unsettled: v.get("unsettled")?.as_bool()?,
        gap: match v.get("gap")? {
            OwnedValue::Null => None,
            g => Some(as_u64(g)?),
        },
        state: value_json(v.get("state"))?,
        meta: value_json(v.get("meta"))?,
    };
    // A mark that says events were read names the last one.
    if (m.next == 0) != m.last.is_none() {
        return None;
    }
    Some((value_path(v.get("path")?)?, m))
}

/// The file a write to `path` replaces: `path` itself, or the target of the
/// symbolic link(s) it is. Refuses anything there that is not a regular
/// file.
fn write_target(path: &Path) -> Result<PathBuf, CheckpointError> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(source) => return Err(CheckpointError::Io { path: p, source }),
            Ok(m) if m.file_type().is_symlink() => {
                let t = fs::read_link(&p).map_err(|source| CheckpointError::Io {
                    path: p.clone(),
                    source,
                })?;
                p = match p.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                };
            }
            Ok(m) if m.is_file() => return Ok(p),
            Ok(_) => return Err(CheckpointError::NotAFile { path: p }),
        }
    }
    Err(CheckpointError::Io {
        path: path.to_path_buf(),
        source: io::Error::other("too many levels of symbolic links"),
    })
}

/// Writes `bytes` to `path` atomically: a temporary file beside the target,
/// synced, renamed over it, the directory synced.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let target = write_target(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CheckpointError::NotAFile {
            path: target.clone(),
        })?;
    let tmp = dir.join(format!(".{name}.agentlog-tmp-{}", std::process::id()));
    let io_at = |p: &Path| {
        let p = p.to_path_buf();
        move |source| CheckpointError::Io { path: p, source }
    };
    let res = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_at(&tmp))?;
        f.write_all(bytes).map_err(io_at(&tmp))?;
        f.sync_all().map_err(io_at(&tmp))?;
        drop(f);
        // The target may have become something else meanwhile: look again.
        write_target(&target)?;
        fs::rename(&tmp, &target).map_err(io_at(&target))?;
        // Best effort: some file systems refuse to sync a directory.
        let _ = fs::File::open(&dir).and_then(|d| d.sync_all());
        Ok(())
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        let mut c = Checkpoint {
            root: PathBuf::from("store"),
            canonical: PathBuf::from("/abs/store"),
            root_id: (1, 2),
            pattern: NamePattern::FiveOrMoreDigits,
            taken: 1_700_000_000_123_456_789,
            ..Checkpoint::default()
        };
        let st = Stamp {
            dev: 3,
            ino: 4,
            size: 5,
            mtime: -6,
            mtime_nsec: 999_999_999,
        };
        c.dirs.insert(
            PathBuf::new(),
            DirMark {
                stamp: Some(st),
                children: vec!["a".into()],
            },
        );
        c.conversations.insert(
            PathBuf::from("a"),
            ConversationMark {
                id: "ab".into(),
                dir: st,
                events_dir: Some(st),
                next: 2,
                last: Some(FileMark {
                    index: 1,
                    name: "event-00001-abcdef12.json".into(),
                    stamp: st,
                }),
                names: "x".into(),
                retry: vec![FileMark {
                    index: 0,
                    name: "event-00000-abcdef12.json".into(),
                    stamp: st,
                }],
                state: Some(JsonMark {
                    stamp: st,
                    sha256: "00".into(),
                }),
                ..ConversationMark::default()
            },
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"a/\xff"));
            c.conversations.insert(odd, ConversationMark::default());
        }
        c
    }

    #[test]
    fn round_trip() {
        let c = sample();
        let b = c.to_bytes();
        let back = Checkpoint::from_bytes(&b, Path::new("cp")).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn refuses() {
        let c = sample();
        let b = c.to_bytes();
        let p = Path::new("cp");
        // Any one byte of the body changed: corrupt.
        let nl = b.iter().position(|&x| x == b'\n').unwrap();
        for i in (nl + 1..b.len() - 1).step_by(7) {
            let mut x = b.clone();
            x[i] ^= 0x01;
            assert!(
                matches!(
                    Checkpoint::from_bytes(&x, p),
                    Err(CheckpointError::Corrupt { .. })
                ),
                "byte {i}"
            );
        }
        // Truncated anywhere: refused.
        for n in 0..b.len() - 1 {
            assert!(Checkpoint::from_bytes(&b[..n], p).is_err(), "length {n}");
        }
        let newer =
            String::from_utf8(b.clone())
                .unwrap()
                .replacen("\"version\":1", "\"version\":2", 1);
        assert!(matches!(
            Checkpoint::from_bytes(newer.as_bytes(), p),
            Err(CheckpointError::Version { found: 2, .. })
        ));
        assert!(matches!(
            Checkpoint::from_bytes(b"{\"a\":1}\n{}", p),
            Err(CheckpointError::NotACheckpoint { .. })
        ));
        // A body that matches its digest but is not a checkpoint.
        let body = b"{\"root\":1}";
        let fake = format!(
            "{{\"format\":\"agentlog-checkpoint\",\"version\":1,\"sha256\":\"{}\"}}\n{}\n",
            sha256_hex(body),
            std::str::from_utf8(body).unwrap()
        );
        assert!(matches!(
            Checkpoint::from_bytes(fake.as_bytes(), p),
            Err(CheckpointError::Corrupt { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn saves_atomically_through_links_never_over_other_files() {
        let t = tempfile::tempdir().unwrap();
        let c = sample();
        let real = t.path().join("real.cp");
        let link = t.path().join("link.cp");
        std::os::unix::fs::symlink("real.cp", &link).unwrap();
        assert!(Checkpoint::load_or_none(&link).unwrap().is_none());
        c.save(&link).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(Checkpoint::load(&real).unwrap(), c);
        assert_eq!(Checkpoint::load(&link).unwrap(), c);
        // A directory and a FIFO are never replaced.
        let d = t.path().join("dir.cp");
        fs::create_dir(&d).unwrap();
        assert!(matches!(c.save(&d), Err(CheckpointError::NotAFile { .. })));
        assert!(matches!(
            Checkpoint::load(&d),
            Err(CheckpointError::NotAFile { .. })
        ));
        let fifo = t.path().join("fifo.cp");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(matches!(
            c.save(&fifo),
            Err(CheckpointError::NotAFile { .. })
        ));
        assert!(matches!(
            Checkpoint::load(&fifo),
            Err(CheckpointError::NotAFile { .. })
        ));
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        // No temporary file left.
        let left: Vec<_> = fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("agentlog-tmp"))
            .collect();
        assert!(left.is_empty());
    }
}
