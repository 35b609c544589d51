//! File-system steps: scanning a directory the way the globs of OC Chat's
//! `persistence.py` do, atomic no-clobber writes, archive copies (links, or
//! flushed copies across file systems) with identity-first deduplication,
//! directory locks, and the write hook: every step that changes the store
//! goes through [`Io::sys`], so a test can fail it with any error (taking
//! the same path a real one takes) or stop there as a crash would.

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
    /// Checking that the files a session was loaded from are still the
    /// newest (see [`SaveError::Changed`]).
    Verify,
    /// Linking an old file into the archive (or a copy of it, when the
    /// archive is on another file system).
    ArchiveLink,
    /// Copying an old file into the archive where it cannot be linked.
    ArchiveCopy,
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
    /// Writing or removing the record of a multi-file save in progress
    /// (`.occhat-pending` in the session directory).
    Journal,
}

/// What the write hook wants done at a step.
#[derive(Debug)]
pub enum HookAction {
    /// Take the step.
    Continue,
    /// Fail the step with this error, as if its system call had returned
    /// it: an injected `EXDEV` on [`WriteStep::ArchiveLink`] takes the same
    /// fallback (a copy) a real one takes, an `ENOSPC` or `EACCES` stops the
    /// write, which cleans up as after any error.
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

/// The payload of the `io::Error` a simulated crash travels as, so that no
/// fallback mistakes it for a real error kind.
#[derive(Debug)]
struct CrashAt {
    step: WriteStep,
    path: PathBuf,
}

impl std::fmt::Display for CrashAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulated crash at {:?}", self.step)
    }
}

impl std::error::Error for CrashAt {}

/// Whether `e` is a simulated crash (never to be handled, only passed up).
pub(crate) fn is_crash(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<CrashAt>())
}

/// The error for `op` on `path`; a simulated crash becomes
/// [`SaveError::Crashed`].
pub(crate) fn io_err(op: &'static str, path: &Path, source: io::Error) -> SaveError {
    if let Some(c) = source.get_ref().and_then(|i| i.downcast_ref::<CrashAt>()) {
        // Named by the file the operation was for, as a real error is.
        let _ = &c.path;
        return SaveError::Crashed {
            step: c.step,
            path: path.to_path_buf(),
        };
    }
    SaveError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// A file's identity: device and inode.
pub(crate) type DevIno = (u64, u64);

/// The identity of what `path` names, links not followed.
pub(crate) fn lstat_id(path: &Path) -> Option<DevIno> {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The identity of what `path` leads to, links followed.
pub(crate) fn stat_id(path: &Path) -> Option<DevIno> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A directory entry found by a scan.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) path: PathBuf,
    pub(crate) name: OsString,
    pub(crate) mtime: SystemTime,
    pub(crate) len: u64,
    pub(crate) is_file: bool,
    /// What the name itself was (links not followed) when found.
    pub(crate) entry: Option<EntryStamp>,
}

/// A directory entry's identity, size and modification time (links not
/// followed): what tells a name still holds the file it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryStamp {
    pub(crate) id: DevIno,
    pub(crate) len: u64,
    pub(crate) mtime_ns: i128,
}

/// The [`EntryStamp`] of `path` now.
pub(crate) fn entry_stamp(path: &Path) -> Option<EntryStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(path).ok()?;
    Some(EntryStamp {
        id: (m.dev(), m.ino()),
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    })
}

impl Found {
    pub(crate) fn py_mtime(&self) -> f64 {
        py_mtime(self.mtime)
    }

    /// The entry for `path` as it is now (links followed for the type,
    /// size and time, as a scan sees it), or `None` when nothing is there.
    pub(crate) fn of(path: &Path) -> Option<Found> {
        let m = fs::metadata(path).ok()?;
        Some(Found {
            path: path.to_path_buf(),
            name: file_name(path).to_os_string(),
            mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            len: m.len(),
            is_file: m.is_file(),
            entry: entry_stamp(path),
        })
    }

    /// Whether the name still holds the file it held when found.
    pub(crate) fn same_as_now(&self) -> bool {
        self.entry.is_some() && entry_stamp(&self.path) == self.entry
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
                name,
                mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                len: m.len(),
                is_file: m.is_file(),
                entry: entry_stamp(&path),
                path,
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
/// order (`persistence.py`'s `sorted(..., key=mtime)[-1]`, whose tie order is the
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
/// store looks for, so no glob of OC Chat's `persistence.py` (`*_meta.*`, `*.json`,
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
    /// Calls the hook for `step` (a step that is a check, not a system
    /// call): a failure or crash it asks for is returned as the error.
    pub(crate) fn step(&self, step: WriteStep, path: &Path) -> Result<(), SaveError> {
        self.sys(step, path, || Ok(()))
            .map_err(|e| io_err("injected failure", path, e))
    }

    /// Takes `step` on `path`: asks the hook, then runs `call` (the step's
    /// system call) unless the hook fails or crashes it instead.
    pub(crate) fn sys<T>(
        &self,
        step: WriteStep,
        path: &Path,
        call: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        if let Some(hook) = self.hook {
            match hook(step, path) {
                HookAction::Continue => {}
                HookAction::Fail(e) => return Err(e),
                HookAction::Crash => {
                    return Err(io::Error::other(CrashAt {
                        step,
                        path: path.to_path_buf(),
                    }));
                }
            }
        }
        call()
    }

    /// Creates `dir` and its parents if missing.
    pub(crate) fn ensure_dir(&self, dir: &Path) -> Result<(), SaveError> {
        if dir.is_dir() {
            return Ok(());
        }
        self.sys(WriteStep::CreateDir, dir, || fs::create_dir_all(dir))
            .map_err(|e| io_err("create directory", dir, e))
    }

    /// Writes `bytes` to a new temporary file in `target`'s directory and
    /// flushes it. Errors name `target` (the temporary name means nothing
    /// to the user and is gone after the clean-up). On error the temporary
    /// file is removed (unless the hook crashed).
    pub(crate) fn write_temp(&self, target: &Path, bytes: &[u8]) -> Result<PathBuf, SaveError> {
        let dir = parent_of(target);
        let tmp = temp_name(&dir);
        let mut f = self
            .sys(WriteStep::CreateTemp, &tmp, || {
                OpenOptions::new().write(true).create_new(true).open(&tmp)
            })
            .map_err(|e| io_err("create a temporary file to write", target, e))?;
        let r = (|| {
            let half = bytes.len() / 2;
            let (a, b) = bytes.split_at(half);
            f.write_all(a).map_err(|e| io_err("write", target, e))?;
            self.sys(WriteStep::WriteTemp, &tmp, || f.write_all(b))
                .map_err(|e| io_err("write", target, e))?;
            self.sys(WriteStep::SyncTemp, &tmp, || f.sync_all())
                .map_err(|e| io_err("fsync", target, e))
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
        let r = self.sys(WriteStep::SyncDir, dir, || File::open(dir)?.sync_all());
        match r {
            Ok(()) => Ok(()),
            // Some file systems cannot fsync a directory; the rename is
            // still atomic there.
            Err(e)
                if !is_crash(&e)
                    && matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::Unsupported) =>
            {
                Ok(())
            }
            Err(e) => Err(io_err("fsync directory", dir, e)),
        }
    }

    /// Takes an exclusive lock on `dir` (`flock` on the directory itself,
    /// no lock file). Saves of one session serialise on it; readers never
    /// lock. Where the file system has no locks, no lock is taken.
    pub(crate) fn lock_dir(&self, dir: &Path) -> Result<DirLock, SaveError> {
        let f = self
            .sys(WriteStep::Lock, dir, || File::open(dir))
            .map_err(|e| io_err("open directory", dir, e))?;
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
        match self.sys(WriteStep::Publish, target, || fs::hard_link(tmp, target)) {
            Ok(()) => {
                self.sys(WriteStep::RemoveTemp, tmp, || fs::remove_file(tmp))
                    .map_err(|e| io_err("remove the temporary name of", target, e))?;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) if is_crash(&e) => Err(io_err("link", target, e)),
            Err(e) if is_no_link(&e) => {
                if fs::symlink_metadata(target).is_ok() {
                    return Ok(false);
                }
                fs::rename(tmp, target).map_err(|e| io_err("rename", target, e))?;
                Ok(true)
            }
            Err(e) => Err(io_err("link", target, e)),
        }
    }

    /// Atomically replaces `target` with `tmp` (rename).
    pub(crate) fn replace(&self, tmp: &Path, target: &Path) -> Result<(), SaveError> {
        self.sys(WriteStep::Publish, target, || fs::rename(tmp, target))
            .map_err(|e| io_err("rename", target, e))
    }

    /// Writes `bytes` as `target`, atomically, replacing what is there.
    pub(crate) fn write_replace(&self, target: &Path, bytes: &[u8]) -> Result<(), SaveError> {
        let dir = parent_of(target);
        let tmp = self.write_temp(target, bytes)?;
        if let Err(e) = self.replace(&tmp, target) {
            return Err(self.cleanup(e, &tmp));
        }
        self.sync_dir(&dir)
    }

    /// Writes `bytes` as `target`, atomically, only if nothing is there:
    /// `Ok(false)` (and nothing written) when `target` exists.
    pub(crate) fn write_new(&self, target: &Path, bytes: &[u8]) -> Result<bool, SaveError> {
        let dir = parent_of(target);
        let tmp = self.write_temp(target, bytes)?;
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

    /// Puts a copy of `old` into `archive` under its own name, as OC Chat's
    /// `persistence.py` archives: when a file of that name is already there
    /// with the same bytes, nothing is added ([`Archived::Duplicate`]);
    /// when one with other bytes is, the copy gets `{stem}__{N}{suffix}`
    /// with the first free N. The copy is a hard link, or, where the link
    /// cannot be made (another file system: `EXDEV`; no hard links), a byte
    /// copy written to a temporary file in the archive, flushed and put in
    /// place without replacing anything. The original is never touched.
    ///
    /// Identity comes before contents: an archive entry that is a symlink
    /// is never a copy of anything; one that is the same directory entry as
    /// `old` (the archive leading back to the session directory) is refused
    /// ([`SaveError::UnsafeLayout`]); one that is another hard link to the
    /// same file is a real copy (the bytes stay reachable through it).
    pub(crate) fn archive_copy(&self, old: &Found, archive: &Path) -> Result<Archived, SaveError> {
        let target = py::join(archive, &old.name);
        let (stem, suffix) = py::stem_suffix(&old.name);
        let old_id = lstat_id(&old.path);
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
            if let Ok(cm) = fs::symlink_metadata(&candidate) {
                if cm.file_type().is_file() && old.is_file {
                    use std::os::unix::fs::MetadataExt;
                    let cid = (cm.dev(), cm.ino());
                    if Some(cid) == old_id {
                        if stat_id(archive) == stat_id(&parent_of(&old.path)) {
                            return Err(SaveError::UnsafeLayout {
                                path: candidate,
                                problem: super::layout::LayoutProblem::LeadsBack {
                                    other: old.path.clone(),
                                },
                            });
                        }
                        // Another name of the same file, in the archive.
                        return Ok(Archived::Duplicate);
                    }
                    if counter == 0 && files_equal(&candidate, &old.path) {
                        return Ok(Archived::Duplicate);
                    }
                }
                counter += 1;
                continue;
            }
            if !old.is_file {
                // A directory under a record's name: moved, as the
                // archive step of OC Chat's `persistence.py` moves it.
                return match self.sys(WriteStep::ArchiveLink, &candidate, || {
                    fs::rename(&old.path, &candidate)
                }) {
                    Ok(()) => Ok(Archived::Moved),
                    Err(e) if !is_crash(&e) && e.kind() == ErrorKind::NotFound => {
                        Ok(Archived::Vanished)
                    }
                    Err(e) => Err(io_err("move into archive", &candidate, e)),
                };
            }
            let linked = self.sys(WriteStep::ArchiveLink, &candidate, || {
                fs::hard_link(&old.path, &candidate)
            });
            match linked {
                Ok(()) => return Ok(Archived::Linked),
                Err(e) if is_crash(&e) => return Err(io_err("link into archive", &candidate, e)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e)
                    if e.kind() == ErrorKind::NotFound
                        && fs::symlink_metadata(&old.path).is_err() =>
                {
                    return Ok(Archived::Vanished);
                }
                Err(e) if is_no_link(&e) => match self.copy_new(&old.path, &candidate)? {
                    Some(()) => return Ok(Archived::Linked),
                    None if fs::symlink_metadata(&old.path).is_err() => {
                        return Ok(Archived::Vanished);
                    }
                    None => continue,
                },
                Err(e) => return Err(io_err("link into archive", &candidate, e)),
            }
        }
    }

    /// Copies `from` to the new name `to` (never replacing): the bytes go
    /// to a temporary file in `to`'s directory, keep `from`'s modification
    /// time, are flushed, then put in place with [`Io::publish_new`].
    /// `Ok(None)` when `to` exists by then, or `from` vanished.
    fn copy_new(&self, from: &Path, to: &Path) -> Result<Option<()>, SaveError> {
        let mut src = match File::open(from) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("open to copy into the archive", from, e)),
        };
        let mtime = src
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| io_err("stat", from, e))?;
        let mut bytes = Vec::new();
        src.read_to_end(&mut bytes)
            .map_err(|e| io_err("read to copy into the archive", from, e))?;
        let tmp = self
            .sys(WriteStep::ArchiveCopy, to, || Ok(()))
            .map_err(|e| io_err("copy into archive", to, e))
            .and_then(|()| self.write_temp(to, &bytes))?;
        let r = File::options()
            .write(true)
            .open(&tmp)
            .and_then(|f| {
                f.set_modified(mtime)?;
                f.sync_all()
            })
            .map_err(|e| io_err("copy into archive", to, e));
        if let Err(e) = r {
            return Err(self.cleanup(e, &tmp));
        }
        match self.publish_new(&tmp, to) {
            Ok(true) => Ok(Some(())),
            Ok(false) => {
                let _ = fs::remove_file(&tmp);
                Ok(None)
            }
            Err(e) => Err(self.cleanup(e, &tmp)),
        }
    }

    /// Removes `old` (a file now safe in the archive), but only while it is
    /// still the file that was archived (same identity, size and
    /// modification time): a file another writer put under that name since
    /// is left alone. A file already gone is fine.
    pub(crate) fn remove_archived(&self, old: &Found) -> Result<(), SaveError> {
        if !old.same_as_now() {
            return Ok(());
        }
        match self.sys(WriteStep::ArchiveRemove, &old.path, || {
            fs::remove_file(&old.path)
        }) {
            Ok(()) => Ok(()),
            Err(e) if !is_crash(&e) && e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err("remove archived file", &old.path, e)),
        }
    }

    /// Copies every file in `olds` into `archive` (see
    /// [`Io::archive_copy`]) and flushes the archive directory. Returns the
    /// files that are now safe there (to be removed once the new file is
    /// live); directories are moved.
    pub(crate) fn archive_all<'f>(
        &self,
        olds: &'f [Found],
        archive: &Path,
    ) -> Result<Vec<&'f Found>, SaveError> {
        if olds.is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_dir(archive)?;
        let mut safe = Vec::new();
        for old in olds {
            match self.archive_copy(old, archive)? {
                Archived::Linked | Archived::Duplicate => safe.push(old),
                Archived::Moved | Archived::Vanished => {}
            }
        }
        self.sync_dir(archive)?;
        Ok(safe)
    }
}

/// Whether a link failed because none can be made here (another file
/// system, or one without hard links), so a copy must do.
fn is_no_link(e: &io::Error) -> bool {
    !is_crash(e)
        && (e.raw_os_error() == Some(libc_exdev())
            || matches!(e.kind(), ErrorKind::CrossesDevices | ErrorKind::Unsupported)
            || matches!(e.raw_os_error(), Some(EPERM | EMLINK)))
}

/// `EXDEV`, `EPERM` (Linux's answer from a file system without hard
/// links) and `EMLINK` (too many links), the same on Linux and the BSDs.
const EXDEV: i32 = 18;
const EPERM: i32 = 1;
const EMLINK: i32 = 31;

fn libc_exdev() -> i32 {
    EXDEV
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

/// How many times a read looks again when a concurrent save archived or
/// replaced the file it found between finding and reading it. Each miss
/// means another save completed meanwhile, so the bound is only reached
/// when saves follow each other faster than a read can finish, on a
/// machine starved of CPU; then the read reports what it last saw.
pub(crate) const CONCURRENT_SAVE_RETRIES: u32 = 32;

/// Counts a retry of a read that lost a race with a concurrent save, and
/// gives way first: the CPU to the writer for the first few retries, then
/// a millisecond (a writer in the middle of a save publishes within it on
/// any machine not stalled).
pub(crate) fn before_retry(attempts: &mut u32) {
    *attempts += 1;
    if *attempts <= 4 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
