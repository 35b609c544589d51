//! Output: a buffered standard output (or file) whose write errors become
//! [`Fail`]s, a closed pipe told apart so that it ends the command quietly;
//! one-line messages on standard error; JSON helpers.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use agentlog::json::{Map, Number, OwnedValue, Style};

/// Why a command stopped.
#[derive(Debug)]
pub enum Fail {
    /// The reader of standard output went away: stop quietly, status 0.
    Pipe,
    /// A usage error or a path that cannot be read at all: the message is
    /// printed on one line, status 2.
    Fatal(String),
    /// What was asked for is missing or does not parse: status 1.
    Problem(String),
}

impl Fail {
    /// A write error: a closed pipe, or a fatal error naming `what`.
    pub fn write(e: io::Error, what: &str) -> Fail {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Fail::Pipe
        } else {
            Fail::Fatal(format!("{what}: {e}"))
        }
    }
}

/// What every command returns: its exit status, or why it stopped.
pub type Res<T> = Result<T, Fail>;

/// The exit status of a run: the worst thing that happened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Status(u8);

impl Status {
    /// Nothing wrong.
    pub const OK: Status = Status(0);
    /// Problems found (or a thing asked for is missing).
    pub const PROBLEMS: Status = Status(1);
    /// A path could not be read at all.
    pub const FATAL: Status = Status(2);

    /// Raises the status to at least `s`.
    pub fn raise(&mut self, s: Status) {
        if s > *self {
            *self = s;
        }
    }

    /// The exit code.
    pub fn code(self) -> u8 {
        self.0
    }
}

/// Prints `agentlog: error: MSG` on standard error (errors writing it are
/// ignored: there is nowhere left to report them).
pub fn error(msg: &str) {
    crate::progress::suspend(|| {
        let _ = writeln!(io::stderr().lock(), "agentlog: error: {}", one_line(msg));
    });
}

/// Prints `agentlog: warning: MSG` on standard error.
pub fn warn(msg: &str) {
    crate::progress::suspend(|| {
        let _ = writeln!(io::stderr().lock(), "agentlog: warning: {}", one_line(msg));
    });
}

/// `msg` with its line breaks replaced, so that every message is one line.
pub fn one_line(msg: &str) -> String {
    msg.replace(['\n', '\r'], " ")
}

/// Where output goes: standard output, or a file written beside its final
/// name and renamed into place when complete.
pub struct Out {
    w: BufWriter<Box<dyn Write>>,
    what: String,
    file: Option<(PathBuf, PathBuf)>,
}

impl Out {
    /// Buffered standard output.
    pub fn stdout() -> Out {
        Out {
            w: BufWriter::with_capacity(1 << 16, Box::new(io::stdout())),
            what: "standard output".into(),
            file: None,
        }
    }

    /// A file, written as a temporary file in the same directory and
    /// renamed over `path` by [`finish`](Self::finish): readers never see a
    /// partial file, and a failed run leaves the old one.
    pub fn file(path: &Path) -> Res<Out> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| Fail::Fatal(format!("{}: not a file name", path.display())))?;
        let tmp = dir.join(format!(".{name}.agentlog-tmp-{}", std::process::id()));
        let f = File::create(&tmp)
            .map_err(|e| Fail::Fatal(format!("{}: cannot create: {e}", tmp.display())))?;
        Ok(Out {
            w: BufWriter::with_capacity(1 << 18, Box::new(f)),
            what: path.display().to_string(),
            file: Some((tmp, path.to_path_buf())),
        })
    }

    /// Writes bytes.
    pub fn bytes(&mut self, b: &[u8]) -> Res<()> {
        self.w.write_all(b).map_err(|e| Fail::write(e, &self.what))
    }

    /// Writes a string and a line break.
    pub fn line(&mut self, s: &str) -> Res<()> {
        self.bytes(s.as_bytes())?;
        self.bytes(b"\n")
    }

    /// Writes a value as compact JSON on one line.
    pub fn json_line(&mut self, v: &OwnedValue) -> Res<()> {
        let mut buf = Vec::with_capacity(256);
        v.write_to(&mut buf, Style::COMPACT);
        buf.push(b'\n');
        self.bytes(&buf)
    }

    /// Writes a value as JSON indented by two spaces, and a line break.
    pub fn json_pretty(&mut self, v: &OwnedValue) -> Res<()> {
        let mut buf = Vec::with_capacity(1024);
        v.write_to(&mut buf, Style::INDENT2_UNICODE);
        buf.push(b'\n');
        self.bytes(&buf)
    }

    /// Flushes standard output (a file is completed by
    /// [`finish`](Self::finish)).
    pub fn flush(&mut self) -> Res<()> {
        self.w.flush().map_err(|e| Fail::write(e, &self.what))
    }

    /// Flushes, and for a file syncs it and renames it into place.
    pub fn finish(mut self) -> Res<()> {
        self.flush()?;
        let Some((tmp, dest)) = self.file.take() else {
            return Ok(());
        };
        let res = (|| {
            // The inner writer is the file: sync it through a second handle.
            File::open(&tmp)?.sync_all()?;
            std::fs::rename(&tmp, &dest)?;
            if let Some(dir) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
                // Best effort: some file systems refuse to sync a directory.
                let _ = File::open(dir).and_then(|d| d.sync_all());
            }
            Ok::<(), io::Error>(())
        })();
        res.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Fail::Fatal(format!("{}: {e}", dest.display()))
        })
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        // A file output that was not finished (an error stopped the run)
        // leaves no temporary file behind.
        if let Some((tmp, _)) = self.file.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Builds a JSON object with members in the order given.
#[derive(Default)]
pub struct Obj(Map);

impl Obj {
    /// An empty object.
    pub fn new() -> Obj {
        Obj(Map::new())
    }

    /// Adds a member.
    pub fn put(mut self, key: &str, v: impl Into<OwnedValue>) -> Obj {
        self.0.entries_mut().push((key.to_owned(), v.into()));
        self
    }

    /// Adds a string member, `null` when absent.
    pub fn str(self, key: &str, v: Option<&str>) -> Obj {
        self.put(key, v.map_or(OwnedValue::Null, OwnedValue::from))
    }

    /// Adds an unsigned integer member, `null` when absent.
    pub fn uint(self, key: &str, v: Option<u64>) -> Obj {
        self.put(key, v.map_or(OwnedValue::Null, uint))
    }

    /// The object.
    pub fn done(self) -> OwnedValue {
        OwnedValue::Object(self.0)
    }
}

/// An unsigned integer as a JSON number.
pub fn uint(v: u64) -> OwnedValue {
    OwnedValue::Number(Number::from(v))
}

/// A float as a JSON number; `null` for NaN and the infinities, which JSON
/// cannot write.
pub fn float(v: f64) -> OwnedValue {
    if v.is_finite() {
        OwnedValue::Number(Number::from(v))
    } else {
        OwnedValue::Null
    }
}

/// A path as text (lossy for names that are not UTF-8).
pub fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}
