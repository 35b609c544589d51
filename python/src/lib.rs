//! The Python package `agentlog` (the extension module `agentlog._agentlog`):
//! the crate's readers from Python. The Python API is in
//! `agentlog/__init__.pyi`; each class's docstring has examples.

use std::path::PathBuf;

use pyo3::prelude::*;

mod asf;
mod changes;
mod conversation;
mod errors;
mod event;
mod ids;
mod met;
mod occhat;
mod pace;
mod requested;
mod session_changes;
mod store;
mod tables;
mod values;

/// Opens a store: an OpenHands conversations directory (any directory
/// conversations are found under), one conversation directory or a file of
/// one, or an OC Chat sessions directory.
///
/// Raises ``agentlog.ReadError`` (with ``path`` and ``reason``) when the
/// path cannot be read or nothing of either format is under it.
///
/// >>> import agentlog
/// >>> agentlog.open("examples/store").format
/// 'openhands'
#[pyfunction]
fn open(py: Python<'_>, path: PathBuf) -> PyResult<store::Store> {
    store::open(py, path)
}

/// Reads the Agent Session Format file at `path` (an
/// `agentlog.AsfSession`); `agentlog.ReadError` when it cannot be read,
/// `agentlog.FormatError` when it is not an ASF session file.
#[pyfunction]
fn read_asf(py: Python<'_>, path: PathBuf) -> PyResult<asf::AsfSession> {
    asf::read_asf(py, path)
}

#[pymodule]
fn _agentlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_class::<store::Store>()?;
    m.add_class::<store::StoreIter>()?;
    m.add_class::<conversation::Conversation>()?;
    m.add_class::<event::Event>()?;
    m.add_class::<event::Events>()?;
    m.add_class::<event::EventIter>()?;
    m.add_class::<occhat::Session>()?;
    m.add_class::<tables::ArrowStream>()?;
    m.add_function(wrap_pyfunction!(read_asf, m)?)?;
    m.add_class::<asf::AsfSession>()?;
    m.add_class::<asf::AsfContext>()?;
    m.add_class::<asf::Converted>()?;
    m.add_class::<changes::Checkpoint>()?;
    m.add_class::<changes::Change>()?;
    m.add_class::<changes::Changes>()?;
    m.add_class::<changes::Follow>()?;
    m.add_class::<session_changes::SessionsCheckpoint>()?;
    m.add_class::<session_changes::SessionChange>()?;
    m.add_class::<session_changes::SessionChanges>()?;
    m.add_class::<session_changes::SessionFollow>()?;
    Ok(())
}
