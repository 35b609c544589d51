//! Errors as the package's Python exceptions (`agentlog._errors`): each
//! with the path it is about and the reason, in one line.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The exception classes, by their names in `agentlog._errors`.
#[derive(Clone, Copy, Debug)]
pub enum Class {
    /// `ReadError`: a path that cannot be read at all.
    Read,
    /// `NotFoundError`: no such conversation, session or event.
    NotFound,
    /// `FormatError`: not the format asked for.
    Format,
    /// `AgentlogError`: anything else.
    Other,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Read => "ReadError",
            Class::NotFound => "NotFoundError",
            Class::Format => "FormatError",
            Class::Other => "AgentlogError",
        }
    }
}

/// An exception of `class` about `path` (none when `None`) for `reason`.
pub fn error(class: Class, path: Option<&Path>, reason: impl Into<String>) -> PyErr {
    let reason = reason.into();
    let path = path.map(|p| p.to_string_lossy().into_owned());
    Python::attach(|py| {
        let made = (|| -> PyResult<PyErr> {
            let cls = py.import("agentlog._errors")?.getattr(class.name())?;
            let value = cls.call1((path.clone(), reason.clone()))?;
            Ok(PyErr::from_value(value))
        })();
        made.unwrap_or_else(|e| e)
    })
}

/// `AmbiguousError` with the full IDs a prefix names.
pub fn ambiguous(path: Option<&Path>, reason: String, candidates: Vec<String>) -> PyErr {
    let path = path.map(|p| p.to_string_lossy().into_owned());
    Python::attach(|py| {
        let made = (|| -> PyResult<PyErr> {
            let cls = py.import("agentlog._errors")?.getattr("AmbiguousError")?;
            let args = PyTuple::new(
                py,
                [
                    path.into_pyobject(py)?.into_any(),
                    reason.into_pyobject(py)?.into_any(),
                    candidates.into_pyobject(py)?.into_any(),
                ],
            )?;
            Ok(PyErr::from_value(cls.call1(args)?))
        })();
        made.unwrap_or_else(|e| e)
    })
}

/// The reason of an error whose `Display` starts with `path: `: that prefix
/// cut, so that the exception's `str` does not say the path twice.
pub fn reason_of(path: &Path, shown: &str) -> String {
    let p = path.to_string_lossy();
    shown
        .strip_prefix(&*p)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(shown)
        .to_owned()
}

/// A read error about `path`.
pub fn read_error(path: &Path, e: &dyn std::fmt::Display) -> PyErr {
    error(Class::Read, Some(path), reason_of(path, &e.to_string()))
}
