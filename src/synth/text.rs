//! Synthetic text: prose, code, terminal output, paths. All of it is made
//! here from small word lists; nothing is copied from real conversations.
//!
//! The text deliberately contains what a reader must escape and decode:
//! quotes, backslashes, tabs, newlines and (rarely) non-ASCII characters,
//! including characters outside the Basic Multilingual Plane.

use super::rng::Rng;
use std::fmt::Write as _;

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "on",
    "be",
    "as",
    "we",
    "can",
    "now",
    "then",
    "should",
    "will",
    "not",
    "all",
    "from",
    "by",
    "one",
    "new",
    "file",
    "files",
    "test",
    "tests",
    "function",
    "module",
    "class",
    "method",
    "value",
    "values",
    "error",
    "errors",
    "output",
    "input",
    "config",
    "build",
    "run",
    "check",
    "fix",
    "update",
    "change",
    "changes",
    "code",
    "line",
    "lines",
    "path",
    "directory",
    "command",
    "result",
    "results",
    "failing",
    "passing",
    "parser",
    "reader",
    "writer",
    "cache",
    "index",
    "query",
    "request",
    "response",
    "server",
    "client",
    "handler",
    "field",
    "fields",
    "type",
    "types",
    "list",
    "map",
    "string",
    "number",
    "missing",
    "empty",
    "invalid",
    "expected",
    "actual",
    "return",
    "returns",
    "call",
    "calls",
    "argument",
    "arguments",
    "option",
    "options",
    "flag",
    "version",
    "dependency",
    "package",
    "import",
    "export",
    "log",
    "logs",
    "trace",
    "stack",
    "memory",
    "thread",
    "lock",
    "timeout",
    "retry",
    "first",
    "next",
    "last",
    "before",
    "after",
    "because",
    "so",
    "but",
    "also",
    "still",
    "again",
    "only",
    "each",
    "every",
    "both",
    "small",
    "large",
    "simple",
    "clean",
    "correct",
    "broken",
    "slow",
    "fast",
    "quickly",
    "carefully",
    "look",
    "see",
    "read",
    "write",
    "add",
    "remove",
    "rename",
    "move",
    "keep",
    "use",
    "make",
    "sure",
    "verify",
    "confirm",
    "inspect",
    "open",
    "create",
    "edit",
    "replace",
    "insert",
    "workspace",
    "repository",
    "branch",
    "commit",
    "diff",
    "patch",
    "docs",
    "readme",
    "example",
    "benchmark",
    "schema",
    "migration",
    "database",
    "table",
    "column",
    "row",
    "key",
    "token",
    "user",
    "session",
    "event",
    "events",
    "state",
    "status",
    "step",
    "steps",
    "task",
    "tasks",
    "plan",
    "issue",
    "bug",
    "regression",
    "edge",
    "case",
    "cases",
    "unit",
    "integration",
    "coverage",
    "lint",
    "format",
    "style",
    "warning",
    "warnings",
    "deprecated",
    "api",
    "endpoint",
    "route",
    "template",
    "render",
    "view",
    "model",
    "models",
    "data",
    "dataset",
    "batch",
    "job",
    "queue",
    "worker",
    "pipeline",
    "stage",
    "deploy",
    "release",
    "tag",
    "script",
    "shell",
    "env",
    "variable",
    "variables",
    "secret",
    "permission",
    "owner",
    "group",
    "mode",
    "size",
    "count",
    "limit",
    "offset",
    "page",
    "sort",
    "filter",
    "order",
    "date",
    "time",
    "zone",
    "utc",
    "local",
];

const IDENTS: &[&str] = &[
    "parse",
    "load",
    "save",
    "items",
    "config",
    "result",
    "value",
    "data",
    "path",
    "name",
    "count",
    "total",
    "index",
    "key",
    "text",
    "line",
    "lines",
    "rows",
    "cols",
    "cache",
    "client",
    "request",
    "response",
    "session",
    "user_id",
    "payload",
    "handler",
    "options",
    "kwargs",
    "args",
    "buf",
    "offset",
    "limit",
    "records",
    "entry",
    "entries",
    "node",
    "nodes",
    "graph",
    "tree",
    "parent",
    "child",
    "state",
    "events",
    "queue",
    "worker",
    "timeout",
    "retries",
    "logger",
    "status",
    "message",
    "error",
    "errors",
    "field",
    "schema",
    "table",
    "query",
    "word_count",
    "line_count",
    "normalize",
    "validate",
    "serialize",
    "deserialize",
    "encode",
    "decode",
    "render",
    "build",
    "compute",
    "merge",
    "split",
    "flatten",
    "group_by",
    "to_dict",
    "from_json",
    "read_file",
    "write_file",
    "main",
    "setup",
    "teardown",
    "fixture",
    "helper",
];

const TYPES: &[&str] = &[
    "Parser", "Config", "Client", "Session", "Record", "Reader", "Writer", "Cache", "Event",
    "Handler", "Result", "Store", "Index", "Queue", "Worker", "Report", "Summary", "Builder",
];

const DIRS: &[&str] = &[
    "src", "tests", "lib", "app", "pkg", "internal", "scripts", "docs", "api", "core", "utils",
    "models", "services", "handlers", "cli", "config", "data", "tools", "web", "server",
];

const EXTS: &[&str] = &[
    "py", "rs", "ts", "js", "go", "md", "toml", "json", "yaml", "sh", "txt",
];
const EXT_WEIGHTS: &[u32] = &[40, 10, 10, 8, 6, 8, 4, 5, 4, 3, 2];

/// Rare non-ASCII fragments (accents, symbols, CJK, an emoji beyond the
/// BMP), so that `ensure_ascii` escaping and UTF-8 decoding are exercised.
const NON_ASCII: &[&str] = &[
    "café",
    "naïve",
    "façade",
    "→",
    "✓",
    "…",
    "–",
    "“quoted”",
    "日本語",
    "Ünïcödé",
    "😀",
    "€",
];

/// Appends one word of prose.
fn word(rng: &mut Rng, out: &mut String) {
    if rng.below(400) == 0 {
        out.push_str(rng.pick(NON_ASCII));
    } else if rng.below(40) == 0 {
        out.push('`');
        out.push_str(rng.pick(IDENTS));
        out.push_str("()`");
    } else {
        out.push_str(rng.pick(WORDS));
    }
}

/// Appends one sentence of about `n` words.
pub(crate) fn sentence(rng: &mut Rng, out: &mut String, n: usize) {
    let start = out.len();
    for i in 0..n.max(2) {
        if i > 0 {
            out.push(' ');
        }
        word(rng, out);
    }
    // Capitalise the first letter when it is ASCII.
    if let Some(b) = out.get(start..start + 1)
        && let Some(c) = b.chars().next()
        && c.is_ascii_lowercase()
    {
        out.replace_range(start..start + 1, &c.to_ascii_uppercase().to_string());
    }
    out.push_str(match rng.below(12) {
        0 => "?",
        1 => ":",
        2 => " (see \"notes\").",
        _ => ".",
    });
}

/// Appends prose until `out` grew by at least `target` bytes (sentences of
/// 4–18 words; paragraphs every few sentences).
pub(crate) fn prose(rng: &mut Rng, out: &mut String, target: usize) {
    let start = out.len();
    let mut in_par = 0;
    while out.len() - start < target {
        if out.len() > start {
            if in_par >= 3 && rng.below(3) == 0 {
                out.push_str("\n\n");
                in_par = 0;
            } else {
                out.push(' ');
            }
        }
        // Sentences of 4-18 words, shorter when little is left to write,
        // so that short texts end near their target length.
        let left = target.saturating_sub(out.len() - start);
        let most = (left / 6).clamp(2, 18);
        let n = rng.range((most / 2).max(2), most);
        sentence(rng, out, n);
        in_par += 1;
    }
}

/// A short lower-case phrase (titles, summaries, notes): `n` words.
pub(crate) fn phrase(rng: &mut Rng, out: &mut String, n: usize) {
    for i in 0..n.max(1) {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS));
    }
}

/// A file extension by weight.
pub(crate) fn ext(rng: &mut Rng) -> &'static str {
    EXTS[rng.weighted(EXT_WEIGHTS).min(EXTS.len() - 1)]
}

/// Appends a relative source path like `src/core/parser_cache.py`.
pub(crate) fn rel_path(rng: &mut Rng, out: &mut String) {
    let depth = rng.range(1, 3);
    for _ in 0..depth {
        out.push_str(rng.pick(DIRS));
        out.push('/');
    }
    out.push_str(rng.pick(IDENTS));
    if rng.below(3) == 0 {
        out.push('_');
        out.push_str(rng.pick(IDENTS));
    }
    out.push('.');
    out.push_str(ext(rng));
}

/// Appends one line of Python-like code at the given indentation level.
fn code_line(rng: &mut Rng, out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("    ");
    }
    let a = rng.pick(IDENTS);
    let b = rng.pick(IDENTS);
    let c = rng.pick(IDENTS);
    let _ = match rng.below(16) {
        0 => write!(out, "def {a}({b}, {c}=None):"),
        1 => write!(out, "class {}({}):", rng.pick(TYPES), rng.pick(TYPES)),
        2 => write!(out, "return {a}.{b}({c})"),
        3 => write!(out, "if {a} is None:"),
        4 => write!(out, "for {a} in {b}:"),
        5 => write!(out, "{a} = {b}.get(\"{c}\", {})", rng.below(100)),
        6 => write!(out, "# {a}: {b} the {c} before use"),
        7 => write!(out, "raise ValueError(f\"invalid {a}: {{{b}!r}}\")"),
        8 => write!(out, "\"\"\"Return the {a} of {b}.\"\"\""),
        9 => write!(out, "{a}.append(\"{b}\\t{c}\")"),
        10 => write!(out, "import {a}"),
        11 => write!(out, "self.assertEqual({a}({b}), {})", rng.below(1000)),
        12 => write!(out, "with open({a}, \"r\", encoding=\"utf-8\") as f:"),
        13 => write!(out, "{a} = [{b} for {b} in {c} if {b}]"),
        14 => write!(out, "print(f\"{{{a}}}: {{len({b})}}\")"),
        _ => write!(out, "{a} += {}", rng.below(10)),
    };
    out.push('\n');
}

/// Appends `lines` lines of code (with blank lines, some nesting).
pub(crate) fn code(rng: &mut Rng, out: &mut String, lines: usize) {
    let mut indent = 0usize;
    for _ in 0..lines {
        if rng.below(8) == 0 {
            out.push('\n');
            indent = 0;
            continue;
        }
        code_line(rng, out, indent);
        if out.ends_with(":\n") {
            indent = (indent + 1).min(4);
        } else if indent > 0 && rng.below(4) == 0 {
            indent -= 1;
        }
    }
}

/// Appends `text` as `cat -n` shows it, numbering from `first`.
pub(crate) fn numbered(out: &mut String, text: &str, first: usize) {
    for (i, line) in text.lines().enumerate() {
        let _ = write!(out, "{:>6}\t{}", first + i, line);
        out.push('\n');
    }
}

/// What a terminal command printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommandOutput {
    Listing,
    Tests,
    Grep,
    Git,
    Install,
    Traceback,
    Plain,
}

/// Appends a command for the given output kind.
pub(crate) fn command(rng: &mut Rng, out: &mut String, kind: CommandOutput) {
    let a = rng.pick(DIRS);
    let b = rng.pick(IDENTS);
    let _ = match kind {
        CommandOutput::Listing => match rng.below(3) {
            0 => write!(out, "ls -la {a}"),
            1 => write!(out, "find {a} -name '*.py' | head -20"),
            _ => write!(out, "cd {a} && ls"),
        },
        CommandOutput::Tests => match rng.below(3) {
            0 => write!(out, "python -m pytest tests/test_{b}.py -q"),
            1 => write!(out, "python -m unittest test_{b}"),
            _ => write!(out, "cargo test {b} 2>&1 | tail -30"),
        },
        CommandOutput::Grep => write!(out, "grep -rn \"{b}\" {a}/ | head -40"),
        CommandOutput::Git => match rng.below(3) {
            0 => write!(out, "git status --short"),
            1 => write!(out, "git diff --stat"),
            _ => write!(out, "git log --oneline -10"),
        },
        CommandOutput::Install => write!(out, "pip install -e . 2>&1 | tail -5"),
        CommandOutput::Traceback => write!(out, "python {a}/{b}.py --input data.json"),
        CommandOutput::Plain => match rng.below(4) {
            0 => write!(out, "echo $PATH"),
            1 => write!(out, "wc -l {a}/*.py"),
            2 => write!(out, "cat {a}/{b}.txt"),
            _ => write!(out, "python3 --version && which python3"),
        },
    };
}

/// Appends terminal output of the given kind, at least `target` bytes when
/// `target > 0` (an empty output stays empty).
pub(crate) fn terminal_output(rng: &mut Rng, out: &mut String, kind: CommandOutput, target: usize) {
    let start = out.len();
    if target == 0 {
        return;
    }
    let mut n = 0usize;
    while out.len() - start < target {
        if out.len() > start {
            out.push('\n');
        }
        let a = rng.pick(IDENTS);
        let b = rng.pick(DIRS);
        let _ = match kind {
            CommandOutput::Listing => write!(
                out,
                "-rw-r--r-- 1 dev dev {:>6} Nov {:>2} {:02}:{:02} {a}.{}",
                rng.below(90_000),
                rng.range(1, 30),
                rng.below(24),
                rng.below(60),
                ext(rng)
            ),
            CommandOutput::Tests => match rng.below(6) {
                0 => write!(
                    out,
                    "FAILED tests/test_{a}.py::test_{b} - AssertionError: {} != {}",
                    rng.below(99),
                    rng.below(99)
                ),
                1 => write!(out, "E       assert {a}({b}) == {}", rng.below(500)),
                2 => write!(out, "{}", "-".repeat(70)),
                3 => write!(
                    out,
                    "Ran {} tests in 0.{:03}s",
                    rng.range(1, 300),
                    rng.below(1000)
                ),
                _ => write!(
                    out,
                    "tests/test_{a}.py ....{}  [{:>3}%]",
                    ".".repeat(rng.below(20)),
                    rng.below(101)
                ),
            },
            CommandOutput::Grep => write!(
                out,
                "{b}/{a}.py:{}:    {} = {}(\"{}\")",
                rng.range(1, 900),
                rng.pick(IDENTS),
                a,
                rng.pick(WORDS)
            ),
            CommandOutput::Git => match rng.below(3) {
                0 => write!(out, " M {b}/{a}.py"),
                1 => write!(out, "?? {b}/{a}_new.py"),
                _ => write!(
                    out,
                    "{:07x} {} {}",
                    rng.next_u64() & 0xfff_ffff,
                    rng.pick(WORDS),
                    a
                ),
            },
            CommandOutput::Install => write!(
                out,
                "Requirement already satisfied: {a}>={}.{} in /usr/lib/python3/site-packages ({}.{}.{})",
                rng.below(5),
                rng.below(20),
                rng.below(5),
                rng.below(20),
                rng.below(10)
            ),
            CommandOutput::Traceback => {
                if n == 0 {
                    write!(out, "Traceback (most recent call last):")
                } else if rng.below(4) == 0 {
                    write!(out, "KeyError: '{a}'")
                } else {
                    write!(
                        out,
                        "  File \"/workspace/{b}/{a}.py\", line {}, in {}\n    {} = {}[\"{}\"]",
                        rng.range(1, 400),
                        rng.pick(IDENTS),
                        a,
                        rng.pick(IDENTS),
                        rng.pick(IDENTS)
                    )
                }
            }
            CommandOutput::Plain => {
                let k = rng.range(3, 12);
                sentence(rng, out, k);
                Ok(())
            }
        };
        n += 1;
    }
}

/// Appends `n` base64 characters (signatures, image data).
pub(crate) fn base64ish(rng: &mut Rng, out: &mut String, n: usize) {
    let start = out.len();
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = 0u64;
    for i in 0..n {
        if i % 10 == 0 {
            x = rng.next_u64();
        }
        out.push(B64[(x & 63) as usize] as char);
        x >>= 6;
    }
    while !(out.len() - start).is_multiple_of(4) {
        out.push('=');
    }
}

/// Appends `n` characters from `[A-Za-z0-9]` (provider ids).
pub(crate) fn alnum(rng: &mut Rng, out: &mut String, n: usize) {
    const A: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for _ in 0..n {
        out.push(A[rng.below(62)] as char);
    }
}

/// Appends a title-cased phrase of `n` words.
pub(crate) fn title(rng: &mut Rng, out: &mut String, n: usize) {
    for i in 0..n.max(1) {
        if i > 0 {
            out.push(' ');
        }
        let w = rng.pick(WORDS);
        let mut cs = w.chars();
        if i == 0 {
            if let Some(c) = cs.next() {
                out.push(c.to_ascii_uppercase());
            }
            out.push_str(cs.as_str());
        } else {
            out.push_str(w);
        }
    }
}

/// A random identifier.
pub(crate) fn ident(rng: &mut Rng) -> &'static str {
    rng.pick(IDENTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_reaches_target() {
        let mut r = Rng::new(1);
        let mut s = String::new();
        prose(&mut r, &mut s, 500);
        assert!(s.len() >= 500 && s.len() < 800, "{}", s.len());
    }

    #[test]
    fn base64_is_padded() {
        let mut r = Rng::new(1);
        let mut s = String::new();
        base64ish(&mut r, &mut s, 30);
        assert_eq!(s.len() % 4, 0);
    }

    #[test]
    fn numbered_like_cat_n() {
        let mut s = String::new();
        numbered(&mut s, "a\nb", 9);
        assert_eq!(s, "     9\ta\n    10\tb\n");
    }
}
