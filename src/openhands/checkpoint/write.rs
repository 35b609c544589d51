//! Writing a checkpoint: atomically, as a file the tool owns
//! ([`OutputPath::classify_entry`]): a symbolic link at its path is
//! replaced, never written through, and nothing but a regular file is ever
//! replaced.

use super::*;

use crate::output::{OutputError, OutputPath};

/// Writes `bytes` to `path` atomically: a temporary file in `path`'s
/// directory, synced, renamed over `path`, the directory synced. Errors
/// name `path`, never the temporary file, where the path itself is at
/// fault.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let out = |e: OutputError| match e {
        OutputError::IsDirectory { .. } | OutputError::NotAFile { .. } => {
            CheckpointError::NotAFile {
                path: path.to_path_buf(),
            }
        }
        other => CheckpointError::Write(other),
    };
    let mut f = OutputPath::classify_entry(path)
        .and_then(OutputPath::open)
        .map_err(out)?;
    f.write_all(bytes).map_err(|source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    f.commit().map_err(out)
}
