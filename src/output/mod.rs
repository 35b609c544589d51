//! Writing to an output path a user gave (`-o PATH`, an export's
//! `filepath`): the path is written as what it is.
//!
//! [`OutputPath::classify`] looks at the path without changing anything
//! (`lstat`, then each symbolic link of the chain in turn) and says how it
//! will be written ([`OutputKind`]); [`OutputPath::open`] opens it and
//! [`Output::commit`] completes the write:
//!
//! - **`-`** is standard output (a file of that name is `./-`).
//! - **A regular file, or nothing yet,** is replaced atomically: the bytes go
//!   to a new temporary file in the same directory, which is flushed
//!   (`fsync`) and renamed over the name by [`Output::commit`]; the
//!   directory is flushed after. A replaced file's permission bits (`0o777`)
//!   and, where the process may set them, its owner and group are kept.
//!   Readers see the old file or the new one, never a part; an output
//!   dropped without a commit removes its temporary file and leaves the old
//!   file as it was. A command writing many files into one directory can
//!   flush that directory once, after the last rename
//!   ([`Output::commit_into`], [`DirSync`]), or also make the data of many
//!   files durable together before their renames ([`Batch`]: one `syncfs`
//!   where the kernel reports write-back errors through it, each file's
//!   bytes still durable before its rename).
//! - **A symbolic link** is followed to the end of its chain: the file it
//!   leads to is what gets replaced (written beside that final target, in
//!   its directory), and the link stays the link it was. A link that leads
//!   nowhere yet creates the file it names, as a shell's `>` does. A link
//!   to a device, FIFO or socket writes to that node in place.
//! - **Anything else** — a character or block device, a FIFO, a socket, a
//!   terminal, `/dev/stdout`, `/proc/self/fd/N` — is opened and written in
//!   place: opened for writing without `O_CREAT` or `O_TRUNC` (a node that
//!   vanished is an error, never a new regular file), never renamed over,
//!   never removed, never truncated. Opening a FIFO waits for a reader,
//!   as a shell's redirection does. A socket is connected to
//!   (`SOCK_STREAM`). A `/proc/<this process>/fd/N` link (also reached as
//!   `/dev/stdout`, `/dev/fd/N`) writes to descriptor N itself, sharing its
//!   offset, as writing to standard output does.
//! - **A directory**, a path ending in `/`, a path whose parent does not
//!   exist or is not a directory, or a chain of more than 40 links: an
//!   [`OutputError`] naming the path, and nothing written.
//!
//! # A file the tool names
//!
//! The rules above are for a path the user named for the bytes. A file the
//! tool itself names or owns — an entry it names in a directory the user
//! gave (`asf convert -o OUT_DIR`'s `<session>.jsonl`), a checkpoint —
//! is classified by [`OutputPath::classify_entry`] instead: it is the
//! regular file at that very path, created in that path's directory. A
//! regular file there, or nothing yet, is replaced atomically as above; a
//! symbolic link there (dangling or not) is *replaced by* the new regular
//! file, its target left as it was — never written through, so a link
//! planted in the directory cannot lead the write anywhere outside it; a
//! directory is [`OutputError::IsDirectory`], and a device, FIFO or socket
//! [`OutputError::NotAFile`], nothing written. The directory's own path may
//! go through links: it is the user's.
//!
//! # Directories the tool creates
//!
//! Directories the tool creates inside a directory the user gave (a
//! Parquet dataset's `_agentlog/`, its table and partition directories)
//! are made by [`create_dir_inside`], and looked for by [`dir_inside`]:
//! each component under the user's directory is a real directory, or is
//! created as one; a symbolic link there, dangling or not, is
//! [`OutputError::Link`] and nothing is created past it, so a link planted
//! in the directory cannot lead a write outside it. As above, the user's
//! directory itself may be reached through links.
//!
//! Before opening, a caller can refuse an output that would replace one of
//! its inputs ([`OutputPath::refuse_input`], by file identity: device and
//! inode, links followed) or a file under a directory it must not write
//! into by name ([`OutputPath::under`]).

mod batch;
mod dirsync;
mod open;

pub use batch::Batch;
pub use dirsync::DirSync;
pub use open::Output;

/// What the name of every temporary file an [`Output`] makes holds: it is
/// `.<target's name, at most 100 characters>.agentlog-tmp-<pid>-<n>`,
/// beside the target.
pub(crate) const TEMPORARY_MARK: &str = ".agentlog-tmp-";

/// Whether `name` (a file name, no directory) is one an [`Output`] gives
/// its temporary file: what a killed write leaves beside its target. A
/// writer that holds its directory's lock may remove such files.
pub fn is_temporary_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMPORARY_MARK)
}

use dirsync::sync_dir;

use std::ffi::OsString;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most symbolic links followed from one output path (Linux's
/// `MAXSYMLINKS`).
pub const MAX_LINKS: usize = 40;

/// A file's identity: its device and inode numbers. Two paths with the same
/// identity are the same file (hard links, symbolic links, bind mounts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device the file is on (`st_dev`).
    pub dev: u64,
    /// The inode number (`st_ino`).
    pub ino: u64,
}

impl FileId {
    /// The identity of what `path` names, symbolic links followed.
    pub fn of(path: &Path) -> io::Result<FileId> {
        fs::metadata(path).map(|m| FileId::from_metadata(&m))
    }

    /// The identity `meta` describes.
    pub fn from_metadata(meta: &Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// What kind of node an in-place output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Node {
    /// A character device (a terminal, a null device).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A FIFO (named pipe), or a pipe reached through `/proc/…/fd/N`.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A regular file reached through an open descriptor
    /// (`/proc/…/fd/N`, `/dev/stdout`): written at the descriptor's offset,
    /// not replaced.
    OpenFile,
}

impl Node {
    fn of(meta: &Metadata) -> Option<Node> {
        let t = meta.file_type();
        if t.is_char_device() {
            Some(Node::CharDevice)
        } else if t.is_block_device() {
            Some(Node::BlockDevice)
        } else if t.is_fifo() {
            Some(Node::Fifo)
        } else if t.is_socket() {
            Some(Node::Socket)
        } else {
            None
        }
    }

    /// A short name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Node::CharDevice => "character device",
            Node::BlockDevice => "block device",
            Node::Fifo => "FIFO",
            Node::Socket => "socket",
            Node::OpenFile => "open file",
        }
    }
}

/// How an output path is written (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputKind {
    /// `-`: standard output.
    Stdout,
    /// A regular file or nothing yet: a temporary file renamed over the
    /// destination by [`Output::commit`].
    Replace,
    /// A node written in place.
    InPlace(Node),
}

/// Why an output path cannot be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The path names a directory (or ends in `/`).
    #[error("{}: is a directory; give a file name", path.display())]
    IsDirectory {
        /// The path as given (or the link target that is a directory).
        path: PathBuf,
    },
    /// The directory the file would be in does not exist.
    #[error("{}: the directory {} does not exist; nothing written", path.display(), parent.display())]
    NoParent {
        /// The path the file would have.
        path: PathBuf,
        /// Its missing directory.
        parent: PathBuf,
    },
    /// A component of the path is not a directory.
    #[error("{}: {} is not a directory; nothing written", path.display(), parent.display())]
    ParentNotDirectory {
        /// The path the file would have.
        path: PathBuf,
        /// The component that is not a directory.
        parent: PathBuf,
    },
    /// More than [`MAX_LINKS`] symbolic links, or a loop of them.
    #[error("{}: more than {MAX_LINKS} symbolic links (a loop?); nothing written", path.display())]
    LinkLoop {
        /// The path as given.
        path: PathBuf,
    },
    /// A symbolic link (dangling or not) where a directory or file the
    /// tool creates inside a directory the user gave would be
    /// ([`create_dir_inside`], [`dir_inside`]): never followed.
    #[error("{}: a symbolic link where the tool's own directory or file would be; links are not followed out of the directory given (remove the link); nothing written", path.display())]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// The output would replace a file the caller must not write: one of
    /// its inputs, or a record of a store.
    #[error("{}: refused as output: it is {what} ({}); nothing written", path.display(), conflict.display())]
    Refused {
        /// The output path as given.
        path: PathBuf,
        /// What it is, in words ("one of the inputs", "a record of the
        /// store").
        what: &'static str,
        /// The input or record it is.
        conflict: PathBuf,
    },
    /// A file the tool names ([`OutputPath::classify_entry`]) is a
    /// device, FIFO or socket: never written in place, never replaced.
    #[error("{}: a {} where the file would go; nothing written", path.display(), node.as_str())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there.
        node: Node,
    },
    /// The node changed kind between the look and the write (a device
    /// swapped for a regular file, or the reverse).
    #[error("{}: changed while it was being opened or written ({}); nothing replaced", path.display(), detail)]
    Changed {
        /// The path.
        path: PathBuf,
        /// What was seen.
        detail: &'static str,
    },
    /// A file-system operation failed.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    /// The operating system's error, for an [`OutputError::Io`].
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            OutputError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io_err(op: &'static str, path: &Path, source: io::Error) -> OutputError {
    OutputError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// An output path, looked at but not yet touched (see the module docs).
#[derive(Debug, Clone)]
pub struct OutputPath {
    given: PathBuf,
    kind: OutputKind,
    /// Where the bytes land: the end of the link chain (the given path for
    /// standard output).
    dest: PathBuf,
    /// What is at `dest` now (links followed), if anything.
    existing: Option<Existing>,
    /// A descriptor of this process a `/proc/<pid>/fd/N` link names.
    descriptor: Option<i32>,
    /// A symbolic link at `dest` is replaced, not followed
    /// ([`OutputPath::classify_entry`]).
    entry: bool,
}

#[derive(Debug, Clone, Copy)]
struct Existing {
    id: FileId,
    rdev: u64,
    mode: u32,
    uid: u32,
    gid: u32,
}

impl Existing {
    fn of(m: &Metadata) -> Existing {
        Existing {
            id: FileId::from_metadata(m),
            rdev: m.rdev(),
            mode: m.mode(),
            uid: m.uid(),
            gid: m.gid(),
        }
    }
}

/// The directory a path is in (`.` for a bare name).
fn parent_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether `link` is a link of the process file system (`/proc/…/fd/N`,
/// whose "target" is an open file, not a path to follow), and if it is one
/// of this process's descriptors, which.
fn proc_link(link: &Path) -> Option<Option<i32>> {
    let dir = fs::canonicalize(parent_of(link)).ok()?;
    if !dir.starts_with("/proc") {
        return None;
    }
    let fd = link
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse::<i32>().ok());
    let pid = std::process::id().to_string();
    let own = {
        let mut c = dir.components().skip(1);
        let proc_ = c.next().map(|c| c.as_os_str().to_owned());
        let p = c.next().map(|c| c.as_os_str().to_owned());
        let rest: Vec<OsString> = c.map(|c| c.as_os_str().to_owned()).collect();
        proc_.as_deref() == Some("proc".as_ref())
            && p.as_deref() == Some(pid.as_ref())
            && (rest == [OsString::from("fd")]
                || (rest.len() == 3
                    && rest.first().is_some_and(|s| s == "task")
                    && rest.get(2).is_some_and(|s| s == "fd")))
    };
    Some(if own { fd } else { None })
}

impl OutputPath {
    /// Looks at `path` (nothing is created or changed) and says how it will
    /// be written; an error for a directory, a missing or non-directory
    /// parent, a link loop, or a path that cannot be examined.
    pub fn classify(path: &Path) -> Result<OutputPath, OutputError> {
        let given = path.to_path_buf();
        if path.as_os_str() == "-" {
            return Ok(OutputPath {
                dest: given.clone(),
                given,
                kind: OutputKind::Stdout,
                existing: None,
                descriptor: None,
                entry: false,
            });
        }
        if path.as_os_str().is_empty() {
            return Err(io_err(
                "output path",
                path,
                io::Error::new(ErrorKind::InvalidInput, "empty path"),
            ));
        }
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(OutputError::IsDirectory { path: given });
        }
        let mut cur = given.clone();
        let mut hops = 0;
        loop {
            let meta = match fs::symlink_metadata(&cur) {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Self::new_file(given, cur);
                }
                Err(e) if e.kind() == ErrorKind::NotADirectory => {
                    return Err(OutputError::ParentNotDirectory {
                        parent: parent_of(&cur),
                        path: cur,
                    });
                }
                Err(e) => return Err(io_err("examine", &cur, e)),
            };
            let t = meta.file_type();
            if t.is_symlink() {
                hops += 1;
                if hops > MAX_LINKS {
                    return Err(OutputError::LinkLoop { path: given });
                }
                if let Some(descriptor) = proc_link(&cur) {
                    return Self::proc_file(given, cur, descriptor);
                }
                let to = fs::read_link(&cur).map_err(|e| io_err("read link", &cur, e))?;
                cur = if to.is_absolute() {
                    to
                } else {
                    parent_of(&cur).join(to)
                };
                continue;
            }
            if t.is_dir() {
                return Err(OutputError::IsDirectory { path: cur });
            }
            let existing = Some(Existing::of(&meta));
            let kind = match Node::of(&meta) {
                Some(node) => OutputKind::InPlace(node),
                None => OutputKind::Replace,
            };
            return Ok(OutputPath {
                given,
                kind,
                dest: cur,
                existing,
                descriptor: None,
                entry: false,
            });
        }
    }

    /// Looks at `path`, a file the tool names or owns (see the [module
    /// docs](self#a-file-the-tool-names)): the regular file at `path`
    /// itself, a symbolic link there replaced rather than followed. An
    /// error for a directory, a device, FIFO or socket, or a missing or
    /// non-directory parent; nothing is created or changed.
    pub fn classify_entry(path: &Path) -> Result<OutputPath, OutputError> {
        let given = path.to_path_buf();
        if path.as_os_str().is_empty() || path.as_os_str() == "-" {
            return Err(io_err(
                "output path",
                path,
                io::Error::new(ErrorKind::InvalidInput, "not a file name"),
            ));
        }
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(OutputError::IsDirectory { path: given });
        }
        let meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let mut o = Self::new_file(given.clone(), given)?;
                o.entry = true;
                return Ok(o);
            }
            Err(e) if e.kind() == ErrorKind::NotADirectory => {
                return Err(OutputError::ParentNotDirectory {
                    parent: parent_of(path),
                    path: given,
                });
            }
            Err(e) => return Err(io_err("examine", path, e)),
        };
        let t = meta.file_type();
        if t.is_dir() {
            return Err(OutputError::IsDirectory { path: given });
        }
        if let Some(node) = Node::of(&meta) {
            return Err(OutputError::NotAFile { path: given, node });
        }
        Ok(OutputPath {
            dest: given.clone(),
            given,
            kind: OutputKind::Replace,
            // A link replaced passes nothing on (its target's permissions
            // are not its); a regular file replaced keeps its own.
            existing: (!t.is_symlink()).then(|| Existing::of(&meta)),
            descriptor: None,
            entry: true,
        })
    }

    /// Nothing at `dest` yet: its directory must exist.
    fn new_file(given: PathBuf, dest: PathBuf) -> Result<OutputPath, OutputError> {
        let parent = parent_of(&dest);
        match fs::metadata(&parent) {
            Ok(m) if m.is_dir() => Ok(OutputPath {
                given,
                kind: OutputKind::Replace,
                dest,
                existing: None,
                descriptor: None,
                entry: false,
            }),
            Ok(_) => Err(OutputError::ParentNotDirectory { path: dest, parent }),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                Err(OutputError::NoParent { path: dest, parent })
            }
            Err(e) if e.kind() == ErrorKind::NotADirectory => {
                Err(OutputError::ParentNotDirectory { path: dest, parent })
            }
            Err(e) => Err(io_err("examine", &parent, e)),
        }
    }

    /// A `/proc/…/fd/N` link: written in place, whatever it refers to.
    fn proc_file(
        given: PathBuf,
        link: PathBuf,
        descriptor: Option<i32>,
    ) -> Result<OutputPath, OutputError> {
        let meta = fs::metadata(&link).map_err(|e| io_err("examine", &link, e))?;
        if meta.is_dir() {
            return Err(OutputError::IsDirectory { path: link });
        }
        let node = Node::of(&meta).unwrap_or(Node::OpenFile);
        Ok(OutputPath {
            given,
            kind: OutputKind::InPlace(node),
            dest: link,
            existing: Some(Existing::of(&meta)),
            descriptor,
            entry: false,
        })
    }

    /// The path as given.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// Where the bytes land: the end of the link chain (the given path for
    /// standard output).
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// How the path will be written.
    pub fn kind(&self) -> OutputKind {
        self.kind
    }

    /// The identity of the file the output would replace: the existing
    /// regular file at [`dest`](Self::dest). `None` for a new file,
    /// standard output and in-place nodes (which replace nothing).
    pub fn replaces(&self) -> Option<FileId> {
        match self.kind {
            OutputKind::Replace => self.existing.map(|e| e.id),
            _ => None,
        }
    }

    /// An [`OutputError::Refused`] when the output would replace `input`
    /// (same device and inode, links followed): a caller checks each file
    /// it reads. An input that cannot be examined is not the output.
    pub fn refuse_input(&self, input: &Path) -> Result<(), OutputError> {
        refuse(&self.given, self.replaces(), input)
    }

    /// When the output would replace or create a file at or under `root`
    /// (by the identity of `root` against each directory above the
    /// destination, so links and bind mounts are seen through): the
    /// destination's path relative to `root`. `None` when it is not under
    /// `root`, when `root` does not exist, and for standard output and
    /// in-place nodes.
    pub fn under(&self, root: &Path) -> Option<PathBuf> {
        if self.kind != OutputKind::Replace {
            return None;
        }
        let root_id = FileId::of(root).ok()?;
        let name = self.dest.file_name()?;
        let dir = fs::canonicalize(parent_of(&self.dest)).ok()?;
        for anc in dir.ancestors() {
            if FileId::of(anc).ok() == Some(root_id) {
                let rel = dir.strip_prefix(anc).ok()?;
                return Some(rel.join(name));
            }
        }
        None
    }
}

/// Makes `root/rel` a directory inside `root` (see the [module
/// docs](self#directories-the-tool-creates)): each component of `rel` in
/// turn is a directory already, or is created; a symbolic link among them,
/// dangling or not, is [`OutputError::Link`], anything else not a
/// directory [`OutputError::ParentNotDirectory`], and nothing is created
/// past it. `root` itself may be reached through links (it is the
/// user's) and must be a directory; `rel` is names only (no `..`, not
/// absolute). Returns `root/rel`.
pub fn create_dir_inside(root: &Path, rel: &Path) -> Result<PathBuf, OutputError> {
    walk_inside(root, rel, true).map(|p| p.unwrap_or_else(|| root.join(rel)))
}

/// [`create_dir_inside`] creating nothing: whether `root/rel` is a
/// directory inside `root` (`false`: it, or a directory above it under
/// `root`, does not exist); the same errors for a link or a non-directory
/// on the way.
pub fn dir_inside(root: &Path, rel: &Path) -> Result<bool, OutputError> {
    walk_inside(root, rel, false).map(|p| p.is_some())
}

/// The walk of [`create_dir_inside`] and [`dir_inside`]: `None` when a
/// component is missing and `create` is false.
fn walk_inside(root: &Path, rel: &Path, create: bool) -> Result<Option<PathBuf>, OutputError> {
    let target = root.join(rel);
    match fs::metadata(root) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(OutputError::ParentNotDirectory {
                path: target,
                parent: root.to_path_buf(),
            });
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(OutputError::NoParent {
                path: target,
                parent: root.to_path_buf(),
            });
        }
        Err(e) => return Err(io_err("examine", root, e)),
    }
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            return Err(io_err(
                "create directory",
                &target,
                io::Error::new(ErrorKind::InvalidInput, "not a name inside the directory"),
            ));
        };
        cur.push(name);
        // Twice at most: a directory created by another process between
        // the look and the creation is looked at again.
        let mut tries = 0;
        loop {
            match fs::symlink_metadata(&cur) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(OutputError::Link { path: cur });
                }
                Ok(m) if m.is_dir() => break,
                Ok(_) => {
                    return Err(OutputError::ParentNotDirectory {
                        path: target,
                        parent: cur,
                    });
                }
                Err(e) if e.kind() == ErrorKind::NotFound && !create => return Ok(None),
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    // `mkdir` follows no link: a link planted since the
                    // look makes it fail (it exists), and is seen next.
                    match fs::create_dir(&cur) {
                        Ok(()) => break,
                        Err(e) if e.kind() == ErrorKind::AlreadyExists && tries == 0 => {
                            tries += 1;
                        }
                        Err(e) => return Err(io_err("create directory", &cur, e)),
                    }
                }
                Err(e) => return Err(io_err("examine", &cur, e)),
            }
        }
    }
    Ok(Some(cur))
}

fn refuse(given: &Path, replaces: Option<FileId>, input: &Path) -> Result<(), OutputError> {
    match replaces {
        Some(id) if FileId::of(input).ok() == Some(id) => Err(OutputError::Refused {
            path: given.to_path_buf(),
            what: "one of the inputs",
            conflict: input.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_is_stdout_and_dot_slash_dash_a_file() {
        assert_eq!(
            OutputPath::classify(Path::new("-")).unwrap().kind(),
            OutputKind::Stdout
        );
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("-");
        assert_eq!(
            OutputPath::classify(&p).unwrap().kind(),
            OutputKind::Replace
        );
    }

    #[test]
    fn trailing_slash_and_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("new/");
        assert!(matches!(
            OutputPath::classify(&p),
            Err(OutputError::IsDirectory { .. })
        ));
        assert!(OutputPath::classify(Path::new("")).is_err());
    }

    #[test]
    fn link_loop() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(matches!(
            OutputPath::classify(&a),
            Err(OutputError::LinkLoop { .. })
        ));
    }

    #[test]
    fn dirs_inside_are_created_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let made = create_dir_inside(&root, Path::new("a/b")).unwrap();
        assert!(fs::symlink_metadata(&made).unwrap().is_dir());
        assert!(dir_inside(&root, Path::new("a/b")).unwrap());
        assert!(!dir_inside(&root, Path::new("a/c")).unwrap());
        // A link to a directory outside, and a dangling one.
        std::os::unix::fs::symlink(&outside, root.join("l")).unwrap();
        std::os::unix::fs::symlink(outside.join("new"), root.join("d")).unwrap();
        for rel in ["l", "l/x", "d", "d/x"] {
            assert!(
                matches!(
                    create_dir_inside(&root, Path::new(rel)),
                    Err(OutputError::Link { .. })
                ),
                "{rel}"
            );
            assert!(matches!(
                dir_inside(&root, Path::new(rel)),
                Err(OutputError::Link { .. })
            ));
        }
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert!(create_dir_inside(&root, Path::new("../x")).is_err());
        // The root itself may be a link: it is the user's.
        std::os::unix::fs::symlink(&root, tmp.path().join("alias")).unwrap();
        assert!(create_dir_inside(&tmp.path().join("alias"), Path::new("a/e")).is_ok());
        assert!(root.join("a/e").is_dir());
    }

    #[test]
    fn under_sees_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("s")).unwrap();
        std::os::unix::fs::symlink(root.join("s"), tmp.path().join("alias")).unwrap();
        let o = OutputPath::classify(&tmp.path().join("alias/x_meta.json")).unwrap();
        assert_eq!(o.under(&root), Some(PathBuf::from("s/x_meta.json")));
        let o = OutputPath::classify(&tmp.path().join("elsewhere.md")).unwrap();
        assert_eq!(o.under(&root), None);
    }
}
