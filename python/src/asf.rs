//! Agent Session Format from Python: a conversation (or OC Chat session)
//! converted (`agentlog::convert`), a session file read and verified, its
//! context built (`agentlog::asf`), as `agentlog asf convert`, `asf check`
//! and `asf context` do.

use std::io::Write;
use std::path::{Path, PathBuf};

use agentlog::asf::{Context, Session};
use agentlog::convert::Converted as RsConverted;
use agentlog::json::OwnedValue;
use agentlog::output::Output;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{Class, error, read_error};
use crate::event::with_root;
use crate::values::{owned_to_py, tape_to_py};

/// A conversation (or OC Chat session) converted to an ASF session file:
/// `session_id`, `data` (the file's bytes), `report` (what each source
/// event became), `session()` (the file read back), `save(directory)`.
///
/// >>> import agentlog
/// >>> conv = next(iter(agentlog.open("examples/store")))
/// >>> done = conv.to_asf()
/// >>> done.session().verify()
/// []
#[pyclass(module = "agentlog", frozen)]
pub struct Converted {
    pub done: RsConverted,
}

#[pymethods]
impl Converted {
    /// The session id (the file is `<session_id>.jsonl`).
    #[getter]
    fn session_id(&self) -> &str {
        &self.done.session_id
    }

    /// The session file's bytes.
    #[getter]
    fn data(&self) -> &[u8] {
        &self.done.bytes
    }

    /// One dict per source event, as `agentlog asf convert --report`
    /// prints them: `session`, `event`, `kind`, `outcome` (`"mapped"`,
    /// `"kept-extension"`, `"dropped"`), `detail`.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for row in &self.done.report {
            let d = PyDict::new(py);
            d.set_item("session", &self.done.session_id)?;
            d.set_item("event", &row.event)?;
            d.set_item("kind", &row.kind)?;
            d.set_item("outcome", row.outcome.code())?;
            d.set_item("detail", row.outcome.to_string())?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The file read back as an `agentlog.AsfSession`.
    fn session(&self, py: Python<'_>) -> PyResult<AsfSession> {
        AsfSession::new(py, self.done.bytes.clone(), None)
    }

    /// Writes the file as `<directory>/<session_id>.jsonl` (created inside
    /// the directory atomically: a temporary file flushed and renamed into
    /// place, a link there replaced, never written through) and returns
    /// its path.
    fn save(&self, py: Python<'_>, directory: PathBuf) -> PyResult<PathBuf> {
        let path = directory.join(format!("{}.jsonl", self.done.session_id));
        let bytes = &self.done.bytes;
        py.detach(|| -> Result<(), String> {
            let mut f = Output::create_entry(&path).map_err(|e| e.to_string())?;
            f.write_all(bytes).map_err(|e| e.to_string())?;
            f.commit().map_err(|e| e.to_string())
        })
        .map_err(|e| error(Class::Read, Some(&path), e))?;
        Ok(path)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Converted {} ({} bytes)>",
            self.done.session_id,
            self.done.bytes.len()
        )
    }
}

/// An ASF session file (RFC 0001, `agentsession/0.5` to `0.10`), read:
/// `header`, `entries` (each line as a dict), `leaf`, `verify()` (every
/// rule the reader checks), `context(leaf=None)` (the request the context
/// algorithm builds).
///
/// >>> import agentlog
/// >>> s = agentlog.read_asf("tests/data/asf/sessions/basic.jsonl")
/// >>> s.verify()
/// []
/// >>> s.context().chat_messages()[0]["role"]          # doctest: +SKIP
/// 'user'
#[pyclass(module = "agentlog", frozen)]
pub struct AsfSession {
    data: Vec<u8>,
    path: Option<PathBuf>,
    id: String,
    format: String,
}

impl AsfSession {
    fn new(py: Python<'_>, data: Vec<u8>, path: Option<PathBuf>) -> PyResult<AsfSession> {
        let (id, format) = py
            .detach(|| {
                Session::read(&data)
                    .map(|s| (s.header().id.clone(), s.header().format.clone()))
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| error(Class::Format, path.as_deref(), e))?;
        Ok(AsfSession {
            data,
            path,
            id,
            format,
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Session<'_>) -> PyResult<T>) -> PyResult<T> {
        let s = Session::read(&self.data)
            .map_err(|e| error(Class::Format, self.path.as_deref(), e.to_string()))?;
        f(&s)
    }

    fn fault(&self, reason: impl Into<String>) -> PyErr {
        error(Class::Format, self.path.as_deref(), reason)
    }
}

/// Reads the ASF session file at `path`.
pub fn read_asf(py: Python<'_>, path: PathBuf) -> PyResult<AsfSession> {
    let data = py
        .detach(|| std::fs::read(&path))
        .map_err(|e| read_error(&path, &e))?;
    AsfSession::new(py, data, Some(path))
}

fn value<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match with_root(raw, |root| tape_to_py(py, root)) {
        Ok(r) => r,
        Err(_) => Ok(py.None().into_bound(py)),
    }
}

#[pymethods]
impl AsfSession {
    /// Reads a session file from its bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<AsfSession> {
        AsfSession::new(py, data, None)
    }

    /// The file read (`None` for one made from bytes).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// The header's `id`.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// The header's `format` (`"agentsession/0.10"`).
    #[getter]
    fn format(&self) -> &str {
        &self.format
    }

    /// The file's bytes.
    #[getter]
    fn data(&self) -> &[u8] {
        &self.data
    }

    /// The header line as a dict.
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| value(py, s.header_raw()))
    }

    /// The entries, in file order (an id seen twice once), each line as a
    /// dict.
    #[getter]
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.with(|s| {
            let list = PyList::empty(py);
            for e in s.entries() {
                list.append(value(py, e.raw())?)?;
            }
            Ok(list)
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        self.with(|s| Ok(s.entries().len()))
    }

    /// The id of the entry the resume rule gives (`None` without entries).
    #[getter]
    fn leaf(&self) -> PyResult<Option<String>> {
        self.with(|s| Ok(s.leaf().map(|e| e.id.clone())))
    }

    /// Every problem the reader finds, as `agentlog asf check --json`
    /// prints them (`path` only for a file read from a path): dicts with
    /// `line`, `problem` (the stable code) and `detail`; `[]` when the
    /// file is clean. `request_hashes=False` leaves out comparing each
    /// `response`'s `request_hash` with the request its path rebuilds.
    #[pyo3(signature = (request_hashes=true))]
    fn verify<'py>(&self, py: Python<'py>, request_hashes: bool) -> PyResult<Bound<'py, PyList>> {
        let rows = py.detach(|| {
            Session::read(&self.data).map(|s| {
                let found = if request_hashes {
                    s.verify()
                } else {
                    s.verify_entries()
                };
                found
                    .into_iter()
                    .map(|p| (p.line, p.kind.code(), p.kind.to_string()))
                    .collect::<Vec<_>>()
            })
        });
        let rows = rows.map_err(|e| self.fault(e.to_string()))?;
        let list = PyList::empty(py);
        for (line, code, detail) in rows {
            let d = PyDict::new(py);
            if let Some(p) = &self.path {
                d.set_item("path", p.to_string_lossy())?;
            }
            d.set_item("line", line)?;
            d.set_item("problem", code)?;
            d.set_item("detail", detail)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The context at `leaf` (an entry's id, or a unique prefix of its hex
    /// digits, `sha256:` optional; default: the leaf the resume rule
    /// gives), as an `agentlog.AsfContext`.
    #[pyo3(signature = (leaf=None))]
    fn context(&self, py: Python<'_>, leaf: Option<&str>) -> PyResult<AsfContext> {
        let place = self.path.clone().unwrap_or_default();
        let (leaf, ctx) = self.with(|s| {
            let leaf = match leaf {
                Some(id) => {
                    let given = if id.contains(':') {
                        id.to_owned()
                    } else {
                        format!("sha256:{id}")
                    };
                    let ids = s.entries().iter().map(|e| e.id.as_str());
                    crate::ids::by_prefix(&given, ids, "entry", &place)?.to_owned()
                }
                None => s
                    .leaf()
                    .map(|e| e.id.clone())
                    .ok_or_else(|| self.fault("the file has no entry"))?,
            };
            let ctx = py
                .detach(|| s.context(Some(&leaf)))
                .map_err(|e| self.fault(e.to_string()))?;
            Ok((leaf, ctx))
        })?;
        Ok(AsfContext {
            leaf,
            ctx,
            path: self.path.clone(),
        })
    }

    fn __repr__(&self) -> String {
        format!("<agentlog.AsfSession {} ({})>", self.id, self.format)
    }
}

/// The request at an entry of an ASF session, as the context algorithm
/// builds it: `leaf`, `settings`, `items`, `entries`, `item_entries`,
/// `request_hash`; `to_dict()` is what `agentlog asf context --json`
/// prints, `chat_messages()` what `--chat` prints.
#[pyclass(module = "agentlog", frozen)]
pub struct AsfContext {
    leaf: String,
    ctx: Context,
    path: Option<PathBuf>,
}

#[pymethods]
impl AsfContext {
    /// The entry the context is at.
    #[getter]
    fn leaf(&self) -> &str {
        &self.leaf
    }

    /// The settings in force (`model`, `instructions`, `tools`…) as a dict.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        owned_to_py(py, &self.ctx.settings.to_json())
    }

    /// The items, in request order.
    #[getter]
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        owned_to_py(py, &OwnedValue::Array(self.ctx.items.clone()))
    }

    /// The ids of the entries the algorithm selected, in order.
    #[getter]
    fn entries(&self) -> Vec<String> {
        self.ctx.entries.clone()
    }

    /// For each item, the id of the entry that contributed it.
    #[getter]
    fn item_entries(&self) -> Vec<String> {
        self.ctx.item_entries.clone()
    }

    /// The request's hash (`sha256:` and 64 hex digits), as a `response`
    /// entry's `request_hash` records it.
    #[getter]
    fn request_hash(&self) -> PyResult<String> {
        self.ctx
            .request_hash()
            .map_err(|e| error(Class::Format, self.path.as_deref(), e.to_string()))
    }

    /// The request as chat-completions messages (`asf context --chat`).
    fn chat_messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        owned_to_py(py, &OwnedValue::Array(self.ctx.chat_messages()))
    }

    /// `{"leaf", "request_hash", "settings", "items", "entries",
    /// "item_entries"}`: what `agentlog asf context --json` prints.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("leaf", &self.leaf)?;
        d.set_item("request_hash", self.request_hash()?)?;
        if let OwnedValue::Object(m) = self.ctx.to_json() {
            for (k, v) in m.iter() {
                d.set_item(k, owned_to_py(py, v)?)?;
            }
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.AsfContext at {} ({} items)>",
            self.leaf,
            self.ctx.items.len()
        )
    }
}

/// Converts an OpenHands conversation (as `asf convert` does: its parent's
/// session id and its sub-agents' written in).
pub fn convert_openhands(
    py: Python<'_>,
    conv: &agentlog::openhands::Conversation,
    parent_id: Option<&str>,
) -> PyResult<Converted> {
    use agentlog::convert::openhands::{Options, convert_with, session_id};
    let options = Options {
        parent_session: parent_id.map(session_id),
        subsessions: conv.subagents().iter().map(|n| session_id(n)).collect(),
    };
    let done = py
        .detach(|| convert_with(conv, &options))
        .map_err(|e| error(Class::Format, Some(conv.dir()), e.to_string()))?;
    Ok(Converted { done })
}

/// Converts an OC Chat session.
pub fn convert_occhat(
    py: Python<'_>,
    session: &agentlog::occhat::ChatSession,
    path: &Path,
) -> PyResult<Converted> {
    let done = py
        .detach(|| agentlog::convert::occhat::convert(session))
        .map_err(|e| error(Class::Format, Some(path), e.to_string()))?;
    Ok(Converted { done })
}
