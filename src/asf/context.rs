//! The context algorithm of RFC 0001 ("Context building"): the settings and
//! items a model call at a point on a path receives, the canonical request,
//! and its `request_hash`.
//!
//! 1. Walk `parent` from the leaf to a root (never `parents`).
//! 2. Replay `config` deltas (`replace` resets; `extra` merges and a null
//!    deletes; tools are removed, then added by name; instruction parts
//!    resolved against the parts in force, by `id`, `hash` and `keep`; the
//!    omitted parts in force beside them, a `keep` there that runs past the
//!    end or takes a part the list names elsewhere kept as it stands).
//! 3. With a `compaction` on the path, the last one's checkpoint starts the
//!    settings and only `config` after it replays; the items are its
//!    `summary`, its `pinned` items, the items from `first_kept` up to it,
//!    and those after it.
//! 4. Only `item`, `branch_summary` and the chosen compaction add items.
//! 5. The request is the settings and the items with `store: false`, the
//!    settings' `extra` members at the top level; `request_hash` is the
//!    SHA-256 of its canonical form.

use crate::json::{Map, OwnedValue, Parser};

use super::canon::{CanonError, to_canonical};
use super::hash::sha256_ref;
use super::read::Session;

/// One instruction part in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The part's id.
    pub id: String,
    /// Its text; `None` when the path cannot rebuild it.
    pub text: Option<String>,
    /// Its `source`, when it has one.
    pub source: Option<OwnedValue>,
}

/// The request settings in force at a point on a path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `model`.
    pub model: Option<String>,
    /// The instructions (the parts' join when the path composes them).
    pub instructions: Option<String>,
    /// The instruction parts in force, when the path composes them.
    pub parts: Vec<Part>,
    /// The omitted parts in force (`instructions_omitted`; reaches no
    /// request).
    pub omitted: Vec<OwnedValue>,
    /// `reasoning`.
    pub reasoning: Option<OwnedValue>,
    /// `text`.
    pub text: Option<OwnedValue>,
    /// The tool definitions, in the order the request sends them.
    pub tools: Vec<OwnedValue>,
    /// The passthrough request members, merged, no null among them.
    pub extra: Map,
    /// Whether some instruction part or `keep` could not be resolved and no
    /// `instructions` string stood for it (the request then differs from
    /// the one sent, which `request_hash` reports).
    pub unresolved: bool,
}

fn tool_name(t: &OwnedValue) -> Option<&str> {
    t.get("name").and_then(OwnedValue::as_str)
}

fn non_empty(v: Option<&OwnedValue>) -> Option<OwnedValue> {
    match v {
        None | Some(OwnedValue::Null) => None,
        Some(v) => Some(v.clone()),
    }
}

impl Settings {
    /// The settings a compaction's `config` checkpoint holds.
    pub fn from_checkpoint(c: &OwnedValue) -> Settings {
        let mut s = Settings {
            model: c
                .get("model")
                .and_then(OwnedValue::as_str)
                .map(str::to_owned),
            instructions: c
                .get("instructions")
                .and_then(OwnedValue::as_str)
                .map(str::to_owned),
            reasoning: non_empty(c.get("reasoning")),
            text: non_empty(c.get("text")),
            tools: c
                .get("tools")
                .and_then(OwnedValue::as_array)
                .cloned()
                .unwrap_or_default(),
            ..Default::default()
        };
        if let Some(parts) = c.get("instructions_parts").and_then(OwnedValue::as_array) {
            for p in parts {
                s.parts.push(Part {
                    id: p
                        .get("id")
                        .and_then(OwnedValue::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    text: Some(
                        p.get("text")
                            .and_then(OwnedValue::as_str)
                            .unwrap_or("")
                            .to_owned(),
                    ),
                    source: non_empty(p.get("source")),
                });
            }
            if s.instructions.is_none() {
                s.instructions = Some(join(&s.parts));
            }
        }
        if let Some(o) = c.get("instructions_omitted").and_then(OwnedValue::as_array) {
            s.omitted = o.clone();
        }
        if let Some(OwnedValue::Object(m)) = c.get("extra") {
            for (k, v) in m.iter() {
                if !v.is_null() {
                    s.extra.insert(k, v.clone());
                }
            }
        }
        s
    }

    /// Applies a `config` delta.
    pub fn apply(&mut self, c: &OwnedValue) {
        self.apply_checked(c);
    }

    /// Applies a `config` delta and says which rules it breaks against the
    /// settings it applies to (RFC 0001, "Instructions as parts" and
    /// `instructions_omitted`): a `keep` that runs past the end of the
    /// list in force or takes a part another element of the list names,
    /// a `keep` over an omitted list in force that names an `id` twice,
    /// and `instructions` beside parts named by `hash` or `keep` that is
    /// not their join once resolved. A `replace` resolves nothing against
    /// the settings before it, so none of these is looked for in one (the
    /// rules of the line alone say what a `replace` may carry).
    pub(crate) fn apply_checked(&mut self, c: &OwnedValue) -> Vec<String> {
        let mut faults = Vec::new();
        let replace = c.get("replace").and_then(OwnedValue::as_bool) == Some(true);
        let prev_parts = if replace {
            Vec::new()
        } else {
            std::mem::take(&mut self.parts)
        };
        let prev_omitted = if replace {
            Vec::new()
        } else {
            std::mem::take(&mut self.omitted)
        };
        if replace {
            *self = Settings::default();
        } else {
            self.parts = prev_parts.clone();
            self.omitted = prev_omitted.clone();
        }
        if let Some(m) = c.get("model").and_then(OwnedValue::as_str)
            && !m.is_empty()
        {
            self.model = Some(m.to_owned());
        }
        let instructions = c.get("instructions").and_then(OwnedValue::as_str);
        match c.get("instructions_parts").and_then(OwnedValue::as_array) {
            Some(delta) if !delta.is_empty() => {
                let (parts, ok) = resolve_parts(&prev_parts, delta, &mut |f| {
                    if !replace {
                        faults.push(format!("`instructions_parts`: {f}"));
                    }
                });
                // Parts that all carry their text are checked on the line
                // alone; with a `hash` or a `keep` the join needs the path.
                let by_path = delta.iter().any(|e| match e.get("id") {
                    Some(_) => e.get("text").is_none() && e.get("hash").is_some(),
                    None => true,
                });
                if ok
                    && by_path
                    && let Some(i) = instructions
                    && join(&parts) != i
                {
                    faults.push(
                        "`instructions` is not the join of the parts the delta resolves to (one blank line between)"
                            .into(),
                    );
                }
                self.parts = parts;
                match (ok, instructions) {
                    (true, _) => self.instructions = Some(join(&self.parts)),
                    (false, Some(i)) => self.instructions = Some(i.to_owned()),
                    (false, None) => {
                        self.instructions = Some(join(&self.parts));
                        self.unresolved = true;
                    }
                }
            }
            _ => {
                if let Some(i) = instructions {
                    self.instructions = Some(i.to_owned());
                    self.parts.clear();
                }
            }
        }
        match c.get("instructions_omitted") {
            None | Some(OwnedValue::Null) => {}
            Some(OwnedValue::Array(delta)) => {
                self.omitted = resolve_omitted(&prev_omitted, delta, &mut |f| {
                    if !replace {
                        faults.push(format!("`instructions_omitted`: {f}"));
                    }
                })
            }
            Some(_) => {}
        }
        if let Some(r) = non_empty(c.get("reasoning")) {
            self.reasoning = Some(r);
        }
        if let Some(t) = non_empty(c.get("text")) {
            self.text = Some(t);
        }
        if let Some(removed) = c.get("tools_removed").and_then(OwnedValue::as_array) {
            for name in removed.iter().filter_map(OwnedValue::as_str) {
                self.tools.retain(|t| tool_name(t) != Some(name));
            }
        }
        if let Some(added) = c.get("tools_added").and_then(OwnedValue::as_array) {
            for t in added {
                if let Some(name) = tool_name(t).filter(|n| !n.is_empty()) {
                    let name = name.to_owned();
                    self.tools.retain(|x| tool_name(x) != Some(name.as_str()));
                }
                self.tools.push(t.clone());
            }
        }
        if let Some(OwnedValue::Object(m)) = c.get("extra") {
            for (k, v) in m.iter() {
                if v.is_null() {
                    self.extra.remove(k);
                } else {
                    self.extra.insert(k, v.clone());
                }
            }
        }
        faults
    }

    /// The settings as the reference fixtures' `settings` object: `model`,
    /// `instructions`, `reasoning`, `text`, `instructions_parts`, `tools`,
    /// `extra`, each only when not empty. The omitted parts in force are
    /// provenance and no part of the request, and the reference leaves
    /// them out of a context's settings; [`Settings::to_checkpoint`] holds
    /// them.
    pub fn to_json(&self) -> OwnedValue {
        let mut m = Map::new();
        if let Some(v) = self.model.as_deref().filter(|s| !s.is_empty()) {
            m.insert("model", OwnedValue::string(v));
        }
        if let Some(v) = self.instructions.as_deref().filter(|s| !s.is_empty()) {
            m.insert("instructions", OwnedValue::string(v));
        }
        if let Some(v) = self.reasoning.as_ref().filter(|v| !is_empty_object(v)) {
            m.insert("reasoning", v.clone());
        }
        if let Some(v) = self.text.as_ref().filter(|v| !is_empty_object(v)) {
            m.insert("text", v.clone());
        }
        if !self.parts.is_empty() {
            let parts = self
                .parts
                .iter()
                .map(|p| {
                    let mut o = Map::new();
                    o.insert("id", OwnedValue::string(p.id.clone()));
                    if let Some(t) = &p.text {
                        o.insert("text", OwnedValue::string(t.clone()));
                    }
                    if let Some(s) = &p.source {
                        o.insert("source", s.clone());
                    }
                    OwnedValue::Object(o)
                })
                .collect();
            m.insert("instructions_parts", OwnedValue::Array(parts));
        }
        if !self.tools.is_empty() {
            m.insert("tools", OwnedValue::Array(self.tools.clone()));
        }
        if !self.extra.is_empty() {
            m.insert("extra", OwnedValue::Object(self.extra.clone()));
        }
        OwnedValue::Object(m)
    }
}

impl Settings {
    /// The settings as a compaction's `config` checkpoint: the members of
    /// [`Settings::to_json`] and `instructions_omitted`, the list of
    /// omitted parts in force written whole, when it is not empty (a
    /// checkpoint without it has none in force).
    pub fn to_checkpoint(&self) -> OwnedValue {
        let mut v = self.to_json();
        if !self.omitted.is_empty()
            && let Some(m) = v.as_object_mut()
        {
            m.insert(
                "instructions_omitted",
                OwnedValue::Array(self.omitted.clone()),
            );
        }
        v
    }
}

fn is_empty_object(v: &OwnedValue) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

fn join(parts: &[Part]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .map(|p| p.text.as_deref().unwrap_or(""))
        .collect();
    texts.join("\n\n")
}

/// Resolves an `instructions_parts` delta against the parts in force; the
/// flag is false when some element has no text the path can rebuild.
/// `fault` hears of each `keep` a writer must not write: one that runs
/// past the end of the list in force, or takes a part another element of
/// the delta names.
fn resolve_parts(
    prev: &[Part],
    delta: &[OwnedValue],
    fault: &mut dyn FnMut(String),
) -> (Vec<Part>, bool) {
    let named: Vec<&str> = delta
        .iter()
        .filter_map(|e| e.get("id").and_then(OwnedValue::as_str))
        .collect();
    let mut out = Vec::new();
    let mut ok = true;
    let mut cursor = 0usize;
    for e in delta {
        if let Some(id) = e.get("id").and_then(OwnedValue::as_str) {
            let in_force = prev.iter().position(|p| p.id == id);
            let source = non_empty(e.get("source"));
            if let Some(text) = e.get("text").and_then(OwnedValue::as_str) {
                out.push(Part {
                    id: id.to_owned(),
                    text: Some(text.to_owned()),
                    source,
                });
            } else if let Some(h) = e.get("hash").and_then(OwnedValue::as_str) {
                match in_force.map(|i| &prev[i]) {
                    Some(p)
                        if p.text
                            .as_deref()
                            .is_some_and(|t| sha256_ref(t.as_bytes()) == h) =>
                    {
                        out.push(Part {
                            id: id.to_owned(),
                            text: p.text.clone(),
                            source: source.or_else(|| p.source.clone()),
                        })
                    }
                    _ => {
                        ok = false;
                        out.push(Part {
                            id: id.to_owned(),
                            text: None,
                            source,
                        });
                    }
                }
            } else {
                out.push(Part {
                    id: id.to_owned(),
                    text: Some(String::new()),
                    source,
                });
            }
            if let Some(i) = in_force {
                cursor = i + 1;
            }
        } else if let Some(n) = e
            .get("keep")
            .and_then(|v| v.as_number()?.as_i64())
            .filter(|n| *n > 0)
        {
            let n = n as usize;
            let end = cursor.saturating_add(n);
            if end > prev.len() {
                ok = false;
                fault(format!(
                    "a `keep` of {n} runs past the end of the {} parts in force",
                    prev.len()
                ));
            }
            for p in prev.get(cursor..end.min(prev.len())).unwrap_or(&[]) {
                if named.contains(&p.id.as_str()) {
                    fault(format!(
                        "a `keep` takes the part {:?}, which another element names",
                        p.id
                    ));
                    ok = false;
                }
                if p.text.is_none() {
                    ok = false;
                }
                out.push(p.clone());
            }
            cursor = end;
        } else {
            ok = false;
        }
    }
    (out, ok)
}

/// Resolves an `instructions_omitted` delta against the list in force. A
/// `keep` that runs past the end of that list or takes a part another
/// element of the delta names (the whole delta read first) names no part:
/// it stays in the list where it stands, and still moves the cursor.
/// `fault` hears of each `keep` a writer must not write: those two, and
/// any `keep` over a list in force that names an `id` twice.
fn resolve_omitted(
    prev: &[OwnedValue],
    delta: &[OwnedValue],
    fault: &mut dyn FnMut(String),
) -> Vec<OwnedValue> {
    let id_of = |e: &OwnedValue| e.get("id").and_then(OwnedValue::as_str).map(str::to_owned);
    let named: Vec<String> = delta.iter().filter_map(id_of).collect();
    let is_keep = |e: &OwnedValue| {
        e.get("id").is_none()
            && e.get("keep")
                .and_then(|v| v.as_number()?.as_i64())
                .is_some_and(|n| n > 0)
    };
    if delta.iter().any(is_keep) {
        let mut ids: Vec<String> = prev.iter().filter_map(id_of).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() != n {
            fault("a `keep` over a list in force that names an `id` twice".into());
        }
    }
    let mut out = Vec::new();
    let mut cursor = 0usize;
    for e in delta {
        if let Some(id) = e.get("id").and_then(OwnedValue::as_str) {
            if let Some(i) = prev
                .iter()
                .position(|p| p.get("id").and_then(OwnedValue::as_str) == Some(id))
            {
                cursor = i + 1;
            }
            out.push(e.clone());
        } else if let Some(n) = e
            .get("keep")
            .and_then(|v| v.as_number()?.as_i64())
            .filter(|n| *n > 0)
        {
            let end = cursor.saturating_add(n as usize);
            let taken = prev.get(cursor..end).unwrap_or(&[]);
            let clash = taken.iter().filter_map(id_of).find(|id| named.contains(id));
            if end > prev.len() {
                fault(format!(
                    "a `keep` of {n} runs past the end of the {} parts in force",
                    prev.len()
                ));
                out.push(e.clone());
            } else if let Some(id) = clash {
                fault(format!(
                    "a `keep` takes the part {id:?}, which another element names"
                ));
                out.push(e.clone());
            } else {
                out.extend(taken.iter().cloned());
            }
            cursor = end;
        } else {
            out.push(e.clone());
        }
    }
    out
}

/// What a model call at a point on a path receives.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The settings in force.
    pub settings: Settings,
    /// The items, in request order.
    pub items: Vec<OwnedValue>,
    /// The ids of the entries the algorithm selected, in order (after a
    /// compaction: the compaction, the kept entries, then what follows).
    pub entries: Vec<String>,
    /// For each item, the id of the entry that contributed it.
    pub item_entries: Vec<String>,
}

/// Why a context cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// No entry has this id.
    #[error("no entry {0} in the file")]
    NoEntry(String),
    /// The file has no entry at all.
    #[error("the file has no entry")]
    Empty,
    /// A line on the path no longer parses.
    #[error("line {0} on the path does not parse")]
    Unreadable(usize),
    /// A compaction's `first_kept` is not on the path before it.
    #[error("compaction on line {0}: first_kept is not on the path before it")]
    FirstKept(usize),
    /// The request is not I-JSON.
    #[error("the request has no canonical form: {0}")]
    Canon(CanonError),
    /// The entry is not a `response`.
    #[error("entry {0} is not a response")]
    NotResponse(String),
}

impl Context {
    /// The context as the reference fixtures' `context/*.json` hold it:
    /// `{"settings", "items", "entries", "item_entries"}`.
    pub fn to_json(&self) -> OwnedValue {
        let ids = |v: &[String]| {
            OwnedValue::Array(v.iter().map(|s| OwnedValue::string(s.clone())).collect())
        };
        let mut m = Map::new();
        m.insert("settings", self.settings.to_json());
        m.insert("items", OwnedValue::Array(self.items.clone()));
        m.insert("entries", ids(&self.entries));
        m.insert("item_entries", ids(&self.item_entries));
        OwnedValue::Object(m)
    }

    /// The canonical request: the settings' members, `input`, `store:
    /// false`, and the `extra` members at the top level.
    pub fn request(&self) -> OwnedValue {
        request_of(&self.settings, &self.items)
    }

    /// `request_hash`: the SHA-256 of the canonical request.
    pub fn request_hash(&self) -> Result<String, ContextError> {
        let bytes = to_canonical(&self.request()).map_err(ContextError::Canon)?;
        Ok(sha256_ref(&bytes))
    }
}

/// The canonical request of these settings and items ([`Context::request`]).
pub(crate) fn request_of(s: &Settings, items: &[OwnedValue]) -> OwnedValue {
    request_with(s, items, true)
}

/// [`request_of`], without the `tools` member when `with_tools` is false
/// (for a caller that has their canonical form already).
pub(crate) fn request_with(s: &Settings, items: &[OwnedValue], with_tools: bool) -> OwnedValue {
    let mut m = Map::new();
    if let Some(v) = s.model.as_deref().filter(|v| !v.is_empty()) {
        m.insert("model", OwnedValue::string(v));
    }
    if !items.is_empty() {
        m.insert("input", OwnedValue::Array(items.to_vec()));
    }
    if with_tools && !s.tools.is_empty() {
        m.insert("tools", OwnedValue::Array(s.tools.clone()));
    }
    if let Some(v) = s.text.as_ref().filter(|v| !is_empty_object(v)) {
        m.insert("text", v.clone());
    }
    if let Some(v) = s.reasoning.as_ref().filter(|v| !is_empty_object(v)) {
        m.insert("reasoning", v.clone());
    }
    if let Some(v) = s.instructions.as_deref().filter(|v| !v.is_empty()) {
        m.insert("instructions", OwnedValue::string(v));
    }
    m.insert("store", OwnedValue::Bool(false));
    for (k, v) in s.extra.iter() {
        m.insert(k, v.clone());
    }
    OwnedValue::Object(m)
}

/// The parsed lines of a path, root first.
fn path_values(
    s: &Session<'_>,
    path: &[usize],
    parser: &mut Parser,
) -> Result<Vec<OwnedValue>, ContextError> {
    path.iter()
        .map(|&i| {
            let e = &s.entries()[i];
            e.to_owned_value(parser)
                .ok_or(ContextError::Unreadable(e.line))
        })
        .collect()
}

/// Runs the algorithm over a root-first path (indexes into the session's
/// entries).
pub fn build(s: &Session<'_>, path: &[usize]) -> Result<Context, ContextError> {
    let mut parser = Parser::new();
    let values = path_values(s, path, &mut parser)?;
    let id = |k: usize| s.entries()[path[k]].id.clone();
    let ty = |k: usize| s.entries()[path[k]].entry_type.as_str();
    let mut ctx = Context {
        settings: Settings::default(),
        items: Vec::new(),
        entries: Vec::new(),
        item_entries: Vec::new(),
    };
    let mut start = 0;
    if let Some(c) = (0..path.len()).rev().find(|&k| ty(k) == "compaction") {
        let comp = &values[c];
        let first_kept = comp
            .get("first_kept")
            .and_then(OwnedValue::as_str)
            .unwrap_or("");
        let kept = (0..c)
            .find(|&k| s.entries()[path[k]].id == first_kept)
            .ok_or(ContextError::FirstKept(s.entries()[path[c]].line))?;
        ctx.settings = comp
            .get("config")
            .map(Settings::from_checkpoint)
            .unwrap_or_default();
        ctx.entries.push(id(c));
        if let Some(sum) = comp.get("summary") {
            ctx.items.push(sum.clone());
            ctx.item_entries.push(id(c));
        }
        if let Some(pinned) = comp.get("pinned").and_then(OwnedValue::as_array) {
            for p in pinned {
                ctx.items.push(p.clone());
                ctx.item_entries.push(id(c));
            }
        }
        for (k, value) in values.iter().enumerate().take(c).skip(kept) {
            ctx.entries.push(id(k));
            if let Some(item) = contributed(ty(k), value) {
                ctx.items.push(item.clone());
                ctx.item_entries.push(id(k));
            }
        }
        start = c + 1;
    }
    for (k, value) in values.iter().enumerate().skip(start) {
        if ty(k) == "config" {
            ctx.settings.apply(value);
        }
        ctx.entries.push(id(k));
        if let Some(item) = contributed(ty(k), value) {
            ctx.items.push(item.clone());
            ctx.item_entries.push(id(k));
        }
    }
    Ok(ctx)
}

fn contributed<'v>(ty: &str, v: &'v OwnedValue) -> Option<&'v OwnedValue> {
    match ty {
        "item" => v.get("item"),
        "branch_summary" => v.get("summary"),
        _ => None,
    }
}

impl Session<'_> {
    /// The context at the entry `id`, or at the leaf the resume rule gives
    /// when `id` is `None`.
    pub fn context(&self, id: Option<&str>) -> Result<Context, ContextError> {
        let idx = match id {
            Some(id) => self
                .index_of(id)
                .ok_or_else(|| ContextError::NoEntry(id.to_owned()))?,
            None => {
                let leaf = self.leaf().ok_or(ContextError::Empty)?;
                self.index_of(&leaf.id).ok_or(ContextError::Empty)?
            }
        };
        build(self, &self.path_indexes(idx))
    }

    /// The context of the request that produced the `response` entry `id`:
    /// its path without the response itself and without its output items
    /// (the `item` entries before it whose `response` names its
    /// `response_id`, other entries skipped, up to the first item naming
    /// another response or none).
    pub fn request_context(&self, id: &str) -> Result<Context, ContextError> {
        let idx = self
            .index_of(id)
            .ok_or_else(|| ContextError::NoEntry(id.to_owned()))?;
        let e = &self.entries()[idx];
        if e.entry_type != "response" {
            return Err(ContextError::NotResponse(id.to_owned()));
        }
        let mut path = self.path_indexes(idx);
        path.pop();
        let mut output = vec![false; path.len()];
        if let Some(rid) = e.response_id.as_deref() {
            for k in (0..path.len()).rev() {
                let p = &self.entries()[path[k]];
                if p.entry_type != "item" {
                    continue;
                }
                if p.response_id.as_deref() != Some(rid) {
                    break;
                }
                output[k] = true;
            }
        }
        let kept: Vec<usize> = path
            .iter()
            .zip(output)
            .filter(|(_, o)| !o)
            .map(|(&i, _)| i)
            .collect();
        build(self, &kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(json: &str) -> OwnedValue {
        OwnedValue::parse(json.as_bytes()).unwrap()
    }

    /// A `keep` in an omitted list that takes a part another element of
    /// the list names names no part: it stays where it stands (RFC 0001
    /// draft 0.10, `instructions_omitted`), and the writer's fault is
    /// heard; one that runs past the end likewise.
    #[test]
    fn an_omitted_keep_that_names_no_part_stays_as_it_stands() {
        let prev = [v(r#"{"id":"a"}"#), v(r#"{"id":"b"}"#), v(r#"{"id":"c"}"#)];
        let mut faults = Vec::new();
        let delta = [v(r#"{"keep":2}"#), v(r#"{"id":"b","size":1}"#)];
        let out = resolve_omitted(&prev, &delta, &mut |f| faults.push(f));
        assert_eq!(out, vec![v(r#"{"keep":2}"#), v(r#"{"id":"b","size":1}"#)]);
        assert_eq!(faults.len(), 1, "{faults:?}");
        faults.clear();
        let delta = [v(r#"{"id":"b","size":1}"#), v(r#"{"keep":2}"#)];
        let out = resolve_omitted(&prev, &delta, &mut |f| faults.push(f));
        assert_eq!(out, vec![v(r#"{"id":"b","size":1}"#), v(r#"{"keep":2}"#)]);
        assert_eq!(faults.len(), 1, "{faults:?}");
        // A keep that resolves: the parts it takes, no fault.
        faults.clear();
        let delta = [v(r#"{"id":"a","size":1}"#), v(r#"{"keep":2}"#)];
        let out = resolve_omitted(&prev, &delta, &mut |f| faults.push(f));
        assert_eq!(
            out,
            vec![
                v(r#"{"id":"a","size":1}"#),
                prev[1].clone(),
                prev[2].clone()
            ]
        );
        assert!(faults.is_empty(), "{faults:?}");
    }
}
