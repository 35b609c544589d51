//! One event of a conversation, lazily: its envelope (`kind`, `id`,
//! `timestamp`, `source`, `parent_id`) from the reader's one pass over the
//! file, its other members decoded on access, its bytes as written.

use std::cell::RefCell;
use std::sync::Arc;

use agentlog::json::Parser;
use agentlog::openhands::{Conversation, Event as RsEvent};
use pyo3::exceptions::{PyIndexError, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::{Class, error};
use crate::values::tape_to_py;

thread_local! {
    /// The parser of the members decoded on access, buffers reused.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Runs `f` on the root of `raw` parsed with this thread's parser.
pub fn with_root<T>(
    raw: &[u8],
    f: impl FnOnce(agentlog::json::Value<'_>) -> PyResult<T>,
) -> Result<PyResult<T>, String> {
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        match p.parse(raw) {
            Ok(doc) => Ok(f(doc.root())),
            Err(e) => Err(e.to_string()),
        }
    })
}

/// One event of a conversation.
///
/// The envelope members are attributes (`kind`, `id`, `timestamp`,
/// `source`, `parent_id`, `index`, `file`); every member of the event's
/// JSON is an item, decoded when asked for (`event["llm_message"]`), as
/// `json.loads` would give it. `raw` is the file's bytes as written.
///
/// >>> import agentlog
/// >>> conv = next(iter(agentlog.open("examples/store")))
/// >>> e = conv.events[0]
/// >>> e.kind, e.index
/// ('SystemPromptEvent', 0)
/// >>> isinstance(e["system_prompt"], dict)
/// True
#[pyclass(module = "agentlog", frozen)]
pub struct Event {
    pub src: Src,
}

/// Where an event's envelope and bytes are.
pub enum Src {
    /// The event at `pos` of a conversation read whole.
    Conv { conv: Arc<Conversation>, pos: usize },
    /// A copy of one (an event of a change, whose conversation the scan
    /// reads into the same buffers again).
    Copy(Box<EventCopy>),
}

/// An event's envelope and bytes, copied out of the reader's buffers.
pub struct EventCopy {
    pub kind: Option<String>,
    pub id: Option<String>,
    pub file_id: String,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub index: u64,
    pub file: String,
    pub error: Option<String>,
    pub raw: Vec<u8>,
}

impl EventCopy {
    /// A copy of `e`.
    pub fn of(e: &RsEvent<'_>) -> EventCopy {
        let own = |s: Option<&str>| s.map(str::to_owned);
        EventCopy {
            kind: own(e.kind_name()),
            id: own(e.id()),
            file_id: e.file_id().to_owned(),
            timestamp: own(e.timestamp()),
            source: own(e.source()),
            parent_id: own(e.parent_id()),
            index: e.index(),
            file: e.file_name().to_owned(),
            error: e.error().map(|x| x.to_string()),
            raw: e.raw().to_vec(),
        }
    }
}

/// An event's envelope and bytes, wherever they are.
pub struct View<'a> {
    kind: Option<&'a str>,
    id: Option<&'a str>,
    file_id: &'a str,
    timestamp: Option<&'a str>,
    source: Option<&'a str>,
    parent_id: Option<&'a str>,
    index: u64,
    file: &'a str,
    error: Option<String>,
    raw: &'a [u8],
}

impl Event {
    /// The event at `pos` of `conv`.
    pub fn at(conv: Arc<Conversation>, pos: usize) -> Event {
        Event {
            src: Src::Conv { conv, pos },
        }
    }

    /// The envelope and bytes.
    pub fn rs(&self) -> View<'_> {
        match &self.src {
            Src::Conv { conv, pos } => {
                let e = conv.event(*pos).expect("an event of the conversation");
                View {
                    kind: e.kind_name(),
                    id: e.id(),
                    file_id: e.file_id(),
                    timestamp: e.timestamp(),
                    source: e.source(),
                    parent_id: e.parent_id(),
                    index: e.index(),
                    file: e.file_name(),
                    error: e.error().map(|x| x.to_string()),
                    raw: e.raw(),
                }
            }
            Src::Copy(c) => View {
                kind: c.kind.as_deref(),
                id: c.id.as_deref(),
                file_id: &c.file_id,
                timestamp: c.timestamp.as_deref(),
                source: c.source.as_deref(),
                parent_id: c.parent_id.as_deref(),
                index: c.index,
                file: &c.file,
                error: c.error.clone(),
                raw: &c.raw,
            },
        }
    }

    fn missing(&self, what: &str) -> PyErr {
        let e = self.rs();
        match e.error {
            Some(err) => error(Class::Read, None, err),
            None => PyKeyError::new_err(what.to_owned()),
        }
    }
}

#[pymethods]
impl Event {
    /// The event's class name (`"MessageEvent"`, `"ActionEvent"`…), `None`
    /// when the file is malformed or has none.
    #[getter]
    fn kind(&self) -> Option<&str> {
        self.rs().kind
    }

    /// The event's `id` member.
    #[getter]
    fn id(&self) -> Option<&str> {
        self.rs().id
    }

    /// The ID in the file's name (what `parent_id` and `leaf_event_id` name).
    #[getter]
    fn file_id(&self) -> &str {
        self.rs().file_id
    }

    /// The `timestamp` member, as written.
    #[getter]
    fn timestamp(&self) -> Option<&str> {
        self.rs().timestamp
    }

    /// The `source` member (`"agent"`, `"user"`, `"environment"`, `"hook"`).
    #[getter]
    fn source(&self) -> Option<&str> {
        self.rs().source
    }

    /// The `parent_id` member, when written.
    #[getter]
    fn parent_id(&self) -> Option<&str> {
        self.rs().parent_id
    }

    /// The index in the file's name.
    #[getter]
    fn index(&self) -> u64 {
        self.rs().index
    }

    /// The file's name (`event-00000-<id>.json`).
    #[getter]
    fn file(&self) -> &str {
        self.rs().file
    }

    /// Why the file did not read as an event (`None` when it did).
    #[getter]
    fn error(&self) -> Option<String> {
        self.rs().error
    }

    /// The file's bytes, as written.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.rs().raw)
    }

    /// The member `key` as a Python value; `KeyError` when the event has
    /// none (an `agentlog.ReadError` when the file is not an event).
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let e = self.rs();
        if e.error.is_some() {
            return Err(self.missing(key));
        }
        match with_root(e.raw, |root| match root.get(key) {
            Some(v) => tape_to_py(py, v).map(Some),
            None => Ok(None),
        }) {
            Ok(Ok(Some(v))) => Ok(v),
            Ok(Ok(None)) => Err(PyKeyError::new_err(key.to_owned())),
            Ok(Err(e)) => Err(e),
            Err(reason) => Err(error(Class::Read, None, format!("{}: {reason}", e.file))),
        }
    }

    /// The member `key`, or `default` when the event has none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.__getitem__(py, key) {
            Ok(v) => Ok(v),
            Err(e) if e.is_instance_of::<PyKeyError>(py) && self.rs().error.is_none() => {
                Ok(default.unwrap_or_else(|| py.None().into_bound(py)))
            }
            Err(e) => Err(e),
        }
    }

    fn __contains__(&self, key: &str) -> bool {
        let e = self.rs();
        e.error.is_none()
            && matches!(
                with_root(e.raw, |root| Ok(root.get(key).is_some())),
                Ok(Ok(true))
            )
    }

    /// The member names, in file order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let e = self.rs();
        let list = PyList::empty(py);
        if e.error.is_some() {
            return Ok(list);
        }
        if let Ok(r) = with_root(e.raw, |root| {
            if let Some(o) = root.as_object() {
                for m in o.iter() {
                    list.append(m.key)?;
                }
            }
            Ok(())
        }) {
            r?;
        }
        Ok(list)
    }

    /// The whole event as `json.loads(event.raw)` gives it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let e = self.rs();
        if e.error.is_some() {
            return Err(self.missing("event"));
        }
        match with_root(e.raw, |root| tape_to_py(py, root)) {
            Ok(r) => r,
            Err(reason) => Err(error(Class::Read, None, format!("{}: {reason}", e.file))),
        }
    }

    fn __repr__(&self) -> String {
        let e = self.rs();
        format!(
            "<agentlog.Event {} {} {}>",
            e.index,
            e.kind.unwrap_or("?"),
            e.id.unwrap_or(e.file_id)
        )
    }
}

/// A conversation's events, in read order: a sequence (`len`, indexing,
/// slicing by `list(...)[a:b]`), each item made when asked for.
#[pyclass(module = "agentlog", frozen, sequence)]
pub struct Events {
    pub conv: Arc<Conversation>,
}

#[pymethods]
impl Events {
    fn __len__(&self) -> usize {
        self.conv.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<Event> {
        let n = self.conv.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err("event index out of range"));
        }
        Ok(Event::at(self.conv.clone(), j as usize))
    }

    pub fn __iter__(&self) -> EventIter {
        EventIter {
            conv: self.conv.clone(),
            next: 0,
        }
    }

    /// Every event's kind, in order (one call, no event objects made).
    fn kinds(&self) -> Vec<Option<&str>> {
        self.conv.events().map(|e| e.kind_name()).collect()
    }
}

/// The iterator of [`Events`].
#[pyclass(module = "agentlog")]
pub struct EventIter {
    conv: Arc<Conversation>,
    next: usize,
}

#[pymethods]
impl EventIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> Option<Event> {
        if self.next >= self.conv.len() {
            return None;
        }
        self.next += 1;
        Some(Event::at(self.conv.clone(), self.next - 1))
    }
}
