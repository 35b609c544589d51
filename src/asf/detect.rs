//! Telling ASF session files by their first line: what [`crate::open`] and
//! the `agentlog` command use to take a file, or a directory of them, as
//! ASF.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::json::OwnedValue;
use crate::occhat::is_sessions_dir;
use crate::openhands::is_conversation_dir;

/// The longest first line looked at to tell an ASF header.
const HEADER_LIMIT: u64 = 1 << 20;

/// Whether `path` is a regular file whose first line is an ASF header (a
/// JSON object whose `format` starts with `agentsession/`). Only that line
/// is read (at most 1 MiB of it).
pub fn is_session_file(path: &Path) -> bool {
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

/// The ASF session files `path` names, sorted: the path itself when it is
/// one ([`is_session_file`]); for a directory that is not an OpenHands
/// conversation nor an OC Chat sessions directory, its own `*.jsonl` files
/// (not its subdirectories') when at least one of them is a session file
/// (the others are listed with them, for a reader to report). `None` when
/// the path is not ASF.
pub fn session_files(path: &Path) -> Option<Vec<PathBuf>> {
    let meta = fs::metadata(path).ok()?;
    if meta.is_file() {
        return is_session_file(path).then(|| vec![path.to_path_buf()]);
    }
    if !meta.is_dir() {
        return None;
    }
    let mut jsonl: Vec<PathBuf> = fs::read_dir(path)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    // A directory without a session file is told first: what it holds
    // decides nothing more (a store's root is not listed again).
    if !jsonl.iter().any(|p| is_session_file(p)) {
        return None;
    }
    if is_conversation_dir(path) || is_sessions_dir(path) {
        return None;
    }
    jsonl.sort();
    Some(jsonl)
}
