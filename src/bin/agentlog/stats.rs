//! `agentlog stats`: totals over any number of stores.
//!
//! `--json` prints one object, members in this order:
//!
//! ```text
//! {
//!   "conversations": N,        OpenHands conversations (top-level)
//!   "subagents": N,            sub-agents' conversations under them
//!   "sessions": N,             OC Chat sessions and ASF session files
//!   "unreadable": N,           conversations, sessions, directories and event files that could not be read
//!   "events": N,               OpenHands events that read as JSON objects (sub-agents' included), ASF entries
//!   "events_by_kind": {KIND: N},           sorted by kind ("(none)" for an event without a kind)
//!   "messages": N,             OC Chat messages, ASF `message` items
//!   "messages_by_role": {ROLE: N},         sorted by role
//!   "tool_calls": {TOOL: N},   ActionEvents by tool_name, OC Chat assistant tool_calls by function name, ASF function_call items by name
//!   "errors": {"agent_error": N, "conversation_error": N, "tool_error": N},
//!   "usage": {MODEL: {"calls": N, "prompt_tokens": N, "completion_tokens": N,
//!             "cache_read_tokens": N, "cache_write_tokens": N, "reasoning_tokens": N,
//!             "cost": F}},      sorted by model
//!   "files": {"malformed": N, "gap": N, "duplicate": N, "bad_name": N, "bad_state": N}
//! }
//! ```
//!
//! - `errors`: `agent_error` counts `AgentErrorEvent`s (calls the agent
//!   could not run), `conversation_error` `ConversationErrorEvent`s
//!   (run-loop failures), `tool_error` observations with `is_error: true`.
//! - `usage`, OpenHands: every `stats.usage_to_metrics` entry of each
//!   conversation's `base_state.json`, by its `model_name` (or, when that is
//!   absent or the merged `"default"`, its `accumulated_token_usage.model`):
//!   `calls` is the length of `token_usages`, the token counts are those of
//!   `accumulated_token_usage`, `cost` is `accumulated_cost`. A parent keeps
//!   a copy of each sub-agent's metrics under `task:<id>` / `delegate:<id>`;
//!   when the conversation has sub-agents' directories those copies are
//!   skipped (the sub-agents' own files are counted instead), otherwise they
//!   are counted. OC Chat: each session's `stats`, by the session's model
//!   (prompt, completion and cache-hit tokens; no calls, no cost). ASF
//!   (a PATH as `asf_files.rs` tells it): each `response` entry is a call
//!   of its `model`, its `usage` giving `input_tokens`, `output_tokens`,
//!   `input_tokens_details.cached_tokens` and
//!   `output_tokens_details.reasoning_tokens` (no cache writes, no cost).
//!   `prompt_tokens` is the count as recorded, which for most models
//!   includes cached tokens. What a format does not record is 0 here
//!   (OC Chat's calls and cost, ASF's cost); the human table shows `-`
//!   for it, whatever the format, and labels only the formats read.
//! - `files`: event files by status (`bad_name`: names that are not an
//!   event file's); `bad_state`: `base_state.json` or `meta.json` that does
//!   not read as a JSON object.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use agentlog::json::{Document, OwnedValue};
use agentlog::occhat::SessionStore;
use agentlog::openhands::{Conversation, FileStatus, Kind, Parsed, State, StateUsage, Usage};
use rayon::prelude::*;

use crate::out::{Obj, Out, Res, Status, float as json_float, uint, warn};
use crate::target::{
    IoDepth, Paths, Target, Worker, for_each_target_listed, par_ordered_primed, walk_with,
};

const HELP: &str = "\
Examples:
  agentlog stats examples/store
  agentlog stats ~/.openhands/conversations oc_chat/sessions --json | jq .usage

Totals: conversations and sub-agents, OC Chat sessions, events by kind, tool
calls by tool, errors, token usage and cost by model (from base_state.json's
stats.usage_to_metrics), files that are malformed, after a gap, duplicates or
badly named. The JSON keys are conversations, subagents, sessions,
unreadable, events, events_by_kind, messages, messages_by_role, tool_calls,
errors, usage, files.

No --checkpoint: these are totals of the stores as they are; totals of what
changed since a checkpoint would read as the store's. For what is new since
FILE, count the lines of `agentlog export PATH --checkpoint FILE`.";

/// Totals over any number of stores.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(flatten)]
    paths: Paths,
    /// One JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    io: IoDepth,
}

/// The totals.
#[derive(Debug, Default)]
struct Totals {
    conversations: u64,
    subagents: u64,
    sessions: u64,
    unreadable: u64,
    events: u64,
    kinds: BTreeMap<String, u64>,
    messages: u64,
    roles: BTreeMap<String, u64>,
    tools: BTreeMap<String, u64>,
    agent_errors: u64,
    conversation_errors: u64,
    tool_errors: u64,
    usage: BTreeMap<String, Usage>,
    malformed: u64,
    gap: u64,
    duplicate: u64,
    bad_name: u64,
    bad_state: u64,
    /// Which formats were read (human output labels only those).
    read: Formats,
    /// The models whose calls are recorded (OpenHands, ASF).
    calls_known: BTreeSet<String>,
    /// The models whose cost is recorded (OpenHands).
    cost_known: BTreeSet<String>,
}

/// Which formats a run read.
#[derive(Debug, Default, Clone, Copy)]
struct Formats {
    openhands: bool,
    occhat: bool,
    asf: bool,
}

impl Formats {
    /// The session formats read, as a label: `(OC Chat, ASF)`.
    fn sessions(self) -> String {
        let names: Vec<&str> = [(self.occhat, "OC Chat"), (self.asf, "ASF")]
            .iter()
            .filter(|(read, _)| *read)
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            String::new()
        } else {
            format!(" ({})", names.join(", "))
        }
    }
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match map.get_mut(key) {
        Some(v) => *v = v.saturating_add(n),
        None => {
            map.insert(key.to_owned(), n);
        }
    }
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        add(&mut self.conversations, o.conversations);
        add(&mut self.subagents, o.subagents);
        add(&mut self.sessions, o.sessions);
        add(&mut self.unreadable, o.unreadable);
        add(&mut self.events, o.events);
        add(&mut self.messages, o.messages);
        add(&mut self.agent_errors, o.agent_errors);
        add(&mut self.conversation_errors, o.conversation_errors);
        add(&mut self.tool_errors, o.tool_errors);
        add(&mut self.malformed, o.malformed);
        add(&mut self.gap, o.gap);
        add(&mut self.duplicate, o.duplicate);
        add(&mut self.bad_name, o.bad_name);
        add(&mut self.bad_state, o.bad_state);
        self.read.openhands |= o.read.openhands;
        self.read.occhat |= o.read.occhat;
        self.read.asf |= o.read.asf;
        self.calls_known.extend(o.calls_known.iter().cloned());
        self.cost_known.extend(o.cost_known.iter().cloned());
        for (k, v) in &o.kinds {
            bump(&mut self.kinds, k, *v);
        }
        for (k, v) in &o.roles {
            bump(&mut self.roles, k, *v);
        }
        for (k, v) in &o.tools {
            bump(&mut self.tools, k, *v);
        }
        for (k, v) in &o.usage {
            self.usage.entry(k.clone()).or_default().add(v);
        }
    }

    fn to_value(&self) -> OwnedValue {
        let counts = |m: &BTreeMap<String, u64>| {
            OwnedValue::Object(m.iter().map(|(k, v)| (k.clone(), uint(*v))).collect())
        };
        let usage = OwnedValue::Object(
            self.usage
                .iter()
                .map(|(k, u)| {
                    (
                        k.clone(),
                        Obj::new()
                            .put("calls", uint(u.calls))
                            .put("prompt_tokens", uint(u.prompt_tokens))
                            .put("completion_tokens", uint(u.completion_tokens))
                            .put("cache_read_tokens", uint(u.cache_read_tokens))
                            .put("cache_write_tokens", uint(u.cache_write_tokens))
                            .put("reasoning_tokens", uint(u.reasoning_tokens))
                            .put("cost", json_float(u.cost))
                            .done(),
                    )
                })
                .collect(),
        );
        Obj::new()
            .put("conversations", uint(self.conversations))
            .put("subagents", uint(self.subagents))
            .put("sessions", uint(self.sessions))
            .put("unreadable", uint(self.unreadable))
            .put("events", uint(self.events))
            .put("events_by_kind", counts(&self.kinds))
            .put("messages", uint(self.messages))
            .put("messages_by_role", counts(&self.roles))
            .put("tool_calls", counts(&self.tools))
            .put(
                "errors",
                Obj::new()
                    .put("agent_error", uint(self.agent_errors))
                    .put("conversation_error", uint(self.conversation_errors))
                    .put("tool_error", uint(self.tool_errors))
                    .done(),
            )
            .put("usage", usage)
            .put(
                "files",
                Obj::new()
                    .put("malformed", uint(self.malformed))
                    .put("gap", uint(self.gap))
                    .put("duplicate", uint(self.duplicate))
                    .put("bad_name", uint(self.bad_name))
                    .put("bad_state", uint(self.bad_state))
                    .done(),
            )
            .done()
    }

    /// The human form: counts with thousands separators, what belongs to
    /// one format only shown when that format was read, usage as a table,
    /// cost in dollars to the cent.
    fn to_text(&self) -> Vec<String> {
        let g = crate::ls::group;
        let p =
            |n: u64, one: &str, many: &str| format!("{} {}", g(n), if n == 1 { one } else { many });
        let mut l = Vec::new();
        let openhands = self.read.openhands;
        if openhands || !(self.read.occhat || self.read.asf) {
            l.push(format!(
                "{:<34}{:>12}  ({})",
                "OpenHands conversations",
                g(self.conversations),
                p(self.subagents, "sub-agent", "sub-agents")
            ));
        }
        if self.read.occhat || self.read.asf {
            l.push(format!(
                "{:<34}{:>12}  ({})",
                format!("sessions{}", self.read.sessions()),
                g(self.sessions),
                p(self.messages, "message", "messages")
            ));
        }
        if self.unreadable > 0 {
            l.push(format!("{:<34}{:>12}", "unreadable", g(self.unreadable)));
        }
        let list = |l: &mut Vec<String>, m: &BTreeMap<String, u64>| {
            for (k, v) in m {
                l.push(format!("  {:<32}{:>12}", crate::brief::fit(k, 32), g(*v)));
            }
        };
        if self.events > 0 || openhands {
            l.push(String::new());
            l.push(format!("{:<34}{:>12}", "events by kind", g(self.events)));
            list(&mut l, &self.kinds);
        }
        if !self.roles.is_empty() {
            l.push(String::new());
            l.push(format!(
                "{:<34}{:>12}",
                format!("messages by role{}", self.read.sessions()),
                g(self.messages)
            ));
            list(&mut l, &self.roles);
        }
        l.push(String::new());
        l.push(format!(
            "{:<34}{:>12}",
            "tool calls",
            g(self.tools.values().fold(0u64, |a, b| a.saturating_add(*b)))
        ));
        list(&mut l, &self.tools);
        if openhands || self.agent_errors + self.conversation_errors + self.tool_errors > 0 {
            l.push(String::new());
            l.push(format!(
                "errors: {}, {}, {}",
                p(self.agent_errors, "agent error", "agent errors"),
                p(
                    self.conversation_errors,
                    "conversation error",
                    "conversation errors"
                ),
                p(self.tool_errors, "tool error", "tool errors")
            ));
        }
        l.push(String::new());
        if self.usage.is_empty() {
            l.push("usage by model: none recorded".into());
        } else {
            let writes = self.usage.values().any(|u| u.cache_write_tokens > 0);
            let mut head = format!(
                "{:<24}{:>7}{:>14}{:>13}{:>12}{:>11}",
                "usage by model", "calls", "prompt", "cache read", "completion", "reasoning"
            );
            if writes {
                head.push_str(&format!("{:>13}", "cache write"));
            }
            head.push_str(&format!("{:>11}", "cost"));
            l.push(head);
            for (k, u) in &self.usage {
                // What a format does not record is `-`, whatever the
                // format (OC Chat: calls and cost; ASF: cost).
                let mut row = format!(
                    "  {:<22}{:>7}{:>14}{:>13}{:>12}{:>11}",
                    crate::brief::fit(k, 22),
                    if self.calls_known.contains(k) {
                        g(u.calls)
                    } else {
                        "-".into()
                    },
                    g(u.prompt_tokens),
                    g(u.cache_read_tokens),
                    g(u.completion_tokens),
                    g(u.reasoning_tokens)
                );
                if writes {
                    row.push_str(&format!("{:>13}", g(u.cache_write_tokens)));
                }
                row.push_str(&format!(
                    "{:>11}",
                    if self.cost_known.contains(k) {
                        dollars(u.cost)
                    } else {
                        "-".into()
                    }
                ));
                l.push(row);
            }
        }
        let files = [
            (self.malformed, "malformed"),
            (self.gap, "after a gap"),
            (self.duplicate, "duplicate"),
            (self.bad_name, "badly named"),
            (self.bad_state, "bad state or meta"),
        ];
        if files.iter().any(|(n, _)| *n > 0) {
            l.push(String::new());
            l.push(format!(
                "event files: {}",
                files
                    .iter()
                    .map(|(n, what)| format!("{} {what}", g(*n)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        l
    }
}

/// Dollars to the cent, thousands separated: `$1,234.56`.
fn dollars(cost: f64) -> String {
    let cents = (cost * 100.0).round();
    if !cents.is_finite() || cents < 0.0 {
        return "-".into();
    }
    // Below 2^53 cents the conversion is exact.
    let cents = cents.min(9e15) as u64;
    format!("${}.{:02}", crate::ls::group(cents / 100), cents % 100)
}

/// Runs the command.
pub fn run(mut args: Args, out: &mut Out) -> Res<u8> {
    args.paths.or_default()?;
    let mut status = Status::OK;
    let mut totals = Totals::default();
    let ahead = args.io.read_ahead();
    let resolved = for_each_target_listed(
        &args.paths.paths,
        ahead,
        &mut status,
        |_, target, _, progress| {
            match target {
                Target::OpenHands {
                    dirs,
                    unreadable,
                    events,
                } => {
                    crate::target::warn_skipped(&unreadable);
                    totals.unreadable = totals.unreadable.saturating_add(unreadable.len() as u64);
                    // Each conversation read once, nothing recorded of it:
                    // the reads take discovery's listings.
                    par_ordered_primed(&dirs, events, Some(progress), ahead, tree_totals, |t| {
                        totals.add(&t);
                        Ok(())
                    })?;
                }
                Target::OcChat { root } => totals.add(&occhat_totals(&root)),
                Target::Asf { files } => {
                    for t in files.par_iter().map(|f| asf_totals(f)).collect::<Vec<_>>() {
                        totals.add(&t);
                    }
                }
            }
            Ok(())
        },
    )?;
    let any = resolved > 0;
    if !any {
        // Nothing could be read: no totals to print.
        return Ok(status.code());
    }
    if args.json {
        out.json_pretty(&totals.to_value())?;
    } else {
        for l in totals.to_text() {
            out.line(&l)?;
        }
    }
    Ok(status.code())
}

/// The totals of one conversation and its sub-agents. What the envelopes
/// do not hold (tool names, tool errors, the state's usage) is taken from
/// the reader's own parse of each file ([`walk_with`]), so no file is
/// parsed twice.
fn tree_totals(w: &mut Worker, dir: &Path) -> Totals {
    let t = RefCell::new(Totals {
        read: Formats {
            openhands: true,
            ..Formats::default()
        },
        ..Totals::default()
    });
    // The state's usage entries of the conversation being read: counted
    // once it is known whether it has sub-agents' directories.
    let usage: RefCell<StateUsage> = RefCell::new(StateUsage::default());
    let Worker {
        reader, conv, ids, ..
    } = w;
    let walked = walk_with(
        reader,
        conv,
        ids,
        dir,
        |p, doc| match p {
            Parsed::Event { .. } => event_totals(doc, &mut t.borrow_mut()),
            Parsed::State => {
                // The lean decode: no raw literal is kept, so the document's
                // span table (a pass over the whole state) is never built.
                *usage.borrow_mut() = State::decode_lean(doc.root())
                    .map(|s| StateUsage::of(&s))
                    .unwrap_or_default();
            }
            _ => {}
        },
        |node| {
            let mut t = t.borrow_mut();
            let usage = usage.take();
            match node.conv {
                Ok(c) => {
                    if node.parent.is_some() {
                        t.subagents += 1;
                    } else {
                        t.conversations += 1;
                    }
                    conversation_totals(c, &mut t);
                    for e in usage.counted(!c.subagents().is_empty()) {
                        t.usage.entry(e.model.clone()).or_default().add(&e.usage);
                        t.calls_known.insert(e.model.clone());
                        t.cost_known.insert(e.model.clone());
                    }
                }
                Err(e) => {
                    warn(&e.to_string());
                    t.unreadable += 1;
                }
            }
            Ok(())
        },
    );
    // The visitor never fails.
    let _ = walked;
    t.into_inner()
}

/// Tool names and tool errors of one event (an object).
fn event_totals(doc: &Document<'_>, t: &mut Totals) {
    let root = doc.root();
    match root.get("kind").and_then(|v| v.as_str()).map(Kind::parse) {
        Some(Kind::Action) => {
            let name = root.get("tool_name").and_then(|v| v.as_str());
            bump(&mut t.tools, name.unwrap_or("(none)"), 1);
        }
        Some(Kind::Observation)
            if root
                .get("observation")
                .and_then(|o| o.get("is_error"))
                .and_then(|v| v.as_bool())
                == Some(true) =>
        {
            t.tool_errors += 1;
        }
        _ => {}
    }
}

fn conversation_totals(conv: &Conversation, t: &mut Totals) {
    for f in conv.files() {
        match f.status() {
            FileStatus::Event => {}
            FileStatus::Malformed => t.malformed += 1,
            FileStatus::Unreadable => {
                if let Some(e) = f.error() {
                    warn(&e.to_string());
                }
                t.unreadable += 1;
            }
            FileStatus::Gap => t.gap += 1,
            FileStatus::Duplicate => t.duplicate += 1,
            FileStatus::BadName => t.bad_name += 1,
        }
    }
    for e in [
        conv.state().and_then(|f| f.error()),
        conv.meta().and_then(|f| f.error()),
    ]
    .into_iter()
    .flatten()
    {
        warn(&e.to_string());
        t.bad_state += 1;
    }
    for e in [conv.events_error(), conv.subagents_error()]
        .into_iter()
        .flatten()
    {
        warn(&e.to_string());
        t.unreadable += 1;
    }
    for e in conv.events() {
        if !e.is_ok() {
            continue;
        }
        t.events += 1;
        let kind = e.kind();
        bump(
            &mut t.kinds,
            kind.as_ref().map_or("(none)", Kind::as_str),
            1,
        );
        match kind {
            Some(Kind::AgentError) => t.agent_errors += 1,
            Some(Kind::ConversationError) => t.conversation_errors += 1,
            _ => {}
        }
    }
}

/// The totals of an OC Chat store.
/// The totals of one ASF session file: one session, its entries by type
/// (`events`, `events_by_kind`), its `message` items by role, its
/// `function_call` items by name, and its `response` entries' `usage` by
/// their `model`.
fn asf_totals(file: &Path) -> Totals {
    let mut t = Totals {
        read: Formats {
            asf: true,
            ..Formats::default()
        },
        ..Totals::default()
    };
    let bytes = match crate::asf_files::read(file) {
        Ok(b) => b,
        Err(e) => {
            warn(&e);
            t.unreadable = 1;
            return t;
        }
    };
    let s = match agentlog::asf::Session::read(&bytes) {
        Ok(s) => s,
        Err(e) => {
            warn(&format!("{}: {e}", file.display()));
            t.unreadable = 1;
            return t;
        }
    };
    t.sessions = 1;
    let mut parser = agentlog::json::Parser::new();
    let tokens = |u: &OwnedValue, path: &[&str]| {
        let mut v = Some(u);
        for k in path {
            v = v.and_then(|v| v.get(k));
        }
        v.and_then(OwnedValue::as_number)
            .and_then(|n| n.as_i64())
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0)
    };
    for e in s.entries() {
        t.events += 1;
        bump(&mut t.kinds, &e.entry_type, 1);
        if e.entry_type != "item" && e.entry_type != "response" {
            continue;
        }
        let Some(v) = e.to_owned_value(&mut parser) else {
            continue;
        };
        if e.entry_type == "response" {
            let model = v
                .get("model")
                .and_then(OwnedValue::as_str)
                .unwrap_or("(none)");
            let mut u = Usage {
                calls: 1,
                ..Usage::default()
            };
            if let Some(usage) = v.get("usage") {
                u.prompt_tokens = tokens(usage, &["input_tokens"]);
                u.completion_tokens = tokens(usage, &["output_tokens"]);
                u.cache_read_tokens = tokens(usage, &["input_tokens_details", "cached_tokens"]);
                u.reasoning_tokens = tokens(usage, &["output_tokens_details", "reasoning_tokens"]);
            }
            t.usage.entry(model.to_owned()).or_default().add(&u);
            t.calls_known.insert(model.to_owned());
            continue;
        }
        let Some(item) = v.get("item") else { continue };
        match item.get("type").and_then(OwnedValue::as_str) {
            Some("message") => {
                t.messages += 1;
                let role = item.get("role").and_then(OwnedValue::as_str);
                bump(&mut t.roles, role.unwrap_or("(none)"), 1);
            }
            Some("function_call") => {
                let name = item.get("name").and_then(OwnedValue::as_str);
                bump(&mut t.tools, name.unwrap_or("(none)"), 1);
            }
            _ => {}
        }
    }
    t
}

fn occhat_totals(root: &Path) -> Totals {
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    let mut t = Totals {
        read: Formats {
            occhat: true,
            ..Formats::default()
        },
        ..Totals::default()
    };
    for s in &list.skipped {
        warn(&format!("{} (skipped)", s.error));
        t.unreadable += 1;
    }
    let per: Vec<Totals> = list
        .sessions
        .par_iter()
        .map(|e| {
            let mut t = Totals {
                sessions: 1,
                ..Totals::default()
            };
            let model = crate::ls::text_of(&e.model);
            let pos = |v: i64| u64::try_from(v).unwrap_or(0);
            t.usage.insert(
                model,
                Usage {
                    prompt_tokens: pos(e.stats.total_prompt_tokens),
                    completion_tokens: pos(e.stats.total_completion_tokens),
                    cache_read_tokens: pos(e.stats.prompt_cache_hit_tokens),
                    ..Usage::default()
                },
            );
            match store.load_session(&crate::out::path_str(&e.filepath)) {
                Ok(s) if !s.load_failed => {
                    for m in &s.messages {
                        t.messages += 1;
                        let role = m.get("role").and_then(OwnedValue::as_str);
                        bump(&mut t.roles, role.unwrap_or("(none)"), 1);
                        let calls = m.get("tool_calls").and_then(OwnedValue::as_array);
                        for c in calls.into_iter().flatten() {
                            let name = c
                                .get("function")
                                .and_then(|f| f.get("name"))
                                .and_then(OwnedValue::as_str);
                            bump(&mut t.tools, name.unwrap_or("(none)"), 1);
                        }
                    }
                }
                Ok(_) => {
                    warn(&format!(
                        "{}: the chat log could not be read",
                        e.filepath.display()
                    ));
                    t.unreadable += 1;
                }
                Err(err) => {
                    warn(&err.to_string());
                    t.unreadable += 1;
                }
            }
            t
        })
        .collect();
    for p in &per {
        t.add(p);
    }
    t
}
