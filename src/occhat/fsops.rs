//! File-system steps: scanning a directory the way the seed's globs do,
//! atomic no-clobber writes, archive moves, directory locks, and the write
//! hook that lets tests fail or crash at every step.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use super::py;
use super::save::SaveError;
use super::time::py_mtime;

/// A step of a write, named to the write hook before it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteStep {
    /// Creating a directory that does not exist yet.
    CreateDir,
    /// Creating the temporary file (in the target's directory).
    CreateTemp,
    /// Half of the bytes are in the temporary file.
    WriteTemp,
    /// Flushing the temporary file to disk (`fsync`).
    SyncTemp,
    /// Taking the session directory's lock.
    Lock,
    /// Linking (or copying) an old file into the archive.
    ArchiveLink,
    /// Removing an old file that is now in the archive.
    ArchiveRemove,
    /// Putting the new file in place under its final name.
    Publish,
    /// Removing the temporary name after a no-clobber publish.
    RemoveTemp,
    /// Flushing a directory (`fsync`) so names survive a power cut.
    SyncDir,
    /// Moving a file (migration, legacy orphans).
    Move,
    /// Removing a file (migration).
    Remove,
}

/// What the write hook wants done at a step.
#[derive(Debug)]
pub enum HookAction {
    /// Take the step.
    Continue,
    /// Fail the step with this error; the write cleans up as after any
    /// error (its temporary file is removed).
    Fail(io::Error),
    /// Stop right here as a crash would: no clean-up at all. The operation
    /// returns [`SaveError::Crashed`].
    Crash,
}

/// A write hook: called with each step and the path it concerns.
pub type WriteHook = Arc<dyn Fn(WriteStep, &Path) -> HookAction + Send + Sync>;

/// The hook, if any, for one operation.
#[derive(Clone, Copy)]
pub(crate) struct Io<'a> {
    pub(crate) hook: Option<&'a WriteHook>,
}

pub(crate) fn io_err(op: &'static str, path: &Path, source: io::Error) -> SaveError {
    SaveError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// A directory entry found by a scan.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) path: PathBuf,
    pub(crate) name: OsString,
    pub(crate) mtime: SystemTime,
    pub(crate) len: u64,
    pub(crate) is_file: bool,
}

impl Found {
    pub(crate) fn py_mtime(&self) -> f64 {
        py_mtime(self.mtime)
    }
}

/// The entries of `dir` whose names match `pred`, with their `stat`
/// (symlinks followed, as `Path.stat()` does), in Python name order. An
/// entry that vanishes or cannot be examined is left out; a directory that
/// cannot be read has no entries (as a glob answers).
pub(crate) fn scan(dir: &Path, pred: impl Fn(&[u8]) -> bool) -> (Vec<Found>, usize) {
    let mut out = Vec::new();
    let mut vanished = 0;
    let Ok(rd) = fs::read_dir(dir) else {
        return (out, 0);
    };
    for e in rd.flatten() {
        let name = e.file_name();
        if !pred(name.as_bytes()) {
            continue;
        }
        let path = py::join(dir, &name);
        match fs::metadata(&path) {
            Ok(m) => out.push(Found {
                path,
                name,
                mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                len: m.len(),
                is_file: m.is_file(),
            }),
            Err(_) => vanished += 1,
        }
    }
    out.sort_by(|a, b| py::cmp_names(&a.name, &b.name));
    (out, vanished)
}

/// `*_{kind}.*`: every file of a kind, whatever its extension.
pub(crate) fn kind_any_ext(kind: &str) -> impl Fn(&[u8]) -> bool + '_ {
    move |name: &[u8]| {
        let pat_len = kind.len() + 2;
        name.len() >= pat_len
            && name.windows(pat_len).any(|w| {
                w.first() == Some(&b'_')
                    && w.last() == Some(&b'.')
                    && w.get(1..pat_len - 1) == Some(kind.as_bytes())
            })
    }
}

/// `*{suffix}`: names ending in `suffix` (`_meta.json`, `.txt`, `.json`).
pub(crate) fn ends_with(suffix: &str) -> impl Fn(&[u8]) -> bool + '_ {
    move |name: &[u8]| name.ends_with(suffix.as_bytes())
}

/// The newest entry by Python's float mtime; ties go to the last in name
/// order (the seed's `sorted(..., key=mtime)[-1]`, whose tie order is the
/// directory's). Retries when every candidate vanished mid-scan (a save
/// archiving them at that moment).
pub(crate) fn latest(dir: &Path, suffix: &str) -> Option<Found> {
    for _ in 0..4 {
        let (mut found, vanished) = scan(dir, ends_with(suffix));
        if found.is_empty() && vanished > 0 {
            continue;
        }
        // Stable: equal mtimes keep name order; take the last.
        found.sort_by(|a, b| a.py_mtime().total_cmp(&b.py_mtime()));
        return found.pop();
    }
    None
}

/// [`latest`] of `*_meta.json` and of `*_chat_log.json` in one directory
/// scan (what the listing needs of each session).
pub(crate) fn latest_meta_and_log(dir: &Path) -> (Option<Found>, Option<Found>) {
    const META: &str = "_meta.json";
    const LOG: &str = "_chat_log.json";
    for _ in 0..4 {
        let (found, vanished) = scan(dir, |n: &[u8]| {
            n.ends_with(META.as_bytes()) || n.ends_with(LOG.as_bytes())
        });
        let (mut metas, mut logs): (Vec<Found>, Vec<Found>) = found
            .into_iter()
            .partition(|f| f.name.as_bytes().ends_with(META.as_bytes()));
        if metas.is_empty() && vanished > 0 {
            continue;
        }
        metas.sort_by(|a, b| a.py_mtime().total_cmp(&b.py_mtime()));
        logs.sort_by(|a, b| a.py_mtime().total_cmp(&b.py_mtime()));
        return (metas.pop(), logs.pop());
    }
    (None, None)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name in `dir`. It holds no `_` and ends in no extension the
/// store looks for, so no glob of the seed's (`*_meta.*`, `*.json`,
/// `*.txt`) can see it.
fn temp_name(dir: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = super::time::unix_nanos(SystemTime::now());
    dir.join(format!(".occhat-tmp-{}-{n}-{t}", std::process::id()))
}

/// A small random-looking hex string, for collision-free names (the
/// no-clobber publish is what guarantees uniqueness; this only makes a
/// retry rare).
pub(crate) fn random_hex6() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.write_i128(super::time::unix_nanos(SystemTime::now()));
    format!("{:06x}", h.finish() & 0xff_ffff)
}

/// A held lock on a directory (released when dropped).
pub(crate) struct DirLock {
    _file: Option<File>,
}

impl Io<'_> {
    /// Calls the hook for `step`.
    pub(crate) fn step(&self, step: WriteStep, path: &Path) -> Result<(), SaveError> {
        let Some(hook) = self.hook else {
            return Ok(());
        };
        match hook(step, path) {
            HookAction::Continue => Ok(()),
            HookAction::Fail(e) => Err(SaveError::Io {
                op: "injected failure",
                path: path.to_path_buf(),
                source: e,
            }),
            HookAction::Crash => Err(SaveError::Crashed {
                step,
                path: path.to_path_buf(),
            }),
        }
    }

    /// Creates `dir` and its parents if missing.
    pub(crate) fn ensure_dir(&self, dir: &Path) -> Result<(), SaveError> {
        if dir.is_dir() {
            return Ok(());
        }
        self.step(WriteStep::CreateDir, dir)?;
        fs::create_dir_all(dir).map_err(|e| io_err("create directory", dir, e))
    }

    /// Writes `bytes` to a new temporary file in `dir` and flushes it.
    /// On error the temporary file is removed (unless the hook crashed).
    pub(crate) fn write_temp(&self, dir: &Path, bytes: &[u8]) -> Result<PathBuf, SaveError> {
        let tmp = temp_name(dir);
        self.step(WriteStep::CreateTemp, &tmp)?;
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io_err("create temporary file", &tmp, e))?;
        let r = (|| {
            let half = bytes.len() / 2;
            let (a, b) = bytes.split_at(half);
            f.write_all(a).map_err(|e| io_err("write", &tmp, e))?;
            self.step(WriteStep::WriteTemp, &tmp)?;
            f.write_all(b).map_err(|e| io_err("write", &tmp, e))?;
            self.step(WriteStep::SyncTemp, &tmp)?;
            f.sync_all().map_err(|e| io_err("fsync", &tmp, e))
        })();
        match r {
            Ok(()) => Ok(tmp),
            Err(e) => Err(self.cleanup(e, &tmp)),
        }
    }

    /// Removes `tmp` after an error, unless the error is a simulated crash.
    pub(crate) fn cleanup(&self, e: SaveError, tmp: &Path) -> SaveError {
        if !matches!(e, SaveError::Crashed { .. }) {
            let _ = fs::remove_file(tmp);
        }
        e
    }

    /// Flushes a directory so the names in it are durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> Result<(), SaveError> {
        self.step(WriteStep::SyncDir, dir)?;
        let f = File::open(dir).map_err(|e| io_err("open directory", dir, e))?;
        match f.sync_all() {
            Ok(()) => Ok(()),
            // Some file systems cannot fsync a directory; the rename is
            // still atomic there.
            Err(e) if matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::Unsupported) => {
                Ok(())
            }
            Err(e) => Err(io_err("fsync directory", dir, e)),
        }
    }

    /// Takes an exclusive lock on `dir` (`flock` on the directory itself,
    /// no lock file). Saves of one session serialise on it; readers never
    /// lock. Where the file system has no locks, no lock is taken.
    pub(crate) fn lock_dir(&self, dir: &Path) -> Result<DirLock, SaveError> {
        self.step(WriteStep::Lock, dir)?;
        let f = File::open(dir).map_err(|e| io_err("open directory", dir, e))?;
        match f.lock() {
            Ok(()) => Ok(DirLock { _file: Some(f) }),
            Err(e) if e.kind() == ErrorKind::Unsupported => Ok(DirLock { _file: None }),
            Err(e) => Err(io_err("lock directory", dir, e)),
        }
    }

    /// Puts `tmp` in place as `target` without ever replacing an existing
    /// file: a hard link (atomic, fails if `target` exists), then the
    /// temporary name is removed. Where hard links are not supported, a
    /// rename after an existence check. `Ok(false)` when `target` exists.
    pub(crate) fn publish_new(&self, tmp: &Path, target: &Path) -> Result<bool, SaveError> {
        self.step(WriteStep::Publish, target)?;
        match fs::hard_link(tmp, target) {
            Ok(()) => {
                self.step(WriteStep::RemoveTemp, tmp)?;
                fs::remove_file(tmp).map_err(|e| io_err("remove temporary file", tmp, e))?;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(_) => {
                if fs::symlink_metadata(target).is_ok() {
                    return Ok(false);
                }
                fs::rename(tmp, target).map_err(|e| io_err("rename", target, e))?;
                Ok(true)
            }
        }
    }

    /// Atomically replaces `target` with `tmp` (rename).
    pub(crate) fn replace(&self, tmp: &Path, target: &Path) -> Result<(), SaveError> {
        self.step(WriteStep::Publish, target)?;
        fs::rename(tmp, target).map_err(|e| io_err("rename", target, e))
    }

    /// Writes `bytes` as `target`, atomically, replacing what is there.
    pub(crate) fn write_replace(&self, target: &Path, bytes: &[u8]) -> Result<(), SaveError> {
        let dir = parent_of(target);
        let tmp = self.write_temp(&dir, bytes)?;
        if let Err(e) = self.replace(&tmp, target) {
            return Err(self.cleanup(e, &tmp));
        }
        self.sync_dir(&dir)
    }

    /// Writes `bytes` as `target`, atomically, only if nothing is there:
    /// `Ok(false)` (and nothing written) when `target` exists.
    pub(crate) fn write_new(&self, target: &Path, bytes: &[u8]) -> Result<bool, SaveError> {
        let dir = parent_of(target);
        let tmp = self.write_temp(&dir, bytes)?;
        match self.publish_new(&tmp, target) {
            Ok(true) => {
                self.sync_dir(&dir)?;
                Ok(true)
            }
            Ok(false) => {
                let _ = fs::remove_file(&tmp);
                Ok(false)
            }
            Err(e) => Err(self.cleanup(e, &tmp)),
        }
    }

    /// Puts a copy of `old` into `archive` under its own name, as the
    /// seed's archive step does: when a file of that name is already there
    /// with the same bytes, nothing is added ([`Archived::Duplicate`]);
    /// when one with other bytes is, the copy gets `{stem}__{N}{suffix}`
    /// with the first free N. The copy is a hard link (or a rename when
    /// `keep_source` is false and links are not supported, or a byte copy
    /// when it is true); it never replaces anything in the archive.
    pub(crate) fn archive_link(
        &self,
        old: &Found,
        archive: &Path,
        keep_source: bool,
    ) -> Result<Archived, SaveError> {
        let target = py::join(archive, &old.name);
        let (stem, suffix) = py::stem_suffix(&old.name);
        let mut counter: u64 = 0;
        loop {
            let candidate = if counter == 0 {
                target.clone()
            } else {
                let mut n = OsString::from(stem);
                n.push(format!("__{counter}"));
                n.push(suffix);
                py::join(archive, n)
            };
            if fs::symlink_metadata(&candidate).is_ok() {
                if counter == 0 && old.is_file && files_equal(&candidate, &old.path) {
                    return Ok(Archived::Duplicate);
                }
                counter += 1;
                continue;
            }
            self.step(WriteStep::ArchiveLink, &candidate)?;
            let linked = if old.is_file {
                fs::hard_link(&old.path, &candidate)
            } else {
                Err(io::Error::from(ErrorKind::Unsupported))
            };
            match linked {
                Ok(()) => return Ok(Archived::Linked),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e)
                    if e.kind() == ErrorKind::NotFound
                        && fs::symlink_metadata(&old.path).is_err() =>
                {
                    return Ok(Archived::Vanished);
                }
                Err(_) => {
                    // No hard links here (or a directory): move or copy.
                    if keep_source {
                        copy_new(&old.path, &candidate)
                            .map_err(|e| io_err("copy into archive", &candidate, e))?;
                        return Ok(Archived::Linked);
                    }
                    match fs::rename(&old.path, &candidate) {
                        Ok(()) => return Ok(Archived::Moved),
                        Err(e) if e.kind() == ErrorKind::NotFound => {
                            return Ok(Archived::Vanished);
                        }
                        Err(e) => return Err(io_err("move into archive", &candidate, e)),
                    }
                }
            }
        }
    }

    /// Removes `path` (a file now safe in the archive). A file already gone
    /// is fine.
    pub(crate) fn remove_archived(&self, path: &Path) -> Result<(), SaveError> {
        self.step(WriteStep::ArchiveRemove, path)?;
        match fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err("remove archived file", path, e)),
        }
    }

    /// Moves every file in `olds` into `archive` (see [`Io::archive_link`]),
    /// then removes the originals, flushing the archive directory between
    /// the two so no crash can lose a file.
    pub(crate) fn archive_all(
        &self,
        olds: &[Found],
        archive: &Path,
        session_dir: &Path,
    ) -> Result<(), SaveError> {
        if olds.is_empty() {
            return Ok(());
        }
        self.ensure_dir(archive)?;
        let mut to_remove = Vec::new();
        for old in olds {
            match self.archive_link(old, archive, false)? {
                Archived::Linked | Archived::Duplicate => to_remove.push(&old.path),
                Archived::Moved | Archived::Vanished => {}
            }
        }
        self.sync_dir(archive)?;
        for p in to_remove {
            self.remove_archived(p)?;
        }
        self.sync_dir(session_dir)
    }
}

/// What archiving one file did.
#[derive(Debug)]
pub(crate) enum Archived {
    /// A link (or copy) now in the archive; the original is still there.
    Linked,
    /// Moved (renamed) into the archive; the original name is gone.
    Moved,
    /// The archive already held these bytes under this name.
    Duplicate,
    /// The file was gone before it could be archived (another save took it).
    Vanished,
}

/// Copies `from` to a new file `to` (never replacing), keeping the
/// modification time, flushed.
fn copy_new(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    let mtime = src.metadata()?.modified()?;
    let mut dst = OpenOptions::new().write(true).create_new(true).open(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.set_modified(mtime)?;
    dst.sync_all()
}

/// Whether two files hold the same bytes (what equal SHA-256 digests mean,
/// compared directly). A file that cannot be read compares unequal.
pub(crate) fn files_equal(a: &Path, b: &Path) -> bool {
    let (Ok(mut fa), Ok(mut fb)) = (File::open(a), File::open(b)) else {
        return false;
    };
    match (fa.metadata(), fb.metadata()) {
        (Ok(ma), Ok(mb)) if ma.is_file() && mb.is_file() && ma.len() == mb.len() => {}
        _ => return false,
    }
    let mut ba = vec![0u8; 64 * 1024];
    let mut bb = vec![0u8; 64 * 1024];
    loop {
        let na = match read_full(&mut fa, &mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        let nb = match read_full(&mut fb, &mut bb) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if na != nb || ba.get(..na) != bb.get(..nb) {
            return false;
        }
        if na == 0 {
            return true;
        }
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let Some(rest) = buf.get_mut(n..) else { break };
        match f.read(rest) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The directory a path is in (`.` for a bare name).
pub(crate) fn parent_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The file name of a path as an `OsStr` (empty for none).
pub(crate) fn file_name(p: &Path) -> &OsStr {
    p.file_name().unwrap_or_default()
}
