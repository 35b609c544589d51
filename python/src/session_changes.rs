//! Incremental reading of an OC Chat sessions directory:
//! `store.changes_since(checkpoint)` (one pass of
//! `agentlog::follow::occhat::Sessions`, a session at a time) and
//! `store.follow(...)` (a `agentlog::follow::Follower` over the sessions
//! directory), both iterators of `agentlog.SessionChange`, and
//! `agentlog.SessionsCheckpoint`.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use agentlog::follow::occhat::{Pass, SessionChange as RsChange, Sessions};
use agentlog::follow::{FollowOptions, Follower, SessionsCheckpoint as RsCheckpoint};
use agentlog::json::OwnedValue;
use agentlog::openhands::CheckpointError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::changes::{FollowTiming, checkpoint_error, poisoned};
use crate::errors::{Class, error, read_error};
use crate::pace::Pace;
use crate::values::owned_to_py;

/// What an OC Chat sessions directory was read to: per session, its meta
/// file, how many messages were handed out and a digest of them. Saved
/// once what was done with the changes is durable; the next
/// `changes_since` (or `follow`) starts there.
///
/// >>> import agentlog
/// >>> store = agentlog.open("sessions")                   # doctest: +SKIP
/// >>> changes = store.changes_since(None)                  # doctest: +SKIP
/// >>> first = list(changes)                                # doctest: +SKIP
/// >>> changes.checkpoint().save("sessions.cp")             # doctest: +SKIP
#[pyclass(module = "agentlog", frozen)]
pub struct SessionsCheckpoint {
    pub cp: RsCheckpoint,
}

#[pymethods]
impl SessionsCheckpoint {
    /// Reads a sessions checkpoint file (`agentlog.FormatError` when it is
    /// not one, an OpenHands store's checkpoint included;
    /// `agentlog.ReadError` when it cannot be read).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<SessionsCheckpoint> {
        let got = py.detach(|| RsCheckpoint::load(&path));
        got.map(|cp| SessionsCheckpoint { cp })
            .map_err(|e| checkpoint_error(&path, &e))
    }

    /// A checkpoint from the bytes `to_bytes()` gave.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<SessionsCheckpoint> {
        RsCheckpoint::from_bytes(data, Path::new("<bytes>"))
            .map(|cp| SessionsCheckpoint { cp })
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

    /// The sessions directory it is of.
    #[getter]
    fn root(&self) -> PathBuf {
        self.cp.root().to_path_buf()
    }

    /// How many sessions it records.
    fn __len__(&self) -> usize {
        self.cp.len()
    }

    /// How many messages it records as handed out, over every session.
    #[getter]
    fn messages(&self) -> usize {
        self.cp.sessions().map(|(_, m)| m.messages).sum()
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.SessionsCheckpoint of {} ({} sessions, {} messages)>",
            self.cp.root().display(),
            self.cp.len(),
            self.messages()
        )
    }
}

/// The sessions checkpoint a caller gave: a `SessionsCheckpoint`, a path to
/// load one from (a file not there yet, or empty, is none: a first run), or
/// `None`. An OpenHands store's `agentlog.Checkpoint` is refused.
pub fn given_checkpoint(
    py: Python<'_>,
    root: &Path,
    given: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<RsCheckpoint>> {
    let Some(g) = given else { return Ok(None) };
    if g.is_none() {
        return Ok(None);
    }
    if let Ok(c) = g.cast::<SessionsCheckpoint>() {
        return Ok(Some(c.get().cp.clone()));
    }
    if g.cast::<crate::changes::Checkpoint>().is_ok() {
        return Err(error(
            Class::Format,
            Some(root),
            "an OpenHands store's agentlog.Checkpoint given for an OC Chat sessions \
             directory (its checkpoint is an agentlog.SessionsCheckpoint)",
        ));
    }
    let Some(path) = crate::changes::checkpoint_file(g)? else {
        return Ok(None);
    };
    py.detach(|| RsCheckpoint::load_or_none(&path))
        .map_err(|e| checkpoint_error(&path, &e))
}

/// One changed OC Chat session: what happened (`kind`: `"new"`,
/// `"updated"`: messages added at the end, `"rewrite"`: the chat log is not
/// an extension of what was handed out, every message follows, or
/// `"removed"`), which session, and the messages to hand out (indexes
/// `range(from_index, to_index)` of its chat log), as `agentlog follow`
/// prints them.
#[pyclass(module = "agentlog", frozen)]
pub struct SessionChange {
    kind: &'static str,
    session: String,
    from: usize,
    messages: Vec<OwnedValue>,
    /// Set when the change's `messages` were made.
    made: std::sync::OnceLock<Py<PyList>>,
}

impl SessionChange {
    /// A copy of `c` (made without the GIL).
    fn of(c: &RsChange<'_>) -> SessionChange {
        let (kind, session, from, messages) = match c {
            RsChange::Added {
                session,
                new,
                from,
                messages,
            } => (
                if *new { "new" } else { "updated" },
                *session,
                *from,
                messages.to_vec(),
            ),
            RsChange::Rewrite { session, messages } => ("rewrite", *session, 0, messages.to_vec()),
            RsChange::Removed { session } => ("removed", *session, 0, Vec::new()),
        };
        SessionChange {
            kind,
            session: session.to_owned(),
            from,
            messages,
            made: std::sync::OnceLock::new(),
        }
    }
}

#[pymethods]
impl SessionChange {
    /// `"new"`, `"updated"`, `"rewrite"` (drop what you hold of the
    /// session: every message follows) or `"removed"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The session's name, as `agentlog.Session.id` has it.
    #[getter]
    fn id(&self) -> &str {
        &self.session
    }

    /// The index in the chat log of the first message handed out.
    #[getter]
    #[allow(clippy::wrong_self_convention)] // the Python attribute's name
    fn from_index(&self) -> usize {
        self.from
    }

    /// One past the last message's index.
    #[getter]
    fn to_index(&self) -> usize {
        self.from + self.messages.len()
    }

    /// The messages handed out, as dicts (those of the chat log, as
    /// `agentlog.Session.messages` has them).
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if let Some(l) = self.made.get() {
            return Ok(l.bind(py).clone());
        }
        let list = PyList::empty(py);
        for m in &self.messages {
            list.append(owned_to_py(py, m)?)?;
        }
        let _ = self.made.set(list.clone().unbind());
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.SessionChange {} {} ({} messages)>",
            self.kind,
            self.session,
            self.messages.len()
        )
    }
}

/// One changes-since pass over an OC Chat sessions directory: an iterator
/// of `agentlog.SessionChange`, each session loaded when reached (the GIL
/// released meanwhile). `checkpoint()` is the checkpoint of what was handed
/// out so far. A session whose chat log cannot be loaded is passed over and
/// tried again by the next pass.
#[pyclass(module = "agentlog")]
pub struct SessionChanges {
    scan: Mutex<(Sessions, Pass, bool)>,
}

/// `agentlog.ReadError` when the sessions directory cannot be listed (gone
/// since the store was opened): a directory that cannot be read is not one
/// with nothing new.
fn readable(py: Python<'_>, root: &Path) -> PyResult<()> {
    py.detach(|| std::fs::read_dir(root).map(drop))
        .map_err(|e| read_error(root, &e))
}

/// Starts a pass over the sessions directory `root` from `since`.
pub fn changes_since(
    py: Python<'_>,
    root: &Path,
    since: Option<RsCheckpoint>,
) -> PyResult<SessionChanges> {
    let root = root.to_path_buf();
    readable(py, &root)?;
    let started = py.detach(|| {
        let s = Sessions::resume(root.clone(), since)?;
        let pass = s.pass();
        Ok::<_, CheckpointError>((s, pass))
    });
    let (sessions, pass) = started.map_err(|e| checkpoint_error(&root, &e))?;
    Ok(SessionChanges {
        scan: Mutex::new((sessions, pass, false)),
    })
}

#[pymethods]
impl SessionChanges {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<SessionChange>> {
        let mut guard = self.scan.lock().map_err(|_| poisoned())?;
        let (sessions, pass, done) = &mut *guard;
        if *done {
            return Ok(None);
        }
        let got = py.detach(|| sessions.step(pass, |c| Ok::<_, Infallible>(SessionChange::of(&c))));
        match got {
            Some(Ok(c)) => Ok(Some(c)),
            None => {
                *done = true;
                Ok(None)
            }
        }
    }

    /// The checkpoint of what was handed out so far (at the end: the
    /// sessions directory as read).
    fn checkpoint(&self) -> PyResult<SessionsCheckpoint> {
        let guard = self.scan.lock().map_err(|_| poisoned())?;
        Ok(SessionsCheckpoint {
            cp: guard.0.checkpoint().clone(),
        })
    }

    /// Whether the pass has handed out everything.
    #[getter]
    fn finished(&self) -> PyResult<bool> {
        Ok(self.scan.lock().map_err(|_| poisoned())?.2)
    }
}

/// Following an OC Chat sessions directory live: an iterator of
/// `agentlog.SessionChange` that waits (the GIL released, Ctrl-C honoured)
/// for the next save. The first changes are everything since `checkpoint`
/// (all there is, without one); then what was saved meanwhile and after.
/// Each pass over the directory is taken a change at a time
/// (`Follower::occhat_mut`), each recorded in the follower's checkpoint
/// when handed out, so that no pass holds its messages: a session's are
/// loaded when the iterator reaches it, as `changes_since` loads them.
/// Ends when nothing came for `idle_timeout` seconds (never, when `None`);
/// `checkpoint()` is the checkpoint of what was handed out.
#[pyclass(module = "agentlog")]
pub struct SessionFollow {
    follower: Mutex<Follower>,
    /// The pass under way.
    pass: Option<Pass>,
    pace: Pace,
}

/// Starts following the sessions directory `root` from `since`.
pub fn follow(
    py: Python<'_>,
    root: &Path,
    since: Option<RsCheckpoint>,
    timing: FollowTiming,
) -> PyResult<SessionFollow> {
    let opts = FollowOptions {
        poll: timing.poll.map(Duration::from_secs_f64),
        settle: Duration::from_secs_f64(timing.settle),
        ..FollowOptions::default()
    };
    let root = root.to_path_buf();
    readable(py, &root)?;
    let made =
        py.detach(|| Follower::new(Vec::new(), opts).with_occhat_from(vec![(root.clone(), since)]));
    let follower = made.map_err(|e| {
        error(
            Class::Format,
            Some(&root),
            crate::errors::reason_of(&root, &e.to_string()),
        )
    })?;
    Ok(SessionFollow {
        follower: Mutex::new(follower),
        pass: None,
        pace: Pace::new(timing.idle_timeout),
    })
}

/// The next change of the pass over `follower`'s sessions directory under
/// way in `pass` (a new pass when none is), loaded with the GIL released;
/// `None` at the pass's end.
fn step(
    py: Python<'_>,
    follower: &Mutex<Follower>,
    pass: &mut Option<Pass>,
) -> PyResult<Option<SessionChange>> {
    let mut guard = follower.lock().map_err(|_| poisoned())?;
    let Some(sessions) = guard.occhat_mut(0) else {
        return Err(error(
            Class::Other,
            None,
            "the follower holds no sessions directory",
        ));
    };
    Ok(py.detach(|| {
        let p = pass.get_or_insert_with(|| sessions.pass());
        match sessions.step(p, |c| Ok::<_, Infallible>(SessionChange::of(&c))) {
            Some(Ok(c)) => Some(c),
            None => {
                *pass = None;
                None
            }
        }
    }))
}

#[pymethods]
impl SessionFollow {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<SessionChange>> {
        let SessionFollow {
            follower,
            pass,
            pace,
        } = self;
        pace.next(py, follower, |py| step(py, follower, pass))
    }

    /// The checkpoint of what was handed out so far.
    fn checkpoint(&self) -> PyResult<SessionsCheckpoint> {
        let guard = self.follower.lock().map_err(|_| poisoned())?;
        match guard.occhat_checkpoint(0) {
            Some(cp) => Ok(SessionsCheckpoint { cp: cp.clone() }),
            None => Err(error(
                Class::Other,
                None,
                "the follower holds no sessions directory",
            )),
        }
    }

    /// How many changes were found and not handed out yet: 0, since each
    /// pass is read a session at a time and none is held (kept for the
    /// code that waits for it to be 0 before saving a checkpoint).
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
}
