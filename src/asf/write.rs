//! Writing ASF: the [`Appender`], which canonicalises, hashes and links
//! each entry so that whatever it writes verifies, and
//! [`Session::write_canonical`], which writes a read file back.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use smallvec::SmallVec;

use crate::json::{Map, OwnedValue};

use super::canon::{self, CanonError, cmp_utf16};
use super::context::Settings;
use super::hash::{HexRef, PREFIX, envelope_bytes_own, hex_ref};
use super::problem::Problem;
use super::read::{ENVELOPE, FORMAT, LineReaderPub, PAYLOAD, ParentRef, Session, is_rfc3339};
use super::request::RequestHasher;
use super::ts::is_canonical_ts;
use normalise::normalise;

/// Why the appender refused an entry (nothing was written for it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WriteError {
    /// The header lacks a member the format requires, or has a bad one.
    #[error("header: {0}")]
    Header(String),
    /// The body carries a member by a reserved envelope name (or its own
    /// `normalised` where the appender must record a normalisation).
    #[error("the body carries the reserved member {0:?}")]
    Reserved(String),
    /// The entry has no canonical form (a repeated name, a non-finite
    /// number), which no normalisation repairs.
    #[error("not I-JSON: {0}")]
    NotIJson(CanonError),
    /// `ts` is not in the one accepted spelling.
    #[error("ts {0:?} is not in the one accepted spelling")]
    Ts(String),
    /// The parent (or a `parents` entry) is not an entry written before.
    #[error("{0} names no entry written before")]
    UnknownEntry(String),
    /// The entry breaks a rule of its type; the problem says which.
    #[error("{0}")]
    Rule(Problem),
    /// The entry is already in the file (same type, body, parent and `ts`).
    #[error("entry {0} is already written")]
    Duplicate(String),
}

/// Writes one session file: the header, then entries, each canonical,
/// hashed and linked. Entries go under the leaf unless a parent is given
/// ([`Appender::append_at`]), which branches.
#[derive(Debug)]
pub struct Appender {
    out: Vec<u8>,
    session_id: String,
    /// Every entry written: its id's digest (the 32 bytes its
    /// `sha256:` hex spells, [`digest_of`]) → its position (in `parents`).
    index: HashMap<[u8; 32], u32>,
    /// Per entry, by position: its parent's position (`None` at a root).
    parents: Vec<Option<u32>>,
    /// The `function_call` item entries, by position: their call ids.
    function_calls: HashMap<u32, String>,
    call_ids: HashSet<String>,
    leaf: Option<String>,
    /// The leaf's position (in `parents`), kept with `leaf`: an entry
    /// appended under the leaf finds its parent without a lookup.
    leaf_at: Option<u32>,
    /// The line checks of an appender that reads back what it writes;
    /// made at its first line (a trusted appender never makes one).
    reader: Option<LineReaderPub>,
    lines: usize,
    /// Per entry: what the incremental `request_hash` check needs.
    chain: HashMap<String, Link>,
    /// Whether lines are written without being read back (see
    /// [`Appender::trusted`]).
    trusted: bool,
    /// The members of the entry being written, canonical (kept from one
    /// entry to the next).
    scratch: Vec<u8>,
    /// The envelope object of the entry being written.
    envelope: Vec<u8>,
    /// The leaf an entry appended under it names as its parent, copied
    /// out of `leaf` (kept from one entry to the next).
    parent: String,
}

/// What the rules across lines need of an entry: from the line read back
/// (checked appends) or from the body itself (trusted appends).
#[derive(Debug, Default)]
struct Facts {
    /// The `call_id` of a `function_call` item.
    call: Option<String>,
    /// The `call_id` member (a `dispatch` or `decision`).
    call_id: Option<String>,
    first_kept: Option<String>,
    target: Option<String>,
}

impl Facts {
    fn of_entry(e: &super::read::Entry<'_>) -> Facts {
        let call_id = e.call_id.clone();
        Facts {
            call: call_id
                .clone()
                .filter(|_| e.item_type.as_deref() == Some("function_call")),
            call_id,
            first_kept: e.reference("first_kept").map(str::to_owned),
            target: e.reference("target").map(str::to_owned),
        }
    }

    fn of_body(entry_type: &str, body: &Map, item_call: Option<&str>) -> Facts {
        let text = |v: Option<&OwnedValue>| v.and_then(OwnedValue::as_str).map(str::to_owned);
        let item = body.get("item");
        let call = match item_call {
            Some(c) => Some(c.to_owned()),
            None if entry_type == "item"
                && item
                    .and_then(|i| i.get("type"))
                    .and_then(OwnedValue::as_str)
                    == Some("function_call") =>
            {
                Some(text(item.and_then(|i| i.get("call_id"))).unwrap_or_default())
            }
            None => None,
        };
        Facts {
            call: call.clone(),
            call_id: if entry_type == "item" {
                call
            } else {
                text(body.get("call_id"))
            },
            first_kept: text(body.get("first_kept")),
            target: text(body.get("target")),
        }
    }
}

/// What an entry contributes to the request a path rebuilds, for the
/// incremental `request_hash` check: the running hash of the context at
/// the entry (absent when it could not be had), and whether it is an item
/// (with the `response` it names) or an entry that changes nothing.
#[derive(Debug, Clone)]
struct Link {
    parent: Option<String>,
    state: Option<std::rc::Rc<RequestHasher>>,
    /// `Some(response)` for an `item` entry.
    item: Option<Option<String>>,
    /// Neither an item nor an entry that changes settings or items.
    passive: bool,
}

impl Appender {
    /// Starts a file with this header. `type` and `format` are set when
    /// absent (`session`, [`FORMAT`]), as is `payload` ([`PAYLOAD`]); `id`
    /// and `created_at` (RFC 3339) are required.
    pub fn new(header: Map) -> Result<Self, WriteError> {
        Appender::writing_into(header, Vec::new())
    }

    /// [`Appender::new`] writing its file into `out` (emptied first): a
    /// writer of many files hands each appender the allocation of the
    /// file before.
    fn writing_into(mut header: Map, mut out: Vec<u8>) -> Result<Self, WriteError> {
        if !header.contains_key("type") {
            header.insert("type", OwnedValue::string("session"));
        }
        if !header.contains_key("format") {
            header.insert("format", OwnedValue::string(FORMAT));
        }
        if !header.contains_key("payload") {
            header.insert("payload", OwnedValue::string(PAYLOAD));
        }
        if header.get("type").and_then(OwnedValue::as_str) != Some("session") {
            return Err(WriteError::Header("`type` must be \"session\"".into()));
        }
        if header.get("format").and_then(OwnedValue::as_str) != Some(FORMAT) {
            return Err(WriteError::Header(format!("`format` must be {FORMAT:?}")));
        }
        let id = header
            .get("id")
            .and_then(OwnedValue::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| WriteError::Header("`id` must be a non-empty string".into()))?
            .to_owned();
        if !header
            .get("created_at")
            .and_then(OwnedValue::as_str)
            .is_some_and(is_rfc3339)
        {
            return Err(WriteError::Header(
                "`created_at` must be an RFC 3339 date-time".into(),
            ));
        }
        out.clear();
        canon::canonical_owned(&OwnedValue::Object(header), &mut out)
            .map_err(WriteError::NotIJson)?;
        out.push(b'\n');
        Ok(Appender {
            out,
            session_id: id,
            index: HashMap::new(),
            parents: Vec::new(),
            function_calls: HashMap::new(),
            call_ids: HashSet::new(),
            leaf: None,
            leaf_at: None,
            reader: None,
            lines: 1,
            chain: HashMap::new(),
            trusted: false,
            scratch: Vec::new(),
            envelope: Vec::new(),
            parent: String::new(),
        })
    }

    /// An appender for a writer that builds every entry itself (the
    /// crate's converters): each entry is normalised, canonicalised, hashed
    /// and linked as [`Appender::append`] does, and the rules across lines
    /// that need only the appender's own records (parents, duplicate ids,
    /// call ids, `first_kept` and `target` on the path) are checked; the
    /// line is not read back as a reader would check it, and a `response`'s
    /// `request_hash` is not rebuilt (the writer computed it). What such a
    /// writer writes is proven by verifying its files.
    /// Its file is written into `out` (emptied first), as
    /// [`Appender::writing_into`] does.
    pub(crate) fn trusted(header: Map, out: Vec<u8>) -> Result<Self, WriteError> {
        let mut a = Appender::writing_into(header, out)?;
        a.trusted = true;
        Ok(a)
    }

    /// Makes room for `additional` more bytes of the file and `entries`
    /// more entries in the index (a writer that knows about how much it
    /// will write saves the buffer's regrowths and the index's rehashes).
    pub(crate) fn reserve(&mut self, additional: usize, entries: usize) {
        self.out.reserve(additional);
        self.index.reserve(entries);
        self.parents.reserve(entries);
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The entry the next [`Appender::append`] hangs from.
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Moves the leaf to an entry already written (as a `leaf` label does
    /// for a reader; write one too if the file must say so).
    pub fn set_leaf(&mut self, id: &str) -> Result<(), WriteError> {
        let Some(at) = self.position(id) else {
            return Err(WriteError::UnknownEntry(id.to_owned()));
        };
        self.leaf = Some(id.to_owned());
        self.leaf_at = Some(at);
        Ok(())
    }

    /// Whether an entry with this id was written.
    pub fn contains(&self, id: &str) -> bool {
        self.position(id).is_some()
    }

    /// The position of the entry with this id, if one was written (an id
    /// is looked up by the digest it spells; a string that is not an id
    /// as the appender writes them names none).
    fn position(&self, id: &str) -> Option<u32> {
        self.index.get(&digest_of(id)?).copied()
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// The file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.out
    }

    /// Appends an entry under the leaf, which it becomes; returns its id.
    pub fn append(&mut self, entry_type: &str, ts: &str, body: Map) -> Result<String, WriteError> {
        let parent = self.leaf.clone();
        self.append_at(parent.as_deref(), &[], entry_type, ts, body)
    }

    /// Appends under the leaf an entry whose body is `body` and the members
    /// of `canonical`, each given as its name and its value's canonical
    /// bytes (RFC 8785, I-JSON: the caller canonicalised it). For a trusted
    /// appender ([`Appender::trusted`]) only; `item_call` is the `call_id`
    /// of a `function_call` given as the canonical `item`.
    pub(crate) fn append_canonical(
        &mut self,
        entry_type: &str,
        ts: &str,
        body: Map,
        canonical: &[(&str, &[u8])],
        item_call: Option<&str>,
    ) -> Result<String, WriteError> {
        debug_assert!(self.trusted, "canonical members on a checked appender");
        // The leaf copied into a buffer kept from one entry to the next (the
        // entry moves the leaf), not into a new string each time.
        let mut parent = std::mem::take(&mut self.parent);
        parent.clear();
        let under = self.leaf.as_deref().map(|l| {
            parent.push_str(l);
        });
        let done = self.append_inner(
            under.map(|()| parent.as_str()),
            &[],
            entry_type,
            ts,
            body,
            canonical,
            item_call,
        );
        self.parent = parent;
        done
    }

    /// Appends an entry under `parent` (a root when `None`), converging
    /// `parents`; the leaf moves to it when `parent` is the leaf.
    pub fn append_at(
        &mut self,
        parent: Option<&str>,
        parents: &[ParentRef],
        entry_type: &str,
        ts: &str,
        body: Map,
    ) -> Result<String, WriteError> {
        self.append_inner(parent, parents, entry_type, ts, body, &[], None)
    }

    #[allow(clippy::too_many_arguments)]
    fn append_inner(
        &mut self,
        parent: Option<&str>,
        parents: &[ParentRef],
        entry_type: &str,
        ts: &str,
        mut body: Map,
        canonical: &[(&str, &[u8])],
        item_call: Option<&str>,
    ) -> Result<String, WriteError> {
        for name in ENVELOPE.iter().chain(&["content"]) {
            if body.contains_key(name) || canonical.iter().any(|(k, _)| k == name) {
                return Err(WriteError::Reserved((*name).to_owned()));
            }
        }
        if !is_canonical_ts(ts) {
            return Err(WriteError::Ts(ts.to_owned()));
        }
        // The parent's position, looked up once (`commit` records it); the
        // leaf's is kept.
        let parent_at = match parent {
            Some(p) if Some(p) == self.leaf.as_deref() => self.leaf_at,
            Some(p) => match self.position(p) {
                Some(at) => Some(at),
                None => return Err(WriteError::UnknownEntry(p.to_owned())),
            },
            None => None,
        };
        let mut refs: Vec<ParentRef> = parents.to_vec();
        refs.sort_by(|a, b| {
            (a.session.is_some(), &a.session, &a.entry).cmp(&(
                b.session.is_some(),
                &b.session,
                &b.entry,
            ))
        });
        for (k, r) in refs.iter().enumerate() {
            // The hash is the identity: one entry is named once, with or
            // without `session`, and never as well as the parent.
            let twice = refs[..k].iter().any(|o| o.entry == r.entry);
            if twice || Some(r.entry.as_str()) == parent {
                return Err(WriteError::Rule(Problem {
                    line: self.lines + 1,
                    kind: super::problem::ProblemKind::Parents(if twice {
                        format!("`parents` names {} twice", r.entry)
                    } else {
                        format!("`parents` repeats the parent {}", r.entry)
                    }),
                }));
            }
            let local = r.session.as_deref().is_none_or(|s| s == self.session_id);
            if local && self.position(&r.entry).is_none() {
                return Err(WriteError::UnknownEntry(r.entry.clone()));
            }
        }
        // Normalise what the I-JSON test rejects and a rewrite can fix.
        let mut normalised = Vec::new();
        let mut value = OwnedValue::Object(std::mem::take(&mut body));
        normalise(&mut value, &mut String::new(), &mut normalised)?;
        let OwnedValue::Object(mut body) = value else {
            unreachable!()
        };
        if !normalised.is_empty() {
            if body.contains_key("normalised") {
                return Err(WriteError::Reserved("normalised".into()));
            }
            normalised.sort_by(|a: &(String, String), b| cmp_utf16(&a.0, &b.0));
            let list = normalised
                .into_iter()
                .map(|(at, was)| {
                    let mut m = Map::new();
                    m.insert("at", OwnedValue::string(at));
                    m.insert("was", OwnedValue::string(was));
                    OwnedValue::Object(m)
                })
                .collect();
            body.insert("normalised", OwnedValue::Array(list));
        }
        // `parents` canonical (made before the members, which may borrow it).
        let parents_canon = if refs.is_empty() {
            None
        } else {
            let v = OwnedValue::Array(
                refs.iter()
                    .map(|r| {
                        let mut m = Map::new();
                        m.insert("entry", OwnedValue::string(r.entry.clone()));
                        if let Some(s) = &r.session {
                            m.insert("session", OwnedValue::string(s.clone()));
                        }
                        OwnedValue::Object(m)
                    })
                    .collect(),
            );
            Some(canon::to_canonical(&v).map_err(WriteError::NotIJson)?)
        };
        // Hash: content, then envelope. Each member is canonicalised once,
        // into the appender's scratch buffer (kept from one entry to the
        // next); the content and the line are the same members in UTF-16
        // order, the line with the envelope's among them.
        // A member: its name, the range of the scratch buffer holding
        // `"name":` and (for one canonicalised here) its value, then the
        // value the caller canonicalised.
        self.scratch.clear();
        // On the stack for an entry of up to a dozen members (the body's,
        // the caller's canonical ones, the envelope's five): no allocation
        // for most entries.
        let mut members: Members<'_> = SmallVec::with_capacity(body.len() + canonical.len() + 5);
        for (k, v) in body.iter() {
            let start = self.scratch.len();
            crate::json::write::write_str(&mut self.scratch, k, false);
            self.scratch.push(b':');
            canon::canonical_owned(v, &mut self.scratch).map_err(WriteError::NotIJson)?;
            members.push((k, start..self.scratch.len(), &[]));
        }
        for (k, v) in canonical {
            let start = self.scratch.len();
            crate::json::write::write_str(&mut self.scratch, k, false);
            self.scratch.push(b':');
            members.push((*k, start..self.scratch.len(), *v));
        }
        members.sort_by(|a, b| cmp_utf16(a.0, b.0));
        if let Some(w) = members.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(WriteError::NotIJson(CanonError::DuplicateName(
                w[0].0.to_owned(),
            )));
        }
        // The content hash, streamed over the pieces.
        let content_hash = {
            use sha2::Digest;
            let mut h = sha2::Sha256::new();
            join_members(&members, &self.scratch, |b| h.update(b));
            HexRef::new(&h.finalize())
        };
        self.envelope.clear();
        envelope_bytes_own(
            &mut self.envelope,
            entry_type,
            parent,
            parents_canon.as_deref(),
            ts,
            content_hash.as_str(),
        );
        let digest = crate::hash::sha256(&self.envelope);
        let id = hex_ref(&digest);
        if self.index.contains_key(&digest) {
            return Err(WriteError::Duplicate(id));
        }
        // The envelope's members, each a JSON string but `parent` (null at
        // a root) and `parents` (canonical already), each put in its place
        // among the sorted members (no name of the envelope is among them).
        fn put<'m>(members: &mut Members<'m>, member: (&'m str, std::ops::Range<usize>, &'m [u8])) {
            let at = members.partition_point(|m| cmp_utf16(m.0, member.0).is_lt());
            members.insert(at, member);
        }
        // `plain`: a value with nothing to escape, copied between its
        // quotes as it stands (an id, which is `sha256:` and hex digits, and
        // the parent, which names one; a canonical `ts`).
        let mut string_member =
            |scratch: &mut Vec<u8>, k: &'static str, v: Option<&str>, plain: bool| {
                let start = scratch.len();
                scratch.push(b'"');
                scratch.extend_from_slice(k.as_bytes());
                scratch.extend_from_slice(b"\":");
                match v {
                    Some(v) if plain => crate::json::write::write_plain_str(scratch, v),
                    Some(v) => crate::json::write::write_str(scratch, v, false),
                    None => scratch.extend_from_slice(b"null"),
                }
                put(&mut members, (k, start..scratch.len(), &[]));
            };
        string_member(&mut self.scratch, "type", Some(entry_type), false);
        string_member(&mut self.scratch, "id", Some(&id), true);
        // Known to the index, so one of the ids written here.
        string_member(&mut self.scratch, "parent", parent, true);
        // Checked by `is_canonical_ts` above.
        string_member(&mut self.scratch, "ts", Some(ts), true);
        if let Some(p) = &parents_canon {
            let start = self.scratch.len();
            self.scratch.extend_from_slice(b"\"parents\":");
            put(&mut members, ("parents", start..self.scratch.len(), p));
        }
        // The members joined as one object, written to `out`.
        let join = |out: &mut Vec<u8>| {
            out.reserve(
                members
                    .iter()
                    .map(|m| m.1.len() + m.2.len() + 1)
                    .sum::<usize>()
                    + 3,
            );
            join_members(&members, &self.scratch, |b| out.extend_from_slice(b));
        };
        if self.trusted {
            let facts = Facts::of_body(entry_type, &body, item_call);
            self.check_links(entry_type, &facts, parent)?;
            join(&mut self.out);
            self.out.push(b'\n');
            self.commit(&id, digest, parent, parent_at, &facts);
            return Ok(id);
        }
        let mut bytes = Vec::new();
        join(&mut bytes);
        // The item an `item` or `branch_summary` entry contributes to the
        // context, for the incremental request hash.
        let contributed = match entry_type {
            "item" => body.get("item"),
            "branch_summary" => body.get("summary"),
            _ => None,
        };
        // The checks a reader makes on the line alone, then across lines.
        let problems = self
            .reader
            .get_or_insert_with(LineReaderPub::new)
            .check(&bytes, self.lines + 1);
        let entry = match problems {
            Ok(e) => e,
            Err(p) => return Err(WriteError::Rule(p)),
        };
        let facts = Facts::of_entry(&entry);
        self.check_links(&entry.entry_type, &facts, parent)?;
        if entry.entry_type == "response"
            && let Some(recorded) = entry.request_hash.clone()
        {
            self.check_request_hash(&bytes, &id, &recorded, parent, &entry)?;
        }
        self.out.extend_from_slice(&bytes);
        self.out.push(b'\n');
        self.commit(&id, digest, parent, parent_at, &facts);
        let link = self.link(&id, parent, &entry, contributed);
        self.chain.insert(id.clone(), link);
        Ok(id)
    }

    /// Records the entry whose line was just written.
    fn commit(
        &mut self,
        id: &str,
        digest: [u8; 32],
        parent: Option<&str>,
        parent_at: Option<u32>,
        facts: &Facts,
    ) {
        self.lines += 1;
        let at = self.parents.len() as u32;
        self.parents.push(parent_at);
        self.index.insert(digest, at);
        if let Some(c) = &facts.call {
            self.call_ids.insert(c.clone());
            self.function_calls.insert(at, c.clone());
        }
        if parent == self.leaf.as_deref() {
            self.leaf_at = Some(at);
            // The leaf's allocation reused.
            match &mut self.leaf {
                Some(leaf) => {
                    leaf.clear();
                    leaf.push_str(id);
                }
                None => self.leaf = Some(id.to_owned()),
            }
        }
    }

    fn on_path(&self, from: Option<&str>, id: &str) -> bool {
        let Some(target) = self.position(id) else {
            return false;
        };
        let mut cur = from.and_then(|f| self.position(f));
        while let Some(c) = cur {
            if c == target {
                return true;
            }
            cur = self.parents.get(c as usize).copied().flatten();
        }
        false
    }

    fn check_links(
        &self,
        entry_type: &str,
        e: &Facts,
        parent: Option<&str>,
    ) -> Result<(), WriteError> {
        let rule = |m: String| {
            Err(WriteError::Rule(Problem {
                line: self.lines + 1,
                kind: super::problem::ProblemKind::Reference(m),
            }))
        };
        if e.call.as_deref() == Some("") {
            return Err(WriteError::Rule(Problem {
                line: self.lines + 1,
                kind: super::problem::ProblemKind::CallId(
                    "a function_call's `call_id` is empty or missing".into(),
                ),
            }));
        }
        if let Some(c) = &e.call
            && self.call_ids.contains(c)
        {
            return Err(WriteError::Rule(Problem {
                line: self.lines + 1,
                kind: super::problem::ProblemKind::CallId(format!(
                    "call_id {c:?} is already taken"
                )),
            }));
        }
        match entry_type {
            "compaction" => {
                let f = e.first_kept.as_deref().unwrap_or("");
                if !self.on_path(parent, f) {
                    return rule(format!("first_kept {f} is not on the path"));
                }
            }
            "dispatch" | "decision" => {
                let t = e.target.as_deref().unwrap_or("");
                if !self.on_path(parent, t) {
                    return rule(format!("target {t} is not on the path"));
                }
                if self.position(t).and_then(|i| self.function_calls.get(&i)) != e.call_id.as_ref()
                {
                    return rule(format!(
                        "target {t} is not the function_call of this call_id"
                    ));
                }
            }
            "outcome" => {
                let t = e.target.as_deref().unwrap_or("");
                if self.position(t).is_none() {
                    return rule(format!("target {t} names no entry"));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The chain link of an entry just written.
    fn link(
        &self,
        id: &str,
        parent: Option<&str>,
        e: &super::read::Entry<'_>,
        contributed: Option<&OwnedValue>,
    ) -> Link {
        let parent_state = match parent {
            None => RequestHasher::new(&Settings::default())
                .ok()
                .map(std::rc::Rc::new),
            Some(p) => self.chain.get(p).and_then(|l| l.state.clone()),
        };
        let grown = || {
            let mut h = (*parent_state.clone()?).clone();
            h.push(contributed?).ok()?;
            Some(std::rc::Rc::new(h))
        };
        let (state, item, passive) = match e.entry_type.as_str() {
            "item" => (grown(), Some(e.response_id.clone()), false),
            "branch_summary" => (grown(), None, false),
            // Settings change, or a compaction starts the items again: the
            // context at the entry is rebuilt from the file once.
            "config" | "compaction" => {
                let state = Session::read(&self.out)
                    .ok()
                    .and_then(|s| s.context(Some(id)).ok())
                    .and_then(|c| RequestHasher::from_context(&c).ok())
                    .map(std::rc::Rc::new);
                (state, None, false)
            }
            _ => (parent_state, None, true),
        };
        Link {
            parent: parent.map(str::to_owned),
            state,
            item,
            passive,
        }
    }

    /// The running hash of the request a `response` under `parent` naming
    /// `response_id` was made from, when the chain has it: the path without
    /// the response's output items, every entry skipped on the way back
    /// being an output item or one that changes nothing.
    fn chained_request(&self, parent: Option<&str>, response_id: Option<&str>) -> Option<String> {
        let mut cur = parent?;
        if let Some(rid) = response_id {
            loop {
                let l = self.chain.get(cur)?;
                match &l.item {
                    Some(Some(r)) if r == rid => {}
                    Some(_) => break,
                    None if l.passive => {}
                    None => {
                        // An entry that changes the context: its state is
                        // the request's unless an output item of this
                        // response comes before it (interleaved outputs).
                        let mut back = l.parent.as_deref();
                        while let Some(k) = back {
                            let b = self.chain.get(k)?;
                            match &b.item {
                                Some(Some(r)) if r == rid => return None,
                                Some(_) => break,
                                None => back = b.parent.as_deref(),
                            }
                        }
                        break;
                    }
                }
                cur = l.parent.as_deref()?;
            }
        }
        Some(self.chain.get(cur)?.state.as_ref()?.hash())
    }

    fn check_request_hash(
        &self,
        line: &[u8],
        id: &str,
        recorded: &str,
        parent: Option<&str>,
        e: &super::read::Entry<'_>,
    ) -> Result<(), WriteError> {
        let rebuilt = match self.chained_request(parent, e.response_id.as_deref()) {
            Some(h) => Some(h),
            None => {
                let mut all = self.out.clone();
                all.extend_from_slice(line);
                all.push(b'\n');
                Session::read(&all)
                    .ok()
                    .and_then(|s| s.request_context(id).ok()?.request_hash().ok())
            }
        };
        if rebuilt.as_deref() == Some(recorded) {
            return Ok(());
        }
        Err(WriteError::Rule(Problem {
            line: self.lines + 1,
            kind: super::problem::ProblemKind::RequestHash {
                recorded: recorded.to_owned(),
                rebuilt: rebuilt.unwrap_or_default(),
            },
        }))
    }
}

/// The digest an id spells: `sha256:` and 64 lowercase hex digits, the
/// one spelling [`hex_ref`] writes, so that two strings give the same
/// digest only when they are the same id (`None` for anything else).
fn digest_of(id: &str) -> Option<[u8; 32]> {
    let hex = id.strip_prefix(PREFIX)?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    // Each byte's value as a lowercase hex digit, 0xff for any other byte;
    // the values or-ed together have a high bit set iff one was not a digit.
    const VALUE: [u8; 256] = {
        let mut t = [0xffu8; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    let mut out = [0u8; 32];
    let mut bad = 0u8;
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let (hi, lo) = (VALUE[usize::from(pair[0])], VALUE[usize::from(pair[1])]);
        bad |= hi | lo;
        *o = (hi << 4) | lo;
    }
    (bad < 16).then_some(out)
}

/// An entry's members being written: each one's name, the range of the
/// appender's scratch buffer holding `"name":` (and the value, when the
/// appender canonicalised it), and the value the caller canonicalised.
type Members<'m> = SmallVec<[(&'m str, std::ops::Range<usize>, &'m [u8]); 12]>;

/// The members of an entry (`"name":` and the value's bytes in `scratch`,
/// then the caller's canonical value) joined as one object, piece by piece
/// into `put`.
fn join_members(
    members: &[(&str, std::ops::Range<usize>, &[u8])],
    scratch: &[u8],
    mut put: impl FnMut(&[u8]),
) {
    put(b"{");
    for (i, (_, m, v)) in members.iter().enumerate() {
        if i > 0 {
            put(b",");
        }
        put(&scratch[m.clone()]);
        put(v);
    }
    put(b"}");
}

impl Session<'_> {
    /// Writes the file back: the header and each entry (in file order, each
    /// id once) as its line's canonical form, every member kept. A file
    /// whose lines are canonical, as every writer of the format writes
    /// them, comes back byte for byte. Fails on a line with no canonical
    /// form (one [`Session::verify`] reports).
    pub fn write_canonical(&self, out: &mut Vec<u8>) -> Result<(), CanonError> {
        let mut parser = crate::json::Parser::new();
        let mut line = |raw: &[u8], out: &mut Vec<u8>| -> Result<(), CanonError> {
            let doc = parser
                .parse(raw)
                .map_err(|_| CanonError::NotFinite(String::from_utf8_lossy(raw).into_owned()))?;
            canon::canonical_value(doc.root(), out)?;
            out.push(b'\n');
            Ok(())
        };
        line(self.header_raw(), out)?;
        for e in self.entries() {
            line(e.raw(), out)?;
        }
        Ok(())
    }
}

mod normalise;
#[cfg(test)]
mod tests;
