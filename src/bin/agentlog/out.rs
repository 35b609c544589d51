//! Output: a buffered standard output (or output path) whose write errors become
//! [`Fail`]s, a closed pipe told apart so that it ends the command quietly;
//! one-line messages on standard error; JSON helpers.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use agentlog::json::{Map, Number, OwnedValue, Style};
use agentlog::output::Output;

/// Why a command stopped.
#[derive(Debug)]
pub enum Fail {
    /// The reader of standard output went away: stop quietly, status 0.
    Pipe,
    /// A usage error or a path that cannot be read at all: the message is
    /// printed on one line, status 2.
    Fatal(String),
    /// What was asked for is missing, ambiguous or does not parse, or
    /// nothing was found: status 1.
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
    /// Problems found, nothing found under a PATH, or a thing asked for
    /// is missing (see [`crate::EXIT_STATUS`]).
    pub const PROBLEMS: Status = Status(1);
    /// A usage error, or a path that could not be read at all.
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

/// Prints `error: MSG` on standard error, as clap prints its usage errors
/// (errors writing it are ignored: there is nowhere left to report them).
pub fn error(msg: &str) {
    crate::progress::suspend(|| {
        let _ = writeln!(io::stderr().lock(), "error: {}", one_line(msg));
    });
}

/// Prints `warning: MSG` on standard error.
pub fn warn(msg: &str) {
    crate::progress::suspend(|| {
        let _ = writeln!(io::stderr().lock(), "warning: {}", one_line(msg));
    });
}

/// `n` and the noun in its number.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        crate::ls::group(n),
        if n == 1 { one } else { many }
    )
}

/// `msg` with its line breaks replaced, so that every message is one line.
pub fn one_line(msg: &str) -> String {
    msg.replace(['\n', '\r'], " ")
}

/// Where output goes: standard output, or an output path written as what
/// it is ([`agentlog::output`]: a regular file replaced atomically by
/// [`finish`](Out::finish), a device, FIFO or socket in place, `-`
/// standard output).
pub struct Out {
    w: BufWriter<Sink>,
    what: String,
}

/// The writer under the buffer.
enum Sink {
    Stdout(io::Stdout),
    Path(Output),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Path(o) => o.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Path(o) => o.flush(),
        }
    }
}

impl Out {
    /// Buffered standard output.
    pub fn stdout() -> Out {
        Out {
            w: BufWriter::with_capacity(1 << 16, Sink::Stdout(io::stdout())),
            what: "standard output".into(),
        }
    }

    /// An output path, opened as [`agentlog::output`] says; completed by
    /// [`finish`](Self::finish). Dropped unfinished (an error stopped the
    /// run), a replacement leaves the old file and no temporary file.
    pub fn file(path: &Path) -> Res<Out> {
        let o = Output::create(path).map_err(|e| Fail::Fatal(e.to_string()))?;
        Ok(Out {
            w: BufWriter::with_capacity(1 << 18, Sink::Path(o)),
            what: path.display().to_string(),
        })
    }

    /// An error when the output would replace `input` (same file, links
    /// followed): the run stops, nothing is replaced.
    pub fn refuse_input(&self, input: &Path) -> Res<()> {
        match self.w.get_ref() {
            Sink::Path(o) => o
                .refuse_input(input)
                .map_err(|e| Fail::Fatal(e.to_string())),
            Sink::Stdout(_) => Ok(()),
        }
    }

    /// Whether the output replaces an existing file (whose identity
    /// [`refuse_input`](Self::refuse_input) compares inputs with).
    pub fn replaces_a_file(&self) -> bool {
        matches!(self.w.get_ref(), Sink::Path(o) if o.replaces().is_some())
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

    /// Flushes the buffer (a file is completed by
    /// [`finish`](Self::finish)).
    pub fn flush(&mut self) -> Res<()> {
        self.w.flush().map_err(|e| Fail::write(e, &self.what))
    }

    /// Flushes, and for an output path completes it
    /// ([`Output::commit`]: a replacement synced and renamed into place).
    pub fn finish(mut self) -> Res<()> {
        self.flush()?;
        let what = self.what;
        match self.w.into_inner() {
            Ok(Sink::Stdout(_)) => Ok(()),
            Ok(Sink::Path(o)) => o.commit().map_err(|e| match e.io_error() {
                Some(io) if io.kind() == io::ErrorKind::BrokenPipe => Fail::Pipe,
                _ => Fail::Fatal(e.to_string()),
            }),
            Err(e) => Err(Fail::write(e.into_error(), &what)),
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
