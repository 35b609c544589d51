//! An open directory: its files opened relative to it, its entries listed
//! into one reused buffer.
//!
//! On Linux a [`Dir`] holds the directory's file descriptor: a file is
//! opened with `openat` relative to it (the kernel resolves one name, not
//! the whole path), and the directory is listed with `getdents64` into a
//! caller's reused buffer ([`ListBuf`]), which gives each name and its type
//! without a heap allocation (the standard library's `read_dir` allocates
//! each entry's name, twice when asked for it). Measured on the store
//! benchmarks: see `benches/README.md`. Elsewhere a `Dir` holds its path
//! and goes through the standard library (also on Linux when built with
//! `RUSTFLAGS="--cfg agentlog_portable_dir"`, to test and measure that
//! path).
//!
//! Files are opened with `O_NONBLOCK`, so that a FIFO met where a file was
//! expected is refused as not a regular file instead of blocking the
//! reader; it changes nothing for regular files.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::Path;

use super::{Fill, MAX_SIZE, ReadAppend, fill_max};

/// What an entry of a directory is, as the listing tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirEntryKind {
    /// A directory.
    Dir,
    /// A symbolic link (to anything).
    Symlink,
    /// A regular file.
    File,
    /// Anything else: a socket, a FIFO, a device…
    Other,
    /// The file system did not say (`DT_UNKNOWN`).
    Unknown,
}

/// Why [`Dir::read_file`] gave no bytes.
#[derive(Debug)]
pub(crate) enum FileFault {
    Io(io::Error),
    TooLarge(u64),
    /// Over the bytes the caller had left: the size, the bytes left.
    OverBudget(u64, u64),
    Empty,
    NotAFile,
}

impl FileFault {
    /// The error, about the file at `path`.
    pub(crate) fn at(self, path: &Path) -> super::SourceError {
        use super::SourceError;
        let path = path.to_path_buf();
        match self {
            FileFault::Io(source) => SourceError::Io { path, source },
            FileFault::TooLarge(size) => SourceError::TooLarge { path, size },
            FileFault::OverBudget(size, left) => SourceError::OverBudget { path, size, left },
            FileFault::Empty => SourceError::Empty { path },
            FileFault::NotAFile => SourceError::NotAFile { path },
        }
    }
}

/// A reused buffer for listing directories.
#[derive(Debug, Default)]
pub(crate) struct ListBuf {
    #[cfg_attr(any(not(target_os = "linux"), agentlog_portable_dir), allow(dead_code))]
    buf: Vec<u8>,
}

/// An open directory.
#[derive(Debug)]
pub(crate) struct Dir {
    #[cfg(all(target_os = "linux", not(agentlog_portable_dir)))]
    fd: std::os::fd::OwnedFd,
    #[cfg(any(not(target_os = "linux"), agentlog_portable_dir))]
    path: std::path::PathBuf,
}

impl Dir {
    /// Reads the whole file `name` of this directory, appending it to
    /// `buf`.
    pub(crate) fn read_file(&self, name: &OsStr, buf: &mut Vec<u8>) -> Result<usize, FileFault> {
        self.read_file_within(name, buf, MAX_SIZE)
    }
}

/// What `stat` tells of an entry of a directory: its identity, size and
/// modification time ([`Dir::stat_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryStat {
    /// The device.
    pub(crate) dev: u64,
    /// The inode.
    pub(crate) ino: u64,
    /// The size in bytes.
    pub(crate) size: u64,
    /// The modification time, whole seconds since the Unix epoch.
    pub(crate) mtime: i64,
    /// Its nanoseconds.
    pub(crate) mtime_nsec: u32,
    /// The inode change time (`st_ctime`), whole seconds, and its
    /// nanoseconds: any write, `chmod`, link or rename of the file sets it,
    /// and `touch` cannot set it back.
    pub(crate) ctime: (i64, u32),
}

impl EntryStat {
    /// What a file's metadata tells.
    #[cfg(unix)]
    pub(crate) fn of(meta: &std::fs::Metadata) -> EntryStat {
        use std::os::unix::fs::MetadataExt;
        EntryStat {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
            ctime: (meta.ctime(), u32::try_from(meta.ctime_nsec()).unwrap_or(0)),
        }
    }

    /// What a file's metadata tells (no device or inode outside Unix: 0).
    #[cfg(not(unix))]
    pub(crate) fn of(meta: &std::fs::Metadata) -> EntryStat {
        let (mtime, mtime_nsec) = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((0, 0), |d| {
                (i64::try_from(d.as_secs()).unwrap_or(0), d.subsec_nanos())
            });
        EntryStat {
            dev: 0,
            ino: 0,
            size: meta.len(),
            mtime,
            mtime_nsec,
            ctime: (0, 0),
        }
    }
}

impl Dir {
    /// Reads the whole file `name` of this directory, appending it to
    /// `buf`, refusing one of more than `left` bytes.
    pub(crate) fn read_file_within(
        &self,
        name: &OsStr,
        buf: &mut Vec<u8>,
        left: u64,
    ) -> Result<usize, FileFault> {
        self.read_file_meta_within(name, buf, left).map(|(n, _)| n)
    }
}

/// Reads `file` to its end, appending to `buf`; `buf` is left as it was on
/// error. A file over `left` bytes (but not over [`MAX_SIZE`]) is
/// [`FileFault::OverBudget`], refused from its `fstat` size before any of
/// it is read, or as soon as it grows past `left`. Gives the bytes read
/// and the `fstat` taken before reading.
fn read_whole(
    file: &File,
    reader: &mut impl ReadAppend,
    buf: &mut Vec<u8>,
    left: u64,
) -> Result<(usize, std::fs::Metadata), FileFault> {
    let meta = file.metadata().map_err(FileFault::Io)?;
    if !meta.is_file() {
        return Err(FileFault::NotAFile);
    }
    let size = meta.len();
    if size > MAX_SIZE {
        return Err(FileFault::TooLarge(size));
    }
    if size > left {
        return Err(FileFault::OverBudget(size, left));
    }
    let start = buf.len();
    match fill_max(reader, size, left, buf) {
        Ok(()) => {}
        Err(Fill::Io(e)) => {
            buf.truncate(start);
            return Err(FileFault::Io(e));
        }
        Err(Fill::TooLarge(n)) if n > MAX_SIZE => {
            buf.truncate(start);
            return Err(FileFault::TooLarge(n));
        }
        Err(Fill::TooLarge(n)) => {
            buf.truncate(start);
            return Err(FileFault::OverBudget(n, left));
        }
    }
    match buf.len() - start {
        0 => Err(FileFault::Empty),
        n => Ok((n, meta)),
    }
}

#[cfg(all(target_os = "linux", not(agentlog_portable_dir)))]
mod imp {
    use std::ffi::CStr;
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;

    use super::*;

    /// The longest name a Linux file system stores (`NAME_MAX`).
    const NAME_MAX: usize = 255;

    /// Reads a file with the bare `read` system call, straight into the
    /// buffer's spare room (not zeroed first: the kernel writes the bytes
    /// it gives, and the buffer's length covers only those). glibc's `read`,
    /// `openat` and `close` are cancellation points: in a process with more
    /// than one thread each call goes through
    /// `__pthread_enable_asynccancel`/`__pthread_disable_asynccancel`
    /// around the system call (measured at about 2 % of a scan's time on a
    /// store of small files); the crate never cancels a thread, so the
    /// files it reads one after another are opened, read and closed
    /// without them.
    struct BareRead(libc::c_int);

    impl ReadAppend for BareRead {
        fn read_append(&mut self, buf: &mut Vec<u8>, want: usize) -> io::Result<usize> {
            buf.reserve(want);
            let spare = buf.spare_capacity_mut();
            let len = want.min(spare.len());
            // SAFETY: `spare` is writable for `len` bytes (the kernel only
            // writes into it); the descriptor is open while the reader
            // lives.
            let n = unsafe {
                libc::syscall(libc::SYS_read, self.0, spare.as_mut_ptr().cast::<u8>(), len)
            };
            let n = usize::try_from(n)
                .map_err(|_| io::Error::last_os_error())?
                .min(len);
            // SAFETY: the kernel wrote `n` bytes (at most `len`, within the
            // capacity) at the start of the spare room: they are
            // initialised.
            unsafe { buf.set_len(buf.len() + n) };
            Ok(n)
        }
    }

    /// Closes a descriptor this module owns with the bare system call (see
    /// [`BareRead`]); like dropping an `OwnedFd`, an error is ignored.
    fn close_bare(fd: libc::c_int) {
        // SAFETY: the caller gives up the descriptor, which nothing uses
        // after this.
        unsafe {
            libc::syscall(libc::SYS_close, fd);
        }
    }

    /// `name` as a C string in `buf`; `None` when it holds a NUL or is
    /// longer than any file name can be.
    fn c_name<'b>(name: &[u8], buf: &'b mut [u8; NAME_MAX + 1]) -> Option<&'b CStr> {
        let dst = buf.get_mut(..name.len())?;
        dst.copy_from_slice(name);
        *buf.get_mut(name.len())? = 0;
        CStr::from_bytes_with_nul(buf.get(..=name.len())?).ok()
    }

    fn bad_name() -> io::Error {
        io::Error::new(io::ErrorKind::InvalidInput, "not a file name")
    }

    impl Dir {
        /// Opens the directory at `path`.
        pub(crate) fn open(path: &Path) -> io::Result<Dir> {
            super::super::opens::dir();
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(path)?;
            Ok(Dir { fd: f.into() })
        }

        /// Opens `name`, relative to this directory, with `flags`.
        fn open_at(&self, name: &[u8], flags: libc::c_int) -> io::Result<OwnedFd> {
            let mut buf = [0u8; NAME_MAX + 1];
            let c = c_name(name, &mut buf).ok_or_else(bad_name)?;
            loop {
                // The bare system call (see [`BareRead`]). SAFETY: `c` is a
                // NUL-terminated string that outlives the call; the
                // descriptor is open for the life of `self`; `openat` takes
                // these four arguments.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_openat,
                        self.fd.as_raw_fd(),
                        c.as_ptr(),
                        flags | libc::O_CLOEXEC | libc::O_NOCTTY,
                        0 as libc::c_uint,
                    )
                };
                if let Ok(fd) = libc::c_int::try_from(fd)
                    && fd >= 0
                {
                    // SAFETY: `openat` just returned this descriptor, which
                    // nothing else owns.
                    return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
                }
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }

        /// Opens the directory `name` in this one.
        pub(crate) fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
            super::super::opens::dir();
            let fd = self.open_at(name.as_bytes(), libc::O_RDONLY | libc::O_DIRECTORY)?;
            Ok(Dir { fd })
        }

        /// Reads the whole file `name` of this directory, appending it to
        /// `buf`, refusing one of more than `left` bytes; the bytes read and
        /// the file's metadata (its `fstat` before reading).
        pub(crate) fn read_file_meta_within(
            &self,
            name: &OsStr,
            buf: &mut Vec<u8>,
            left: u64,
        ) -> Result<(usize, std::fs::Metadata), FileFault> {
            super::super::opens::file();
            let fd = self
                .open_at(name.as_bytes(), libc::O_RDONLY | libc::O_NONBLOCK)
                .map_err(FileFault::Io)?;
            let raw = fd.as_raw_fd();
            let file = File::from(fd);
            let r = read_whole(&file, &mut BareRead(raw), buf, left);
            close_bare(file.into_raw_fd());
            r
        }

        /// The identity, size and modification time of `name` in this
        /// directory, following a symbolic link (`fstatat` relative to the
        /// open directory: the kernel resolves one name); `None` when it is
        /// not there.
        pub(crate) fn stat_at(&self, name: &OsStr) -> io::Result<Option<EntryStat>> {
            super::super::opens::stat();
            let mut buf = [0u8; NAME_MAX + 1];
            let c = c_name(name.as_bytes(), &mut buf).ok_or_else(bad_name)?;
            // SAFETY: an all-zero `stat` is a valid value of this plain C
            // struct.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `c` is NUL-terminated, `st` is writable, the
            // descriptor is open.
            let r = unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, 0) };
            if r != 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::NotFound => Ok(None),
                    _ => Err(e),
                };
            }
            #[allow(clippy::unnecessary_cast)]
            Ok(Some(EntryStat {
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
                size: st.st_size as u64,
                mtime: st.st_mtime as i64,
                mtime_nsec: u32::try_from(st.st_mtime_nsec).unwrap_or(0),
                ctime: (
                    st.st_ctime as i64,
                    u32::try_from(st.st_ctime_nsec).unwrap_or(0),
                ),
            }))
        }

        /// Asks the kernel to read the first `len` bytes of the regular
        /// file `name` of this directory into the page cache, without
        /// waiting for them (`posix_fadvise(WILLNEED)`). A symbolic link is
        /// not followed; what is not a regular file is opened without
        /// blocking (`O_NONBLOCK`) and given no advice.
        pub(crate) fn advise_file(&self, name: &OsStr, len: u64) -> io::Result<()> {
            let fd = self.open_at(
                name.as_bytes(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW,
            )?;
            let len = libc::off_t::try_from(len).unwrap_or(libc::off_t::MAX);
            // SAFETY: the descriptor is open; advice reads nothing into
            // our memory. Not a regular file: `ESPIPE` or no effect.
            let r =
                unsafe { libc::posix_fadvise(fd.as_raw_fd(), 0, len, libc::POSIX_FADV_WILLNEED) };
            match r {
                0 => Ok(()),
                e => Err(io::Error::from_raw_os_error(e)),
            }
        }

        /// Whether `name`, of the kind the listing gave, is a directory,
        /// following a symbolic link.
        pub(crate) fn is_dir(&self, name: &OsStr, kind: DirEntryKind) -> bool {
            match kind {
                DirEntryKind::Dir => true,
                DirEntryKind::File | DirEntryKind::Other => false,
                DirEntryKind::Symlink | DirEntryKind::Unknown => {
                    let mut buf = [0u8; NAME_MAX + 1];
                    let Some(c) = c_name(name.as_bytes(), &mut buf) else {
                        return false;
                    };
                    // SAFETY: an all-zero `stat` is a valid value of this
                    // plain C struct.
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    // SAFETY: `c` is NUL-terminated, `st` is writable, the
                    // descriptor is open.
                    let r = unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, 0) };
                    r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR
                }
            }
        }

        /// Calls `f` with the name and kind of every entry but `.` and
        /// `..`, in the directory's order. Fails when listing fails (some
        /// entries may have been given).
        pub(crate) fn for_each(
            &self,
            listing: &mut ListBuf,
            mut f: impl FnMut(&OsStr, DirEntryKind),
        ) -> io::Result<()> {
            self.any(listing, |name, kind| {
                f(name, kind);
                false
            })
            .map(|_| ())
        }

        /// Calls `f` with the name and kind of every entry but `.` and
        /// `..`, in the directory's order, until it answers `true`; whether
        /// it did. The listing stops there (no further `getdents64`). Fails
        /// when listing fails before (some entries may have been given).
        pub(crate) fn any(
            &self,
            listing: &mut ListBuf,
            mut f: impl FnMut(&OsStr, DirEntryKind) -> bool,
        ) -> io::Result<bool> {
            const CHUNK: usize = 32 * 1024;
            if listing.buf.len() < CHUNK {
                listing.buf.resize(CHUNK, 0);
            }
            loop {
                let buf = &mut listing.buf;
                // SAFETY: the kernel writes at most `buf.len()` bytes into
                // `buf`, which is initialised and exclusively borrowed.
                let n = unsafe {
                    libc::syscall(
                        libc::SYS_getdents64,
                        self.fd.as_raw_fd(),
                        buf.as_mut_ptr(),
                        buf.len(),
                    )
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                if n == 0 {
                    return Ok(false);
                }
                let mut chunk = buf.get(..n as usize).unwrap_or(&[]);
                // Each record: d_ino (8), d_off (8), d_reclen (2), d_type
                // (1), the NUL-terminated name, padding to d_reclen.
                while let (Some(&r0), Some(&r1), Some(&d_type)) =
                    (chunk.get(16), chunk.get(17), chunk.get(18))
                {
                    let reclen = usize::from(u16::from_ne_bytes([r0, r1]));
                    let Some(rec) = chunk.get(19..reclen) else {
                        break;
                    };
                    let name = CStr::from_bytes_until_nul(rec)
                        .map(CStr::to_bytes)
                        .unwrap_or(rec);
                    if name != b"." && name != b".." {
                        let kind = match d_type {
                            libc::DT_DIR => DirEntryKind::Dir,
                            libc::DT_LNK => DirEntryKind::Symlink,
                            libc::DT_REG => DirEntryKind::File,
                            libc::DT_UNKNOWN => DirEntryKind::Unknown,
                            _ => DirEntryKind::Other,
                        };
                        if f(OsStr::from_bytes(name), kind) {
                            return Ok(true);
                        }
                    }
                    chunk = chunk.get(reclen..).unwrap_or(&[]);
                }
            }
        }
    }
}

#[cfg(any(not(target_os = "linux"), agentlog_portable_dir))]
mod imp {
    use super::*;

    impl Dir {
        /// Opens the directory at `path`.
        pub(crate) fn open(path: &Path) -> io::Result<Dir> {
            super::super::opens::dir();
            if !std::fs::metadata(path)?.is_dir() {
                return Err(io::Error::new(io::ErrorKind::Other, "not a directory"));
            }
            Ok(Dir {
                path: path.to_path_buf(),
            })
        }

        /// Opens the directory `name` in this one.
        pub(crate) fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
            Dir::open(&self.path.join(name))
        }

        /// Reads the whole file `name` of this directory, appending it to
        /// `buf`, refusing one of more than `left` bytes; the bytes read and
        /// the file's metadata (its `fstat` before reading).
        pub(crate) fn read_file_meta_within(
            &self,
            name: &OsStr,
            buf: &mut Vec<u8>,
            left: u64,
        ) -> Result<(usize, std::fs::Metadata), FileFault> {
            let path = self.path.join(name);
            // Without `O_NONBLOCK`, opening a FIFO would block: refuse what
            // is not a regular file before opening it.
            if !std::fs::metadata(&path).map_err(FileFault::Io)?.is_file() {
                return Err(FileFault::NotAFile);
            }
            super::super::opens::file();
            let f = File::open(&path).map_err(FileFault::Io)?;
            read_whole(&f, &mut super::super::Zeroed(&f), buf, left)
        }

        /// The identity, size and modification time of `name` in this
        /// directory, following a symbolic link; `None` when it is not
        /// there.
        pub(crate) fn stat_at(&self, name: &OsStr) -> io::Result<Option<EntryStat>> {
            super::super::opens::stat();
            match std::fs::metadata(self.path.join(name)) {
                Ok(m) => Ok(Some(EntryStat::of(&m))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        /// Does nothing: read-ahead advice is given on Linux only.
        pub(crate) fn advise_file(&self, _name: &OsStr, _len: u64) -> io::Result<()> {
            Ok(())
        }

        /// Whether `name`, of the kind the listing gave, is a directory,
        /// following a symbolic link.
        pub(crate) fn is_dir(&self, name: &OsStr, kind: DirEntryKind) -> bool {
            match kind {
                DirEntryKind::Dir => true,
                DirEntryKind::File | DirEntryKind::Other => false,
                DirEntryKind::Symlink | DirEntryKind::Unknown => {
                    std::fs::metadata(self.path.join(name))
                        .map(|m| m.is_dir())
                        .unwrap_or(false)
                }
            }
        }

        /// Calls `f` with the name and kind of every entry.
        pub(crate) fn for_each(
            &self,
            listing: &mut ListBuf,
            mut f: impl FnMut(&OsStr, DirEntryKind),
        ) -> io::Result<()> {
            self.any(listing, |name, kind| {
                f(name, kind);
                false
            })
            .map(|_| ())
        }

        /// Calls `f` with the name and kind of every entry until it
        /// answers `true`; whether it did.
        pub(crate) fn any(
            &self,
            _listing: &mut ListBuf,
            mut f: impl FnMut(&OsStr, DirEntryKind) -> bool,
        ) -> io::Result<bool> {
            for e in std::fs::read_dir(&self.path)? {
                let e = e?;
                let kind = match e.file_type() {
                    Ok(t) if t.is_dir() => DirEntryKind::Dir,
                    Ok(t) if t.is_symlink() => DirEntryKind::Symlink,
                    Ok(t) if t.is_file() => DirEntryKind::File,
                    Ok(_) => DirEntryKind::Other,
                    Err(_) => DirEntryKind::Unknown,
                };
                if f(&e.file_name(), kind) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_reads_and_tells_kinds() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("a.json"), b"{\"a\":1}").unwrap();
        std::fs::write(root.join("empty"), b"").unwrap();
        let many: Vec<String> = (0..3000)
            .map(|i| format!("event-{i:05}-{}.json", "ab".repeat(60)))
            .collect();
        for n in &many {
            std::fs::write(root.join("sub").join(n), n.as_bytes()).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();
        let d = Dir::open(root).unwrap();
        let mut l = ListBuf::default();
        let mut seen = Vec::new();
        d.for_each(&mut l, |n, k| seen.push((n.to_os_string(), d.is_dir(n, k))))
            .unwrap();
        seen.sort();
        let mut want = vec![
            ("a.json".into(), false),
            ("empty".into(), false),
            ("sub".into(), true),
        ];
        #[cfg(unix)]
        want.push(("link".into(), true));
        want.sort();
        assert_eq!(seen, want);
        // A listing longer than one buffer.
        let sub = d.open_dir(OsStr::new("sub")).unwrap();
        let mut names = Vec::new();
        sub.for_each(&mut l, |n, _| names.push(n.to_string_lossy().into_owned()))
            .unwrap();
        names.sort();
        let mut sorted = many.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        let mut buf = b"x".to_vec();
        assert_eq!(d.read_file(OsStr::new("a.json"), &mut buf).unwrap(), 7);
        assert_eq!(buf, b"x{\"a\":1}");
        assert!(matches!(
            d.read_file(OsStr::new("empty"), &mut buf),
            Err(FileFault::Empty)
        ));
        assert!(matches!(
            d.read_file(OsStr::new("sub"), &mut buf),
            Err(FileFault::NotAFile)
        ));
        assert!(
            matches!(d.read_file(OsStr::new("missing"), &mut buf), Err(FileFault::Io(e)) if e.kind() == io::ErrorKind::NotFound)
        );
        assert!(d.read_file(OsStr::new("a/b"), &mut buf).is_err());
        assert!(d.read_file(OsStr::new("a\0b"), &mut buf).is_err());
        assert_eq!(buf, b"x{\"a\":1}");
        assert!(!d.is_dir(OsStr::new("missing"), DirEntryKind::Unknown));
        assert!(d.is_dir(OsStr::new("sub"), DirEntryKind::Unknown));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_not_a_file_and_does_not_block() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("fifo");
        let status = std::process::Command::new("mkfifo").arg(&p).status();
        if !status.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to test
        }
        let d = Dir::open(t.path()).unwrap();
        let mut buf = Vec::new();
        assert!(matches!(
            d.read_file(OsStr::new("fifo"), &mut buf),
            Err(FileFault::NotAFile)
        ));
    }
}
