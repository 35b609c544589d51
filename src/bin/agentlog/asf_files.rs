//! ASF session files as a PATH of `ls`, `stats` and `check`.
//!
//! A PATH is ASF when it is a regular file whose first line is an ASF
//! header (a JSON object whose `format` starts with `agentsession/`), or a
//! directory that is not an OpenHands conversation nor an OC Chat sessions
//! root and whose own `*.jsonl` files (not its subdirectories') include such
//! a file; the directory's other `*.jsonl` files are listed with it and
//! each reported if it does not read. Anything else is left to
//! [`crate::target::resolve`].

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use agentlog::asf::Session;
use agentlog::json::OwnedValue;
use agentlog::openhands::is_conversation_dir;

use crate::target::is_occhat_root;

/// The longest first line looked at to tell an ASF header.
const HEADER_LIMIT: u64 = 1 << 20;

/// Whether `path` is a file whose first line is an ASF header.
pub fn is_asf_file(path: &Path) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut line = Vec::new();
    if BufReader::new(f.take(HEADER_LIMIT))
        .read_until(b'\n', &mut line)
        .is_err()
    {
        return false;
    }
    OwnedValue::parse(&line).is_ok_and(|v| {
        v.get("format")
            .and_then(OwnedValue::as_str)
            .is_some_and(|f| f.starts_with("agentsession/"))
    })
}

/// The ASF files a PATH names (see the module docs), sorted; `None` when
/// the PATH is not ASF.
pub fn files(path: &Path) -> Option<Vec<PathBuf>> {
    let meta = fs::metadata(path).ok()?;
    if meta.is_file() {
        return is_asf_file(path).then(|| vec![path.to_path_buf()]);
    }
    if !meta.is_dir() || is_conversation_dir(path) || is_occhat_root(path) {
        return None;
    }
    let mut jsonl: Vec<PathBuf> = fs::read_dir(path)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    jsonl.sort();
    jsonl.iter().any(|p| is_asf_file(p)).then_some(jsonl)
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
