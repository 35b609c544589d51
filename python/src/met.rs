//! The errors a scan or a follow met and went on past, each kept once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use crate::errors::read_error;

/// The errors met so far, as `agentlog.ReadError` objects, in the order
/// they were first met. A follow scans its store again and again, and a
/// conversation that cannot be read fails each time until it can: an error
/// is kept once (by its path and reason), so that the list says what could
/// not be read instead of growing with every scan.
#[derive(Default)]
pub struct Met {
    errors: Vec<Py<PyAny>>,
    seen: HashSet<(PathBuf, String)>,
}

impl Met {
    /// Keeps the read error `e` about `path`, unless the same error about
    /// the same path is already kept.
    pub fn read_error(&mut self, py: Python<'_>, path: &Path, e: &dyn std::fmt::Display) {
        if self.seen.insert((path.to_path_buf(), e.to_string())) {
            let err = read_error(path, e).value(py).clone().into_any().unbind();
            self.errors.push(err);
        }
    }

    /// The errors kept, first met first.
    pub fn errors(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.errors.iter().map(|e| e.clone_ref(py)).collect()
    }
}
