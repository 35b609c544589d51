//! Opening an output and committing it: a device, FIFO or standard output
//! written in place; a regular file written to a temporary file beside it,
//! renamed over it on commit, removed if dropped uncommitted.

use super::*;

impl OutputPath {
    /// Opens the output for writing (see the module docs): the temporary
    /// file for a replacement, the node itself for an in-place output.
    pub fn open(self) -> Result<Output, OutputError> {
        let sink = match self.kind {
            OutputKind::Stdout => OutputSink::Stdout(io::stdout()),
            OutputKind::Replace => self.open_temp()?,
            OutputKind::InPlace(Node::Socket) if self.descriptor.is_none() => OutputSink::Socket(
                UnixStream::connect(&self.dest).map_err(|e| io_err("connect", &self.dest, e))?,
            ),
            OutputKind::InPlace(node) => self.open_in_place(node)?,
        };
        Ok(Output {
            given: self.given,
            replaces: match self.kind {
                OutputKind::Replace => self.existing.map(|e| e.id),
                _ => None,
            },
            sink,
            written: 0,
        })
    }

    fn open_in_place(&self, node: Node) -> Result<OutputSink, OutputError> {
        let file = match self.descriptor.and_then(dup_descriptor) {
            Some(f) => f,
            None => OpenOptions::new()
                .write(true)
                .custom_flags(nix_flags::O_NOCTTY)
                .open(&self.dest)
                .map_err(|e| io_err("open", &self.dest, e))?,
        };
        // The node opened must be the node looked at: a regular file
        // swapped in is not written in place.
        let m = file
            .metadata()
            .map_err(|e| io_err("examine", &self.dest, e))?;
        if let Some(e) = self.existing {
            let same_kind = match node {
                Node::OpenFile => m.is_file(),
                _ => Node::of(&m) == Some(node) && m.rdev() == e.rdev,
            };
            if !same_kind {
                return Err(OutputError::Changed {
                    path: self.dest.clone(),
                    detail: "another kind of node after opening",
                });
            }
        }
        Ok(OutputSink::InPlace {
            file,
            regular: m.is_file(),
            path: self.dest.clone(),
        })
    }

    fn open_temp(&self) -> Result<OutputSink, OutputError> {
        let dir = parent_of(&self.dest);
        let name = self
            .dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A temporary name short enough for any file system.
        let short: String = name.chars().take(100).collect();
        let mut attempt = 0;
        loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(
                ".{short}{TEMPORARY_MARK}{}-{n}",
                std::process::id()
            ));
            let mut o = OpenOptions::new();
            o.write(true).create_new(true);
            // Replacing a file: the temporary file is private until it has
            // the old file's permissions; a new file gets the usual
            // 0o666 less the umask.
            o.mode(if self.existing.is_some() {
                0o600
            } else {
                0o666
            });
            match o.open(&tmp) {
                Ok(file) => {
                    if let Some(e) = self.existing {
                        // Best effort for the owner: only root may give a
                        // file away.
                        let _ = std::os::unix::fs::fchown(&file, Some(e.uid), Some(e.gid));
                        if let Err(err) =
                            file.set_permissions(fs::Permissions::from_mode(e.mode & 0o777))
                        {
                            let _ = fs::remove_file(&tmp);
                            return Err(io_err("set permissions", &tmp, err));
                        }
                    }
                    return Ok(OutputSink::Replace {
                        file,
                        tmp,
                        dest: self.dest.clone(),
                        done: false,
                        entry: self.entry,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(e) => return Err(io_err("create temporary file", &tmp, e)),
            }
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Open flags not in the standard library.
mod nix_flags {
    /// Opening a terminal does not make it the controlling terminal.
    #[cfg(target_os = "linux")]
    pub const O_NOCTTY: i32 = libc::O_NOCTTY;
    #[cfg(not(target_os = "linux"))]
    pub const O_NOCTTY: i32 = 0;
}

/// A duplicate of this process's descriptor `fd`, if it is open.
#[cfg(target_os = "linux")]
fn dup_descriptor(fd: i32) -> Option<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) on any integer is defined: it fails
    // with EBADF for a descriptor that is not open.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return None;
    }
    // SAFETY: `new` is a descriptor this call just made and nothing else
    // owns.
    Some(unsafe { File::from_raw_fd(new) })
}

#[cfg(not(target_os = "linux"))]
fn dup_descriptor(_fd: i32) -> Option<File> {
    None
}

enum OutputSink {
    Stdout(io::Stdout),
    InPlace {
        file: File,
        regular: bool,
        path: PathBuf,
    },
    Socket(UnixStream),
    Replace {
        file: File,
        tmp: PathBuf,
        dest: PathBuf,
        done: bool,
        /// A link at `dest` is replaced ([`OutputPath::classify_entry`]).
        entry: bool,
    },
    /// A replacement handed to a [`super::Batch`].
    Staged,
}

/// An open output (see the module docs): write to it, then
/// [`commit`](Self::commit). Dropped without a commit, a replacement's
/// temporary file is removed and the old file stays; an in-place node keeps
/// what was written to it.
pub struct Output {
    given: PathBuf,
    replaces: Option<FileId>,
    sink: OutputSink,
    /// Bytes written.
    written: u64,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("path", &self.given)
            .field("replaces", &self.replaces)
            .finish_non_exhaustive()
    }
}

impl Output {
    /// [`OutputPath::classify`] then [`OutputPath::open`].
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        OutputPath::classify(path)?.open()
    }

    /// [`OutputPath::classify_entry`] then [`OutputPath::open`]: a file
    /// the tool names, a link at its path replaced, never followed.
    pub fn create_entry(path: &Path) -> Result<Output, OutputError> {
        OutputPath::classify_entry(path)?.open()
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// The identity of the file a commit replaces (see
    /// [`OutputPath::replaces`]).
    pub fn replaces(&self) -> Option<FileId> {
        self.replaces
    }

    /// [`OutputPath::refuse_input`], on the open output: an input found
    /// while writing. A refused output is then dropped, not committed.
    pub fn refuse_input(&self, input: &Path) -> Result<(), OutputError> {
        refuse(&self.given, self.replaces, input)
    }

    /// Completes the write: flushes, and for a replacement syncs the
    /// temporary file, renames it over the destination (unless a node
    /// other than a regular file has appeared there meanwhile) and syncs
    /// the directory; an in-place regular file is synced, a socket shut
    /// down for writing.
    pub fn commit(self) -> Result<(), OutputError> {
        match self.complete()? {
            Some(dir) => sync_dir(&dir),
            None => Ok(()),
        }
    }

    /// [`commit`](Self::commit), except that a replacement's directory is
    /// not flushed here but recorded in `dirs`, to be flushed once for all
    /// the files renamed into it ([`DirSync::finish`]). The replacement's
    /// bytes are flushed before its rename all the same.
    pub fn commit_into(self, dirs: &mut DirSync) -> Result<(), OutputError> {
        if let Some(dir) = self.complete()? {
            dirs.add(dir);
        }
        Ok(())
    }

    /// Everything a commit does but the directory's flush; the directory
    /// of a replacement made.
    fn complete(mut self) -> Result<Option<PathBuf>, OutputError> {
        let given = self.given.clone();
        match &mut self.sink {
            OutputSink::Stdout(s) => s
                .flush()
                .map(|()| None)
                .map_err(|e| io_err("write", &given, e)),
            OutputSink::Socket(s) => {
                s.flush().map_err(|e| io_err("write", &given, e))?;
                s.shutdown(std::net::Shutdown::Write)
                    .map(|()| None)
                    .map_err(|e| io_err("shut down", &given, e))
            }
            OutputSink::InPlace {
                file,
                regular,
                path,
            } => {
                file.flush().map_err(|e| io_err("write", path, e))?;
                if *regular {
                    file.sync_all().map_err(|e| io_err("fsync", path, e))?;
                }
                Ok(None)
            }
            OutputSink::Replace {
                file,
                tmp,
                dest,
                done,
                entry,
            } => {
                file.flush().map_err(|e| io_err("write", tmp, e))?;
                file.sync_all().map_err(|e| io_err("fsync", tmp, e))?;
                rename_into_place(tmp, dest, *entry)?;
                *done = true;
                Ok(Some(parent_of(dest)))
            }
            OutputSink::Staged => Err(staged_already(&given)),
        }
    }

    /// Whether the output is a replacement (a temporary file renamed over
    /// its destination on commit).
    pub(crate) fn is_replacement(&self) -> bool {
        matches!(self.sink, OutputSink::Replace { .. })
    }

    /// A replacement's temporary file, written and (with `sync`) flushed,
    /// handed over for a later rename ([`super::Batch`]); any other output
    /// is completed here (`None`).
    pub(crate) fn stage(mut self, sync: bool) -> Result<Option<Staged>, OutputError> {
        if !self.is_replacement() {
            return self.complete().map(|_| None);
        }
        let OutputSink::Replace {
            mut file,
            tmp,
            dest,
            done: false,
            entry,
        } = std::mem::replace(&mut self.sink, OutputSink::Staged)
        else {
            return Err(staged_already(&self.given));
        };
        // From here the staged file owns the temporary file: removed by
        // its `discard`, not by this output's drop.
        let staged = Staged {
            file: None,
            tmp,
            dest,
            entry,
            len: self.written,
        };
        if let Err(e) = file
            .flush()
            .and_then(|()| if sync { file.sync_all() } else { Ok(()) })
        {
            let err = io_err(if sync { "fsync" } else { "write" }, &staged.tmp, e);
            staged.discard();
            return Err(err);
        }
        Ok(Some(Staged {
            file: Some(file),
            ..staged
        }))
    }
}

fn staged_already(path: &Path) -> OutputError {
    io_err("write", path, handed_over())
}

/// Renames a replacement's temporary file over its destination, unless a
/// node other than a regular file (or, for a name the tool owns, a
/// symbolic link) has appeared there since the look.
pub(crate) fn rename_into_place(tmp: &Path, dest: &Path, entry: bool) -> Result<(), OutputError> {
    match fs::symlink_metadata(dest) {
        Ok(m) if entry && m.file_type().is_symlink() => {}
        Ok(m) if !m.is_file() => {
            return Err(OutputError::Changed {
                path: dest.to_path_buf(),
                detail: "no longer a regular file",
            });
        }
        _ => {}
    }
    fs::rename(tmp, dest).map_err(|e| io_err("rename", dest, e))
}

/// A replacement's temporary file waiting for its rename in a
/// [`super::Batch`]: complete, flushed or waiting for the batch's flush.
#[derive(Debug)]
pub(crate) struct Staged {
    /// The temporary file, while open.
    pub(crate) file: Option<File>,
    pub(crate) tmp: PathBuf,
    pub(crate) dest: PathBuf,
    /// A link at `dest` is replaced ([`OutputPath::classify_entry`]).
    pub(crate) entry: bool,
    /// Bytes written to it.
    pub(crate) len: u64,
}

impl Staged {
    /// The same, its file closed.
    pub(crate) fn closed(mut self) -> Staged {
        self.file = None;
        self
    }

    /// The same, its open file handed over.
    pub(crate) fn take_file(mut self) -> (Staged, Option<File>) {
        let f = self.file.take();
        (self, f)
    }

    /// Removes the temporary file (nothing renamed).
    pub(crate) fn discard(self) {
        let _ = fs::remove_file(&self.tmp);
    }
}

fn handed_over() -> io::Error {
    io::Error::other("the output was handed to a batch already")
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = match &mut self.sink {
            OutputSink::Stdout(s) => s.write(buf),
            OutputSink::InPlace { file, .. } | OutputSink::Replace { file, .. } => file.write(buf),
            OutputSink::Socket(s) => s.write(buf),
            OutputSink::Staged => Err(handed_over()),
        }?;
        self.written += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            OutputSink::Stdout(s) => s.write_all(buf),
            OutputSink::InPlace { file, .. } | OutputSink::Replace { file, .. } => {
                file.write_all(buf)
            }
            OutputSink::Socket(s) => s.write_all(buf),
            OutputSink::Staged => Err(handed_over()),
        }?;
        self.written += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            OutputSink::Stdout(s) => s.flush(),
            OutputSink::InPlace { file, .. } | OutputSink::Replace { file, .. } => file.flush(),
            OutputSink::Socket(s) => s.flush(),
            OutputSink::Staged => Err(handed_over()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let OutputSink::Replace {
            tmp, done: false, ..
        } = &self.sink
        {
            let _ = fs::remove_file(tmp);
        }
    }
}
