//! Writing a checkpoint: atomically, through links, never over anything
//! but a regular file.

use super::*;

/// The file a write to `path` replaces: `path` itself, or the target of the
/// symbolic link(s) it is. Refuses anything there that is not a regular
/// file.
fn write_target(path: &Path) -> Result<PathBuf, CheckpointError> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(source) => return Err(CheckpointError::Io { path: p, source }),
            Ok(m) if m.file_type().is_symlink() => {
                let t = fs::read_link(&p).map_err(|source| CheckpointError::Io {
                    path: p.clone(),
                    source,
                })?;
                p = match p.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                };
            }
            Ok(m) if m.is_file() => return Ok(p),
            Ok(_) => return Err(CheckpointError::NotAFile { path: p }),
        }
    }
    Err(CheckpointError::Io {
        path: path.to_path_buf(),
        source: io::Error::other("too many levels of symbolic links"),
    })
}

/// Writes `bytes` to `path` atomically: a temporary file beside the target,
/// synced, renamed over it, the directory synced.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let target = write_target(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CheckpointError::NotAFile {
            path: target.clone(),
        })?;
    let tmp = dir.join(format!(".{name}.agentlog-tmp-{}", std::process::id()));
    let io_at = |p: &Path| {
        let p = p.to_path_buf();
        move |source| CheckpointError::Io { path: p, source }
    };
    let res = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_at(&tmp))?;
        f.write_all(bytes).map_err(io_at(&tmp))?;
        f.sync_all().map_err(io_at(&tmp))?;
        drop(f);
        // The target may have become something else meanwhile: look again.
        write_target(&target)?;
        fs::rename(&tmp, &target).map_err(io_at(&target))?;
        // Best effort: some file systems refuse to sync a directory.
        let _ = fs::File::open(&dir).and_then(|d| d.sync_all());
        Ok(())
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}
