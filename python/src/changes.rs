//! Incremental reading: `store.changes_since(checkpoint)` (one
//! changes-since scan, `agentlog::openhands::Store::changes_since`) and
//! `store.follow(...)` (a `agentlog::follow::Follower` woken by the file
//! system), both iterators of `agentlog.Change`, and `agentlog.Checkpoint`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentlog::follow::{FollowOptions, Follower};
use agentlog::openhands::{
    Change as RsChange, Changes as RsChanges, Checkpoint as RsCheckpoint, ScanOptions, Store,
};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::{Class, error, read_error};
use crate::event::{Event, EventCopy, Src, with_root};
use crate::met::Met;
use crate::pace::Pace;
use crate::values::tape_to_py;

/// What a store was read to: saved after what was done with the changes is
/// durable, the next `changes_since` (or `follow`) starts there.
///
/// >>> import agentlog
/// >>> store = agentlog.open("examples/store")
/// >>> changes = store.changes_since(None)
/// >>> first = list(changes)
/// >>> cp = changes.checkpoint()
/// >>> list(store.changes_since(cp))          # nothing changed since
/// []
/// >>> cp.save("/tmp/store.cp")              # atomically; load it again:
/// >>> agentlog.Checkpoint.load("/tmp/store.cp").events == cp.events
/// True
#[pyclass(module = "agentlog", frozen)]
pub struct Checkpoint {
    pub cp: RsCheckpoint,
}

#[pymethods]
impl Checkpoint {
    /// Reads a checkpoint file (`agentlog.FormatError` when it is not one,
    /// `agentlog.ReadError` when it cannot be read).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Checkpoint> {
        let got = py.detach(|| RsCheckpoint::load(&path));
        got.map(|cp| Checkpoint { cp })
            .map_err(|e| checkpoint_error(&path, &e))
    }

    /// A checkpoint from the bytes `to_bytes()` gave.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Checkpoint> {
        RsCheckpoint::from_bytes(data, Path::new("<bytes>"))
            .map(|cp| Checkpoint { cp })
            .map_err(|e| error(Class::Format, None, e.to_string()))
    }

    /// Saves the checkpoint at `path` atomically (a reader sees the old
    /// file or the new one, never a part; a failure leaves the old file).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.cp.save(&path))
            .map_err(|e| error(Class::Read, Some(&path), e.to_string()))
    }

    /// The checkpoint's bytes, as `save` writes them.
    fn to_bytes(&self) -> Vec<u8> {
        self.cp.to_bytes()
    }

    /// The store's root the checkpoint is of.
    #[getter]
    fn root(&self) -> PathBuf {
        self.cp.root().to_path_buf()
    }

    /// How many conversations (sub-agents' included) it records.
    fn __len__(&self) -> usize {
        self.cp.len()
    }

    /// How many events it records as handed out.
    #[getter]
    fn events(&self) -> u64 {
        self.cp.events()
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Checkpoint of {} ({} conversations, {} events)>",
            self.cp.root().display(),
            self.cp.len(),
            self.cp.events()
        )
    }
}

pub(crate) fn checkpoint_error(path: &Path, e: &agentlog::openhands::CheckpointError) -> PyErr {
    use agentlog::openhands::CheckpointError as E;
    match e {
        E::Io { .. } => read_error(path, e),
        _ => error(
            Class::Format,
            Some(path),
            crate::errors::reason_of(path, &e.to_string()),
        ),
    }
}

/// The checkpoint a caller gave: a `Checkpoint`, a path to load one from
/// (a file not there yet, or empty, is none: a first run), or `None`.
pub fn given_checkpoint(
    py: Python<'_>,
    given: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<RsCheckpoint>> {
    let Some(g) = given else { return Ok(None) };
    if g.is_none() {
        return Ok(None);
    }
    if let Ok(c) = g.cast::<Checkpoint>() {
        return Ok(Some(c.get().cp.clone()));
    }
    if g.cast::<crate::session_changes::SessionsCheckpoint>()
        .is_ok()
    {
        return Err(error(
            Class::Format,
            None,
            "an OC Chat sessions directory's agentlog.SessionsCheckpoint given for an \
             OpenHands store (its checkpoint is an agentlog.Checkpoint)",
        ));
    }
    let Some(path) = checkpoint_file(g)? else {
        return Ok(None);
    };
    py.detach(|| RsCheckpoint::load_or_none(&path))
        .map_err(|e| checkpoint_error(&path, &e))
}

/// The checkpoint file a caller gave (a path): `None` when it is an empty
/// file, a first run (as a file not there yet is, which the loaders say).
pub fn checkpoint_file(g: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    let path: PathBuf = g.extract()?;
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        return Ok(None);
    }
    Ok(Some(path))
}

/// One changed conversation: what happened (`kind`: `"new"`, `"updated"`,
/// `"rewrite"`, `"removed"`), which conversation, and the events to hand
/// out (the repaired ones, then the new ones, in index order; every event
/// for `new` and `rewrite`), as `agentlog export --checkpoint` prints them.
///
/// >>> import agentlog
/// >>> for change in agentlog.open("examples/store").changes_since(None):
/// ...     print(change.kind, change.id, len(change.events))   # doctest: +SKIP
/// new 3f2a… 14
#[pyclass(module = "agentlog", frozen)]
pub struct Change {
    kind: &'static str,
    id: String,
    parent: Option<String>,
    depth: usize,
    dir: PathBuf,
    rel: PathBuf,
    state_changed: bool,
    meta_changed: bool,
    gap_filled: bool,
    repaired: Vec<u64>,
    from: u64,
    to: u64,
    again: bool,
    state: Option<Vec<u8>>,
    meta: Option<Vec<u8>>,
    events: Vec<EventCopy>,
    /// Set when the change's `events` were made.
    events_made: std::sync::OnceLock<Py<PyList>>,
}

impl Change {
    /// A copy of `c` (made without the GIL).
    fn of(c: &RsChange<'_>) -> Change {
        let raw = |f: Option<&agentlog::openhands::JsonFile>| {
            f.filter(|f| f.error().is_none()).map(|f| f.raw().to_vec())
        };
        Change {
            kind: c.kind.as_str(),
            id: c.id.to_owned(),
            parent: c.parent.map(str::to_owned),
            depth: c.depth,
            dir: c.dir.to_path_buf(),
            rel: c.rel.to_path_buf(),
            state_changed: c.state_changed,
            meta_changed: c.meta_changed,
            gap_filled: c.gap_filled,
            repaired: c.repaired.to_vec(),
            from: c.from,
            to: c.to,
            again: c.again,
            state: c.conversation.and_then(|v| raw(v.state())),
            meta: c.conversation.and_then(|v| raw(v.meta())),
            events: c.events().map(|e| EventCopy::of(&e)).collect(),
            events_made: std::sync::OnceLock::new(),
        }
    }

    fn file_value<'py>(py: Python<'py>, raw: Option<&[u8]>) -> PyResult<Bound<'py, PyAny>> {
        let Some(raw) = raw else {
            return Ok(py.None().into_bound(py));
        };
        match with_root(raw, |root| tape_to_py(py, root)) {
            Ok(r) => r,
            Err(reason) => Err(error(Class::Read, None, reason)),
        }
    }
}

#[pymethods]
impl Change {
    /// `"new"`, `"updated"`, `"rewrite"` (its history changed: drop what
    /// you hold of it, every event follows) or `"removed"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The conversation's ID, as `export` prints it.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// For a sub-agent's conversation, its parent's ID.
    #[getter]
    fn parent_id(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// 0 for a top-level conversation, 1 for its sub-agents…
    #[getter]
    fn depth(&self) -> usize {
        self.depth
    }

    /// The conversation directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.clone()
    }

    /// Its path relative to the store's root (the checkpoint's key).
    #[getter]
    fn rel(&self) -> PathBuf {
        self.rel.clone()
    }

    /// Whether `base_state.json`'s bytes changed (or it is new).
    #[getter]
    fn state_changed(&self) -> bool {
        self.state_changed
    }

    /// Whether `meta.json`'s bytes changed (or it is new).
    #[getter]
    fn meta_changed(&self) -> bool {
        self.meta_changed
    }

    /// Whether files past a gap became events (the missing index came).
    #[getter]
    fn gap_filled(&self) -> bool {
        self.gap_filled
    }

    /// Indexes of events malformed when handed out that now read: handed
    /// out again.
    #[getter]
    fn repaired(&self) -> Vec<u64> {
        self.repaired.clone()
    }

    /// The new events are the indexes `range(from_index, to_index)`.
    #[getter]
    #[allow(clippy::wrong_self_convention)] // the Python attribute's name
    fn from_index(&self) -> u64 {
        self.from
    }

    /// One past the last new event's index.
    #[getter]
    fn to_index(&self) -> u64 {
        self.to
    }

    /// Whether the directory comes again in full only because another
    /// directory of its ID changed (the directory itself did not).
    #[getter]
    fn again(&self) -> bool {
        self.again
    }

    /// `base_state.json` as a dict when the scan read it (`None` when it
    /// was known unchanged, or there is none).
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::file_value(py, self.state.as_deref())
    }

    /// `meta.json` as a dict when the scan read it.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::file_value(py, self.meta.as_deref())
    }

    /// The events handed out, as `agentlog.Event` objects (their bytes
    /// copied: they stay valid after the scan goes on).
    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if let Some(l) = self.events_made.get() {
            return Ok(l.bind(py).clone());
        }
        let list = PyList::empty(py);
        for e in &self.events {
            let copy = EventCopy {
                kind: e.kind.clone(),
                id: e.id.clone(),
                file_id: e.file_id.clone(),
                timestamp: e.timestamp.clone(),
                source: e.source.clone(),
                parent_id: e.parent_id.clone(),
                index: e.index,
                file: e.file.clone(),
                error: e.error.clone(),
                raw: e.raw.clone(),
            };
            list.append(Py::new(
                py,
                Event {
                    src: Src::Copy(Box::new(copy)),
                },
            )?)?;
        }
        let _ = self.events_made.set(list.clone().unbind());
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Change {} {} ({} events)>",
            self.kind,
            self.id,
            self.events.len()
        )
    }
}

pub(crate) fn poisoned() -> PyErr {
    error(
        Class::Other,
        None,
        "an earlier call panicked while reading (the scan cannot go on)",
    )
}

/// One changes-since scan of a store: an iterator of `agentlog.Change`,
/// each conversation read when reached (the GIL released meanwhile).
/// `checkpoint()` is the checkpoint of what was handed out so far;
/// conversations that could not be read are in `errors` (kept in the
/// checkpoint as they were: tried again next time).
#[pyclass(module = "agentlog")]
pub struct Changes {
    scan: std::sync::Mutex<Option<RsChanges>>,
    errors: Met,
}

/// Starts a scan of `root` from `since`.
pub fn changes_since(
    py: Python<'_>,
    root: &Path,
    since: Option<RsCheckpoint>,
    settle: Option<f64>,
    verify_files: bool,
) -> PyResult<Changes> {
    let opts = ScanOptions {
        settle: settle.map(Duration::from_secs_f64),
        verify_files,
        ..ScanOptions::default()
    };
    let started = py.detach(|| Store::changes_since(root, since.as_ref(), opts));
    let scan = started.map_err(|e| {
        use agentlog::openhands::ChangesError as E;
        match &e {
            E::Read(r) => read_error(crate::conversation::path_of(r), r),
            _ => error(
                Class::Format,
                Some(root),
                crate::errors::reason_of(root, &e.to_string()),
            ),
        }
    })?;
    // The directories of the walk that could not be listed.
    let mut errors = Met::default();
    for e in scan.unreadable() {
        errors.read_error(py, crate::conversation::path_of(e), e);
    }
    Ok(Changes {
        scan: std::sync::Mutex::new(Some(scan)),
        errors,
    })
}

/// The next change of `scan`, read with the GIL released; a conversation
/// that cannot be read is kept in `errors` (an `agentlog.ReadError`) and
/// the scan goes on. `None` at the end.
fn next_change(py: Python<'_>, scan: &mut RsChanges, errors: &mut Met) -> Option<Change> {
    loop {
        let got = py.detach(|| scan.next().map(|item| item.map(|c| Change::of(&c))));
        match got? {
            Ok(c) => return Some(c),
            Err(e) => errors.read_error(py, e.path(), &e),
        }
    }
}

#[pymethods]
impl Changes {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Change>> {
        let mut guard = self.scan.lock().map_err(|_| poisoned())?;
        let Some(scan) = guard.as_mut() else {
            return Ok(None);
        };
        Ok(next_change(py, scan, &mut self.errors))
    }

    /// The checkpoint of what was handed out so far (at the end: the
    /// store as read).
    fn checkpoint(&self) -> PyResult<Checkpoint> {
        match &*self.scan.lock().map_err(|_| poisoned())? {
            Some(s) => Ok(Checkpoint { cp: s.checkpoint() }),
            None => Err(error(Class::Other, None, "the scan is gone")),
        }
    }

    /// The conversations and directories that could not be read, as
    /// `agentlog.ReadError` objects (not raised: the scan went on).
    #[getter]
    fn errors(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.errors.errors(py)
    }

    /// Whether the scan has handed out everything.
    #[getter]
    fn finished(&self) -> PyResult<bool> {
        Ok(self
            .scan
            .lock()
            .map_err(|_| poisoned())?
            .as_ref()
            .is_some_and(RsChanges::is_finished))
    }
}

/// Following a store live: an iterator of `agentlog.Change` that waits
/// (the GIL released, Ctrl-C honoured) for what is written next. The
/// first changes are everything since `checkpoint` (all there is, without
/// one); then what was written meanwhile and after. Each of the follower's
/// scans is taken a change at a time (`Follower::step`), each conversation
/// read when the iterator reaches it, as `changes_since` reads them, none
/// held. Ends when nothing came for `idle_timeout` seconds (never, when
/// `None`); `checkpoint()` is the checkpoint of what was handed out.
#[pyclass(module = "agentlog")]
pub struct Follow {
    follower: std::sync::Mutex<Follower>,
    pace: Pace,
    errors: Met,
}

/// How often a follower looks and when it stops, in seconds, as Python
/// gives them.
pub struct FollowTiming {
    /// Every this many seconds instead of file-system events.
    pub poll: Option<f64>,
    /// A malformed event file younger than this is held back.
    pub settle: f64,
    /// Ends after this long with nothing new (`None`: never).
    pub idle_timeout: Option<f64>,
}

/// Starts following `root` from `since`.
pub fn follow(
    py: Python<'_>,
    root: &Path,
    since: Option<RsCheckpoint>,
    timing: FollowTiming,
    verify_files: bool,
) -> PyResult<Follow> {
    let FollowTiming {
        poll,
        settle,
        idle_timeout,
    } = timing;
    let opts = FollowOptions {
        poll: poll.map(Duration::from_secs_f64),
        settle: Duration::from_secs_f64(settle),
        verify_files,
        ..FollowOptions::default()
    };
    let root = root.to_path_buf();
    let follower = py.detach(|| Follower::new(vec![(root, since)], opts));
    Ok(Follow {
        follower: std::sync::Mutex::new(follower),
        pace: Pace::new(idle_timeout),
        errors: Met::default(),
    })
}

/// The next change of `follower`'s scan under way (a new scan when none
/// is), read with the GIL released; a conversation that cannot be read, or
/// a directory its walk could not list, is kept in `errors` and the scan
/// goes on. `None` at the scan's end.
fn step(
    py: Python<'_>,
    follower: &std::sync::Mutex<Follower>,
    errors: &mut Met,
) -> PyResult<Option<Change>> {
    let mut guard = follower.lock().map_err(|_| poisoned())?;
    let follower = &mut *guard;
    loop {
        let got = py.detach(|| follower.step(|_, item| item.map(|c| Change::of(&c))));
        match got {
            Err(e) => return Err(error(Class::Read, None, e.to_string())),
            Ok(None) => return Ok(None),
            Ok(Some(Ok(c))) => return Ok(Some(c)),
            Ok(Some(Err(e))) => errors.read_error(py, e.path(), &e),
        }
    }
}

#[pymethods]
impl Follow {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Change>> {
        let Follow {
            follower,
            pace,
            errors,
        } = self;
        pace.next(py, follower, |py| step(py, follower, errors))
    }

    /// The checkpoint of what was handed out so far (`None` before
    /// anything was, without a checkpoint to start from).
    fn checkpoint(&self) -> PyResult<Option<Checkpoint>> {
        let guard = self.follower.lock().map_err(|_| poisoned())?;
        Ok(guard.checkpoint_so_far(0).map(|cp| Checkpoint { cp }))
    }

    /// How many changes were found and not handed out yet: 0, since each
    /// scan is read a conversation at a time and none is held (kept for
    /// the code that waits for it to be 0 before saving a checkpoint).
    #[getter]
    fn pending(&self) -> usize {
        0
    }

    /// Why the follower polls although asked for events (`None` when it
    /// watches the file system, or was asked to poll).
    #[getter]
    fn polling(&self) -> PyResult<Option<String>> {
        let guard = self.follower.lock().map_err(|_| poisoned())?;
        Ok(guard.polling().map(str::to_owned))
    }

    /// The conversations that could not be read and the directories that
    /// could not be listed, as `agentlog.ReadError` objects (not raised:
    /// following went on). Each scan tries them again; an error is listed
    /// once, however many scans met it.
    #[getter]
    fn errors(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.errors.errors(py)
    }
}
