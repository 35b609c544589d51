//! One OC Chat session: its listing entry, its metadata, its messages.

use std::path::PathBuf;

use agentlog::json::OwnedValue;
use agentlog::occhat::{SessionEntry, SessionStore};
use agentlog::parquet::text_of;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{Class, error};
use crate::values::owned_to_py;

/// One OC Chat session, loaded as OC Chat's `persistence.py` loads it.
///
/// `name`, `model`, `created`, `updated` (the meta file's modification
/// time, local, `YYYY-MM-DD HH:MM`), `messages` (the chat log's message
/// dicts), `entry` (`list_sessions`'s dict for it).
#[pyclass(module = "agentlog", frozen)]
pub struct Session {
    pub entry: SessionEntry,
    pub messages: Option<Vec<OwnedValue>>,
    pub created: Option<String>,
    pub load_error: Option<String>,
    /// The session as loaded (for its conversion to ASF).
    pub loaded: Option<agentlog::occhat::ChatSession>,
}

/// Loads the session `entry` lists (the GIL released meanwhile).
pub fn load(py: Python<'_>, root: &std::path::Path, entry: &SessionEntry) -> Session {
    let path = entry.filepath.to_string_lossy().into_owned();
    let loaded = py.detach(|| SessionStore::new(root).load_session(&path));
    let (messages, created, load_error, loaded) = match loaded {
        Ok(s) if !s.load_failed => (Some(s.messages.clone()), s.created.clone(), None, Some(s)),
        Ok(s) => (
            None,
            s.created,
            Some("the chat log could not be read".to_owned()),
            None,
        ),
        Err(e) => (None, None, Some(e.to_string()), None),
    };
    Session {
        entry: entry.clone(),
        messages,
        created,
        load_error,
        loaded,
    }
}

#[pymethods]
impl Session {
    /// The session's name (the meta's `session_name` as text).
    #[getter]
    fn name(&self) -> String {
        text_of(&self.entry.name)
    }

    /// Also `name`: what `agentlog ls --json` prints as `id`.
    #[getter]
    fn id(&self) -> String {
        self.name()
    }

    /// The session directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.entry
            .filepath
            .parent()
            .map_or_else(|| self.entry.filepath.clone(), |p| p.to_path_buf())
    }

    /// The current meta file.
    #[getter]
    fn meta_path(&self) -> PathBuf {
        self.entry.filepath.clone()
    }

    /// The meta's `model` (`"?"` when absent, as OC Chat lists it).
    #[getter]
    fn model(&self) -> String {
        text_of(&self.entry.model)
    }

    /// The meta's `created` stamp, as written.
    #[getter]
    fn created(&self) -> Option<&str> {
        self.created.as_deref()
    }

    /// The meta file's modification time, local, `YYYY-MM-DD HH:MM`.
    #[getter]
    fn updated(&self) -> &str {
        &self.entry.last_modified
    }

    /// `list_sessions`'s dict of this session (`name`, `model`, `stats`,
    /// `last_modified`, `filepath`, `chat_logs`, `reasoning_effort`,
    /// `chat_log_size_bytes`, `ui`).
    #[getter]
    fn entry<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        owned_to_py(py, &self.entry.to_value())
    }

    /// The chat log's messages, as dicts; `agentlog.ReadError` when the chat
    /// log could not be read.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Some(m) = &self.messages else {
            return Err(error(
                Class::Read,
                Some(&self.entry.filepath),
                self.load_error.clone().unwrap_or_default(),
            ));
        };
        let list = PyList::empty(py);
        for v in m {
            list.append(owned_to_py(py, v)?)?;
        }
        Ok(list)
    }

    fn __len__(&self) -> usize {
        self.messages.as_ref().map_or(0, Vec::len)
    }

    /// The session as an ASF session file (`agentlog.Converted`), as
    /// `agentlog asf convert` writes it; `agentlog.ReadError` when its chat
    /// log could not be read.
    fn to_asf(&self, py: Python<'_>) -> PyResult<crate::asf::Converted> {
        let Some(s) = &self.loaded else {
            return Err(error(
                Class::Read,
                Some(&self.entry.filepath),
                self.load_error.clone().unwrap_or_default(),
            ));
        };
        crate::asf::convert_occhat(py, s, &self.entry.filepath)
    }

    /// The `agentlog ls --json` row of the session.
    fn ls_row<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("format", "occhat")?;
        d.set_item("path", self.path().to_string_lossy())?;
        d.set_item("id", self.name())?;
        d.set_item("title", py.None())?;
        d.set_item("model", self.model())?;
        d.set_item("events", self.messages.as_ref().map(Vec::len))?;
        d.set_item("created", self.created())?;
        d.set_item("updated", self.updated())?;
        d.set_item("subagents", py.None())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Session {} at {}>",
            self.name(),
            self.path().display()
        )
    }
}
