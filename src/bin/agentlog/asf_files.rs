//! ASF session files as a PATH of `ls`, `stats` and `check`.
//!
//! A PATH is ASF when it is a regular file whose first line is an ASF
//! header (a JSON object whose `format` starts with `agentsession/`), or a
//! directory that is not an OpenHands conversation nor an OC Chat sessions
//! root and whose own `*.jsonl` files (not its subdirectories') include such
//! a file; the directory's other `*.jsonl` files are listed with it and
//! each reported if it does not read. Anything else is left to
//! [`crate::target::resolve`].

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::asf::Session;

/// The ASF files a PATH names (see the module docs), sorted; `None` when
/// the PATH is not ASF ([`agentlog::asf::session_files`]).
pub fn files(path: &Path) -> Option<Vec<PathBuf>> {
    agentlog::asf::session_files(path)
}

/// One file read: its bytes, or why it could not be read or is no session.
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// What `check` reports of one file: (code, detail) per problem, the
/// detail starting with the line. A file that does not read is `unreadable`,
/// one the reader refuses `refused`.
pub fn problems(path: &Path) -> Vec<(&'static str, String)> {
    let bytes = match read(path) {
        Ok(b) => b,
        Err(e) => return vec![("unreadable", e)],
    };
    match Session::read(&bytes) {
        Err(e) => vec![("refused", format!("line 1: {e}"))],
        Ok(s) => s
            .verify()
            .into_iter()
            .map(|p| (p.kind.code(), format!("line {}: {}", p.line, p.kind)))
            .collect(),
    }
}
