//! `request_hash` streamed: the canonical request of a context whose items
//! grow one at a time, hashed with one running SHA-256 so that the hash at
//! every step costs the new item and the fixed members, not the whole
//! request again.
//!
//! The canonical request (RFC 8785) writes its members in UTF-16 order, so
//! its bytes are the members sorting before `input`, then `"input":[`, the
//! items' canonical forms joined by commas, `]` and the members after. The
//! members other than `input` come from the settings alone; a
//! [`RequestHasher`] holds the running digest of everything up to the last
//! item and finishes a copy of it with the rest. The result is the hash
//! [`Context::request_hash`](super::Context::request_hash) computes.

use sha2::{Digest, Sha256};

use crate::hash::Sha256Stream;

use crate::json::{Map, OwnedValue};

use crate::json::Parser;

use super::canon::{CanonError, canonical_owned, canonical_value, cmp_utf16};
use super::context::{Context, Settings, request_with};
use super::hash::hex_ref;
use super::read::Session;

/// The running hash of a request whose settings are fixed and whose items
/// are appended.
#[derive(Clone)]
pub struct RequestHasher {
    /// The digest of the head (`{`, the members before `input`,
    /// `"input":[`) and the items so far.
    state: Sha256Stream,
    items: usize,
    /// `]`, the members after `input` (each after a comma), `}`.
    tail: std::sync::Arc<Vec<u8>>,
    /// The members before `input`, each followed by a comma (for the
    /// request with no item, which has no `input` member).
    head: std::sync::Arc<Vec<u8>>,
}

impl std::fmt::Debug for RequestHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHasher")
            .field("items", &self.items)
            .finish_non_exhaustive()
    }
}

impl RequestHasher {
    /// A hasher for requests with these settings and no item yet.
    pub fn new(settings: &Settings) -> Result<Self, CanonError> {
        RequestHasher::of_settings(settings, None)
    }

    /// [`RequestHasher::new`] given the canonical form of the settings'
    /// tool definitions (the array), which the caller has already;
    /// `settings.tools` itself is not read.
    pub(crate) fn with_canonical_tools(
        settings: &Settings,
        tools: &[u8],
    ) -> Result<Self, CanonError> {
        RequestHasher::of_settings(settings, Some(tools))
    }

    fn of_settings(settings: &Settings, tools: Option<&[u8]>) -> Result<Self, CanonError> {
        let members = match request_with(settings, &[], tools.is_none()) {
            OwnedValue::Object(m) => m,
            _ => Map::new(),
        };
        // A member's value: owned, or canonical already (the tools).
        let mut sorted: Vec<(&str, Result<&OwnedValue, &[u8]>)> =
            members.iter().map(|(k, v)| (k, Ok(v))).collect();
        if let Some(t) = tools
            && t != b"[]"
        {
            sorted.push(("tools", Err(t)));
        }
        sorted.sort_by(|a, b| cmp_utf16(a.0, b.0));
        // Each member written once, into the head (the members before
        // `input`, each followed by a comma) or the tail (`]`, each member
        // after `input` preceded by a comma, `}`); the tools, the largest,
        // are in the tail. The request without items is `{`, the head's
        // members and the tail's joined, `}`: hashed from these pieces when
        // asked for.
        let tools_len = tools.map_or(0, <[u8]>::len);
        let mut head = Vec::new();
        let mut tail = Vec::with_capacity(tools_len + 64);
        tail.push(b']');
        for (k, v) in &sorted {
            let before = cmp_utf16(k, "input").is_lt();
            let out = if before { &mut head } else { &mut tail };
            if !before {
                out.push(b',');
            }
            crate::json::write::write_str(out, k, false);
            out.push(b':');
            match v {
                Ok(v) => canonical_owned(v, out)?,
                Err(c) => out.extend_from_slice(c),
            }
            if before {
                out.push(b',');
            }
        }
        tail.push(b'}');
        let mut state = Sha256Stream::default();
        state.update(b"{");
        state.update(&head);
        state.update(b"\"input\":[");
        Ok(RequestHasher {
            state,
            items: 0,
            tail: std::sync::Arc::new(tail),
            head: std::sync::Arc::new(head),
        })
    }

    /// A hasher holding a context's settings and items.
    pub fn from_context(ctx: &Context) -> Result<Self, CanonError> {
        let mut h = RequestHasher::new(&ctx.settings)?;
        for i in &ctx.items {
            h.push(i)?;
        }
        Ok(h)
    }

    /// Appends an item.
    pub fn push(&mut self, item: &OwnedValue) -> Result<(), CanonError> {
        let mut buf = Vec::new();
        canonical_owned(item, &mut buf)?;
        self.push_canonical(&buf);
        Ok(())
    }

    /// Appends an item given as its canonical bytes.
    pub fn push_canonical(&mut self, item: &[u8]) {
        if self.items > 0 {
            self.state.update(b",");
        }
        self.state.update(item);
        self.items += 1;
    }

    /// How many items were appended.
    pub fn len(&self) -> usize {
        self.items
    }

    /// Where the running hash stands: how many items and bytes it has
    /// hashed. Two hashers cloned from one another that stand at the same
    /// place after the same kind of appends give the same hash.
    pub(crate) fn position(&self) -> (usize, u64) {
        (self.items, self.state.len())
    }

    /// Whether no item was appended.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// The `request_hash` of the settings and the items so far.
    pub fn hash(&self) -> String {
        if self.items == 0 {
            // `{`, the members joined by commas, `}`: the head without its
            // last comma, then the tail without its `]` (and, when the head
            // has no member, without the comma before its first one).
            let mut s = Sha256::new();
            s.update(b"{");
            let tail = &self.tail[1..];
            match self.head.split_last() {
                Some((_, members)) => {
                    s.update(members);
                    s.update(tail);
                }
                None => s.update(tail.strip_prefix(b",").unwrap_or(tail)),
            }
            return hex_ref(&s.finalize());
        }
        hex_ref(&self.state.finish_with(&self.tail))
    }

    /// [`RequestHasher::hash`] of each of `hashers`, in order: the same
    /// hashes, in less time where several hashers have items and the same
    /// settings. Every hash but that of a request with no item ends with
    /// the members after `input` (the tool definitions, most of a
    /// request's bytes); a run of hashers whose members after `input` are
    /// the same has them hashed from each one's running hash side by side,
    /// which keeps the CPU's SHA unit busy where one hash chain alone would
    /// leave it waiting.
    ///
    /// ```
    /// use agentlog::asf::{RequestHasher, Settings};
    /// use agentlog::json::OwnedValue;
    ///
    /// let mut a = RequestHasher::new(&Settings::default())?;
    /// a.push(&OwnedValue::parse(br#"{"type":"message","role":"user","content":"hi"}"#)?)?;
    /// let mut b = a.clone();
    /// b.push(&OwnedValue::parse(br#"{"type":"message","role":"assistant","content":"hello"}"#)?)?;
    /// assert_eq!(RequestHasher::hash_many(&[&a, &b]), vec![a.hash(), b.hash()]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hash_many(hashers: &[&RequestHasher]) -> Vec<String> {
        let mut out = Vec::with_capacity(hashers.len());
        let mut rest = hashers;
        while let Some((first, _)) = rest.split_first() {
            // The run of hashers with items and `first`'s members after
            // `input`.
            let same = |h: &&RequestHasher| {
                h.items > 0
                    && (std::sync::Arc::ptr_eq(&h.tail, &first.tail) || h.tail == first.tail)
            };
            let run = rest.iter().take_while(|h| same(h)).count().max(1);
            let (group, after) = rest.split_at(run);
            if run == 1 {
                out.push(first.hash());
            } else {
                let states: Vec<&Sha256Stream> = group.iter().map(|h| &h.state).collect();
                out.extend(
                    Sha256Stream::finish_many_with(&states, &first.tail)
                        .iter()
                        .map(|d| hex_ref(d)),
                );
            }
            rest = after;
        }
        out
    }
}

/// The running hashes along a read session's paths, for checking every
/// `response`'s `request_hash` in time linear in the file: each entry's
/// state is its parent's, grown by the item it contributes; a `config`
/// applies its delta to its parent's settings and a `compaction` starts
/// from its checkpoint, its summary, its pinned items and the items from
/// `first_kept` on, and either hashes the items in force again under the
/// new settings (the canonical bytes of each kept, not rebuilt).
pub(super) struct Chain<'a> {
    /// Per entry: the context at it, when the chain could follow it.
    states: Vec<Option<ContextAt<'a>>>,
    /// Per entry: `Some(response)` for an `item` entry.
    items: Vec<Option<Option<String>>>,
    /// Per entry: whether it changes neither settings nor items.
    passive: Vec<bool>,
    parents: Vec<Option<usize>>,
}

use std::borrow::Cow;
use std::rc::Rc;

/// The context at one entry: the settings in force, the items (their
/// canonical bytes, newest first) and the running hash of both.
#[derive(Clone)]
struct ContextAt<'a> {
    settings: Rc<Settings>,
    items: Option<Rc<ItemLink<'a>>>,
    hasher: Rc<RequestHasher>,
    /// The running hash of the settings with no item.
    empty: Rc<RequestHasher>,
}

/// One item of a context, linked to the item before it (contexts along one
/// path share their older items).
struct ItemLink<'a> {
    canonical: Cow<'a, [u8]>,
    prev: Option<Rc<ItemLink<'a>>>,
}

impl<'a> ContextAt<'a> {
    /// The context of `settings` and `items` (oldest first).
    /// `like` is a context whose settings may be the same: its hash of them
    /// with no item is then taken instead of writing them out again.
    fn new(
        settings: Settings,
        items: Vec<Cow<'a, [u8]>>,
        like: Option<&ContextAt<'a>>,
    ) -> Option<Self> {
        let (settings, empty) = match like {
            Some(l) if *l.settings == settings => (l.settings.clone(), l.empty.clone()),
            _ => {
                let empty = Rc::new(RequestHasher::new(&settings).ok()?);
                (Rc::new(settings), empty)
            }
        };
        let mut hasher = (*empty).clone();
        let mut link = None;
        for canonical in items {
            hasher.push_canonical(&canonical);
            link = Some(Rc::new(ItemLink {
                canonical,
                prev: link,
            }));
        }
        Some(ContextAt {
            settings,
            items: link,
            hasher: Rc::new(hasher),
            empty,
        })
    }

    /// This context with one more item.
    fn grown(&self, canonical: Cow<'a, [u8]>) -> Self {
        let mut hasher = (*self.hasher).clone();
        hasher.push_canonical(&canonical);
        ContextAt {
            settings: self.settings.clone(),
            items: Some(Rc::new(ItemLink {
                canonical,
                prev: self.items.clone(),
            })),
            hasher: Rc::new(hasher),
            empty: self.empty.clone(),
        }
    }

    /// The items' canonical bytes, oldest first.
    fn item_bytes(&self) -> Vec<Cow<'a, [u8]>> {
        let mut out = Vec::new();
        let mut cur = self.items.as_deref();
        while let Some(l) = cur {
            out.push(l.canonical.clone());
            cur = l.prev.as_deref();
        }
        out.reverse();
        out
    }
}

/// The canonical bytes of what an `item` (`branch_summary`) entry adds to
/// the context: the span its line holds when canonical, else its member
/// (`item`, `summary`) written canonically. `None` when the member is
/// missing or has no canonical form.
fn contributed_bytes<'a>(
    e: &super::read::Entry<'a>,
    member: &str,
    parser: &mut Parser,
) -> Option<Cow<'a, [u8]>> {
    if let Some(c) = e.contributed_canonical() {
        return Some(Cow::Borrowed(c));
    }
    let doc = parser.parse(e.raw()).ok()?;
    let mut buf = Vec::new();
    canonical_value(doc.root().get(member)?, &mut buf).ok()?;
    Some(Cow::Owned(buf))
}

/// The member an entry of this type adds to the context.
fn contributing_member(entry_type: &str) -> Option<&'static str> {
    match entry_type {
        "item" => Some("item"),
        "branch_summary" => Some("summary"),
        _ => None,
    }
}

impl<'a> Chain<'a> {
    /// The chain of a session's entries.
    pub(super) fn of(s: &Session<'a>) -> Chain<'a> {
        let entries = s.entries();
        let mut parser = Parser::new();
        let mut c = Chain {
            states: Vec::with_capacity(entries.len()),
            items: Vec::with_capacity(entries.len()),
            passive: Vec::with_capacity(entries.len()),
            parents: Vec::with_capacity(entries.len()),
        };
        let root = ContextAt::new(Settings::default(), Vec::new(), None);
        for (i, e) in entries.iter().enumerate() {
            let parent = e
                .parent
                .as_deref()
                .map(|p| s.index_of(p).filter(|&k| k < i));
            let parent_state = match parent {
                None => root.clone(),
                Some(None) => None,
                Some(Some(k)) => c.states[k].clone(),
            };
            let (state, item, passive) = match e.entry_type.as_str() {
                t @ ("item" | "branch_summary") => {
                    let state = parent_state.and_then(|p| {
                        let member = contributing_member(t)?;
                        Some(p.grown(contributed_bytes(e, member, &mut parser)?))
                    });
                    let item = (t == "item").then(|| e.response_id.clone());
                    (state, item, false)
                }
                "config" => {
                    let state = parent_state.and_then(|p| {
                        let mut settings = (*p.settings).clone();
                        settings.apply(&e.to_owned_value(&mut parser)?);
                        ContextAt::new(settings, p.item_bytes(), Some(&p))
                    });
                    (state, None, false)
                }
                "compaction" => {
                    let state = parent_state.and_then(|p| compacted(s, i, &mut parser, &p));
                    (state, None, false)
                }
                _ => (parent_state, None, true),
            };
            c.states.push(state);
            c.items.push(item);
            c.passive.push(passive);
            c.parents.push(parent.flatten());
        }
        c
    }

    /// The `request_hash` of the request the `response` at `idx` was made
    /// from, when the chain has it ([`Chain::request_hasher`]). `None`:
    /// rebuild it from the path.
    #[cfg(test)]
    pub(super) fn request_hash(&self, s: &Session<'_>, idx: usize) -> Option<String> {
        Some(self.request_hasher(s, idx)?.hash())
    }

    /// The running hash of the request the `response` at `idx` was made
    /// from, when the chain has it: its path without its output items,
    /// every entry skipped on the way back an output item or one that
    /// changes nothing. `None`: rebuild it from the path.
    pub(super) fn request_hasher(&self, s: &Session<'_>, idx: usize) -> Option<&RequestHasher> {
        let e = &s.entries()[idx];
        let mut cur = self.parents[idx]?;
        if let Some(rid) = e.response_id.as_deref() {
            loop {
                match &self.items[cur] {
                    Some(Some(r)) if r == rid => {}
                    Some(_) => break,
                    None if self.passive[cur] => {}
                    None => {
                        // An entry that changes the context: its state is
                        // the request's unless an output item of this
                        // response comes before it (interleaved outputs).
                        let mut back = self.parents[cur];
                        while let Some(k) = back {
                            match &self.items[k] {
                                Some(Some(r)) if r == rid => return None,
                                Some(_) => break,
                                None => back = self.parents[k],
                            }
                        }
                        break;
                    }
                }
                cur = self.parents[cur]?;
            }
        }
        Some(&self.states[cur].as_ref()?.hasher)
    }
}

/// The context at the `compaction` at `idx` (whose path is whole): the
/// settings of its checkpoint; its summary, its pinned items, and the
/// items on its path from `first_kept` up to it. `None` where the context
/// algorithm fails (`first_kept` not on the path) or a line does not parse.
fn compacted<'a>(
    s: &Session<'a>,
    idx: usize,
    parser: &mut Parser,
    parent: &ContextAt<'a>,
) -> Option<ContextAt<'a>> {
    let entries = s.entries();
    let path = s.path_indexes(idx);
    let first_kept = entries[idx].reference("first_kept")?;
    let kept = path[..path.len() - 1]
        .iter()
        .position(|&k| entries[k].id == first_kept)?;
    let (settings, mut items) = {
        let doc = parser.parse(entries[idx].raw()).ok()?;
        let root = doc.root();
        let settings = root
            .get("config")
            .map(|c| Settings::from_checkpoint(&OwnedValue::from(c)))
            .unwrap_or_default();
        let mut items = Vec::new();
        let canonical = |v| {
            let mut buf = Vec::new();
            canonical_value(v, &mut buf).ok()?;
            Some(Cow::Owned(buf))
        };
        if let Some(sum) = root.get("summary") {
            items.push(canonical(sum)?);
        }
        if let Some(pinned) = root.get("pinned").and_then(|p| p.as_array()) {
            for p in pinned.iter() {
                items.push(canonical(p)?);
            }
        }
        (settings, items)
    };
    for &k in &path[kept..path.len() - 1] {
        let e = &entries[k];
        if let Some(member) = contributing_member(&e.entry_type) {
            // An entry without the member adds nothing (as the algorithm
            // reads it); one whose member has no canonical form fails.
            let has = e.contributed_canonical().is_some()
                || parser
                    .parse(e.raw())
                    .ok()
                    .is_some_and(|d| d.root().get(member).is_some());
            if has {
                items.push(contributed_bytes(e, member, parser)?);
            }
        }
    }
    ContextAt::new(settings, items, Some(parent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(settings: &str, items: &[&str]) -> Context {
        let c = OwnedValue::parse(settings.as_bytes()).unwrap();
        let mut s = Settings::default();
        s.apply(&c);
        Context {
            settings: s,
            items: items
                .iter()
                .map(|i| OwnedValue::parse(i.as_bytes()).unwrap())
                .collect(),
            entries: Vec::new(),
            item_entries: Vec::new(),
        }
    }

    #[test]
    fn streamed_hash_equals_the_whole_request_hash() {
        let items = [
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hé"}]}"#,
            r#"{"type":"function_call","call_id":"c1","name":"t","arguments":"{}"}"#,
            r#"{"type":"function_call_output","call_id":"c1","output":"1e2"}"#,
        ];
        for settings in [
            r#"{}"#,
            r#"{"model":"m","instructions":"be brief","tools_added":[{"type":"function","name":"t"}]}"#,
            r#"{"model":"m","extra":{"include":["x"],"temperature":0.5,"a":1,"zz":true}}"#,
            r#"{"reasoning":{"effort":"high"},"text":{"format":{"type":"text"}}}"#,
        ] {
            for n in 0..=items.len() {
                let c = ctx(settings, &items[..n]);
                let h = RequestHasher::from_context(&c).unwrap();
                assert_eq!(h.len(), n);
                assert_eq!(
                    h.hash(),
                    c.request_hash().unwrap(),
                    "{settings} with {n} items"
                );
            }
        }
    }

    /// A session whose responses follow configs, a compaction that keeps an
    /// entry from before an earlier compaction, pinned items, a branch
    /// summary and a non-canonical line: the chain follows every response
    /// and gives the hash the whole-path rebuild gives.
    #[test]
    fn the_chain_equals_the_path_rebuild() {
        use crate::asf::Appender;
        let map = |json: &str| match OwnedValue::parse(json.as_bytes()).unwrap() {
            OwnedValue::Object(m) => m,
            _ => panic!("not an object"),
        };
        let ts = "2026-01-01T00:00:01Z";
        let mut a =
            Appender::new(map(r#"{"id":"s1","created_at":"2026-01-01T00:00:00Z"}"#)).unwrap();
        let user = |t: &str| {
            map(&format!(
                r#"{{"item":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{t}"}}]}}}}"#
            ))
        };
        let out = |t: &str, r: &str| {
            map(&format!(
                r#"{{"response":"{r}","item":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{t}"}}]}}}}"#
            ))
        };
        let resp = |r: &str| map(&format!(r#"{{"response_id":"{r}"}}"#));
        a.append(
            "config",
            ts,
            map(r#"{"model":"m","instructions":"be brief","tools_added":[{"type":"function","name":"t"}],"extra":{"a":1}}"#),
        )
        .unwrap();
        let first = a.append("item", ts, user("one")).unwrap();
        a.append("item", ts, out("two", "r1")).unwrap();
        a.append("response", ts, resp("r1")).unwrap();
        a.append(
            "config",
            ts,
            map(r#"{"tools_removed":["t"],"extra":{"a":null,"b":2}}"#),
        )
        .unwrap();
        let kept = a.append("item", ts, user("three")).unwrap();
        a.append("item", ts, out("four", "r2")).unwrap();
        a.append("response", ts, resp("r2")).unwrap();
        let compaction = |f: &str| {
            map(&format!(
                r#"{{"first_kept":"{f}","summary":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"so far"}}]}},"pinned":[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"pin"}}]}}],"config":{{"model":"m2","instructions":"x"}}}}"#
            ))
        };
        a.append("compaction", ts, compaction(&kept)).unwrap();
        a.append("item", ts, out("five", "r3")).unwrap();
        a.append("response", ts, resp("r3")).unwrap();
        a.append("config", ts, map(r#"{"model":"m3"}"#)).unwrap();
        // A second compaction keeping from before the first.
        a.append("compaction", ts, compaction(&first)).unwrap();
        a.append(
            "branch_summary",
            ts,
            map(&format!(
                r#"{{"from":"{first}","summary":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"elsewhere"}}]}}}}"#
            )),
        )
        .unwrap();
        a.append("item", ts, out("six", "r4")).unwrap();
        a.append("response", ts, resp("r4")).unwrap();
        let mut bytes = a.into_bytes();
        // One more item whose line is valid but not canonical (white space,
        // members out of order), and its response.
        let s = Session::read(&bytes).unwrap();
        let leaf = s.entries().last().unwrap().id.clone();
        drop(s);
        let loose = b"{\"type\":\"item\", \"item\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"1.50\"}], \"n\": 1.50}}";
        let mut p = Parser::new();
        let doc = p.parse(loose).unwrap();
        let mut content = Vec::new();
        crate::asf::canon::canonical_value_skipping(doc.root(), &["type"], &mut content).unwrap();
        let mut env = Vec::new();
        crate::asf::hash::envelope_bytes(
            &mut env,
            "item",
            Some(&leaf),
            None,
            ts,
            &crate::asf::hash::sha256_ref(&content),
        );
        let id = crate::asf::hash::sha256_ref(&env);
        let line = format!(
            "{{\"type\":\"item\", \"id\":\"{id}\",\"parent\":\"{leaf}\",\"ts\":\"{ts}\",\"item\":{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"1.50\"}}], \"n\": 1.50}}}}\n"
        );
        bytes.extend_from_slice(line.as_bytes());
        let s = Session::read(&bytes).unwrap();
        let loose_entry = s.entries().last().unwrap();
        assert!(loose_entry.verified, "{:?}", s.read_problems());
        assert!(loose_entry.contributed_canonical().is_none());
        let mut bytes = bytes.clone();
        bytes.extend_from_slice(
            format!(
                "{{\"id\":\"{}\",\"parent\":\"{}\",\"response_id\":\"r5\",\"ts\":\"{ts}\",\"type\":\"response\"}}\n",
                {
                    let mut env = Vec::new();
                    crate::asf::hash::envelope_bytes(
                        &mut env,
                        "response",
                        Some(&loose_entry.id),
                        None,
                        ts,
                        &crate::asf::hash::sha256_ref(br#"{"response_id":"r5"}"#),
                    );
                    crate::asf::hash::sha256_ref(&env)
                },
                loose_entry.id
            )
            .as_bytes(),
        );
        drop(s);
        let s = Session::read(&bytes).unwrap();
        assert!(s.verify().is_empty(), "{:?}", s.verify());
        let chain = Chain::of(&s);
        let mut n = 0;
        for (i, e) in s.entries().iter().enumerate() {
            if e.entry_type != "response" {
                continue;
            }
            let want = s.request_context(&e.id).unwrap().request_hash().unwrap();
            assert_eq!(chain.request_hash(&s, i), Some(want), "line {}", e.line);
            n += 1;
        }
        assert_eq!(n, 5);
    }
}
