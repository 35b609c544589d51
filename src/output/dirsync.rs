//! Flushing the directories of several replacements once each: a command
//! that writes many files into one directory renames each into place as
//! [`Output::commit`] does, but flushes the directory once, after the last
//! rename, instead of after every one.
//!
//! What a crash can leave is what it can leave with one flush per file:
//! each replacement's bytes are flushed before its rename, so every name
//! holds either its old file or its new one, complete, and never a part;
//! only which of the two a name holds after a power cut is left open until
//! [`DirSync::finish`] returns. A rerun of the command completes the rest.
//!
//! [`Output::commit`]: super::Output::commit

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::{OutputError, io_err};

/// The directories whose renames are not yet flushed (see the module
/// docs): filled by [`Output::commit_into`](super::Output::commit_into),
/// flushed by [`finish`](Self::finish). Dropped unfinished (an error
/// stopped the caller), it flushes them all the same and ignores failures.
#[derive(Debug, Default)]
pub struct DirSync {
    dirs: Vec<PathBuf>,
}

impl DirSync {
    /// No directory waiting.
    pub fn new() -> DirSync {
        DirSync::default()
    }

    /// The directories waiting for their flush, each path once (as the
    /// destination's path spells it: a link's target may name a directory
    /// by another path), in the order their first rename was made.
    pub fn pending(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Records that a rename was made in `dir`.
    pub(crate) fn add(&mut self, dir: PathBuf) {
        // Commands write into one directory, or a few: a scan from the
        // most recent is as fast as a set, and keeps the first-seen order.
        if !self.dirs.iter().rev().any(|d| *d == dir) {
            self.dirs.push(dir);
        }
    }

    /// Flushes (`fsync`) each waiting directory once. Every directory is
    /// tried; the first failure is returned. A file system that cannot
    /// flush a directory is not a failure: the renames are atomic there all
    /// the same.
    pub fn finish(mut self) -> Result<(), OutputError> {
        let mut first = None;
        for dir in std::mem::take(&mut self.dirs) {
            if let Err(e) = sync_dir(&dir) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for DirSync {
    fn drop(&mut self) {
        for dir in std::mem::take(&mut self.dirs) {
            let _ = sync_dir(&dir);
        }
    }
}

/// Flushes one directory (see [`DirSync::finish`] on what is not an
/// error).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), OutputError> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::Unsupported) => Ok(()),
        Err(e) => Err(io_err("fsync directory", dir, e)),
    }
}
