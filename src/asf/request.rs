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

use crate::json::{Map, OwnedValue};

use crate::json::Parser;

use super::canon::{CanonError, canonical_owned, canonical_value, cmp_utf16};
use super::context::{Context, Settings};
use super::hash::hex_ref;
use super::read::Session;

/// The running hash of a request whose settings are fixed and whose items
/// are appended.
#[derive(Clone)]
pub struct RequestHasher {
    /// The digest of the head (`{`, the members before `input`,
    /// `"input":[`) and the items so far.
    state: Sha256,
    items: usize,
    /// `]`, the members after `input`, `}`.
    tail: std::sync::Arc<Vec<u8>>,
    /// The whole request when it has no item (no `input` member then).
    empty: std::sync::Arc<Vec<u8>>,
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
        let members = match (Context {
            settings: settings.clone(),
            items: Vec::new(),
            entries: Vec::new(),
            item_entries: Vec::new(),
        })
        .request()
        {
            OwnedValue::Object(m) => m,
            _ => Map::new(),
        };
        let mut sorted: Vec<(&str, &OwnedValue)> = members.iter().collect();
        sorted.sort_by(|a, b| cmp_utf16(a.0, b.0));
        let mut head = vec![b'{'];
        let mut tail = vec![b']'];
        let mut empty = vec![b'{'];
        for (i, (k, v)) in sorted.iter().enumerate() {
            let mut member = Vec::new();
            crate::json::write::write_str(&mut member, k, false);
            member.push(b':');
            canonical_owned(v, &mut member)?;
            if i > 0 {
                empty.push(b',');
            }
            empty.extend_from_slice(&member);
            if cmp_utf16(k, "input").is_lt() {
                head.extend_from_slice(&member);
                head.push(b',');
            } else {
                tail.push(b',');
                tail.extend_from_slice(&member);
            }
        }
        head.extend_from_slice(b"\"input\":[");
        tail.push(b'}');
        empty.push(b'}');
        let mut state = Sha256::new();
        state.update(&head);
        Ok(RequestHasher {
            state,
            items: 0,
            tail: std::sync::Arc::new(tail),
            empty: std::sync::Arc::new(empty),
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

    /// Whether no item was appended.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// The `request_hash` of the settings and the items so far.
    pub fn hash(&self) -> String {
        if self.items == 0 {
            return hex_ref(&Sha256::digest(self.empty.as_slice()));
        }
        let mut s = self.state.clone();
        s.update(self.tail.as_slice());
        hex_ref(&s.finalize())
    }
}

/// The running hashes along a read session's paths, for checking every
/// `response`'s `request_hash` in time linear in the file: each entry's
/// hasher is its parent's, grown by the item it contributes; a `config` or
/// `compaction` (which change the settings or restart the items) has its
/// context rebuilt from its path once.
pub(super) struct Chain {
    /// Per entry: the running hash of the context at it.
    states: Vec<Option<Rc<RequestHasher>>>,
    /// Per entry: `Some(response)` for an `item` entry.
    items: Vec<Option<Option<String>>>,
    /// Per entry: whether it changes neither settings nor items.
    passive: Vec<bool>,
    parents: Vec<Option<usize>>,
}

use std::rc::Rc;

impl Chain {
    /// The chain of a session's entries.
    pub(super) fn of(s: &Session<'_>) -> Chain {
        let entries = s.entries();
        let mut parser = Parser::new();
        let mut c = Chain {
            states: Vec::with_capacity(entries.len()),
            items: Vec::with_capacity(entries.len()),
            passive: Vec::with_capacity(entries.len()),
            parents: Vec::with_capacity(entries.len()),
        };
        let mut buf = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let parent = e
                .parent
                .as_deref()
                .map(|p| s.index_of(p).filter(|&k| k < i));
            let parent_state = match parent {
                None => RequestHasher::new(&Settings::default()).ok().map(Rc::new),
                Some(None) => None,
                Some(Some(k)) => c.states[k].clone(),
            };
            let mut grown = |member: &str| {
                let base = parent_state.as_ref()?;
                let mut h = (**base).clone();
                match e.contributed_canonical() {
                    // Canonical in the line: the bytes the read hashed.
                    Some(c) => h.push_canonical(c),
                    None => {
                        let doc = parser.parse(e.raw()).ok()?;
                        buf.clear();
                        canonical_value(doc.root().get(member)?, &mut buf).ok()?;
                        h.push_canonical(&buf);
                    }
                }
                Some(Rc::new(h))
            };
            let (state, item, passive) = match e.entry_type.as_str() {
                "item" => (grown("item"), Some(e.response_id.clone()), false),
                "branch_summary" => (grown("summary"), None, false),
                "config" | "compaction" => (
                    s.context(Some(&e.id))
                        .ok()
                        .and_then(|ctx| RequestHasher::from_context(&ctx).ok())
                        .map(Rc::new),
                    None,
                    false,
                ),
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
    /// from, when the chain has it: its path without its output items,
    /// every entry skipped on the way back an output item or one that
    /// changes nothing. `None`: rebuild it from the path.
    pub(super) fn request_hash(&self, s: &Session<'_>, idx: usize) -> Option<String> {
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
        Some(self.states[cur].as_ref()?.hash())
    }
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
}
