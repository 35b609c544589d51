//! Getting bytes: reading files into reused buffers, memory-mapping large
//! ones, and the size limit.
//!
//! # Read or map
//!
//! Event files are small (in the shared corpus 122 B to 28 KB, median
//! 685 B). For those, `open` + `fstat` + `read`
//! into a buffer the caller reuses is measurably cheaper than
//! `mmap` + page faults + `munmap`, so small files are read. Files of
//! [`MMAP_THRESHOLD`] bytes and more are memory-mapped when the caller says
//! the file is written once and never rewritten in place ([`Mode::MapLarge`]):
//! a file truncated by another process under a live map raises `SIGBUS`, so
//! `base_state.json`, `meta.json` and OC Chat files, which their writers
//! rewrite, are always read ([`Mode::Read`]).
//!
//! The threshold is measured on this project's 2-core machine (Linux 6.18,
//! ext4, warm page cache) by the `source` criterion bench: time per file,
//! `read_into` a reused buffer against open + map + touch one byte of every
//! 4 KiB page + unmap, paired samples, medians of two runs (the full tables
//! and the command are in `benches/README.md`):
//!
//! | size | read | map | map / read |
//! |---|---|---|---|
//! | 4 KiB | 3.4–3.7 µs | 8.6–11.6 µs | 2.6–3.2 |
//! | 16 KiB | 4.3–4.9 µs | 9.7–11.5 µs | 2.0–2.7 |
//! | 64 KiB | 5.1–6.4 µs | 10.6–13.2 µs | 1.7–2.6 |
//! | 128 KiB | 7.9–9.1 µs | 15.2–19.2 µs | 1.7–2.5 |
//! | 256 KiB | 11.4–16.1 µs | 11.9–12.3 µs | 0.8–1.0 |
//! | 512 KiB | 21.7–29.7 µs | 17.5–20.6 µs | 0.7–0.8 |
//! | 1 MiB | 72–97 µs | 33–40 µs | 0.4–0.5 |
//! | 4 MiB | 451–484 µs | 24–27 µs | 0.05–0.06 |
//!
//! Mapping costs a roughly fixed 9–20 µs (map, faults, unmap), reading
//! grows with the copy; they meet at about 256 KiB, so [`MMAP_THRESHOLD`]
//! is 256 KiB. (Large files map cheaply because the kernel maps page-cache
//! folios larger than a page per fault.) Event files are therefore always
//! read.
//!
//! A file over [`MAX_SIZE`] is refused from its `fstat` size before any of it
//! is read; a file that grows past the limit while being read is refused as
//! well. An empty file is [`SourceError::Empty`]. A path that is not a
//! regular file (a directory, a FIFO, a device, a link to one) is
//! [`SourceError::NotAFile`], found before it is opened: opening a FIFO
//! would wait for a writer forever.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

pub(crate) mod dir;
#[doc(hidden)]
pub mod opens;

/// The largest file any reader here reads: 1 GiB. A larger file is refused
/// rather than read into memory.
pub const MAX_SIZE: u64 = 1 << 30;

/// Files of at least this many bytes (256 KiB) are memory-mapped under
/// [`Mode::MapLarge`] (measured: see the module docs).
pub const MMAP_THRESHOLD: u64 = 256 << 10;

/// Why a file's bytes could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The file could not be opened, examined or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_SIZE`].
    #[error("{}: file of {size} bytes is over the {MAX_SIZE}-byte limit", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes (at least; it may have been growing).
        size: u64,
    },
    /// The file would take the reader past its budget: reading it would
    /// make what one conversation holds more than the reader allows
    /// ([`Reader::set_event_budget`](crate::openhands::Reader::set_event_budget)).
    #[error("{}: file of {size} bytes is over the {left} bytes left of the reader's budget for one conversation", path.display())]
    OverBudget {
        /// The file.
        path: PathBuf,
        /// Its size in bytes (at least; it may have been growing).
        size: u64,
        /// The bytes the budget had left.
        left: u64,
    },
    /// The file is empty.
    #[error("{}: empty file", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The path is not a regular file (a directory, a socket...).
    #[error("{}: not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
}

impl SourceError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            SourceError::Io { path, .. }
            | SourceError::TooLarge { path, .. }
            | SourceError::OverBudget { path, .. }
            | SourceError::Empty { path }
            | SourceError::NotAFile { path } => path,
        }
    }

    fn io(path: &Path, source: std::io::Error) -> Self {
        SourceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// How a file may be brought into memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Always read into memory (files that may be rewritten in place).
    #[default]
    Read,
    /// Map files of [`MMAP_THRESHOLD`] bytes and more (files written once).
    MapLarge,
}

/// A file's bytes: read into memory or mapped.
#[derive(Debug)]
pub enum Bytes {
    /// Read into an owned buffer.
    Owned(Vec<u8>),
    /// Memory-mapped (read-only).
    Mapped(Mmap),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

fn open_checked(path: &Path) -> Result<(File, u64), SourceError> {
    // Look before opening: opening a FIFO (or a link to one) for reading
    // blocks until a writer comes, which a hostile store never sends, and
    // opening a device can act (a watchdog starts counting). `O_NONBLOCK`
    // would save this `stat` (one system call per file) for
    // FIFOs but still open devices. The type is checked again on the open
    // file, so a swap in between is caught, unless it swaps in a FIFO or a
    // device (that race is left).
    let meta = std::fs::metadata(path).map_err(|e| SourceError::io(path, e))?;
    if !meta.is_file() {
        return Err(SourceError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    opens::file();
    let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    let meta = file.metadata().map_err(|e| SourceError::io(path, e))?;
    if !meta.is_file() {
        return Err(SourceError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let size = meta.len();
    if size > MAX_SIZE {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            size,
        });
    }
    Ok((file, size))
}

/// Reads the whole file, appending it to `buf`; returns how many bytes were
/// appended. `buf` keeps its allocation from call to call, so reading many
/// small files costs no allocation once it has grown. On error `buf` is
/// left as it was.
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<usize, SourceError> {
    let (file, size) = open_checked(path)?;
    read_open_into(path, file, size, buf)
}

/// Like [`read_into`] for a file already open, whose `fstat` size the
/// caller has checked against [`MAX_SIZE`].
///
/// The file is read with one `read` of its `fstat` size plus one byte: a
/// read that stops short at that size is the end of the file, so the
/// usual probe read for end-of-file is skipped (a read that stops short of
/// it, or a file that grew, is read on until `read` gives 0).
pub(crate) fn read_open_into(
    path: &Path,
    mut file: File,
    size: u64,
    buf: &mut Vec<u8>,
) -> Result<usize, SourceError> {
    let start = buf.len();
    match fill(&mut file, size, buf) {
        Ok(()) => {}
        Err(Fill::Io(e)) => {
            buf.truncate(start);
            return Err(SourceError::io(path, e));
        }
        Err(Fill::TooLarge(n)) => {
            buf.truncate(start);
            return Err(SourceError::TooLarge {
                path: path.to_path_buf(),
                size: n,
            });
        }
    }
    let n = buf.len() - start;
    if n == 0 {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(n)
}

/// A read this large reserves exactly what it needs ([`fill_max`]).
const BIG_READ: u64 = 1 << 20;

/// Why [`fill`] stopped.
pub(crate) enum Fill {
    Io(std::io::Error),
    /// At least this many bytes: over the limit.
    TooLarge(u64),
}

/// Appends what `reader` gives up to its end to `buf`, expecting `size`
/// bytes (see [`read_open_into`]); at most [`MAX_SIZE`] + 1 bytes are read.
/// On error `buf` may hold part of the file past its former length.
pub(crate) fn fill(reader: &mut impl Read, size: u64, buf: &mut Vec<u8>) -> Result<(), Fill> {
    fill_max(&mut Zeroed(reader), size, MAX_SIZE, buf)
}

/// What [`fill_max`] reads from: bytes appended to a buffer.
pub(crate) trait ReadAppend {
    /// Reads at most `want` bytes onto the end of `buf` (growing it as
    /// needed) and gives how many: 0 at the end of the file. On error
    /// `buf` is as it was.
    fn read_append(&mut self, buf: &mut Vec<u8>, want: usize) -> std::io::Result<usize>;
}

/// A [`Read`] as a [`ReadAppend`]: the room is zeroed before each read
/// (the standard library reads only into initialised bytes).
pub(crate) struct Zeroed<R>(pub(crate) R);

impl<R: Read> ReadAppend for Zeroed<R> {
    fn read_append(&mut self, buf: &mut Vec<u8>, want: usize) -> std::io::Result<usize> {
        let filled = buf.len();
        buf.resize(filled + want, 0);
        let got = match buf.get_mut(filled..) {
            Some(dst) => self.0.read(dst),
            None => Ok(0),
        };
        match got {
            Ok(n) => {
                buf.truncate(filled + n.min(want));
                Ok(n.min(want))
            }
            Err(e) => {
                buf.truncate(filled);
                Err(e)
            }
        }
    }
}

/// [`fill`] with a limit of `max` bytes (at most [`MAX_SIZE`]): at most
/// `max` + 1 bytes are read, and more than `max` is [`Fill::TooLarge`].
pub(crate) fn fill_max(
    reader: &mut impl ReadAppend,
    size: u64,
    max: u64,
    buf: &mut Vec<u8>,
) -> Result<(), Fill> {
    let max = max.min(MAX_SIZE);
    let start = buf.len();
    let limit = max + 1;
    let mut want = size.min(max) + 1;
    loop {
        let filled = buf.len();
        let total = (filled - start) as u64;
        want = want.min(limit - total).max(1);
        // A large file is given room for itself alone, not a doubling of
        // everything read before it (which would hold up to twice the
        // bytes read); small files grow the buffer as usual.
        if want >= BIG_READ && buf.capacity() - filled < want as usize {
            buf.reserve_exact(want as usize);
        }
        match reader.read_append(buf, want as usize) {
            Ok(n) => {
                let total = total + n as u64;
                if total > max {
                    return Err(Fill::TooLarge(total));
                }
                if n == 0 || ((n as u64) < want && total == size) {
                    return Ok(());
                }
                // Short of the expected size: read the rest; grown past
                // it: read on in growing steps.
                want = if (n as u64) < want {
                    want - n as u64
                } else {
                    total.max(8192)
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Fill::Io(e)),
        }
    }
}

/// Brings a whole file into memory: mapped when `mode` allows it and the
/// file is at least [`MMAP_THRESHOLD`] bytes, read otherwise.
pub fn load(path: &Path, mode: Mode) -> Result<Bytes, SourceError> {
    let (file, size) = open_checked(path)?;
    if mode == Mode::MapLarge && size >= MMAP_THRESHOLD {
        // SAFETY: the caller promises (by `Mode::MapLarge`) that the file is
        // written once and never truncated or rewritten in place, which is
        // what keeps the map's pages valid for its life.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| SourceError::io(path, e))?;
        if map.is_empty() {
            return Err(SourceError::Empty {
                path: path.to_path_buf(),
            });
        }
        return Ok(Bytes::Mapped(map));
    }
    let mut buf = Vec::new();
    read_open_into(path, file, size, &mut buf)?;
    Ok(Bytes::Owned(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// Gives `data` in reads of at most `step` bytes, failing once with
    /// `Interrupted` first.
    struct Chunky<'a> {
        data: &'a [u8],
        step: usize,
        interrupted: bool,
        reads: usize,
    }

    impl Read for Chunky<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if !self.interrupted {
                self.interrupted = true;
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn run(data: &[u8], size: u64, step: usize) -> (Vec<u8>, usize) {
        let mut r = Chunky {
            data,
            step,
            interrupted: false,
            reads: 0,
        };
        let mut buf = b"prefix".to_vec();
        assert!(fill(&mut r, size, &mut buf).is_ok());
        assert_eq!(&buf[..6], b"prefix");
        (buf[6..].to_vec(), r.reads)
    }

    #[test]
    fn fill_reads_once_at_the_known_size() {
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        // One interrupted read, then one read of the whole file.
        let (got, reads) = run(&data, 5000, usize::MAX);
        assert!(got == data);
        assert_eq!(reads, 2);
    }

    #[test]
    fn fill_reads_on_after_short_reads_and_growth() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        // Short reads before the known size: read to the end.
        assert!(run(&data, 5000, 1000).0 == data);
        // The file shrank: stops at the end.
        assert!(run(&data, 9000, 1000).0 == data);
        // The file grew after fstat, or fstat said 0 (/proc): all of it.
        assert!(run(&data, 100, usize::MAX).0 == data);
        assert!(run(&data, 0, 700).0 == data);
        assert_eq!(run(&[], 0, 700).0, Vec::<u8>::new());
    }

    #[test]
    fn read_into_reads_files_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        let data: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let mut buf = b"x".to_vec();
        assert_eq!(read_into(&p, &mut buf).unwrap(), data.len());
        assert_eq!(&buf[1..], &data[..]);
        std::fs::write(&p, b"").unwrap();
        assert!(matches!(
            read_into(&p, &mut buf),
            Err(SourceError::Empty { .. })
        ));
        assert_eq!(buf.len(), 1 + data.len());
        assert!(matches!(
            read_into(dir.path(), &mut buf),
            Err(SourceError::NotAFile { .. })
        ));
    }
}
