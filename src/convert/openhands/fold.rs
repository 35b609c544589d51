//! The context the converted path carries, kept beside the appender so that
//! each `response` gets its `request_hash` from a running hash, and a
//! condensation becomes the `compaction` that rebuilds the SDK's condensed
//! view exactly.
//!
//! The SDK puts a condensation's summary at `summary_offset` of its view,
//! after the kept head (merged into the first user message when both are
//! user messages), while RFC 0001's context algorithm starts a compaction's
//! items with its `summary`, then its `pinned` items, then the entries from
//! `first_kept`. The condensed view is therefore written as: `summary` its
//! first item (the first user message, carrying the summary when the SDK
//! merged them), `pinned` the items after it up to the kept tail (each a
//! copy of an `item` entry already on the path: the RFC's rule for pinned
//! items), and `first_kept` the first entry of the tail the SDK kept, when
//! that tail is the path's own last items. A view item that no entry on
//! the path carries (the summary as a message of its own) is first written
//! as an `item` entry; the compaction then keeps nothing by `first_kept`
//! (it names the condensation's own record) and pins every item after the
//! first.

use foldhash::{HashMap, HashMapExt};
use std::rc::Rc;

use crate::asf::canon::to_canonical;
use crate::asf::{Appender, RequestHasher, Settings};
use crate::json::{Map, OwnedValue};

use super::super::ConvertError;

/// One item of the context.
#[derive(Debug, Clone)]
struct Held {
    canonical: Rc<[u8]>,
    /// The `item` entry that carries it and that entry's rank among the
    /// path's `item` entries (its index in `on_path`); `None` for a
    /// compaction's `summary` and `pinned` copies.
    entry: Option<(String, usize)>,
}

/// The converted path's context: settings, items, and the running
/// `request_hash`.
#[derive(Debug)]
pub(super) struct PathState {
    /// The settings in force, but for their tools when `tools` holds them.
    settings: Settings,
    /// The settings' tools as the canonical form of their array, when they
    /// are kept that way (`settings.tools` is then empty).
    tools: Option<Rc<[u8]>>,
    hasher: RequestHasher,
    /// How many of the last `items` the running hash has not taken yet:
    /// items appended unhashed because a hash taken ahead already holds
    /// them ([`PathState::adopt`]), hashed here only if it is not adopted.
    unhashed: usize,
    /// The running hash of the settings with no item (they never change
    /// after the first `config`): where a compaction starts again.
    empty: RequestHasher,
    items: Vec<Held>,
    /// Every `item` entry's item on the path, in order (its rank among
    /// them is its index): looked up only when a compaction is planned.
    on_path: Vec<Rc<[u8]>>,
    /// The canonical settings checkpoint every compaction carries as its
    /// `config` (written once; `None` until the first compaction, or when
    /// the settings have no canonical form and each compaction goes
    /// through the appender's normalisation).
    checkpoint: Option<Option<Rc<[u8]>>>,
    /// An item's canonical form being written.
    scratch: Vec<u8>,
}

/// One item in canonical form (RFC 8785), with the `call_id` of a
/// `function_call`.
#[derive(Debug)]
pub(super) struct CanonicalItem {
    /// The item's canonical bytes.
    pub(super) canonical: Rc<[u8]>,
    /// The `call_id` of a `function_call` item.
    pub(super) call: Option<String>,
}

/// What a compaction needs written before it.
#[derive(Debug)]
pub(super) struct Prepared {
    canonical: Vec<Rc<[u8]>>,
    /// The entry `first_kept` names and how many items at the end are kept
    /// by it; `None`: the caller's next entry (the condensation's record).
    kept: Option<(String, usize)>,
}

/// Tool definitions, each as its name and its canonical form.
pub(super) type NamedTools = [(String, Vec<u8>)];

/// Whether no two of `tools` share a name (an empty name is no name).
fn distinct_names(tools: &NamedTools) -> bool {
    let mut names: Vec<&str> = tools
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

impl PathState {
    /// The state after the session's first `config`: `config` its body
    /// less `tools_added`, and `tools` the tools it adds, when it adds
    /// some: the canonical form of the array and each tool's name and
    /// canonical form. The tools are kept as their canonical forms alone
    /// when no two share a name (a repeated name replaces the earlier tool,
    /// so the settings' tools are then not the ones added: they are read
    /// back as owned values and applied as a reader does).
    pub(super) fn new(
        config: &OwnedValue,
        tools: Option<(&[u8], &NamedTools)>,
    ) -> Result<Self, ConvertError> {
        let mut settings = Settings::default();
        settings.apply(config);
        let not_ijson = |e| ConvertError::Write(crate::asf::WriteError::NotIJson(e));
        let (hasher, tools) = match tools {
            Some((joined, kept)) if distinct_names(kept) => (
                RequestHasher::with_canonical_tools(&settings, joined).map_err(not_ijson)?,
                (!kept.is_empty()).then(|| Rc::from(joined)),
            ),
            Some((_, kept)) => {
                let added = kept
                    .iter()
                    .map(|(_, c)| OwnedValue::parse(c).unwrap_or(OwnedValue::Null))
                    .collect();
                let mut delta = Map::new();
                delta.insert("tools_added", OwnedValue::Array(added));
                settings.apply(&OwnedValue::Object(delta));
                (RequestHasher::new(&settings).map_err(not_ijson)?, None)
            }
            None => (RequestHasher::new(&settings).map_err(not_ijson)?, None),
        };
        Ok(PathState::with(settings, tools, hasher))
    }

    /// The state after a first `config` whose body, `config`, holds its
    /// tools as owned values (`tools_added`).
    pub(super) fn new_owned(config: &OwnedValue) -> Result<Self, ConvertError> {
        let mut settings = Settings::default();
        settings.apply(config);
        let hasher = RequestHasher::new(&settings)
            .map_err(|e| ConvertError::Write(crate::asf::WriteError::NotIJson(e)))?;
        Ok(PathState::with(settings, None, hasher))
    }

    fn with(settings: Settings, tools: Option<Rc<[u8]>>, hasher: RequestHasher) -> Self {
        PathState {
            settings,
            tools,
            empty: hasher.clone(),
            hasher,
            unhashed: 0,
            items: Vec::new(),
            on_path: Vec::new(),
            checkpoint: None,
            scratch: Vec::new(),
        }
    }

    /// The running hash of the context as it stands: its `request_hash`
    /// and where it stands.
    pub(super) fn hasher(&mut self) -> &RequestHasher {
        self.settle();
        &self.hasher
    }

    /// Hashes the items appended unhashed.
    fn settle(&mut self) {
        let n = self.items.len();
        for h in &self.items[n - self.unhashed..] {
            self.hasher.push_canonical(&h.canonical);
        }
        self.unhashed = 0;
    }

    /// Takes `ahead`, a copy of the running hash grown by the items since
    /// appended unhashed, as the running hash, when it stands where the
    /// running hash and those items do (as many items and bytes hashed);
    /// otherwise hashes them. Whether it was taken.
    pub(super) fn adopt(&mut self, ahead: RequestHasher) -> bool {
        let (mut items, mut bytes) = self.hasher.position();
        let n = self.items.len();
        for h in &self.items[n - self.unhashed..] {
            // Each item after the first follows a comma.
            bytes += u64::from(items > 0) + h.canonical.len() as u64;
            items += 1;
        }
        if (items, bytes) == ahead.position() {
            self.hasher = ahead;
            self.unhashed = 0;
            return true;
        }
        self.settle();
        false
    }

    /// Appends an `item` entry (with `response` when the item is a model
    /// call's output) given the item's canonical form, `c`, and, for a
    /// `function_call`, its `call_id`. `hashed`: the running hash takes
    /// the item now; otherwise it is left for a hash taken ahead that
    /// holds it ([`PathState::adopt`]).
    pub(super) fn append_canonical_item(
        &mut self,
        a: &mut Appender,
        ts: &str,
        c: Rc<[u8]>,
        call: Option<&str>,
        response: Option<&str>,
        hashed: bool,
    ) -> Result<String, ConvertError> {
        let id = match response {
            Some(r) => {
                self.scratch.clear();
                crate::json::write::write_str(&mut self.scratch, r, false);
                let members: [(&str, &[u8]); 2] = [("item", &c), ("response", &self.scratch)];
                a.append_canonical("item", ts, Map::new(), &members, call)?
            }
            None => a.append_canonical("item", ts, Map::new(), &[("item", &c)], call)?,
        };
        if hashed {
            self.settle();
            self.hasher.push_canonical(&c);
        } else {
            self.unhashed += 1;
        }
        let rank = self.on_path.len();
        self.on_path.push(c.clone());
        self.items.push(Held {
            canonical: c,
            entry: Some((id.clone(), rank)),
        });
        Ok(id)
    }

    /// The rank of the first `item` entry on the path carrying each of
    /// `wanted` (canonical bytes), if any: one pass over the path, comparing
    /// bytes only where the lengths are equal.
    fn first_ranks(&self, wanted: &[Rc<[u8]>]) -> Vec<Option<usize>> {
        let mut ranks = vec![None; wanted.len()];
        let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, w) in wanted.iter().enumerate() {
            by_len.entry(w.len()).or_default().push(i);
        }
        let mut left = wanted.len();
        for (rank, p) in self.on_path.iter().enumerate() {
            if left == 0 {
                break;
            }
            let Some(candidates) = by_len.get(&p.len()) else {
                continue;
            };
            for &i in candidates {
                if ranks[i].is_none() && wanted[i] == *p {
                    ranks[i] = Some(rank);
                    left -= 1;
                }
            }
        }
        ranks
    }

    /// Plans the compaction whose context is `items`, writing first, as
    /// `item` entries, the items after the first that no entry on the path
    /// carries. `None` when the context already is `items`.
    pub(super) fn prepare(
        &mut self,
        a: &mut Appender,
        ts: &str,
        items: Vec<CanonicalItem>,
    ) -> Result<Option<Prepared>, ConvertError> {
        let canonical: Vec<Rc<[u8]>> = items.iter().map(|i| i.canonical.clone()).collect();
        if items.is_empty()
            || (canonical.len() == self.items.len()
                && canonical
                    .iter()
                    .zip(&self.items)
                    .all(|(a, b)| *a == b.canonical))
        {
            return Ok(None);
        }
        let (n, c) = (canonical.len(), self.items.len());
        let mut tail = 0;
        while tail + 1 < n
            && tail < c
            && canonical[n - 1 - tail] == self.items[c - 1 - tail].canonical
            && self.items[c - 1 - tail].entry.is_some()
        {
            tail += 1;
        }
        if tail > 0 {
            let (first, bound) = self.items[c - tail].entry.clone().unwrap_or_default();
            let pinned_on_path = self
                .first_ranks(&canonical[1..n - tail])
                .iter()
                .all(|r| r.is_some_and(|r| r < bound));
            if pinned_on_path {
                return Ok(Some(Prepared {
                    canonical,
                    kept: Some((first, tail)),
                }));
            }
        }
        let mut ranks = self.first_ranks(&canonical);
        for k in 1..n {
            if ranks[k].is_none() {
                let item = &items[k];
                self.append_canonical_item(
                    a,
                    ts,
                    item.canonical.clone(),
                    item.call.as_deref(),
                    None,
                    true,
                )?;
                let rank = self.on_path.len() - 1;
                for j in k + 1..n {
                    if ranks[j].is_none() && canonical[j] == canonical[k] {
                        ranks[j] = Some(rank);
                    }
                }
            }
        }
        Ok(Some(Prepared {
            canonical,
            kept: None,
        }))
    }

    /// Writes the compaction planned by [`PathState::prepare`];
    /// `record` is the entry written since (the condensation's record),
    /// which `first_kept` names when the plan keeps nothing by it.
    pub(super) fn compact(
        &mut self,
        a: &mut Appender,
        ts: &str,
        plan: Prepared,
        record: &str,
        extra: &Map,
    ) -> Result<String, ConvertError> {
        let Prepared { canonical, kept } = plan;
        let (first_kept, tail) = kept.unwrap_or_else(|| (record.to_owned(), 0));
        let n = canonical.len();
        let kept_entries: Vec<Option<(String, usize)>> = self.items[self.items.len() - tail..]
            .iter()
            .map(|h| h.entry.clone())
            .collect();
        // `summary` the first item, `pinned` the others before the kept
        // tail, each from its canonical form.
        let copies = &canonical[..n - tail];
        let mut body = Map::new();
        body.insert("first_kept", OwnedValue::string(first_kept));
        for (k, v) in extra.iter() {
            body.insert(k, v.clone());
        }
        let checkpoint = self
            .checkpoint
            .get_or_insert_with(|| {
                let mut c = to_canonical(&self.settings.to_checkpoint()).ok()?;
                if let Some(t) = &self.tools {
                    // `tools` sorts after every other member of a
                    // checkpoint: it goes last.
                    c.pop();
                    if c.len() > 1 {
                        c.push(b',');
                    }
                    c.extend_from_slice(b"\"tools\":");
                    c.extend_from_slice(t);
                    c.push(b'}');
                }
                Some(Rc::from(c))
            })
            .clone();
        let id = match checkpoint {
            Some(config) => {
                let pinned = (copies.len() > 1).then(|| {
                    let mut out = Vec::with_capacity(
                        copies[1..].iter().map(|c| c.len() + 1).sum::<usize>() + 1,
                    );
                    out.push(b'[');
                    for (i, c) in copies[1..].iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(c);
                    }
                    out.push(b']');
                    out
                });
                let summary: &[u8] = copies.first().map_or(b"null", |c| c);
                let mut members: Vec<(&str, &[u8])> =
                    vec![("summary", summary), ("config", &config)];
                if let Some(p) = &pinned {
                    members.push(("pinned", p));
                }
                a.append_canonical("compaction", ts, body, &members, None)?
            }
            None => {
                let parse = |c: &Rc<[u8]>| OwnedValue::parse(c).unwrap_or(OwnedValue::Null);
                body.insert("summary", copies.first().map_or(OwnedValue::Null, parse));
                if copies.len() > 1 {
                    body.insert(
                        "pinned",
                        OwnedValue::Array(copies[1..].iter().map(parse).collect()),
                    );
                }
                body.insert("config", self.settings.to_checkpoint());
                a.append("compaction", ts, body)?
            }
        };
        self.hasher = self.empty.clone();
        self.unhashed = 0;
        self.items = canonical
            .into_iter()
            .enumerate()
            .map(|(k, c)| Held {
                canonical: c,
                entry: if k + tail >= n {
                    kept_entries[k + tail - n].clone()
                } else {
                    None
                },
            })
            .collect();
        for h in &self.items {
            self.hasher.push_canonical(&h.canonical);
        }
        Ok(id)
    }
}
