//! Reading an ASF file: the header, then one entry per line, each checked
//! on its own (JSON, envelope, `ts` spelling, I-JSON, both hashes, the
//! members its type requires) as it is read.
//!
//! Entries borrow their line from the caller's bytes; only the envelope's
//! strings and the few members the tree needs (references between entries,
//! call ids) are copied out. A line's body is parsed again, on demand, by
//! whoever needs it ([`Entry::raw`]).

mod config;
mod header;
mod line;

pub(crate) use header::is_rfc3339;
use header::read_header;
use line::LineReader;
pub(crate) use line::LineReaderPub;

use std::collections::HashMap;

use crate::json::{JsonType, OwnedValue, Parser, Value};

use super::canon::{self, CanonError};
use super::hash::{self, envelope_bytes, sha256_ref};
use super::problem::{Problem, ProblemKind};
use super::ts::is_canonical_ts;

/// The format this reader writes, and the newest it reads.
pub const FORMAT: &str = "agentsession/0.10";
/// The payload profile this reader knows.
pub const PAYLOAD: &str = "openresponses/2026-04-24";
/// The oldest minor of major 0 read as it stands (earlier ones need an
/// in-memory migration this reader does not do).
pub const OLDEST_MINOR: u32 = 5;
/// The newest minor of major 0 this reader names.
pub const NEWEST_MINOR: u32 = 10;

/// The envelope's member names, reserved in a body (`content` is computed).
pub const ENVELOPE: [&str; 5] = ["id", "type", "parent", "parents", "ts"];

/// The core entry types: context entries, then record entries.
pub const CORE_TYPES: [&str; 15] = [
    "item",
    "response",
    "config",
    "compaction",
    "branch_summary",
    "run",
    "dispatch",
    "decision",
    "queued",
    "label",
    "info",
    "env",
    "outcome",
    "link",
    "custom",
];

/// Why a file is not read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The file holds no line.
    #[error("empty file: an ASF file opens with its header")]
    Empty,
    /// The first line is not a JSON object.
    #[error("the first line is not a JSON object: {0}")]
    HeaderNotJson(String),
    /// The first line is an object but not a session header.
    #[error("not an ASF session file: the first line's type is not \"session\"")]
    NotSession,
    /// The header names a format this reader does not read.
    #[error(
        "unsupported format {0:?}: this reader reads agentsession/0.{OLDEST_MINOR} to agentsession/0.{NEWEST_MINOR}"
    )]
    UnsupportedFormat(String),
}

/// The header's members the reader uses; every member stays in the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `format`, e.g. `agentsession/0.10`.
    pub format: String,
    /// The minor version the format names.
    pub minor: u32,
    /// The session id.
    pub id: String,
    /// `base`: the entry this session continues from.
    pub base: Option<String>,
    /// `parent_session`.
    pub parent_session: Option<String>,
    /// `spawned_by`.
    pub spawned_by: Option<String>,
    /// `records`: the record types the writer promises.
    pub records: Vec<String>,
    /// `redacted: true`.
    pub redacted: bool,
}

/// A `parents` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRef {
    /// The session holding the entry, when given.
    pub session: Option<String>,
    /// The entry's id.
    pub entry: String,
}

/// What a `run` entry says, as the rules on runs read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    /// `run_id`.
    pub run_id: String,
    /// `phase`: `true` for `start`, `false` for `end`.
    pub start: bool,
    /// `source` on a start (`input` or `resume`).
    pub source: Option<String>,
    /// `reason` on an end.
    pub reason: Option<String>,
    /// `pending` on an end: the call ids, in the order written.
    pub pending: Vec<String>,
}

/// One entry line.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The 1-based line number.
    pub line: usize,
    raw: &'a [u8],
    /// `type`.
    pub entry_type: String,
    /// `id` as recorded.
    pub id: String,
    /// `parent` (`None` for a root).
    pub parent: Option<String>,
    /// `parents`, in file order.
    pub parents: Vec<ParentRef>,
    /// `ts`.
    pub ts: String,
    /// Whether the recorded `id` is the hash of the line.
    pub verified: bool,
    /// For an `item`: the item's `type`.
    pub item_type: Option<String>,
    /// For an `item` holding a `function_call` (or a `dispatch`/`decision`):
    /// its `call_id`.
    pub call_id: Option<String>,
    /// For an `item`: its `response` (a provider's response id); for a
    /// `response`: its `response_id`.
    pub response_id: Option<String>,
    /// For a `response`: its `request_hash`.
    pub request_hash: Option<String>,
    /// Members naming entries: (`first_kept` | `target` | `from`, id).
    pub refs: Vec<(&'static str, String)>,
    /// For a `label`: the label (`None` for `null`).
    pub label: Option<Option<String>>,
    /// For an `item` holding a `function_call_output`: the `call_id` it
    /// answers.
    pub output_of: Option<String>,
    /// For a `decision`: its `verdict`.
    pub verdict: Option<String>,
    /// For a `run`: the members the rules on runs read.
    pub run: Option<Box<RunFacts>>,
    /// For a `response`: whether `error` is present and not null.
    pub error: bool,
    /// For a `response`: whether `incomplete` is present and not null.
    pub incomplete: bool,
    /// For an `item` (a `branch_summary`): the span in the line of its
    /// `item` (`summary`) when the line spells it canonically.
    contributed: Option<std::ops::Range<usize>>,
}

impl<'a> Entry<'a> {
    /// The line's bytes, without its line ending.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The canonical bytes of the item an `item` (the summary a
    /// `branch_summary`) adds to the context, when its line holds them as
    /// they stand (a canonical line does).
    pub(crate) fn contributed_canonical(&self) -> Option<&'a [u8]> {
        self.raw.get(self.contributed.clone()?)
    }

    /// The member naming an entry by `name`, if the entry has it.
    pub fn reference(&self, name: &str) -> Option<&str> {
        self.refs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the entry is a `label` marking the resumed branch.
    pub fn is_leaf_label(&self) -> bool {
        self.entry_type == "label" && matches!(&self.label, Some(Some(l)) if l == "leaf")
    }

    /// The line as an owned value (for callers that keep or rebuild it).
    pub fn to_owned_value(&self, parser: &mut Parser) -> Option<OwnedValue> {
        let doc = parser.parse(self.raw).ok()?;
        Some(OwnedValue::from(doc.root()))
    }
}

/// A read session file: its header, its entries in file order (each id
/// once), and what reading found wrong.
#[derive(Debug, Clone)]
pub struct Session<'a> {
    header: Header,
    header_raw: &'a [u8],
    entries: Vec<Entry<'a>>,
    by_id: HashMap<String, usize>,
    problems: Vec<Problem>,
}

impl<'a> Session<'a> {
    /// Reads a whole file. A file that is not an ASF session, or names a
    /// format this reader does not read, is refused; anything else is read,
    /// every broken rule a line-local check finds recorded
    /// ([`Session::read_problems`]), and the rest kept.
    pub fn read(bytes: &'a [u8]) -> Result<Self, HeaderError> {
        let mut lines = split_lines(bytes);
        let Some((first, first_cr, _)) = lines.next() else {
            return Err(HeaderError::Empty);
        };
        let mut parser = Parser::new();
        let mut problems = Vec::new();
        let header = read_header(&mut parser, first, &mut problems)?;
        if first_cr {
            problems.push(Problem {
                line: 1,
                kind: ProblemKind::LineEnding,
            });
        }
        let mut s = Session {
            header,
            header_raw: first,
            entries: Vec::new(),
            by_id: HashMap::new(),
            problems,
        };
        let mut reader = LineReader {
            parser,
            scratch: Vec::new(),
        };
        let mut line_no = 1;
        let mut lines = lines.peekable();
        while let Some((line, cr, terminated)) = lines.next() {
            line_no += 1;
            let last = lines.peek().is_none();
            if cr {
                s.problems.push(Problem {
                    line: line_no,
                    kind: ProblemKind::LineEnding,
                });
            }
            let entry = reader.entry(line, line_no, last, &mut s.problems);
            // A last line without its LF that parses is a line ending
            // problem; one that does not is the truncation already reported.
            if !terminated
                && !line.is_empty()
                && s.problems
                    .last()
                    .is_none_or(|p| p.kind != ProblemKind::TruncatedLastLine)
            {
                s.problems.push(Problem {
                    line: line_no,
                    kind: ProblemKind::LineEnding,
                });
            }
            match entry {
                Some(e) => {
                    if s.by_id.contains_key(&e.id) {
                        s.problems.push(Problem {
                            line: line_no,
                            kind: ProblemKind::DuplicateId(e.id.clone()),
                        });
                        continue;
                    }
                    s.by_id.insert(e.id.clone(), s.entries.len());
                    s.entries.push(e);
                }
                None => continue,
            }
        }
        Ok(s)
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The header line's bytes.
    pub fn header_raw(&self) -> &'a [u8] {
        self.header_raw
    }

    /// The entries in file order, each id once.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry<'a>> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// The index in [`Session::entries`] of the entry with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// What the line-local checks found while reading.
    pub fn read_problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The indexes of the path from a root to the entry at `idx`,
    /// root first, following `parent` alone. A parent that is not an
    /// earlier entry ends the walk (the path is then cut where the file
    /// is broken).
    pub fn path_indexes(&self, idx: usize) -> Vec<usize> {
        let mut out = vec![idx];
        let mut cur = idx;
        while let Some(p) = self.entries[cur].parent.as_deref() {
            match self.by_id.get(p) {
                Some(&pi) if pi < cur => {
                    out.push(pi);
                    cur = pi;
                }
                _ => break,
            }
        }
        out.reverse();
        out
    }

    /// The entries no other entry names as `parent`, in file order.
    pub fn tips(&self) -> Vec<&Entry<'a>> {
        let mut has_child = vec![false; self.entries.len()];
        for e in &self.entries {
            if let Some(&pi) = e.parent.as_deref().and_then(|p| self.by_id.get(p)) {
                has_child[pi] = true;
            }
        }
        self.entries
            .iter()
            .zip(has_child)
            .filter(|(_, c)| !c)
            .map(|(e, _)| e)
            .collect()
    }

    /// How many entries the prefix holds (the path from the root to the
    /// header's `base`); 0 without a base or when the base is missing.
    pub fn prefix_len(&self) -> usize {
        match self.header.base.as_deref().and_then(|b| self.index_of(b)) {
            Some(bi) => self.path_indexes(bi).len(),
            None => 0,
        }
    }

    /// The leaf by the file's resume rule: the newest entry in file order
    /// that descends from the target of the last `leaf` label in force and
    /// was written after that label (the label itself excepted), or that
    /// target when nothing follows it; the last entry when no label is in
    /// force. A `leaf` label so found resolves to its nearest ancestor that
    /// is not one. `None` for a file without entries.
    pub fn leaf(&self) -> Option<&Entry<'a>> {
        let prefix: std::collections::HashSet<usize> =
            match self.header.base.as_deref().and_then(|b| self.index_of(b)) {
                Some(bi) => self
                    .path_indexes(bi)
                    .into_iter()
                    .filter(|&i| i != bi)
                    .collect(),
                None => Default::default(),
            };
        // The labels in force: the last one naming each target, in order.
        let mut in_force: Option<(usize, usize)> = None; // (label idx, target idx)
        for (i, e) in self.entries.iter().enumerate() {
            if e.entry_type != "label" {
                continue;
            }
            let Some(t) = e.reference("target") else {
                continue;
            };
            match &e.label {
                Some(None) => {
                    if let Some((_, ti)) = in_force
                        && self.entries[ti].id == t
                    {
                        in_force = None;
                    }
                }
                Some(Some(l)) if l == "leaf" => {
                    let Some(ti) = self.index_of(t) else { continue };
                    if prefix.contains(&ti) || self.entries[ti].is_leaf_label() {
                        continue;
                    }
                    in_force = Some((i, ti));
                }
                _ => {}
            }
        }
        let chosen = match in_force {
            None => self.entries.len().checked_sub(1)?,
            Some((li, ti)) => {
                // Which entries descend from the target, in one pass (a
                // parent always comes earlier in the file).
                let mut under = vec![false; self.entries.len()];
                under[ti] = true;
                let mut best = ti;
                for j in ti + 1..self.entries.len() {
                    if let Some(pi) = self.entries[j]
                        .parent
                        .as_deref()
                        .and_then(|p| self.index_of(p))
                        && pi < j
                        && under[pi]
                    {
                        under[j] = true;
                        if j > li {
                            best = j;
                        }
                    }
                }
                best
            }
        };
        let mut cur = chosen;
        while self.entries[cur].is_leaf_label() {
            match self.entries[cur]
                .parent
                .as_deref()
                .and_then(|p| self.index_of(p))
            {
                Some(pi) if pi < cur => cur = pi,
                _ => break,
            }
        }
        Some(&self.entries[cur])
    }
}

/// Lines as (bytes without the ending, ended in CR LF, ended in LF at all).
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (&[u8], bool, bool)> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, terminated) = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let l = &rest[..i];
                rest = &rest[i + 1..];
                (l, true)
            }
            None => {
                let l = rest;
                rest = &[];
                (l, false)
            }
        };
        match line.strip_suffix(b"\r") {
            Some(l) if terminated => Some((l, true, terminated)),
            _ => Some((line, false, terminated)),
        }
    })
}
