//! Telling an OC Chat sessions directory by what it holds, without reading
//! a file: what [`crate::open`] and [`crate::openhands::Store::open`] use to
//! tell the two stores apart.

use std::fs;
use std::path::Path;

use super::{ARCHIVE_DIR_NAME, CLEAN_EXIT_MARKER_NAME, LEGACY_DIR_NAME};
use crate::openhands::{DIR_EVENTS, FILE_BASE_STATE};

/// Whether `dir` looks like an OC Chat sessions directory: it has OC Chat's
/// clean-exit marker, an `archive/`, `legacy/` or `Chat_logs/` directory,
/// or its first subdirectory (in name order) that holds a
/// `*_meta.json` file or an OpenHands `base_state.json` or `events/` holds
/// the former. Only names are looked at; a directory that cannot be listed
/// is not one.
pub fn is_sessions_dir(dir: &Path) -> bool {
    if dir.join(CLEAN_EXIT_MARKER_NAME).is_file()
        || dir.join(ARCHIVE_DIR_NAME).is_dir()
        || dir.join(LEGACY_DIR_NAME).is_dir()
        || dir.join("Chat_logs").is_dir()
    {
        return true;
    }
    let Ok(rd) = fs::read_dir(dir) else {
        return false;
    };
    // Names in order, which is the order of the paths they make under
    // `dir` (one component each), without comparing paths.
    let mut subdirs: Vec<std::ffi::OsString> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name())
        .collect();
    subdirs.sort_unstable();
    for sub in subdirs {
        let Ok(rd) = fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.ends_with("_meta.json") {
                return true;
            }
            if name == FILE_BASE_STATE || name == DIR_EVENTS {
                return false;
            }
        }
    }
    false
}
