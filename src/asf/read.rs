//! Reading an ASF file: the header, then one entry per line, each checked
//! on its own (JSON, envelope, `ts` spelling, I-JSON, both hashes, the
//! members its type requires) as it is read.
//!
//! Entries borrow their line from the caller's bytes; only the envelope's
//! strings and the few members the tree needs (references between entries,
//! call ids) are copied out. A line's body is parsed again, on demand, by
//! whoever needs it ([`Entry::raw`]).

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
pub enum ReadError {
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
}

impl<'a> Entry<'a> {
    /// The line's bytes, without its line ending.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
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
    pub fn read(bytes: &'a [u8]) -> Result<Self, ReadError> {
        let mut lines = split_lines(bytes);
        let Some((first, first_cr, _)) = lines.next() else {
            return Err(ReadError::Empty);
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
        let (line, terminated) = match rest.iter().position(|&b| b == b'\n') {
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

fn read_header(
    parser: &mut Parser,
    line: &[u8],
    problems: &mut Vec<Problem>,
) -> Result<Header, ReadError> {
    let doc = parser
        .parse(line)
        .map_err(|e| ReadError::HeaderNotJson(e.to_string()))?;
    let Some(obj) = doc.root().as_object() else {
        return Err(ReadError::HeaderNotJson("not an object".into()));
    };
    if obj.get("type").and_then(|v| v.as_str()) != Some("session") {
        return Err(ReadError::NotSession);
    }
    let format = obj.get("format").and_then(|v| v.as_str()).unwrap_or("");
    let minor = format
        .strip_prefix("agentsession/0.")
        .and_then(|m| (!m.starts_with('0') || m == "0").then_some(m))
        .and_then(|m| m.parse::<u32>().ok())
        .filter(|m| (OLDEST_MINOR..=NEWEST_MINOR).contains(m))
        .ok_or_else(|| ReadError::UnsupportedFormat(format.to_owned()))?;
    let mut bad = |m: String| {
        problems.push(Problem {
            line: 1,
            kind: ProblemKind::Header(m),
        })
    };
    let mut out = Vec::new();
    if let Err(e) = canon::canonical_value(doc.root(), &mut out) {
        bad(format!("the header is not I-JSON: {e}"));
    }
    let string = |name: &str| obj.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let id = string("id").unwrap_or_default();
    if id.is_empty() {
        bad("header: `id` must be a non-empty string".into());
    }
    match string("created_at") {
        Some(c) if is_rfc3339(&c) => {}
        _ => bad("header: `created_at` must be an RFC 3339 date-time".into()),
    }
    match string("payload") {
        Some(p) if p.starts_with("openresponses/") => {}
        _ => bad("header: `payload` must name the payload profile (`openresponses/<date>`)".into()),
    }
    let opt_string = |name: &str, bad: &mut dyn FnMut(String)| match obj.get(name) {
        None => None,
        Some(v) => match v.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                bad(format!("header: `{name}` must be a string"));
                None
            }
        },
    };
    let base = opt_string("base", &mut bad);
    if let Some(b) = &base
        && !hash::is_hash(b)
    {
        bad(format!("header: `base` {b:?} is not a sha256 hash"));
    }
    let parent_session = opt_string("parent_session", &mut bad);
    let spawned_by = opt_string("spawned_by", &mut bad);
    let _ = opt_string("cwd", &mut bad);
    if let Some(m) = opt_string("media", &mut bad)
        && m != "inline"
        && m != "sidecar"
    {
        bad(format!(
            "header: `media` {m:?} is neither \"inline\" nor \"sidecar\""
        ));
    }
    let mut records = Vec::new();
    if let Some(r) = obj.get("records") {
        match r.as_array() {
            Some(a) => {
                for v in a.iter() {
                    match v.as_str() {
                        Some(s) => records.push(s.to_owned()),
                        None => bad("header: `records` must hold strings".into()),
                    }
                }
            }
            None => bad("header: `records` must be an array".into()),
        }
    }
    if let Some(h) = obj.get("harness")
        && h.json_type() != JsonType::Object
    {
        bad("header: `harness` must be an object".into());
    }
    let redacted = match obj.get("redacted") {
        None => false,
        Some(v) => match v.as_bool() {
            Some(b) => b,
            None => {
                bad("header: `redacted` must be a boolean".into());
                false
            }
        },
    };
    Ok(Header {
        format: format.to_owned(),
        minor,
        id,
        base,
        parent_session,
        spawned_by,
        records,
        redacted,
    })
}

/// RFC 3339 `date-time` (any offset, any fraction).
pub(crate) fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let d = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(d(0..4)
        && b[4] == b'-'
        && d(5..7)
        && b[7] == b'-'
        && d(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && d(11..13)
        && b[13] == b':'
        && d(14..16)
        && b[16] == b':'
        && d(17..19))
    {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

struct LineReader {
    parser: Parser,
    scratch: Vec<u8>,
}

impl LineReader {
    fn entry<'a>(
        &mut self,
        line: &'a [u8],
        line_no: usize,
        last: bool,
        problems: &mut Vec<Problem>,
    ) -> Option<Entry<'a>> {
        let mut report = |kind| {
            problems.push(Problem {
                line: line_no,
                kind,
            })
        };
        let doc = match self.parser.parse(line) {
            Ok(d) => d,
            Err(e) => {
                report(if last {
                    ProblemKind::TruncatedLastLine
                } else {
                    ProblemKind::BadJson(e.to_string())
                });
                return None;
            }
        };
        let root = doc.root();
        let Some(obj) = root.as_object() else {
            report(ProblemKind::NotObject);
            return None;
        };
        // Envelope members, each once.
        let mut counts = [0usize; 5];
        let mut content_member = false;
        for m in obj.iter() {
            if let Some(i) = ENVELOPE.iter().position(|n| *n == m.key) {
                counts[i] += 1;
            } else if m.key == "content" {
                content_member = true;
            }
        }
        for (i, n) in counts.iter().enumerate() {
            if *n > 1 {
                report(ProblemKind::NotIJson(
                    CanonError::DuplicateName(ENVELOPE[i].to_owned()).to_string(),
                ));
                return None;
            }
        }
        let [id, t, parent, parents, ts] = obj.get_many(ENVELOPE);
        let Some(entry_type) = t.and_then(|v| v.as_str()).filter(|s| !s.is_empty()) else {
            report(ProblemKind::Envelope(
                "`type` must be a non-empty string".into(),
            ));
            return None;
        };
        let Some(id) = id.and_then(|v| v.as_str()) else {
            report(ProblemKind::Envelope("`id` must be a string".into()));
            return None;
        };
        let id_ok = hash::is_hash(id);
        if !id_ok {
            report(ProblemKind::Envelope(format!(
                "`id` {id:?} is not `sha256:` and 64 lowercase hex digits"
            )));
        }
        let parent = match parent {
            None => {
                report(ProblemKind::Envelope(
                    "`parent` is missing (null for a root)".into(),
                ));
                None
            }
            Some(v) if v.is_null() => None,
            Some(v) => match v.as_str() {
                Some(s) => Some(s.to_owned()),
                None => {
                    report(ProblemKind::Envelope(
                        "`parent` must be a string or null".into(),
                    ));
                    None
                }
            },
        };
        let ts_str = match ts.and_then(|v| v.as_str()) {
            Some(s) => {
                if !is_canonical_ts(s) {
                    report(ProblemKind::TsSpelling(s.to_owned()));
                }
                s.to_owned()
            }
            None => {
                report(ProblemKind::Envelope("`ts` must be a string".into()));
                String::new()
            }
        };
        let mut parent_refs = Vec::new();
        let mut parents_canon: Option<Vec<u8>> = None;
        if let Some(pv) = parents {
            match pv.as_array() {
                Some(a) => {
                    for r in a.iter() {
                        let entry = r.get("entry").and_then(|v| v.as_str());
                        let session = r.get("session").map(|v| v.as_str());
                        match (r.as_object(), entry, session) {
                            (Some(_), Some(e), None) => parent_refs.push(ParentRef {
                                session: None,
                                entry: e.to_owned(),
                            }),
                            (Some(_), Some(e), Some(Some(s))) => parent_refs.push(ParentRef {
                                session: Some(s.to_owned()),
                                entry: e.to_owned(),
                            }),
                            _ => report(ProblemKind::Parents(
                                "a `parents` reference must be an object with a string `entry` (and a string `session`)".into(),
                            )),
                        }
                    }
                    if a.is_empty() {
                        report(ProblemKind::Parents(
                            "`parents` is empty (a writer omits it)".into(),
                        ));
                    } else {
                        let mut out = Vec::new();
                        match canon::canonical_value(pv, &mut out) {
                            Ok(()) => parents_canon = Some(out),
                            Err(e) => {
                                report(ProblemKind::NotIJson(e.to_string()));
                            }
                        }
                    }
                }
                None => report(ProblemKind::Parents("`parents` must be an array".into())),
            }
        }
        if content_member {
            report(ProblemKind::ReservedMember("content".into()));
        }
        // The content hash, then the envelope hash.
        self.scratch.clear();
        let mut verified = false;
        match canon::canonical_value_skipping(root, &ENVELOPE, &mut self.scratch) {
            Err(e) => report(ProblemKind::NotIJson(e.to_string())),
            Ok(()) => {
                let content = sha256_ref(&self.scratch);
                self.scratch.clear();
                envelope_bytes(
                    &mut self.scratch,
                    entry_type,
                    parent.as_deref(),
                    parents_canon.as_deref(),
                    &ts_str,
                    &content,
                );
                let computed = sha256_ref(&self.scratch);
                if computed == id {
                    verified = !content_member;
                } else if id_ok {
                    report(ProblemKind::HashMismatch {
                        recorded: id.to_owned(),
                        computed,
                    });
                }
            }
        }
        let mut e = Entry {
            line: line_no,
            raw: line,
            entry_type: entry_type.to_owned(),
            id: id.to_owned(),
            parent,
            parents: parent_refs,
            ts: ts_str,
            verified,
            item_type: None,
            call_id: None,
            response_id: None,
            request_hash: None,
            refs: Vec::new(),
            label: None,
        };
        type_members(&mut e, root, &mut report);
        Some(e)
    }
}

/// The members each core type requires, and the ones the tree needs copied.
fn type_members(e: &mut Entry<'_>, root: Value<'_>, report: &mut dyn FnMut(ProblemKind)) {
    let s = |name: &str| root.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let need_str = |name: &str, report: &mut dyn FnMut(ProblemKind)| -> Option<String> {
        let v = s(name);
        if v.is_none() {
            report(ProblemKind::Member(format!(
                "a `{}` entry requires the string `{name}`",
                e.entry_type
            )));
        }
        v
    };
    let need_obj =
        |name: &str, report: &mut dyn FnMut(ProblemKind), t: &str| -> Option<Value<'_>> {
            match root.get(name) {
                Some(v) if v.json_type() == JsonType::Object => Some(v),
                _ => {
                    report(ProblemKind::Member(format!(
                        "a `{t}` entry requires the object `{name}`"
                    )));
                    None
                }
            }
        };
    let closed =
        |name: &str, v: &Option<String>, allowed: &[&str], report: &mut dyn FnMut(ProblemKind)| {
            if let Some(v) = v
                && !allowed.contains(&v.as_str())
            {
                report(ProblemKind::Member(format!(
                    "`{name}` {v:?} is not one of {}",
                    allowed.join(", ")
                )));
            }
        };
    let t = e.entry_type.clone();
    match t.as_str() {
        "item" => {
            if let Some(item) = need_obj("item", report, &t) {
                let it = item.get("type").and_then(|v| v.as_str());
                if it.is_none() {
                    report(ProblemKind::Member(
                        "an item requires a string `type`".into(),
                    ));
                }
                if it == Some("function_call") {
                    match item.get("call_id").and_then(|v| v.as_str()) {
                        Some("") | None => report(ProblemKind::CallId(
                            "a function_call's `call_id` is empty or missing".into(),
                        )),
                        Some(c) => e.call_id = Some(c.to_owned()),
                    }
                }
                e.item_type = it.map(str::to_owned);
            }
            e.response_id = s("response");
            if let Some(v) = root.get("visible")
                && v.as_bool().is_none()
            {
                report(ProblemKind::Member("`visible` must be a boolean".into()));
            }
        }
        "response" => {
            e.response_id = s("response_id");
            e.request_hash = s("request_hash");
            if let Some(h) = &e.request_hash
                && !hash::is_hash(h)
            {
                report(ProblemKind::Member(format!(
                    "`request_hash` {h:?} is not a sha256 hash"
                )));
            }
            if let Some(a) = root.get("attempts")
                && a.as_i64().is_none_or(|n| n < 1)
            {
                report(ProblemKind::Member(
                    "`attempts` must be a positive integer".into(),
                ));
            }
        }
        "config" => {
            if let Some(r) = root.get("replace")
                && r.as_bool().is_none()
            {
                report(ProblemKind::Member("`replace` must be a boolean".into()));
            }
            for name in ["tools_added", "tools_removed", "instructions_parts"] {
                if let Some(v) = root.get(name)
                    && v.json_type() != JsonType::Array
                {
                    report(ProblemKind::Member(format!("`{name}` must be an array")));
                }
            }
            if let Some(v) = root.get("extra")
                && v.json_type() != JsonType::Object
            {
                report(ProblemKind::Member("`extra` must be an object".into()));
            }
        }
        "compaction" => {
            if let Some(f) = need_str("first_kept", report) {
                e.refs.push(("first_kept", f));
            }
            need_obj("summary", report, &t);
        }
        "branch_summary" => {
            if let Some(f) = need_str("from", report) {
                e.refs.push(("from", f));
            }
            need_obj("summary", report, &t);
        }
        "run" => {
            need_str("run_id", report);
            let phase = need_str("phase", report);
            closed("phase", &phase, &["start", "end"], report);
            match phase.as_deref() {
                Some("start") => {
                    let src = need_str("source", report);
                    closed("source", &src, &["input", "resume"], report);
                }
                Some("end") => {
                    let reason = need_str("reason", report);
                    closed(
                        "reason",
                        &reason,
                        &[
                            "done",
                            "stopped",
                            "interrupted",
                            "input_required",
                            "aborted",
                            "error",
                        ],
                        report,
                    );
                    match root.get("pending").and_then(|v| v.as_array()) {
                        Some(a) if a.iter().all(|v| v.as_str().is_some()) => {}
                        _ => report(ProblemKind::Member(
                            "a run end requires `pending`, an array of call ids".into(),
                        )),
                    }
                }
                _ => {}
            }
        }
        "dispatch" | "decision" => {
            e.call_id = need_str("call_id", report);
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            if t == "decision" {
                let verdict = need_str("verdict", report);
                closed(
                    "verdict",
                    &verdict,
                    &["proceed", "reject", "hold", "answer"],
                    report,
                );
                closed("by", &s("by"), &["human", "policy", "agent"], report);
                if verdict.as_deref() == Some("reject") && s("reason").is_none() {
                    report(ProblemKind::Member(
                        "a `reject` decision requires `reason`".into(),
                    ));
                }
            }
        }
        "queued" => {
            need_obj("item", report, &t);
            let mode = need_str("mode", report);
            closed("mode", &mode, &["steer", "followup"], report);
        }
        "label" => {
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            match root.get("label") {
                Some(v) if v.is_null() => e.label = Some(None),
                Some(v) if v.as_str().is_some() => e.label = Some(v.as_str().map(str::to_owned)),
                _ => report(ProblemKind::Member(
                    "a `label` requires `label`, a string or null".into(),
                )),
            }
        }
        "outcome" => {
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            if let Some(sc) = root.get("score")
                && !sc.as_f64().is_some_and(f64::is_finite)
            {
                report(ProblemKind::Member(
                    "`score` must be a finite number".into(),
                ));
            }
        }
        "link" => {
            let rel = need_str("rel", report);
            closed(
                "rel",
                &rel,
                &["subsession", "fork_of", "continued_in"],
                report,
            );
            need_str("session", report);
        }
        "custom" => {
            need_str("ns", report);
        }
        "env" => {
            if let Some(w) = root.get("workspace") {
                let kind = w.get("kind").and_then(|v| v.as_str()).map(str::to_owned);
                closed(
                    "workspace.kind",
                    &kind,
                    &["local", "container", "remote"],
                    report,
                );
            }
        }
        "info" => {}
        other => {
            let namespaced = other
                .split_once(':')
                .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty());
            if !namespaced {
                report(ProblemKind::UnknownType(other.to_owned()));
            }
        }
    }
}

/// The line-local checks, for the appender to run on what it writes.
#[derive(Debug)]
pub(crate) struct LineReaderPub(LineReader);

impl std::fmt::Debug for LineReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineReader")
    }
}

impl LineReaderPub {
    pub(crate) fn new() -> Self {
        LineReaderPub(LineReader {
            parser: Parser::new(),
            scratch: Vec::new(),
        })
    }

    /// The entry the line is, or the first problem it has.
    pub(crate) fn check<'a>(
        &mut self,
        line: &'a [u8],
        line_no: usize,
    ) -> Result<Entry<'a>, Problem> {
        let mut problems = Vec::new();
        let e = self.0.entry(line, line_no, false, &mut problems);
        match (e, problems.into_iter().next()) {
            (Some(e), None) if e.verified => Ok(e),
            (_, Some(p)) => Err(p),
            (_, None) => Err(Problem {
                line: line_no,
                kind: ProblemKind::Envelope("the line does not verify".into()),
            }),
        }
    }
}
