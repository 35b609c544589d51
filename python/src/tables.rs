//! Tables for analysis: a store's rows as Arrow record batches, built by
//! the Parquet export's own code (`agentlog::parquet`, a
//! [`Dataset::in_memory`]) so that the columns are the Parquet schema's,
//! handed to Python through the Arrow C stream interface
//! (`__arrow_c_stream__`), which pyarrow, pandas, Polars and DuckDB take
//! without copying. Conversations are read as the consumer asks for
//! batches, one at a time.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::ffi::CString;
use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use agentlog::json::{Document, Parser};
use agentlog::occhat::{SessionEntry, SessionStore};
use agentlog::openhands::{self, Conversation, Parsed, Reader};
use agentlog::parquet::{
    Dataset, DatasetOptions, EventDetails, EventSelection, OpenHandsInput, Table, add_occhat,
    add_openhands_with,
};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::conversation::MAX_SUBAGENT_DEPTH;
use crate::errors::{Class, error};
use crate::requested;
use crate::store::{Kind, Store};

/// The table named `name` (`conversations`, `events`, `messages`,
/// `tool_calls`, `llm_calls`).
pub fn table_named(name: &str) -> PyResult<Table> {
    Table::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
            error(
                Class::Format,
                None,
                format!("no table {name}; the tables are {}", names.join(", ")),
            )
        })
}

/// Where the rows come from (one per stream: the variants' sizes do not
/// matter).
#[allow(clippy::large_enum_variant)]
enum Source {
    OpenHands {
        dirs: Vec<PathBuf>,
        next: usize,
        /// (directory, parent ID, depth), the next last.
        stack: Vec<(PathBuf, Option<String>, usize)>,
        seen: HashSet<PathBuf>,
        reader: Reader,
        conv: Conversation,
        parser: Parser,
        details: EventDetails,
    },
    OcChat {
        root: PathBuf,
        entries: Vec<SessionEntry>,
        next: usize,
    },
}

/// The batches of one table, made as they are asked for.
struct Rows {
    schema: SchemaRef,
    source: Source,
    ds: Dataset,
    queue: VecDeque<RecordBatch>,
    done: bool,
}

fn arrow_err(e: impl std::fmt::Display) -> ArrowError {
    ArrowError::ExternalError(e.to_string().into())
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

impl Rows {
    /// Adds the rows of the next conversation (or session); false at the end.
    fn step(&mut self) -> Result<bool, ArrowError> {
        match &mut self.source {
            Source::OcChat {
                root,
                entries,
                next,
            } => {
                let Some(e) = entries.get(*next) else {
                    return Ok(false);
                };
                *next += 1;
                let store = SessionStore::new(&*root);
                let loaded = store
                    .load_session(&e.filepath.to_string_lossy())
                    .ok()
                    .filter(|s| !s.load_failed);
                add_occhat(&mut self.ds, e, loaded.as_ref()).map_err(arrow_err)?;
                Ok(true)
            }
            Source::OpenHands {
                dirs,
                next,
                stack,
                seen,
                reader,
                conv,
                parser,
                details,
            } => {
                let (dir, parent, depth) = match stack.pop() {
                    Some(item) => item,
                    None => {
                        let Some(d) = dirs.get(*next) else {
                            return Ok(false);
                        };
                        *next += 1;
                        (d.clone(), None, 0)
                    }
                };
                if let Ok(c) = fs::canonicalize(&dir)
                    && !seen.insert(c)
                {
                    return Ok(true); // met twice (a link loop): not followed
                }
                let (mut state_id, mut meta_id) = (None, None);
                let gathered = RefCell::new(std::mem::take(details));
                let id_of = |doc: &Document<'_>| {
                    doc.root()
                        .get("id")
                        .and_then(|v| v.as_str())
                        .map(openhands::hex_id)
                };
                let read = reader.read_into_with(&dir, conv, |p, doc| match p {
                    Parsed::State => state_id = id_of(doc),
                    Parsed::Meta => meta_id = id_of(doc),
                    Parsed::Event { index } => gathered.borrow_mut().add(index, doc),
                    _ => {}
                });
                *details = gathered.into_inner();
                if read.is_err() {
                    // Not a conversation that reads: `export` warns and
                    // writes no row of it; so does the table.
                    details.clear();
                    return Ok(true);
                }
                let id = state_id
                    .or(meta_id)
                    .unwrap_or_else(|| conv.name().to_owned());
                if depth < MAX_SUBAGENT_DEPTH {
                    let mut subs: Vec<PathBuf> = conv.subagent_dirs().collect();
                    subs.reverse();
                    for s in subs {
                        stack.push((s, Some(id.clone()), depth + 1));
                    }
                }
                let input = OpenHandsInput {
                    conversation: conv,
                    id: &id,
                    parent: parent.as_deref(),
                    depth,
                    change: "full",
                    events: EventSelection::All,
                };
                let added = add_openhands_with(&mut self.ds, &input, details, parser);
                details.clear();
                added.map_err(arrow_err)?;
                Ok(true)
            }
        }
    }
}

impl Iterator for Rows {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(b) = self.queue.pop_front() {
                return Some(Ok(b));
            }
            if self.done {
                return None;
            }
            let more = match self.step() {
                Ok(more) => more,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if !more {
                self.done = true;
            }
            match self.ds.take_batches(!more) {
                Ok(b) => self.queue.extend(b),
                Err(e) => {
                    self.done = true;
                    return Some(Err(arrow_err(e)));
                }
            }
        }
    }
}

impl RecordBatchReader for Rows {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// An Arrow C stream of one table's rows (the Arrow PyCapsule interface:
/// `__arrow_c_stream__`), consumed once. `pyarrow.RecordBatchReader.from_stream`,
/// `polars.from_arrow`, `duckdb` and pandas (through pyarrow) take it.
#[pyclass(module = "agentlog", name = "ArrowStream", frozen)]
pub struct ArrowStream {
    rows: Mutex<Option<Rows>>,
    table: Table,
}

#[pymethods]
impl ArrowStream {
    /// The table's name.
    #[getter]
    fn table(&self) -> &'static str {
        self.table.name()
    }

    /// Exports the stream (once): a PyCapsule named `arrow_array_stream`.
    /// `requested_schema` (a PyCapsule named `arrow_schema`) asks for the
    /// same columns in another Arrow representation: each column is cast
    /// to it, or, when a column has no cast to the type asked, the table's
    /// own schema is kept; a request for other columns (another number,
    /// other names or order) raises `ValueError`.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let plan = match &requested_schema {
            Some(obj) if !obj.is_none() => {
                let requested = schema_of_capsule(obj)?;
                requested::plan(&self.table.schema(), &requested)
                    .map_err(pyo3::exceptions::PyValueError::new_err)?
            }
            _ => requested::Plan::AsIs,
        };
        let rows = self
            .rows
            .lock()
            .map_err(|_| error(Class::Other, None, "the stream's lock is poisoned"))?
            .take()
            .ok_or_else(|| error(Class::Other, None, "this Arrow stream was already consumed"))?;
        let stream = match plan {
            requested::Plan::AsIs => FFI_ArrowArrayStream::new(Box::new(rows)),
            requested::Plan::Cast(schema) => {
                FFI_ArrowArrayStream::new(Box::new(requested::Cast::new(rows, schema)))
            }
        };
        let name = CString::new("arrow_array_stream").expect("no NUL");
        PyCapsule::new(py, stream, Some(name))
    }
}

/// The schema in an `arrow_schema` PyCapsule (the Arrow C data interface's
/// `ArrowSchema`).
fn schema_of_capsule(obj: &Bound<'_, PyAny>) -> PyResult<Schema> {
    let capsule = obj.cast::<PyCapsule>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "requested_schema is a PyCapsule named 'arrow_schema' (from __arrow_c_schema__)",
        )
    })?;
    let ptr = capsule.pointer_checked(Some(c"arrow_schema"))?;
    // SAFETY: a capsule named `arrow_schema` holds an `ArrowSchema` (the
    // PyCapsule interface), alive as long as the capsule, which `obj`
    // holds for this call; it is read, not released.
    let ffi = unsafe { ptr.cast::<FFI_ArrowSchema>().as_ref() };
    Schema::try_from(ffi)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("requested_schema: {e}")))
}

/// The stream of `table` over the store; a `pyarrow.RecordBatchReader`
/// when pyarrow is installed, else the [`ArrowStream`] itself.
pub fn table<'py>(
    py: Python<'py>,
    store: &Store,
    table: Table,
    json: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let options = DatasetOptions {
        json,
        ..DatasetOptions::default()
    };
    let source = match &store.kind {
        Kind::OpenHands { dirs, .. } => Source::OpenHands {
            dirs: dirs.clone(),
            next: 0,
            stack: Vec::new(),
            seen: HashSet::new(),
            reader: Reader::new(),
            conv: Conversation::default(),
            parser: Parser::new(),
            details: EventDetails::new(),
        },
        Kind::OcChat { entries } => Source::OcChat {
            root: store.root.clone(),
            entries: entries.clone(),
            next: 0,
        },
    };
    let rows = Rows {
        schema: table.schema(),
        source,
        ds: Dataset::in_memory(table, now_micros(), options),
        queue: VecDeque::new(),
        done: false,
    };
    let stream = Bound::new(
        py,
        ArrowStream {
            rows: Mutex::new(Some(rows)),
            table,
        },
    )?
    .into_any();
    match py.import("pyarrow") {
        Ok(pa) => pa
            .getattr("RecordBatchReader")?
            .call_method1("from_stream", (stream,)),
        Err(_) => Ok(stream),
    }
}
