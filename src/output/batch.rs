//! Replacing many files with one flush of their data ([`Batch`], whose
//! docs state the guarantees).

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use super::open::{Staged, rename_into_place};
use super::{DirSync, Output, OutputError, io_err, parent_of};

/// Replacing many files with one flush of their data: a command that writes
/// many files writes each to its temporary file as [`Output`] does, makes the data of all of them durable
/// together, then renames each into place and flushes each directory once.
///
/// The guarantees are [`Output::commit`]'s, for each
/// file:
///
/// - a file's bytes are durable before its rename: every name holds its old
///   file or its new one, complete, never a part, at every moment and after
///   a power cut;
/// - a file is written only to a temporary file in its destination's
///   directory and renamed over the destination as [`Output`]
///   says (a link at a name the tool owns is replaced, never followed);
/// - a failure before the renames (a write, the flush) leaves every name as
///   it was and removes the temporary files; a failure at a rename stops
///   there: the names renamed hold their new files, the others their old
///   ones, and the temporary files not renamed are removed — a state a rerun
///   of the command completes. A killed process leaves at most one batch's
///   temporary files (named as [`is_temporary_name`](super::is_temporary_name)
///   says) beside their destinations, never a part at a name.
///
/// What changes is how the bytes are made durable. On Linux 5.8 and later,
/// one `syncfs(2)` per file system replaces one `fsync(2)` per file: Linux
/// waits for the writes to complete in `sync` and `syncfs`, which "provide
/// the same guarantees as `fsync()` called on every file in the system or
/// filesystem respectively" (`sync(2)`); the file system's own flush of the
/// device's write cache comes with it, as with `fsync`. Since 5.8 `syncfs`
/// also reports every write-back error on the file system since the file
/// descriptor it is called through was opened (or since its last
/// `syncfs`); it is called through the batch's first temporary file on that
/// file system, opened before any of the batch's bytes there were written,
/// so no error on them goes unreported (an error on another file of the same
/// file system fails the batch too: a false failure, never a false
/// success). Older kernels did not report those errors: there, and on other
/// systems, each temporary file is flushed with `fsync` as it is added, and
/// only the renames and the directories' flushes are batched. A `syncfs`
/// the system refuses (`ENOSYS`, or `EPERM` from a sandbox) falls back to
/// one `fsync` per file, each file opened again without following links.
///
/// [`add`](Self::add) each [`Output`] once written, then
/// [`finish`](Self::finish). A batch commits on its own once it holds
/// [`MAX_FILES`](Self::MAX_FILES) files or [`MAX_BYTES`](Self::MAX_BYTES)
/// bytes. Dropped without a finish (an error stopped the caller), it
/// removes the temporary files not yet renamed and flushes the directories
/// of the renames made.
#[derive(Debug)]
pub struct Batch {
    staged: Vec<Staged>,
    /// Bytes written to the staged files.
    bytes: u64,
    dirs: DirSync,
    /// One open file per file system written to, opened before any of the
    /// bytes staged there were written: `syncfs` through it reports every
    /// write-back error since (or since its last `syncfs`).
    anchors: Vec<Anchor>,
    /// Each file flushed with `fsync` as it is added (no `syncfs`, or one
    /// that does not report write-back errors).
    per_file: bool,
    #[cfg(test)]
    fail_flush: bool,
}

#[derive(Debug)]
struct Anchor {
    dev: u64,
    file: File,
    /// The directories known to be on `dev`.
    dirs: Vec<PathBuf>,
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

impl Batch {
    /// The most files a batch holds before it commits them.
    pub const MAX_FILES: usize = 1024;
    /// The most bytes a batch holds before it commits them.
    pub const MAX_BYTES: u64 = 256 << 20;

    /// An empty batch.
    pub fn new() -> Batch {
        Batch {
            staged: Vec::new(),
            bytes: 0,
            dirs: DirSync::new(),
            anchors: Vec::new(),
            per_file: !syncfs_reports_errors(),
            #[cfg(test)]
            fail_flush: false,
        }
    }

    /// How many files wait for their commit.
    pub fn staged(&self) -> usize {
        self.staged.len()
    }

    /// Adds a written output. A replacement's temporary file is kept for the
    /// batch's commit; any other output (standard output, a node written in
    /// place) is completed at once, after the files staged before it are
    /// committed. Commits the batch when it is full. Returns how many of the
    /// outputs added so far (the oldest first, this one included) are now
    /// committed: 0 when this one only waits.
    pub fn add(&mut self, out: Output) -> Result<usize, OutputError> {
        if !out.is_replacement() {
            let n = self.commit()?;
            out.commit_into(&mut self.dirs)?;
            return Ok(n + 1);
        }
        let Some(staged) = out.stage(self.per_file)? else {
            return Ok(0);
        };
        let dir = parent_of(&staged.dest);
        self.bytes += staged.len;
        let file = staged.file.as_ref();
        let known = self.anchors.iter().any(|a| a.dirs.contains(&dir));
        let staged = if known || self.per_file {
            staged.closed()
        } else {
            // A directory not seen yet: which file system it is on.
            let dev = match file.map(File::metadata) {
                Some(Ok(m)) => m.dev(),
                Some(Err(e)) => {
                    let tmp = staged.tmp.clone();
                    staged.discard();
                    return Err(io_err("examine", &tmp, e));
                }
                None => 0,
            };
            match self.anchors.iter_mut().find(|a| a.dev == dev) {
                Some(a) => {
                    a.dirs.push(dir);
                    staged.closed()
                }
                None => {
                    let (staged, file) = staged.take_file();
                    if let Some(file) = file {
                        self.anchors.push(Anchor {
                            dev,
                            file,
                            dirs: vec![dir],
                        });
                    }
                    staged
                }
            }
        };
        self.staged.push(staged);
        if self.staged.len() >= Self::MAX_FILES || self.bytes >= Self::MAX_BYTES {
            self.commit()
        } else {
            Ok(0)
        }
    }

    /// Commits the files staged: their data made durable, then each renamed
    /// into place in the order added (the directories are flushed by
    /// [`finish`](Self::finish)). Returns how many were renamed. On an
    /// error, the temporary files not renamed are removed (see
    /// [`Batch`]).
    pub fn commit(&mut self) -> Result<usize, OutputError> {
        if self.staged.is_empty() {
            return Ok(0);
        }
        let staged = std::mem::take(&mut self.staged);
        self.bytes = 0;
        if let Err(e) = self.flush_data(&staged) {
            for s in staged {
                s.discard();
            }
            return Err(e);
        }
        let n = staged.len();
        let mut rest = staged.into_iter();
        while let Some(s) = rest.next() {
            if let Err(e) = rename_into_place(&s.tmp, &s.dest, s.entry) {
                s.discard();
                rest.for_each(Staged::discard);
                return Err(e);
            }
            self.dirs.add(parent_of(&s.dest));
        }
        Ok(n)
    }

    /// Commits what is staged, then flushes each directory renamed into
    /// once. Returns how many files the last commit renamed.
    pub fn finish(mut self) -> Result<usize, OutputError> {
        let n = self.commit()?;
        std::mem::take(&mut self.dirs).finish()?;
        Ok(n)
    }

    /// Makes the data of every staged file durable (see [`Batch`]).
    fn flush_data(&mut self, staged: &[Staged]) -> Result<(), OutputError> {
        #[cfg(test)]
        if self.fail_flush {
            let path = staged.first().map(|s| s.tmp.clone()).unwrap_or_default();
            return Err(io_err(
                "syncfs",
                &path,
                io::Error::other("injected failure"),
            ));
        }
        if self.per_file {
            // Flushed as each was added.
            return Ok(());
        }
        let mut each = false;
        for a in &self.anchors {
            match syncfs(&a.file) {
                Ok(()) => {}
                Err(e) if refused(&e) => each = true,
                Err(e) => {
                    let path = staged.first().map(|s| s.tmp.clone()).unwrap_or_default();
                    return Err(io_err("syncfs", &path, e));
                }
            }
        }
        if each {
            // No syncfs here from now on: each file of this batch flushed
            // now, the next ones as they are added.
            self.per_file = true;
            for s in staged {
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&s.tmp)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| io_err("fsync", &s.tmp, e))?;
            }
        }
        Ok(())
    }

    /// Makes the next commit fail at the flush of the data (tests of the
    /// failure path).
    #[cfg(test)]
    pub(crate) fn fail_next_flush(&mut self) {
        self.fail_flush = true;
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        for s in std::mem::take(&mut self.staged) {
            s.discard();
        }
        // `dirs` flushes the directories of the renames made as it drops.
    }
}

/// Whether a `syncfs` error says the call is not available here rather
/// than that the flush failed.
fn refused(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM))
        || e.kind() == ErrorKind::Unsupported
}

#[cfg(target_os = "linux")]
fn syncfs(f: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: syncfs on a descriptor this process holds open.
    if unsafe { libc::syncfs(f.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn syncfs(_f: &File) -> io::Result<()> {
    Err(io::Error::from(ErrorKind::Unsupported))
}

/// Whether this kernel's `syncfs` reports write-back errors (Linux 5.8 and
/// later).
#[cfg(target_os = "linux")]
fn syncfs_reports_errors() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        // SAFETY: uname fills the zeroed struct it is given.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        if unsafe { libc::uname(&mut u) } != 0 {
            return false;
        }
        let release: Vec<u8> = u
            .release
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        linux_at_least(&release, 5, 8)
    })
}

#[cfg(not(target_os = "linux"))]
fn syncfs_reports_errors() -> bool {
    false
}

/// Whether a kernel release string (`6.18.44-…`) is at least
/// `major.minor`; `false` for one that does not start with two numbers.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn linux_at_least(release: &[u8], major: u64, minor: u64) -> bool {
    let mut parts = release.split(|&b| b == b'.').map(|p| {
        let digits: Vec<u8> = p.iter().copied().take_while(u8::is_ascii_digit).collect();
        std::str::from_utf8(&digits)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
    });
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn add(b: &mut Batch, path: &std::path::Path, bytes: &[u8]) -> usize {
        let mut o = Output::create_entry(path).unwrap();
        o.write_all(bytes).unwrap();
        b.add(o).unwrap()
    }

    #[test]
    fn kernel_releases() {
        assert!(linux_at_least(b"6.18.44-firecracker", 5, 8));
        assert!(linux_at_least(b"5.8.0", 5, 8));
        assert!(linux_at_least(b"5.10", 5, 8));
        assert!(!linux_at_least(b"5.7.19", 5, 8));
        assert!(!linux_at_least(b"4.19.0-25-amd64", 5, 8));
        assert!(!linux_at_least(b"", 5, 8));
        assert!(!linux_at_least(b"x.y", 5, 8));
    }

    #[test]
    fn nothing_at_a_name_until_the_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("a"), b"old a").unwrap();
        let mut b = Batch::new();
        assert_eq!(add(&mut b, &d.join("a"), b"new a"), 0);
        assert_eq!(add(&mut b, &d.join("b"), b"new b"), 0);
        assert_eq!(b.staged(), 2);
        assert_eq!(fs::read(d.join("a")).unwrap(), b"old a");
        assert!(!d.join("b").exists());
        assert_eq!(b.finish().unwrap(), 2);
        assert_eq!(fs::read(d.join("a")).unwrap(), b"new a");
        assert_eq!(fs::read(d.join("b")).unwrap(), b"new b");
        assert_eq!(names(d), ["a", "b"]);
    }

    #[test]
    fn a_failed_flush_leaves_every_name_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::write(d.join("a"), b"old a").unwrap();
        let mut b = Batch::new();
        add(&mut b, &d.join("a"), b"new a");
        add(&mut b, &d.join("b"), b"new b");
        b.fail_next_flush();
        let err = b.commit().unwrap_err();
        assert!(matches!(err, OutputError::Io { op: "syncfs", .. }), "{err}");
        assert_eq!(b.staged(), 0);
        drop(b);
        assert_eq!(fs::read(d.join("a")).unwrap(), b"old a");
        assert_eq!(names(d), ["a"], "no temporary file left");
    }

    #[test]
    fn a_failed_rename_stops_there_and_removes_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let mut b = Batch::new();
        add(&mut b, &d.join("a"), b"new a");
        add(&mut b, &d.join("b"), b"new b");
        add(&mut b, &d.join("c"), b"new c");
        // A directory where the second file goes, made after its look.
        fs::create_dir(d.join("b")).unwrap();
        let err = b.finish().unwrap_err();
        assert!(matches!(err, OutputError::Changed { .. }), "{err}");
        assert_eq!(fs::read(d.join("a")).unwrap(), b"new a");
        assert!(d.join("b").is_dir());
        assert_eq!(names(d), ["a", "b"], "no temporary file left");
    }

    #[test]
    fn a_link_at_a_name_is_replaced_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let (d, outside) = (tmp.path().join("out"), tmp.path().join("outside"));
        fs::create_dir_all(&d).unwrap();
        fs::write(&outside, b"theirs").unwrap();
        std::os::unix::fs::symlink(&outside, d.join("a")).unwrap();
        let mut b = Batch::new();
        add(&mut b, &d.join("a"), b"new a");
        // The link is still there until the commit.
        assert!(fs::symlink_metadata(d.join("a")).unwrap().is_symlink());
        b.finish().unwrap();
        assert!(fs::symlink_metadata(d.join("a")).unwrap().is_file());
        assert_eq!(fs::read(d.join("a")).unwrap(), b"new a");
        assert_eq!(fs::read(&outside).unwrap(), b"theirs");
    }

    #[test]
    fn dropped_unfinished_removes_its_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let mut b = Batch::new();
        add(&mut b, &d.join("a"), b"new a");
        drop(b);
        assert!(names(d).is_empty());
    }

    #[test]
    fn full_batches_commit_on_their_own() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let mut b = Batch::new();
        let mut done = 0;
        for i in 0..Batch::MAX_FILES + 3 {
            done += add(&mut b, &d.join(format!("f{i}")), b"x");
        }
        assert_eq!(done, Batch::MAX_FILES);
        assert_eq!(b.staged(), 3);
        assert_eq!(b.finish().unwrap(), 3);
        assert_eq!(names(d).len(), Batch::MAX_FILES + 3);
    }
}
