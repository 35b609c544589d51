//! Reading the store: resolving a name or path to a
//! record, loading records, the crash signal and the latest artifact.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::json::{JsonError, JsonType, Map, OwnedValue, Parser, Value};
use crate::source::{self, SourceError};

use super::fsops::{self, Found};
use super::list::SessionEntry;
use super::schema::{self, Model};
use super::time::py_mtime;
use super::{CLEAN_EXIT_MARKER_NAME, SessionStore, fs_safe_name, py};

/// The two record kinds a session directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// `*_meta.json`: the session metadata.
    Meta,
    /// `*_chat_log.json`: the conversation.
    ChatLog,
}

impl RecordKind {
    /// The kind as it appears in file names: `meta`, `chat_log`.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Meta => "meta",
            RecordKind::ChatLog => "chat_log",
        }
    }

    pub(crate) fn file_suffix(self) -> &'static str {
        match self {
            RecordKind::Meta => "_meta.json",
            RecordKind::ChatLog => "_chat_log.json",
        }
    }
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a record could not be found or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate holds a file of the kind (`persistence.py`'s
    /// `FileNotFoundError`).
    #[error("no {kind} file found for session {query:?} under {}", sessions_dir.display())]
    NotFound {
        /// The name or path asked for (stripped).
        query: String,
        /// The kind looked for.
        kind: RecordKind,
        /// The sessions root.
        sessions_dir: PathBuf,
    },
    /// The file could not be read (missing, a directory, too large, empty,
    /// an I/O error).
    #[error(transparent)]
    Read(#[from] SourceError),
    /// The file is not JSON (or not UTF-8): the byte offset is in the file,
    /// a stripped byte-order mark counted.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: JsonError,
    },
    /// The file is JSON but not an object (the listing needs one).
    #[error("{}: the JSON is {}, not an object", path.display(), found.as_str())]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// The type found.
        found: JsonType,
    },
}

/// The error of a directory that is there but cannot be listed; `Ok` for
/// one that can, or is not there, or is not a directory.
pub(super) fn unlistable(dir: &Path) -> Result<(), LoadError> {
    match fs::read_dir(dir) {
        Err(e) if fs::metadata(dir).is_ok_and(|m| m.is_dir()) => {
            Err(LoadError::Read(SourceError::Io {
                path: dir.to_path_buf(),
                source: e,
            }))
        }
        _ => Ok(()),
    }
}

impl LoadError {
    /// Whether this is "not found" (`persistence.py`'s `FileNotFoundError`): no
    /// record for a name, or a path that does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            LoadError::NotFound { .. } => true,
            LoadError::Read(SourceError::Io { source, .. }) => {
                source.kind() == std::io::ErrorKind::NotFound
            }
            _ => false,
        }
    }

    /// The file the error is about, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LoadError::NotFound { .. } => None,
            LoadError::Read(e) => Some(e.path()),
            LoadError::Json { path, .. } | LoadError::NotAnObject { path, .. } => Some(path),
        }
    }
}

thread_local! {
    /// One parser and one read buffer per thread, reused across files.
    static READER: RefCell<(Parser, Vec<u8>)> = RefCell::new((Parser::new(), Vec::new()));
}

/// Reads `path`, strips one UTF-8 byte-order mark (as `persistence.py` does), parses
/// it and hands the root to `f`.
pub(crate) fn with_json<R>(path: &Path, f: impl FnOnce(Value<'_>) -> R) -> Result<R, LoadError> {
    READER.with(|cell| {
        let mut guard = cell.borrow_mut();
        let (parser, buf) = &mut *guard;
        buf.clear();
        source::read_into(path, buf)?;
        let bom = if buf.starts_with(b"\xef\xbb\xbf") {
            3
        } else {
            0
        };
        let body = buf.get(bom..).unwrap_or_default();
        let out = match parser.parse(body) {
            Ok(doc) => Ok(f(doc.root())),
            Err(e) => Err(LoadError::Json {
                path: path.to_path_buf(),
                source: JsonError::new(e.kind(), e.offset().map(|o| o + bom), e.detail()),
            }),
        };
        // The buffers grow to the largest file read (and the parser's to
        // some 30 times that for a dense one); past a few megabytes they are
        // let go rather than kept by the thread for good.
        if buf.capacity() > KEEP_BUFFERS_UP_TO {
            *guard = (Parser::new(), Vec::new());
        }
        out
    })
}

/// The largest file whose reading buffers a thread keeps for the next one.
const KEEP_BUFFERS_UP_TO: usize = 4 << 20;

/// Reads a JSON file into an owned value as Python's `json.loads` builds
/// it (duplicate member names collapsed: first position, last value).
pub(crate) fn read_owned(path: &Path) -> Result<OwnedValue, LoadError> {
    with_json(path, |root| {
        let mut v = OwnedValue::from(root);
        collapse_duplicates(&mut v);
        v
    })
}

/// [`read_owned`], with the file's stamp; `Ok(None)` when the file changed
/// while it was read (identity, size or time differ before and after).
fn read_stamped(path: &Path) -> Result<Option<(OwnedValue, Option<super::FileStamp>)>, LoadError> {
    let before = fsops::entry_stamp(path);
    let v = read_owned(path)?;
    let stamp = super::FileStamp::of(path);
    let after = stamp.as_ref().map(|s| fsops::EntryStamp {
        id: s.id,
        len: s.len,
        mtime_ns: s.mtime_ns,
    });
    if before.is_none() || before != after {
        return Ok(None);
    }
    Ok(Some((v, stamp)))
}

/// Collapses duplicate member names in place, as a Python dict would
/// (first position, last value). Cheap when there are none.
pub(crate) fn collapse_duplicates(v: &mut OwnedValue) {
    let mut stack: Vec<&mut OwnedValue> = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            OwnedValue::Array(items) => stack.extend(items.iter_mut()),
            OwnedValue::Object(map) => {
                if has_duplicates(map) {
                    let collapsed: Map = py::dict_members(map)
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v.clone()))
                        .collect();
                    *map = collapsed;
                }
                stack.extend(map.entries_mut().iter_mut().map(|(_, v)| v));
            }
            _ => {}
        }
    }
}

fn has_duplicates(map: &Map) -> bool {
    let e = map.entries();
    if e.len() <= 16 {
        return e
            .iter()
            .enumerate()
            .any(|(i, (k, _))| e.get(..i).is_some_and(|b| b.iter().any(|(kk, _)| kk == k)));
    }
    let mut seen = HashSet::with_capacity(e.len());
    e.iter().any(|(k, _)| !seen.insert(k.as_str()))
}

/// What [`SessionStore::load_session_metadata`] returns: the metadata and the
/// canonical record it came from (`persistence.py`'s `LoadedSessionMetadata`).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSessionMetadata {
    /// The metadata: validated and completed with defaults, or the record
    /// as read when it does not validate (then it may not be an object).
    pub metadata: OwnedValue,
    /// [`canonical_record_locator`] of the file.
    pub canonical_record_locator: String,
    /// Whether the record passed `SessionMetadata` validation.
    pub validated: bool,
    /// The file read.
    pub path: PathBuf,
}

/// What [`SessionStore::load_chat_log`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedChatLog {
    /// The chat log: validated and completed with defaults, or the record
    /// as read when it does not validate.
    pub chat_log: OwnedValue,
    /// Whether the record passed `ChatLog` validation.
    pub validated: bool,
    /// The file read.
    pub path: PathBuf,
}

impl LoadedChatLog {
    /// The `messages` list (empty when absent or not a list).
    pub fn messages(&self) -> &[OwnedValue] {
        self.chat_log
            .get("messages")
            .and_then(OwnedValue::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

/// The crash signal: the newest session, when no clean-exit marker is
/// newer than its meta.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashSignal {
    /// The session's listed name.
    pub last_session_name: OwnedValue,
    /// Its listed `last_modified`.
    pub last_modified: String,
}

impl CrashSignal {
    /// `persistence.py`'s dict: `last_session_name`, `last_modified`.
    pub fn to_value(&self) -> OwnedValue {
        OwnedValue::Object(
            [
                (
                    "last_session_name".to_owned(),
                    self.last_session_name.clone(),
                ),
                (
                    "last_modified".to_owned(),
                    self.last_modified.as_str().into(),
                ),
            ]
            .into_iter()
            .collect(),
        )
    }
}

/// The session DIRECTORY of `path` as a comparable locator, as `persistence.py`'s
/// `canonical_record_locator` makes it: the path itself when it is a
/// directory, else its parent; made absolute with symlinks resolved (parts
/// that do not exist are kept as written); case-folded.
pub fn canonical_record_locator(path: &Path) -> String {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        fsops::parent_of(path)
    };
    py::casefold(&resolve_lenient(&dir).to_string_lossy())
}

/// `Path.resolve(strict=False)`: absolute, symlinks resolved in the part
/// that exists, the rest appended (`..` applied lexically).
pub(crate) fn resolve_lenient(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let comps: Vec<Component<'_>> = abs.components().collect();
    // The longest prefix that exists, canonicalised.
    for split in (1..=comps.len()).rev() {
        let prefix: PathBuf = comps.iter().take(split).collect();
        if let Ok(mut real) = fs::canonicalize(&prefix) {
            for c in comps.iter().skip(split) {
                match c {
                    Component::ParentDir => {
                        real.pop();
                    }
                    Component::CurDir => {}
                    other => real.push(other.as_os_str()),
                }
            }
            return real;
        }
    }
    abs
}

/// How a name-or-path resolved.
pub(crate) enum Resolved {
    /// Taken as a path (absolute, `.json`, or an existing separator path).
    Path(PathBuf),
    /// Found through the session-name lookup.
    Named(PathBuf),
}

impl Resolved {
    fn into_path(self) -> PathBuf {
        match self {
            Resolved::Path(p) | Resolved::Named(p) => p,
        }
    }
}

impl SessionStore {
    /// The candidate directories for `name`, most faithful first: the
    /// verbatim `Path(root) / name`, then `Path(root) / fs_safe_name(name)`
    /// when that differs (`persistence.py`'s `_name_lookup_dirs`).
    pub fn name_lookup_dirs(&self, name: &str) -> Vec<PathBuf> {
        let verbatim = py::join(&self.dir, name);
        let sanitised = py::join(&self.dir, fs_safe_name(name));
        if verbatim == sanitised {
            vec![sanitised]
        } else {
            vec![verbatim, sanitised]
        }
    }

    pub(crate) fn resolve_inner(
        &self,
        name_or_path: &str,
        kind: RecordKind,
    ) -> Result<Resolved, LoadError> {
        let arg = py::strip(name_or_path);
        let p = py::norm_path(Path::new(arg));
        if p.is_absolute() || arg.ends_with(".json") {
            return Ok(Resolved::Path(p));
        }
        if arg.contains(['/', '\\']) {
            if p.exists() {
                return Ok(Resolved::Path(p));
            }
            let direct = py::join(&self.dir, arg);
            if direct.is_file() {
                return Ok(Resolved::Path(direct));
            }
        }
        for candidate in self.name_lookup_dirs(arg) {
            if let Some(found) = fsops::latest(&candidate, kind.file_suffix()) {
                return Ok(Resolved::Named(found.path));
            }
        }
        // A session directory that is there but cannot be listed: its
        // error, not "not found".
        for candidate in self.name_lookup_dirs(arg) {
            unlistable(&candidate)?;
        }
        Err(LoadError::NotFound {
            query: arg.to_owned(),
            kind,
            sessions_dir: self.dir.clone(),
        })
    }

    /// Resolves a name-or-path argument to a concrete record file, in the
    /// `persistence.py`'s order:
    ///
    /// 1. absolute, or ending in `.json`: taken verbatim (not checked);
    /// 2. holding a separator: the path if it exists, else `root/arg` if it
    ///    is a file;
    /// 3. otherwise (and as the last resort for 2) a session name, looked up
    ///    in [`name_lookup_dirs`](Self::name_lookup_dirs) (verbatim first),
    ///    taking the newest `*_{kind}.json` by modification time.
    ///
    /// The argument is stripped of surrounding white space first.
    pub fn resolve_record_path(
        &self,
        name_or_path: &str,
        kind: RecordKind,
    ) -> Result<PathBuf, LoadError> {
        self.resolve_inner(name_or_path, kind)
            .map(Resolved::into_path)
    }

    /// Resolves, reads and parses a record, retrying when a concurrent save
    /// archived the file between resolving and reading it.
    fn load_record(
        &self,
        name_or_path: &str,
        kind: RecordKind,
    ) -> Result<(PathBuf, OwnedValue), LoadError> {
        let mut attempts = 0;
        loop {
            let resolved = self.resolve_inner(name_or_path, kind)?;
            let named = matches!(resolved, Resolved::Named(_));
            let path = resolved.into_path();
            match read_owned(&path) {
                Ok(v) => return Ok((path, v)),
                Err(e)
                    if named && e.is_not_found() && attempts < fsops::CONCURRENT_SAVE_RETRIES =>
                {
                    fsops::before_retry(&mut attempts)
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Loads a session's metadata by name or path (see
    /// [`resolve_record_path`](Self::resolve_record_path)), validated as
    /// `persistence.py` validates it, with the canonical record locator.
    pub fn load_session_metadata(
        &self,
        name_or_path: &str,
    ) -> Result<LoadedSessionMetadata, LoadError> {
        let (path, raw) = self.load_record(name_or_path, RecordKind::Meta)?;
        let locator = canonical_record_locator(&path);
        let (metadata, validated) = schema::validate(raw, Model::SessionMetadata);
        Ok(LoadedSessionMetadata {
            metadata,
            canonical_record_locator: locator,
            validated,
            path,
        })
    }

    /// Loads a chat log by name or path, validated as `persistence.py` validates it.
    pub fn load_chat_log(&self, name_or_path: &str) -> Result<LoadedChatLog, LoadError> {
        let (path, raw) = self.load_record(name_or_path, RecordKind::ChatLog)?;
        let (chat_log, validated) = schema::validate(raw, Model::ChatLog);
        Ok(LoadedChatLog {
            chat_log,
            validated,
            path,
        })
    }

    /// Loads a whole session: its metadata (which must load) and the newest
    /// chat log in the same directory. A chat log that exists but cannot
    /// be read leaves the messages empty and sets
    /// [`load_failed`](super::ChatSession::load_failed), so a later save
    /// will not overwrite it with a near-empty buffer; no chat log at all is
    /// an empty conversation.
    ///
    /// The session's [`origin`](super::ChatSession::origin) records the
    /// directory and the two files read (identity, size, time, hash), so
    /// its saves write that directory and refuse to publish over files
    /// changed since.
    pub fn load_session(&self, name_or_path: &str) -> Result<super::ChatSession, LoadError> {
        let mut attempts = 0;
        let (meta_path, meta_raw, meta_stamp) = loop {
            let resolved = self.resolve_inner(name_or_path, RecordKind::Meta)?;
            let named = matches!(resolved, Resolved::Named(_));
            let path = resolved.into_path();
            match read_stamped(&path) {
                Ok(Some((v, stamp))) => break (path, v, stamp),
                Ok(None) if attempts < fsops::CONCURRENT_SAVE_RETRIES => {
                    fsops::before_retry(&mut attempts)
                }
                Ok(None) => {
                    return Err(LoadError::Read(SourceError::Io {
                        path: path.clone(),
                        source: std::io::Error::other("the file kept changing while read"),
                    }));
                }
                Err(e)
                    if named && e.is_not_found() && attempts < fsops::CONCURRENT_SAVE_RETRIES =>
                {
                    fsops::before_retry(&mut attempts)
                }
                Err(e) => return Err(e),
            }
        };
        let dir = fsops::parent_of(&meta_path);
        // An interrupted save whose chat log is live: its meta is the
        // session's (the next save publishes it before its own).
        let (meta_path, meta_raw, meta_stamp) = match super::journal::read_pending(&dir) {
            Ok(Some((p, true))) => match OwnedValue::parse(&p.meta_bytes) {
                Ok(mut v) => {
                    collapse_duplicates(&mut v);
                    (py::join(&dir, &p.meta), v, None)
                }
                Err(_) => (meta_path, meta_raw, meta_stamp),
            },
            _ => (meta_path, meta_raw, meta_stamp),
        };
        let recorded_name = meta_raw
            .as_object()
            .and_then(|m| m.get("session_name"))
            .cloned();
        let (metadata, _) = schema::validate(meta_raw, Model::SessionMetadata);
        let mut origin = super::Origin::new(dir.clone());
        origin.meta = meta_stamp;
        origin.recorded_name = recorded_name;
        let mut attempts = 0;
        let (chat_log, failed) = loop {
            match fsops::latest(&dir, RecordKind::ChatLog.file_suffix()) {
                None => break (None, false),
                Some(found) => match read_stamped(&found.path) {
                    Ok(Some((v, stamp))) => {
                        origin.chat_log = stamp;
                        break (Some(schema::validate(v, Model::ChatLog).0), false);
                    }
                    Ok(None) if attempts < fsops::CONCURRENT_SAVE_RETRIES => {
                        fsops::before_retry(&mut attempts)
                    }
                    // Archived by a concurrent save meanwhile: look again.
                    Err(e) if e.is_not_found() && attempts < fsops::CONCURRENT_SAVE_RETRIES => {
                        fsops::before_retry(&mut attempts)
                    }
                    Ok(None) | Err(_) => {
                        origin.chat_log = super::FileStamp::of(&found.path);
                        break (None, true);
                    }
                },
            }
        };
        let mut s = super::ChatSession::from_records_owned(&metadata, chat_log);
        s.load_failed = failed;
        s.filepath = Some(meta_path);
        s.origin = Some(origin);
        Ok(s)
    }

    /// Whether `name` names a session the loader can load: the argument is
    /// stripped and resolved exactly as
    /// [`resolve_record_path`](Self::resolve_record_path) resolves it, and
    /// the answer is true when that resolution ends in the session-name
    /// lookup with a `*_meta.json` found. A path argument (absolute, `.json`)
    /// is not a session name and answers false.
    ///
    /// **Difference from `persistence.py`'s code (4):** `persistence.py`'s `session_exists`
    /// does not strip the argument and skips the loader's path steps, so it
    /// can say true for a name the loader cannot load (`" x"` when a
    /// directory `" x"` exists) and false for one it can (`"x\n"`).
    pub fn session_exists(&self, name: &str) -> bool {
        matches!(
            self.resolve_inner(name, RecordKind::Meta),
            Ok(Resolved::Named(_))
        )
    }

    /// The crash signal: `None` when there is no session, or when the
    /// clean-exit marker is at least as new as the newest session's meta;
    /// otherwise that session's name and `last_modified`. Ties between
    /// sessions go to the first in name order, as `persistence.py`'s `max` does.
    pub fn read_crash_signal(&self) -> Option<CrashSignal> {
        let list = self.list_sessions();
        let mut latest: Option<&SessionEntry> = None;
        for s in &list.sessions {
            if latest.is_none_or(|l| py_mtime(s.mtime) > py_mtime(l.mtime)) {
                latest = Some(s);
            }
        }
        let latest = latest?;
        let marker = py::join(&self.dir, CLEAN_EXIT_MARKER_NAME);
        if let Ok(m) = fs::metadata(&marker)
            && let Ok(t) = m.modified()
            && py_mtime(t) >= py_mtime(latest.mtime)
        {
            return None;
        }
        Some(CrashSignal {
            last_session_name: latest.name.clone(),
            last_modified: latest.last_modified.clone(),
        })
    }

    /// The most recently modified `*.txt` in the session's `artifacts/`
    /// (ties: the first in name order, as `persistence.py`'s `max` does), or `None`.
    ///
    /// **Difference from `persistence.py`'s code (5):** `persistence.py` creates the session
    /// directory as a side effect of asking; this never creates anything.
    pub fn find_latest_artifact(&self, session_name: &str) -> Option<PathBuf> {
        let dir = py::join(&self.session_dir(session_name), "artifacts");
        if !dir.is_dir() {
            return None;
        }
        let (found, _) = fsops::scan(&dir, fsops::ends_with(".txt"));
        let mut best: Option<Found> = None;
        for f in found {
            if best.as_ref().is_none_or(|b| f.py_mtime() > b.py_mtime()) {
                best = Some(f);
            }
        }
        best.map(|f| f.path)
    }
}
