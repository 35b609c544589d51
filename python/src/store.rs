//! `agentlog.open(path)`: an OpenHands store (or one conversation) or an OC
//! Chat sessions directory, told apart as the command tells its PATHs.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agentlog::occhat::{SessionEntry, SessionStore};
use agentlog::openhands::{self, FILE_META};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::conversation::{Conversation, MAX_SUBAGENT_DEPTH, path_of, read};
use crate::errors::{Class, error, read_error};
use crate::ids::by_prefix;
use crate::occhat::load;

/// What marks `dir` as an OC Chat store in the flat layout from before
/// session directories (`{name}.json` metas with a `session_name` at the
/// root, `Chat_logs/`), which `agentlog occhat migrate` converts; the
/// command's rule.
fn legacy_occhat(dir: &Path) -> Option<String> {
    let is_flat_meta = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= 1 << 20)
            && fs::read(p).is_ok_and(|b| {
                agentlog::json::Parser::new()
                    .parse(&b)
                    .is_ok_and(|d| d.root().get("session_name").is_some())
            })
    };
    let metas = fs::read_dir(dir).map_or(0, |rd| {
        rd.flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter(|e| is_flat_meta(&e.path()))
            .count()
    });
    let logs = dir.join("Chat_logs").is_dir();
    match (metas, logs) {
        (0, false) => None,
        (0, true) => Some("Chat_logs/".to_owned()),
        (n, logs) => Some(format!(
            "{n} flat {}{}",
            if n == 1 { "meta" } else { "metas" },
            if logs { " and Chat_logs/" } else { "" }
        )),
    }
}

pub enum Kind {
    /// Top-level conversation directories, sorted; their IDs when first asked.
    OpenHands {
        dirs: Vec<PathBuf>,
        ids: OnceLock<Vec<String>>,
    },
    /// The sessions `list_sessions` lists.
    OcChat { entries: Vec<SessionEntry> },
}

/// A store: the OpenHands conversations under a path (one conversation
/// when the path is one, or a file of one), or an OC Chat sessions
/// directory's sessions.
///
/// ``iter(store)`` reads the top-level conversations (or sessions) one at a
/// time; ``len(store)`` counts them; ``store[id]`` looks one up by its ID or
/// a unique prefix of it (``agentlog.NotFoundError``,
/// ``agentlog.AmbiguousError``); ``store.conversations(subagents=True)``
/// walks sub-agents too, depth first.
///
/// >>> import agentlog
/// >>> store = agentlog.open("examples/store")
/// >>> store.format, len(store) > 0
/// ('openhands', True)
/// >>> conv = store[next(iter(store)).id[:8]]
#[pyclass(module = "agentlog", frozen)]
pub struct Store {
    pub root: PathBuf,
    pub kind: Kind,
}

/// Opens `path` (see [`Store`]).
pub fn open(py: Python<'_>, path: PathBuf) -> PyResult<Store> {
    let found = py.detach(|| -> Result<Kind, PyErr> {
        let md = fs::metadata(&path).map_err(|e| read_error(&path, &e))?;
        if md.is_file() {
            let dir =
                openhands::conversation_dir(&path).map_err(|e| read_error(path_of(&e), &e))?;
            return Ok(Kind::OpenHands {
                dirs: vec![dir],
                ids: OnceLock::new(),
            });
        }
        if !openhands::is_conversation_dir(&path) && agentlog::occhat::is_sessions_dir(&path) {
            let list = SessionStore::new(&path).list_sessions();
            if list.sessions.is_empty()
                && let Some(what) = legacy_occhat(&path)
            {
                return Err(error(
                    Class::Read,
                    Some(&path),
                    format!(
                        "an OC Chat store in the flat layout from before session directories \
                         ({what}); convert it with `agentlog occhat --sessions-dir {} migrate` \
                         (--dry-run first)",
                        path.display()
                    ),
                ));
            }
            return Ok(Kind::OcChat {
                entries: list.sessions,
            });
        }
        let dirs = openhands::find_sessions(&path).map_err(|e| read_error(path_of(&e), &e))?;
        if dirs.is_empty() {
            return Err(error(
                Class::Read,
                Some(&path),
                "no OpenHands conversations or OC Chat sessions under it",
            ));
        }
        Ok(Kind::OpenHands {
            dirs,
            ids: OnceLock::new(),
        })
    })?;
    Ok(Store {
        root: path,
        kind: found,
    })
}

/// The ID of the conversation at `dir`, as [`Conversation::id`] gives it
/// (without reading its events).
fn dir_id(dir: &Path) -> String {
    let meta_id = || {
        let bytes = fs::read(dir.join(FILE_META)).ok()?;
        let mut p = agentlog::json::Parser::new();
        let doc = p.parse(&bytes).ok()?;
        doc.root().get("id")?.as_str().map(str::to_owned)
    };
    openhands::state_id(dir)
        .or_else(meta_id)
        .map(|s| openhands::hex_id(&s))
        .unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

impl Store {
    /// The conversation directories (OpenHands), or `None`.
    pub fn dirs(&self) -> Option<&[PathBuf]> {
        match &self.kind {
            Kind::OpenHands { dirs, .. } => Some(dirs),
            Kind::OcChat { .. } => None,
        }
    }

    fn ids(&self, py: Python<'_>) -> &[String] {
        match &self.kind {
            Kind::OpenHands { dirs, ids } => {
                ids.get_or_init(|| py.detach(|| dirs.iter().map(|d| dir_id(d)).collect()))
            }
            Kind::OcChat { .. } => &[],
        }
    }
}

#[pymethods]
impl Store {
    /// `"openhands"` or `"occhat"`.
    #[getter]
    fn format(&self) -> &'static str {
        match self.kind {
            Kind::OpenHands { .. } => "openhands",
            Kind::OcChat { .. } => "occhat",
        }
    }

    /// The path the store was opened at.
    #[getter]
    fn path(&self) -> PathBuf {
        self.root.clone()
    }

    fn __len__(&self) -> usize {
        match &self.kind {
            Kind::OpenHands { dirs, .. } => dirs.len(),
            Kind::OcChat { entries } => entries.len(),
        }
    }

    fn __iter__(slf: Bound<'_, Self>) -> StoreIter {
        StoreIter::new(slf.unbind(), false)
    }

    /// Every conversation, read one at a time: with `subagents`, each
    /// conversation followed by its sub-agents' (depth first, in name
    /// order), as `agentlog export` walks them.
    #[pyo3(signature = (subagents=true))]
    fn conversations(slf: Bound<'_, Self>, subagents: bool) -> StoreIter {
        StoreIter::new(slf.unbind(), subagents)
    }

    /// The conversation (or session) with this ID, or the only one whose ID
    /// starts with it (case ignored).
    fn __getitem__(&self, py: Python<'_>, id: &str) -> PyResult<Py<PyAny>> {
        match &self.kind {
            Kind::OpenHands { dirs, .. } => {
                let ids = self.ids(py);
                let found = by_prefix(
                    id,
                    ids.iter().map(String::as_str),
                    "conversation",
                    &self.root,
                )?;
                let pos = ids.iter().position(|i| i == found).unwrap_or(0);
                Ok(Py::new(py, read(py, &dirs[pos], None, 0)?)?.into_any())
            }
            Kind::OcChat { entries } => {
                let names: Vec<String> = entries
                    .iter()
                    .map(|e| agentlog::parquet::text_of(&e.name))
                    .collect();
                let found = by_prefix(id, names.iter().map(String::as_str), "session", &self.root)?;
                let pos = names.iter().position(|i| i == found).unwrap_or(0);
                Ok(Py::new(py, load(py, &self.root, &entries[pos]))?.into_any())
            }
        }
    }

    /// Like `store[id]`, `default` when nothing has that ID (an ambiguous
    /// prefix still raises).
    #[pyo3(signature = (id, default=None))]
    fn get(&self, py: Python<'_>, id: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match self.__getitem__(py, id) {
            Ok(v) => Ok(v),
            Err(e) => {
                let amb = py.import("agentlog._errors")?.getattr("AmbiguousError")?;
                if e.is_instance(py, &py.get_type::<pyo3::exceptions::PyKeyError>())
                    && !e.value(py).is_instance(&amb)?
                {
                    Ok(default.unwrap_or_else(|| py.None()))
                } else {
                    Err(e)
                }
            }
        }
    }

    /// The IDs of the top-level conversations (or the sessions' names), in
    /// iteration order.
    fn ids_list(&self, py: Python<'_>) -> Vec<String> {
        match &self.kind {
            Kind::OpenHands { .. } => self.ids(py).to_vec(),
            Kind::OcChat { entries } => entries
                .iter()
                .map(|e| agentlog::parquet::text_of(&e.name))
                .collect(),
        }
    }

    /// The table `name` of the Parquet export (`conversations`, `events`,
    /// `messages`, `tool_calls`, `llm_calls`; the columns of
    /// `docs/parquet.md`) over every conversation, sub-agents' included, as
    /// Arrow data: a `pyarrow.RecordBatchReader` when pyarrow is installed,
    /// else an object with `__arrow_c_stream__`. Conversations are read as
    /// batches are asked for. `json=False` leaves `events.json` null.
    ///
    /// >>> import agentlog
    /// >>> t = agentlog.open("examples/store").table("events").read_all()
    /// >>> t.num_rows > 0
    /// True
    #[pyo3(signature = (name, json=true))]
    fn table<'py>(&self, py: Python<'py>, name: &str, json: bool) -> PyResult<Bound<'py, PyAny>> {
        crate::tables::table(py, self, crate::tables::table_named(name)?, json)
    }

    /// `table("conversations")`: one row per conversation.
    fn conversations_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.table(py, "conversations", true)
    }

    /// `table("events")`: one row per event file (`json=False`: without
    /// the verbatim JSON).
    #[pyo3(signature = (json=true))]
    fn events_table<'py>(&self, py: Python<'py>, json: bool) -> PyResult<Bound<'py, PyAny>> {
        self.table(py, "events", json)
    }

    /// `table("messages")`: the view's messages, as `view --json`.
    fn messages_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.table(py, "messages", true)
    }

    /// `table("tool_calls")`: each tool call with its answer.
    fn tool_calls_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.table(py, "tool_calls", true)
    }

    /// `table("llm_calls")`: each model call from the stored metrics.
    fn llm_calls_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.table(py, "llm_calls", true)
    }

    /// What changed since `checkpoint` (an `agentlog.Checkpoint`, the path
    /// of a checkpoint file — a missing or empty one is none yet — or
    /// `None`: everything), as `agentlog export --checkpoint` reads it: an
    /// iterator of `agentlog.Change`, one conversation read at a time; its
    /// `checkpoint()` afterwards is where the next call starts. `settle`
    /// (seconds) holds back a malformed event file modified less than that
    /// long ago. `verify_files` stats every event file already handed out
    /// and hands a conversation out again (as a rewrite) when one of them
    /// changed in place, as `agentlog export --verify-files` does (one stat
    /// per event file).
    ///
    /// An OC Chat sessions directory gives `agentlog.SessionChange`s
    /// instead, one session loaded at a time, from an
    /// `agentlog.SessionsCheckpoint` (or its file), as `agentlog follow`
    /// reads the directory; `settle` and `verify_files`, which are about
    /// OpenHands event files, are refused there (`ValueError`).
    #[pyo3(signature = (checkpoint=None, settle=None, verify_files=false))]
    fn changes_since<'py>(
        &self,
        py: Python<'py>,
        checkpoint: Option<Bound<'py, PyAny>>,
        settle: Option<f64>,
        verify_files: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Kind::OcChat { .. } = self.kind {
            if settle.is_some() || verify_files {
                return Err(PyValueError::new_err(
                    "settle and verify_files are about OpenHands event files; \
                     an OC Chat sessions directory has none",
                ));
            }
            let since =
                crate::session_changes::given_checkpoint(py, &self.root, checkpoint.as_ref())?;
            let changes = crate::session_changes::changes_since(py, &self.root, since)?;
            return Ok(Bound::new(py, changes)?.into_any());
        }
        let since = crate::changes::given_checkpoint(py, checkpoint.as_ref())?;
        let changes = crate::changes::changes_since(py, &self.root, since, settle, verify_files)?;
        Ok(Bound::new(py, changes)?.into_any())
    }

    /// Follows the store live, as `agentlog follow --checkpoint` does: an
    /// iterator of `agentlog.Change`, first everything since `checkpoint`
    /// (as for `changes_since`), then each change as it is written (woken
    /// by the file system, or every `poll` seconds). A malformed event file
    /// is held back while modified less than `settle` seconds ago. Ends
    /// once nothing came for `idle_timeout` seconds (`None`: never; Ctrl-C
    /// stops it). `verify_files` as for `changes_since`.
    ///
    /// An OC Chat sessions directory gives `agentlog.SessionChange`s, each
    /// save's added messages as it is written (`verify_files` refused,
    /// `settle` unused: OC Chat writes whole files).
    #[pyo3(signature = (checkpoint=None, poll=None, settle=2.0, idle_timeout=None, verify_files=false))]
    fn follow<'py>(
        &self,
        py: Python<'py>,
        checkpoint: Option<Bound<'py, PyAny>>,
        poll: Option<f64>,
        settle: f64,
        idle_timeout: Option<f64>,
        verify_files: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let timing = crate::changes::FollowTiming {
            poll,
            settle,
            idle_timeout,
        };
        if let Kind::OcChat { .. } = self.kind {
            if verify_files {
                return Err(PyValueError::new_err(
                    "verify_files is about OpenHands event files; \
                     an OC Chat sessions directory has none",
                ));
            }
            let since =
                crate::session_changes::given_checkpoint(py, &self.root, checkpoint.as_ref())?;
            let f = crate::session_changes::follow(py, &self.root, since, timing)?;
            return Ok(Bound::new(py, f)?.into_any());
        }
        let since = crate::changes::given_checkpoint(py, checkpoint.as_ref())?;
        let f = crate::changes::follow(py, &self.root, since, timing, verify_files)?;
        Ok(Bound::new(py, f)?.into_any())
    }

    /// Every top-level conversation read at once, in parallel on all cores
    /// (the GIL released), in iteration order: a list of
    /// `agentlog.Conversation` (or `agentlog.Session`). A conversation that
    /// cannot be read raises, as iterating would.
    fn read_all(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        match &self.kind {
            Kind::OcChat { entries } => entries
                .iter()
                .map(|e| Ok(Py::new(py, load(py, &self.root, e))?.into_any()))
                .collect(),
            Kind::OpenHands { dirs, .. } => {
                let read = py.detach(|| crate::conversation::read_parallel(dirs));
                let mut out = Vec::with_capacity(read.len());
                for r in read {
                    out.push(Py::new(py, r?)?.into_any());
                }
                Ok(out)
            }
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Store {} ({} {}) at {}>",
            self.format(),
            self.__len__(),
            match self.kind {
                Kind::OpenHands { .. } => "conversations",
                Kind::OcChat { .. } => "sessions",
            },
            self.root.display()
        )
    }
}

/// The iterator of a store: each conversation read when reached.
#[pyclass(module = "agentlog")]
pub struct StoreIter {
    store: Py<Store>,
    next: usize,
    subagents: bool,
    /// Sub-agents waiting: (directory, parent ID, depth), the next last.
    pending: Vec<(PathBuf, String, usize)>,
    seen: HashSet<PathBuf>,
}

impl StoreIter {
    fn new(store: Py<Store>, subagents: bool) -> Self {
        StoreIter {
            store,
            next: 0,
            subagents,
            pending: Vec::new(),
            seen: HashSet::new(),
        }
    }

    fn push_subagents(&mut self, c: &Conversation) {
        if !self.subagents || c.depth + 1 > MAX_SUBAGENT_DEPTH {
            return;
        }
        let mut subs: Vec<PathBuf> = c.conv.subagent_dirs().collect();
        subs.reverse();
        for d in subs {
            self.pending.push((d, c.header.id.clone(), c.depth + 1));
        }
    }
}

#[pymethods]
impl StoreIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let store = self.store.get();
        match &store.kind {
            Kind::OcChat { entries } => {
                let Some(e) = entries.get(self.next) else {
                    return Ok(None);
                };
                self.next += 1;
                Ok(Some(Py::new(py, load(py, &store.root, e))?.into_any()))
            }
            Kind::OpenHands { dirs, .. } => loop {
                let (dir, parent, depth) = match self.pending.pop() {
                    Some((d, p, depth)) => (d, Some(p), depth),
                    None => {
                        let Some(d) = dirs.get(self.next) else {
                            return Ok(None);
                        };
                        self.next += 1;
                        (d.clone(), None, 0)
                    }
                };
                if self.subagents
                    && let Ok(c) = fs::canonicalize(&dir)
                    && !self.seen.insert(c)
                {
                    continue; // met twice (a link loop): not followed
                }
                let c = read(py, &dir, parent, depth)?;
                self.push_subagents(&c);
                return Ok(Some(Py::new(py, c)?.into_any()));
            },
        }
    }
}
