//! Output paths are written as what they are, by every writer of one: the
//! library's `agentlog::output::Output` (committed alone, into a
//! `DirSync` that flushes the directories after, or into a `Batch` that
//! flushes the files' data together before their renames), `occhat::SessionStore::export_markdown`
//! and `export_html` with a given path, and (with the `cli` feature) the
//! command's `export --jsonl -o` and `occhat export-md -o`.
//!
//! Every node is made here, in a temporary directory (never the machine's
//! own `/dev/null`): a null character device (`mknod`, root only: skipped
//! with a printed reason otherwise), a FIFO with a reader that must get the
//! whole output, a Unix socket with a listener, symbolic links to each, a
//! directory, a missing parent. After each write the node is still the
//! same kind of node, with the same inode and device numbers.
//!
//! Outputs that are the writer's own inputs or records of an OC Chat store
//! are refused, with nothing changed.

use crate::common::occhat as occhat_support;

use std::ffi::CString;
use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt, symlink};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use agentlog::occhat::{ChatSession, SaveError, SessionStore};
use agentlog::output::{Batch, DirSync, Output, OutputError, OutputKind, OutputPath};

// ---------------------------------------------------------------- nodes

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// A null character device (1, 3) at `p`, or why one cannot be made and
/// used here.
fn make_null_device(p: &Path) -> Result<(), String> {
    let c = cpath(p);
    // SAFETY: a valid NUL-terminated path.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if r != 0 {
        return Err(format!("mknod: {}", io::Error::last_os_error()));
    }
    // A file system mounted `nodev` refuses to open it.
    OpenOptions::new()
        .write(true)
        .open(p)
        .map(drop)
        .map_err(|e| format!("opening a device node here: {e}"))
}

fn make_fifo(p: &Path) {
    let c = cpath(p);
    // SAFETY: a valid NUL-terminated path.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(r, 0, "mkfifo: {}", io::Error::last_os_error());
}

/// What a node is, to compare before and after a write.
#[derive(Debug, PartialEq, Eq)]
struct NodeState {
    kind: &'static str,
    ino: u64,
    rdev: u64,
    mode: u32,
}

fn node_state(p: &Path) -> NodeState {
    let m = fs::symlink_metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let t = m.file_type();
    let kind = if t.is_char_device() {
        "char"
    } else if t.is_block_device() {
        "block"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "dir"
    } else {
        "file"
    };
    NodeState {
        kind,
        ino: m.ino(),
        rdev: m.rdev(),
        mode: m.mode(),
    }
}

/// A reader of a FIFO: everything written until the last writer closes.
struct FifoReader {
    path: PathBuf,
    thread: Option<JoinHandle<Vec<u8>>>,
}

impl FifoReader {
    fn start(path: &Path) -> FifoReader {
        let p = path.to_path_buf();
        let thread = std::thread::spawn(move || {
            let mut f = fs::File::open(&p).unwrap();
            let mut buf = Vec::new();
            f.read_to_end(&mut buf).unwrap();
            buf
        });
        FifoReader {
            path: path.to_path_buf(),
            thread: Some(thread),
        }
    }

    /// What the reader got. A writer that never opened the FIFO would
    /// leave the reader waiting: open and close it once (non-blocking) so
    /// the test fails rather than hangs.
    fn finish(mut self) -> Vec<u8> {
        let _ = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.path);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// A listener on a Unix socket: what one connection sends.
struct SocketReader {
    path: PathBuf,
    thread: Option<JoinHandle<Vec<u8>>>,
}

impl SocketReader {
    fn start(path: &Path) -> SocketReader {
        let l = UnixListener::bind(path).unwrap();
        let thread = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = Vec::new();
            s.read_to_end(&mut buf).unwrap();
            buf
        });
        SocketReader {
            path: path.to_path_buf(),
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> Vec<u8> {
        // Unblocks `accept` if the writer never connected (then the test
        // fails on the bytes instead of hanging).
        let _ = UnixStream::connect(&self.path);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

// -------------------------------------------------------------- writers

/// Something that writes an output path.
trait Writer {
    /// Its name, for messages.
    fn name(&self) -> String;
    /// Writes to `path`: `Err` with the error text on failure.
    fn write(&self, path: &Path) -> Result<(), String>;
    /// The bytes it writes (as [`Writer::normalize`] leaves them).
    fn expected(&self) -> Vec<u8>;
    /// What of the bytes is compared (a time stamp taken out).
    fn normalize(&self, b: &[u8]) -> Vec<u8> {
        b.to_vec()
    }
}

/// `Output::create`, a write, a commit.
struct LibOutput(Vec<u8>);

impl Writer for LibOutput {
    fn name(&self) -> String {
        "agentlog::output::Output".into()
    }
    fn write(&self, path: &Path) -> Result<(), String> {
        let mut o = Output::create(path).map_err(|e| e.to_string())?;
        io::Write::write_all(&mut o, &self.0).map_err(|e| e.to_string())?;
        o.commit().map_err(|e| e.to_string())
    }
    fn expected(&self) -> Vec<u8> {
        self.0.clone()
    }
}

/// `Output::create`, a write, `Output::commit_into` a `DirSync`, then its
/// `finish`.
struct LibOutputBatched(Vec<u8>);

impl Writer for LibOutputBatched {
    fn name(&self) -> String {
        "agentlog::output::Output::commit_into".into()
    }
    fn write(&self, path: &Path) -> Result<(), String> {
        let mut pending = DirSync::new();
        let mut o = Output::create(path).map_err(|e| e.to_string())?;
        io::Write::write_all(&mut o, &self.0).map_err(|e| e.to_string())?;
        o.commit_into(&mut pending).map_err(|e| e.to_string())?;
        pending.finish().map_err(|e| e.to_string())
    }
    fn expected(&self) -> Vec<u8> {
        self.0.clone()
    }
}

/// `Output::create`, a write, `Batch::add`, then `Batch::finish`: a
/// replacement waits for the batch's flush, any other output is written at
/// once.
struct LibOutputBatch(Vec<u8>);

impl Writer for LibOutputBatch {
    fn name(&self) -> String {
        "agentlog::output::Batch".into()
    }
    fn write(&self, path: &Path) -> Result<(), String> {
        let mut batch = Batch::new();
        let mut o = Output::create(path).map_err(|e| e.to_string())?;
        io::Write::write_all(&mut o, &self.0).map_err(|e| e.to_string())?;
        batch.add(o).map_err(|e| e.to_string())?;
        batch.finish().map(drop).map_err(|e| e.to_string())
    }
    fn expected(&self) -> Vec<u8> {
        self.0.clone()
    }
}

/// The OC Chat exports the library writes to a given path.
#[derive(Clone, Copy, Debug)]
enum Export {
    Markdown,
    #[cfg(feature = "html")]
    Html,
}

/// Every export this build has.
const EXPORTS: &[Export] = &[
    Export::Markdown,
    #[cfg(feature = "html")]
    Export::Html,
];

impl Export {
    /// `SessionStore::export_markdown` or `SessionStore::export_html` to `path`.
    fn write(
        self,
        store: &SessionStore,
        session: &ChatSession,
        path: Option<&Path>,
    ) -> Result<PathBuf, SaveError> {
        match self {
            Export::Markdown => store.export_markdown(session, path),
            #[cfg(feature = "html")]
            Export::Html => store.export_html(session, path),
        }
    }
}

/// An OC Chat export with a given path (fixed clock: the bytes are known).
struct LibExport {
    store: SessionStore,
    session: ChatSession,
    kind: Export,
}

impl Writer for LibExport {
    fn name(&self) -> String {
        match self.kind {
            Export::Markdown => "SessionStore::export_markdown".into(),
            #[cfg(feature = "html")]
            Export::Html => "SessionStore::export_html".into(),
        }
    }
    fn write(&self, path: &Path) -> Result<(), String> {
        match self.kind.write(&self.store, &self.session, Some(path)) {
            Ok(p) => {
                assert_eq!(p, path);
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    }
    fn expected(&self) -> Vec<u8> {
        match self.kind {
            Export::Markdown => {
                let tmp = tempfile::tempdir().unwrap();
                let p = tmp.path().join("expected.md");
                self.store.export_markdown(&self.session, Some(&p)).unwrap();
                fs::read(p).unwrap()
            }
            #[cfg(feature = "html")]
            Export::Html => agentlog::occhat::render_html(&self.session).into_bytes(),
        }
    }
}

/// The test's own data: an OpenHands store (one corpus conversation,
/// copied) and an OC Chat store (a corpus case, restored).
struct Fixture {
    tmp: tempfile::TempDir,
    // What the command writes (with the `cli` feature).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    openhands: PathBuf,
    occhat: occhat_support::Case,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let openhands = tmp.path().join("openhands");
        let conv = "34624de77210456e9b948ac4f2bd80d1";
        let src = occhat_support::corpus()
            .parent()
            .unwrap()
            .join("openhands/1.0.0/chat")
            .join(conv);
        let dst = openhands.join(conv);
        fs::create_dir_all(dst.join("events")).unwrap();
        fs::copy(src.join("base_state.json"), dst.join("base_state.json")).unwrap();
        for e in fs::read_dir(src.join("events")).unwrap().flatten() {
            fs::copy(e.path(), dst.join("events").join(e.file_name())).unwrap();
        }
        Fixture {
            tmp,
            openhands,
            occhat: occhat_support::restore("sample_basic"),
        }
    }

    /// A fresh directory for one case's nodes.
    fn work(&self, case: &str) -> PathBuf {
        let d = self.tmp.path().join("work").join(case);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn store(&self) -> SessionStore {
        occhat_support::store_at(self.occhat.sessions(), 1_744_016_143_000_000_000).0
    }

    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    fn event_file(&self) -> PathBuf {
        let conv = fs::read_dir(&self.openhands)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        let mut events: Vec<PathBuf> = fs::read_dir(conv.join("events"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        events.sort();
        events.swap_remove(2)
    }

    fn writers(&self) -> Vec<Box<dyn Writer>> {
        // Larger than a pipe's buffer: the FIFO reader must get it all.
        let big: Vec<u8> = (0..300_000u32)
            .map(|i| b"output\n"[i as usize % 7])
            .collect();
        let store = self.store();
        let session = store.load_session("weekly-report").unwrap();
        let mut v: Vec<Box<dyn Writer>> = vec![
            Box::new(LibOutput(big.clone())),
            Box::new(LibOutputBatched(big.clone())),
            Box::new(LibOutputBatch(big)),
        ];
        for &kind in EXPORTS {
            v.push(Box::new(LibExport {
                store: store.clone(),
                session: session.clone(),
                kind,
            }));
        }
        #[cfg(feature = "cli")]
        {
            v.push(Box::new(cli::Export(self.openhands.clone())));
            v.push(Box::new(cli::ExportMd(self.occhat.sessions())));
        }
        v
    }
}

// ---------------------------------------------------------------- cases

fn check_bytes(w: &dyn Writer, got: &[u8], what: &str) {
    let (got, want) = (w.normalize(got), w.normalize(&w.expected()));
    assert!(
        got == want,
        "{}: {what}: {} bytes, expected {}",
        w.name(),
        got.len(),
        want.len()
    );
}

/// A new file, and an existing one (its mode kept, replaced atomically:
/// another inode, no temporary file left).
fn regular_files(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("regular-{i}"));
    let new = d.join("new.out");
    w.write(&new).unwrap();
    check_bytes(w, &fs::read(&new).unwrap(), "a new file");
    let old = d.join("old.out");
    fs::write(&old, b"the old bytes").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    let before = node_state(&old);
    w.write(&old).unwrap();
    check_bytes(w, &fs::read(&old).unwrap(), "a replaced file");
    let after = node_state(&old);
    assert_eq!(after.kind, "file");
    assert_eq!(after.mode & 0o7777, 0o640, "{}: mode kept", w.name());
    assert_ne!(
        after.ino,
        before.ino,
        "{}: replaced, not rewritten",
        w.name()
    );
    assert_eq!(
        names(&d),
        ["new.out", "old.out"],
        "{}: no temporary file",
        w.name()
    );
}

/// Links to a file (relative, and a chain of two): the link stays a link
/// to the same target, the target holds the output with its mode kept.
fn links_to_files(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("links-{i}"));
    fs::create_dir(d.join("real")).unwrap();
    let target = d.join("real/target.out");
    fs::write(&target, b"old").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o604)).unwrap();
    symlink("real/target.out", d.join("link")).unwrap();
    symlink("link", d.join("link2")).unwrap();
    for l in ["link", "link2"] {
        let link = d.join(l);
        let was = fs::read_link(&link).unwrap();
        w.write(&link).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{}: {l} is still a link",
            w.name()
        );
        assert_eq!(fs::read_link(&link).unwrap(), was);
        check_bytes(w, &fs::read(&target).unwrap(), "the link's target");
        assert_eq!(node_state(&target).mode & 0o7777, 0o604);
        // The temporary file was beside the target, and is gone.
        assert_eq!(names(&d.join("real")), ["target.out"]);
    }
    assert_eq!(names(&d), ["link", "link2", "real"]);
    // A link to nothing yet: the file it names is created.
    symlink("real/fresh.out", d.join("dangling")).unwrap();
    w.write(&d.join("dangling")).unwrap();
    check_bytes(
        w,
        &fs::read(d.join("real/fresh.out")).unwrap(),
        "a new target",
    );
    assert!(
        fs::symlink_metadata(d.join("dangling"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A null device, directly and through a link: written in place, still the
/// same device.
fn devices(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("dev-{i}"));
    let dev = d.join("null");
    if let Err(why) = make_null_device(&dev) {
        crate::common::skip_unless_ci(&format!("the device cases of {}", w.name()), &why);
        return;
    }
    symlink("null", d.join("to-null")).unwrap();
    let before = node_state(&dev);
    assert_eq!((before.kind, before.rdev), ("char", libc::makedev(1, 3)));
    for p in ["null", "to-null"] {
        w.write(&d.join(p)).unwrap();
        assert_eq!(node_state(&dev), before, "{}: via {p}", w.name());
    }
    assert!(
        fs::symlink_metadata(d.join("to-null"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        names(&d),
        ["null", "to-null"],
        "{}: nothing beside",
        w.name()
    );
}

/// A FIFO, directly and through a link: the reader gets every byte, the
/// FIFO stays.
fn fifos(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("fifo-{i}"));
    let fifo = d.join("pipe");
    make_fifo(&fifo);
    symlink(&fifo, d.join("to-pipe")).unwrap();
    let before = node_state(&fifo);
    for p in ["pipe", "to-pipe"] {
        let reader = FifoReader::start(&fifo);
        let r = w.write(&d.join(p));
        let got = reader.finish();
        r.unwrap();
        check_bytes(w, &got, &format!("the FIFO's reader via {p}"));
        assert_eq!(node_state(&fifo), before);
    }
    assert_eq!(names(&d), ["pipe", "to-pipe"]);
}

/// A Unix socket: connected to, the listener gets every byte.
fn sockets(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("sock-{i}"));
    let sock = d.join("s");
    let reader = SocketReader::start(&sock);
    let before = node_state(&sock);
    let r = w.write(&sock);
    let got = reader.finish();
    r.unwrap();
    check_bytes(w, &got, "the socket's listener");
    assert_eq!(node_state(&sock), before);
}

/// A directory (also through a link, and as `name/`), a missing parent, a
/// parent that is a file: a clear error, nothing written or created.
fn refused_shapes(f: &Fixture, w: &dyn Writer, i: usize) {
    let d = f.work(&format!("shapes-{i}"));
    fs::create_dir(d.join("dir")).unwrap();
    symlink("dir", d.join("to-dir")).unwrap();
    fs::write(d.join("file"), b"x").unwrap();
    for (p, needle) in [
        ("dir", "is a directory"),
        ("to-dir", "is a directory"),
        ("new/", "is a directory"),
        ("missing/out", "does not exist"),
        ("file/out", "not a directory"),
    ] {
        let err = w
            .write(&d.join(p))
            .expect_err(&format!("{}: {p} must fail", w.name()));
        assert!(err.contains(needle), "{}: {p}: {err}", w.name());
        assert!(!err.trim_end().contains('\n'), "one line: {err}");
    }
    assert_eq!(names(&d), ["dir", "file", "to-dir"], "{}", w.name());
    assert!(names(&d.join("dir")).is_empty());
    assert_eq!(fs::read(d.join("file")).unwrap(), b"x");
}

#[test]
fn every_writer_writes_every_kind_of_target_as_what_it_is() {
    let f = Fixture::new();
    for (i, w) in f.writers().iter().enumerate() {
        let w = w.as_ref();
        regular_files(&f, w, i);
        links_to_files(&f, w, i);
        devices(&f, w, i);
        fifos(&f, w, i);
        sockets(&f, w, i);
        refused_shapes(&f, w, i);
    }
}

/// A `DirSync` holds each directory a replacement was renamed into once
/// (the final target's, through links), nothing for a node written in
/// place; each file is complete at its name as soon as it is committed,
/// and a directory that is gone by the flush is an error naming it.
#[test]
fn dir_sync_flushes_each_replaced_files_directory_once() {
    let f = Fixture::new();
    let d = f.work("dir-sync");
    fs::create_dir_all(d.join("a")).unwrap();
    fs::create_dir_all(d.join("b")).unwrap();
    fs::write(d.join("a/old"), b"old").unwrap();
    symlink("../b/real", d.join("a/link")).unwrap();
    make_fifo(&d.join("a/pipe"));
    let reader = FifoReader::start(&d.join("a/pipe"));

    let mut pending = DirSync::new();
    let write = |name: &str, bytes: &[u8], pending: &mut DirSync| {
        let mut o = Output::create(&d.join(name)).unwrap();
        io::Write::write_all(&mut o, bytes).unwrap();
        o.commit_into(pending).unwrap();
    };
    write("a/old", b"new", &mut pending);
    assert_eq!(fs::read(d.join("a/old")).unwrap(), b"new");
    write("a/fresh", b"fresh", &mut pending);
    write("a/pipe", b"through the pipe", &mut pending);
    write("a/link", b"linked", &mut pending);
    write("a/fresh", b"fresh again", &mut pending);
    // The link's directory as the link chain spells it.
    let flushed: Vec<PathBuf> = pending
        .pending()
        .iter()
        .map(|p| fs::canonicalize(p).unwrap())
        .collect();
    let canon = fs::canonicalize(&d).unwrap();
    assert_eq!(flushed, [canon.join("a"), canon.join("b")]);
    assert_eq!(reader.finish(), b"through the pipe");
    assert_eq!(fs::read(d.join("b/real")).unwrap(), b"linked");
    assert!(fs::symlink_metadata(d.join("a/link")).unwrap().is_symlink());
    assert_eq!(fs::read(d.join("a/fresh")).unwrap(), b"fresh again");
    assert_eq!(names(&d.join("a")), ["fresh", "link", "old", "pipe"]);
    pending.finish().unwrap();

    // The directory removed between the rename and the flush.
    fs::create_dir_all(d.join("c")).unwrap();
    let mut pending = DirSync::new();
    let mut o = Output::create(&d.join("c/x")).unwrap();
    io::Write::write_all(&mut o, b"x").unwrap();
    o.commit_into(&mut pending).unwrap();
    fs::remove_dir_all(d.join("c")).unwrap();
    let err = pending.finish().unwrap_err();
    assert!(
        matches!(&err, OutputError::Io { op: "fsync directory", path, .. } if *path == d.join("c")),
        "{err}"
    );
}

#[test]
fn classification() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_eq!(
        OutputPath::classify(Path::new("-")).unwrap().kind(),
        OutputKind::Stdout
    );
    let fifo = d.join("p");
    make_fifo(&fifo);
    let o = OutputPath::classify(&fifo).unwrap();
    assert!(matches!(o.kind(), OutputKind::InPlace(_)));
    assert_eq!(o.replaces(), None, "an in-place node replaces nothing");
    fs::write(d.join("f"), b"x").unwrap();
    symlink("f", d.join("l")).unwrap();
    let o = OutputPath::classify(&d.join("l")).unwrap();
    assert_eq!(o.kind(), OutputKind::Replace);
    assert_eq!(o.dest(), d.join("f"));
    assert_eq!(
        o.replaces(),
        Some(agentlog::output::FileId::of(&d.join("f")).unwrap())
    );
    // Classifying changes nothing; an output dropped unfinished leaves the
    // old file and no temporary file.
    let mut out = o.open().unwrap();
    io::Write::write_all(&mut out, b"partial").unwrap();
    drop(out);
    assert_eq!(fs::read(d.join("f")).unwrap(), b"x");
    assert_eq!(names(d), ["f", "l", "p"]);
    // An input is refused by identity: through a link, and a hard link.
    fs::hard_link(d.join("f"), d.join("h")).unwrap();
    let o = OutputPath::classify(&d.join("h")).unwrap();
    let e = o.refuse_input(&d.join("l")).unwrap_err();
    assert!(matches!(e, OutputError::Refused { .. }), "{e}");
    assert!(o.refuse_input(&d.join("p")).is_ok());
}

/// `/proc/self/fd/N` is this process's descriptor N, written in place
/// (here a regular file opened for appending: the bytes are appended at
/// its offset, the file is not replaced).
#[test]
fn own_descriptor_is_written_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("log");
    fs::write(&p, b"before\n").unwrap();
    let f = OpenOptions::new().append(true).open(&p).unwrap();
    let ino = node_state(&p).ino;
    use std::os::fd::AsRawFd;
    let link = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
    let o = OutputPath::classify(&link).unwrap();
    assert!(matches!(o.kind(), OutputKind::InPlace(_)), "{:?}", o.kind());
    let mut out = o.open().unwrap();
    io::Write::write_all(&mut out, b"after\n").unwrap();
    out.commit().unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"before\nafter\n");
    assert_eq!(node_state(&p).ino, ino);
    drop(f);
}

/// A descriptor of this process that is a socket: written through the
/// descriptor itself (a socket path would be connected to instead).
#[test]
fn own_socket_descriptor_is_written_in_place() {
    use std::os::fd::AsRawFd;
    let (a, mut b) = UnixStream::pair().unwrap();
    let link = PathBuf::from(format!("/proc/self/fd/{}", a.as_raw_fd()));
    let o = OutputPath::classify(&link).unwrap();
    assert!(matches!(o.kind(), OutputKind::InPlace(_)), "{:?}", o.kind());
    let mut out = o.open().unwrap();
    io::Write::write_all(&mut out, b"through the descriptor").unwrap();
    out.commit().unwrap();
    drop(a);
    let mut got = Vec::new();
    b.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"through the descriptor");
}

// ------------------------------------------------- records of the store

#[test]
fn occhat_exports_refuse_store_records() {
    let f = Fixture::new();
    let sessions = f.occhat.sessions();
    let store = f.store();
    let session = store.load_session("weekly-report").unwrap();
    let live = store.load_session_metadata("weekly-report").unwrap().path;
    let sdir = live.parent().unwrap().to_path_buf();
    let log = fs::read_dir(&sdir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("_chat_log.json"))
        .unwrap();
    let archived = fs::read_dir(sessions.join("archive/weekly-report"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let outside = f.work("outside");
    symlink(&log, outside.join("to-log")).unwrap();
    symlink(&sdir, outside.join("to-session")).unwrap();
    let before = occhat_support::tree(&sessions);
    let refused = [
        live.clone(),
        log.clone(),
        archived,
        outside.join("to-log"),
        outside.join("to-session/new_meta.json"),
        sdir.join("weekly-report_2030-01-01--00-00-00_chat_log.json"),
        sessions.join("archive/weekly-report/notes.md"),
        sessions.join(".oc_chat_clean_exit"),
    ];
    for p in &refused {
        for &kind in EXPORTS {
            match kind.write(&store, &session, Some(p)) {
                Err(SaveError::Output(OutputError::Refused { .. })) => {}
                other => panic!("{} ({kind:?}): {other:?}", p.display()),
            }
            assert_eq!(occhat_support::tree(&sessions), before, "{}", p.display());
        }
    }
    // Not a record: written.
    let notes = sdir.join("notes.md");
    store.export_markdown(&session, Some(&notes)).unwrap();
    assert!(
        fs::read_to_string(&notes)
            .unwrap()
            .starts_with("# Chat Export")
    );
}

#[cfg(feature = "cli")]
mod cli {
    //! The command's writers of output paths, and its refusals.
    use super::*;
    use std::process::{Command, Output as Run, Stdio};

    pub fn bin() -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
        c.stdin(Stdio::null());
        c.env_remove("OC_CHAT_SESSIONS_DIR");
        c.env("TZ", "UTC");
        c
    }

    pub fn run(args: &[&std::ffi::OsStr]) -> Run {
        let out = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        out
    }

    fn result(out: Run) -> Result<(), String> {
        if out.status.success() {
            assert!(
                out.stderr.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Ok(())
        } else {
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(err.lines().count(), 1, "{err}");
            Err(err)
        }
    }

    /// `agentlog export --jsonl STORE -o PATH`.
    pub struct Export(pub PathBuf);

    impl Writer for Export {
        fn name(&self) -> String {
            "agentlog export --jsonl -o".into()
        }
        fn write(&self, path: &Path) -> Result<(), String> {
            let out = run(&[
                "export".as_ref(),
                "--jsonl".as_ref(),
                self.0.as_os_str(),
                "-o".as_ref(),
                path.as_os_str(),
            ]);
            assert!(out.stdout.is_empty());
            result(out)
        }
        fn expected(&self) -> Vec<u8> {
            let out = run(&["export".as_ref(), "--jsonl".as_ref(), self.0.as_os_str()]);
            assert!(out.status.success());
            assert!(!out.stdout.is_empty());
            out.stdout
        }
    }

    /// `agentlog occhat --sessions-dir S export-md weekly-report -o PATH`.
    pub struct ExportMd(pub PathBuf);

    impl ExportMd {
        fn args<'a>(&'a self, path: &'a Path) -> Vec<&'a std::ffi::OsStr> {
            vec![
                "occhat".as_ref(),
                "--sessions-dir".as_ref(),
                self.0.as_os_str(),
                "export-md".as_ref(),
                "weekly-report".as_ref(),
                "-o".as_ref(),
                path.as_os_str(),
            ]
        }
    }

    impl Writer for ExportMd {
        fn name(&self) -> String {
            "agentlog occhat export-md -o".into()
        }
        fn write(&self, path: &Path) -> Result<(), String> {
            let out = run(&self.args(path));
            if out.status.success() {
                let want = format!("[Exported to {}]\n", path.display());
                assert_eq!(String::from_utf8_lossy(&out.stdout), want);
            }
            result(out)
        }
        fn expected(&self) -> Vec<u8> {
            let out = run(&self.args(Path::new("-")));
            assert!(out.status.success());
            out.stdout
        }
        /// The export's time stamp line differs from run to run.
        fn normalize(&self, b: &[u8]) -> Vec<u8> {
            String::from_utf8_lossy(b)
                .lines()
                .filter(|l| !l.starts_with("**Exported:**"))
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes()
        }
    }

    #[test]
    fn dash_is_standard_output_everywhere() {
        let f = Fixture::new();
        let cwd = f.work("dash");
        for w in [
            Box::new(Export(f.openhands.clone())) as Box<dyn Writer>,
            Box::new(ExportMd(f.occhat.sessions())),
        ] {
            let args: Vec<std::ffi::OsString> = if w.name().contains("export-md") {
                ["occhat", "--sessions-dir"]
                    .iter()
                    .map(Into::into)
                    .chain([f.occhat.sessions().into_os_string()])
                    .chain(
                        ["export-md", "weekly-report", "-o", "-"]
                            .iter()
                            .map(Into::into),
                    )
                    .collect()
            } else {
                ["export", "--jsonl"]
                    .iter()
                    .map(Into::into)
                    .chain([f.openhands.clone().into_os_string()])
                    .chain(["-o", "-"].iter().map(Into::into))
                    .collect()
            };
            let out = bin().args(&args).current_dir(&cwd).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            check_bytes(w.as_ref(), &out.stdout, "standard output");
            if w.name().contains("export-md") {
                assert!(out.stdout.starts_with(b"# Chat Export"));
            }
            assert!(names(&cwd).is_empty(), "{}: no file named -", w.name());
        }
    }

    /// `/dev/stdout`, `/dev/fd/1` and `/proc/self/fd/1` are the command's
    /// standard output: a pipe gets the bytes; a regular file opened for
    /// appending gets them appended, and is not replaced.
    #[test]
    fn dev_stdout_is_written_in_place() {
        let f = Fixture::new();
        let w = Export(f.openhands.clone());
        let want = w.expected();
        for p in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            let out = run(&[
                "export".as_ref(),
                "--jsonl".as_ref(),
                f.openhands.as_os_str(),
                "-o".as_ref(),
                p.as_ref(),
            ]);
            assert!(
                out.status.success(),
                "{p}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.stdout == want, "{p}: {} bytes", out.stdout.len());
            let d = f.work("stdout-file");
            let log = d.join("log");
            fs::write(&log, b"before\n").unwrap();
            let ino = node_state(&log).ino;
            let file = OpenOptions::new().append(true).open(&log).unwrap();
            let st = bin()
                .args(["export", "--jsonl"])
                .arg(&f.openhands)
                .args(["-o", p])
                .stdout(file)
                .status()
                .unwrap();
            assert!(st.success());
            let mut all = b"before\n".to_vec();
            all.extend_from_slice(&want);
            assert!(fs::read(&log).unwrap() == all, "{p}: appended in place");
            assert_eq!(node_state(&log).ino, ino, "{p}: not replaced");
            assert_eq!(names(&d), ["log"]);
            fs::remove_file(&log).unwrap();
        }
    }

    /// `export -o` one of its own inputs: refused, status 2, the store
    /// unchanged.
    #[test]
    fn export_refuses_its_inputs() {
        let f = Fixture::new();
        let event = f.event_file();
        let conv = event.parent().unwrap().parent().unwrap().to_path_buf();
        let outside = f.work("outside");
        symlink(&event, outside.join("to-event")).unwrap();
        fs::hard_link(&event, outside.join("event-link")).unwrap();
        let before = occhat_support::tree(&f.openhands);
        let event_names = names(&conv.join("events"));
        for p in [
            event.clone(),
            conv.join("base_state.json"),
            outside.join("to-event"),
            outside.join("event-link"),
        ] {
            let out = run(&[
                "export".as_ref(),
                "--jsonl".as_ref(),
                f.openhands.as_os_str(),
                "-o".as_ref(),
                p.as_os_str(),
            ]);
            let err = result(out).expect_err("refused");
            assert!(err.contains("refused"), "{err}");
            assert_eq!(
                occhat_support::tree(&f.openhands),
                before,
                "{}",
                p.display()
            );
            assert_eq!(names(&outside), ["event-link", "to-event"]);
            assert_eq!(
                names(&conv.join("events")),
                event_names,
                "no temporary file"
            );
        }
        // The conversation directory given itself (not the store): same.
        let out = run(&[
            "export".as_ref(),
            "--jsonl".as_ref(),
            conv.as_os_str(),
            "-o".as_ref(),
            event.as_os_str(),
        ]);
        assert!(result(out).unwrap_err().contains("one of the inputs"));
        assert_eq!(occhat_support::tree(&f.openhands), before);
    }

    /// `occhat export-md -o` a live chat log, a meta or an archived record:
    /// refused, status 2, the store unchanged.
    #[test]
    fn export_md_refuses_store_records() {
        let f = Fixture::new();
        let sessions = f.occhat.sessions();
        let sdir = sessions.join("weekly-report");
        let before = occhat_support::tree(&sessions);
        let w = ExportMd(sessions.clone());
        let mut targets: Vec<PathBuf> = fs::read_dir(&sdir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        targets.extend(
            fs::read_dir(sessions.join("archive/weekly-report"))
                .unwrap()
                .flatten()
                .map(|e| e.path()),
        );
        assert!(targets.len() >= 4, "{targets:?}");
        for p in &targets {
            let err = w.write(p).expect_err("refused");
            assert!(err.contains("refused") && err.contains("record"), "{err}");
            assert_eq!(occhat_support::tree(&sessions), before, "{}", p.display());
        }
    }
}
