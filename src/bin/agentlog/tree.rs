//! `agentlog tree`: one conversation's event tree, so that a person can
//! pick a branch (`view --branch`) without reading `parent_id`s by hand.
//!
//! The tree is the view's (`agentlog::openhands::view::EventTree`): each
//! event's effective parent (its `parent_id`, the previous event when it
//! has none), the head (`leaf_event_id`, or the SDK version's fallback),
//! every branch (the path from the root to each tip: an event nothing
//! continues), forks (events continued by more than one event).
//!
//! `--json` prints one object, members in this order:
//!
//! ```text
//! {
//!   "path": DIR,                  the conversation directory
//!   "events": N,                  events in the tree (the events OpenHands reads)
//!   "leaf_event_id": ID | null,   base_state.json's leaf_event_id, as written
//!   "head": {"state": "event" | "empty" | "dangling", "index": N | null, "id": ID | null},
//!   "branches": [{
//!       "tip_index": N, "tip_id": ID, "events": N,   events from the root to the tip
//!       "active": BOOL,            the head is on it (the branch `view` shows)
//!       "fork_index": N | null,    the last event it shares with an earlier branch
//!       "fault": null | "cycle" | "dangling"         why its walk stopped before a root
//!   }],                            tips in log order
//!   "forks": [{"index": N, "id": ID, "children": [N, ...]}],
//!   "subagents": [{"id": ID, "parent": ID, "path": DIR, "events": N | null}]
//! }
//! ```
//!
//! IDs are the events' file IDs (what `parent_id` and `leaf_event_id`
//! name), whole; indexes are from the file names. `subagents` lists every
//! sub-agent's conversation under the directory (nested ones too, each
//! with the ID of the conversation it is under); `events` is `null` for one
//! that could not be read. The human form shortens IDs to a unique prefix,
//! which `view --branch` and `show --id` take.

use std::path::PathBuf;

use agentlog::json::{OwnedValue, Parser};
use agentlog::openhands::view::{Branch, Head, PathFault, View, ViewOptions};
use agentlog::openhands::{Conversation, Reader};

use crate::ids::Shortener;
use crate::out::{Obj, Out, Res, Status, path_str, uint, warn};
use crate::target::{Worker, one_conversation, walk};

const HELP: &str = "\
Examples:
  agentlog tree ~/.openhands/conversations/<id>
  agentlog tree ~/.openhands/conversations/<id> --json | jq '.branches[] | select(.active)'
  agentlog view ~/.openhands/conversations/<id> --branch <tip ID prefix>

Branches run from the root to each tip (an event nothing continues); the
active one ends at the head (base_state.json's leaf_event_id). JSON keys:
path, events, leaf_event_id, head, branches, forks, subagents.";

/// Print a conversation's event tree: branches, their tips, the active one,
/// forks and sub-agents.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// A conversation directory, a file of one, a store holding one, or a
    /// conversation's ID (or a unique prefix of it) in --store.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    store: crate::find::StoreArg,
    /// One JSON object.
    #[arg(long)]
    json: bool,
}

/// One branch, as printed.
struct Row {
    branch: Branch,
    active: bool,
    /// The position of the last event shared with an earlier branch.
    fork: Option<usize>,
}

/// A sub-agent's conversation.
struct Sub {
    id: String,
    parent: String,
    path: String,
    events: Option<u64>,
}

/// Runs the command.
pub fn run(args: Args, out: &mut Out) -> Res<u8> {
    let path = crate::find::conversation(&args.path, &args.store)?;
    let conv = one_conversation(&path, &mut Reader::new())?;
    let view = View::from_conversation(&conv, &ViewOptions::default());
    let tree = view.tree();
    let events = view.events();
    let file_id = |pos: usize| events.get(pos).map_or("", |e| e.file_id);
    let index = |pos: usize| events.get(pos).map_or(0, |e| e.index as u64);
    let active_tip = tree.active_branch().tip();
    let on_active: Vec<bool> = {
        let mut v = vec![false; events.len()];
        for &p in &tree.active_branch().events {
            if let Some(x) = v.get_mut(p) {
                *x = true;
            }
        }
        v
    };
    // Branches, each with the last event it shares with the branches
    // before it.
    let mut seen = vec![false; events.len()];
    let mut rows = Vec::new();
    for branch in tree.branches() {
        let fork = branch
            .events
            .iter()
            .take_while(|&&p| seen.get(p).copied().unwrap_or(false))
            .last()
            .copied();
        for &p in &branch.events {
            if let Some(s) = seen.get_mut(p) {
                *s = true;
            }
        }
        let active = branch.tip().is_some_and(|t| on_active[t]);
        rows.push(Row {
            branch,
            active,
            fork,
        });
    }
    // Forks: events more than one event continues.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); events.len()];
    for (pos, p) in tree.parents().iter().enumerate() {
        if let Some(q) = p.position()
            && q != pos
            && let Some(c) = children.get_mut(q)
        {
            c.push(pos);
        }
    }
    let forks: Vec<(usize, &Vec<usize>)> = children
        .iter()
        .enumerate()
        .filter(|(_, c)| c.len() > 1)
        .collect();
    let subs = subagents(&conv);
    let leaf = leaf_event_id(&conv);
    if args.json {
        let (state, head_pos) = match tree.head() {
            Head::Event(p) => ("event", Some(*p)),
            Head::Empty => ("empty", None),
            Head::Dangling(_) => ("dangling", None),
        };
        let v = Obj::new()
            .put("path", path_str(conv.dir()))
            .put("events", uint(events.len() as u64))
            .str("leaf_event_id", leaf.as_deref())
            .put(
                "head",
                Obj::new()
                    .put("state", state)
                    .uint("index", head_pos.map(index))
                    .str("id", head_pos.map(file_id))
                    .done(),
            )
            .put(
                "branches",
                OwnedValue::Array(
                    rows.iter()
                        .map(|r| {
                            let tip = r.branch.tip();
                            Obj::new()
                                .uint("tip_index", tip.map(index))
                                .str("tip_id", tip.map(file_id))
                                .put("events", uint(r.branch.events.len() as u64))
                                .put("active", r.active)
                                .uint("fork_index", r.fork.map(index))
                                .str(
                                    "fault",
                                    r.branch.fault.as_ref().map(|f| match f {
                                        PathFault::Cycle(_) => "cycle",
                                        PathFault::Dangling(..) => "dangling",
                                    }),
                                )
                                .done()
                        })
                        .collect(),
                ),
            )
            .put(
                "forks",
                OwnedValue::Array(
                    forks
                        .iter()
                        .map(|(p, c)| {
                            Obj::new()
                                .put("index", uint(index(*p)))
                                .put("id", file_id(*p))
                                .put(
                                    "children",
                                    OwnedValue::Array(c.iter().map(|&x| uint(index(x))).collect()),
                                )
                                .done()
                        })
                        .collect(),
                ),
            )
            .put(
                "subagents",
                OwnedValue::Array(
                    subs.iter()
                        .map(|s| {
                            Obj::new()
                                .put("id", s.id.as_str())
                                .put("parent", s.parent.as_str())
                                .put("path", s.path.as_str())
                                .uint("events", s.events)
                                .done()
                        })
                        .collect(),
                ),
            )
            .done();
        out.json_pretty(&v)?;
        return Ok(Status::OK.code());
    }
    let short = Shortener::new(events.iter().map(|e| e.file_id));
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    out.line(&format!(
        "{}: {}, {}, {}",
        conv.name(),
        n(events.len(), "event", "events"),
        n(rows.len(), "branch", "branches"),
        n(forks.len(), "fork", "forks"),
    ))?;
    let head = match tree.head() {
        Head::Event(p) => format!(
            "head {} (event {}){}",
            short.short(file_id(*p)),
            index(*p),
            if leaf.as_deref() == Some(file_id(*p)) {
                ", base_state.json's leaf_event_id"
            } else {
                ", the SDK's fallback: no usable leaf_event_id"
            }
        ),
        Head::Empty => "head: none (an empty head)".to_owned(),
        Head::Dangling(id) => format!("head: leaf_event_id {id} names no event"),
    };
    out.line(&head)?;
    if !rows.is_empty() {
        out.line("")?;
        out.line(&format!("  {:<8}  INDEX  EVENTS  FORKS AT", "TIP"))?;
    }
    for r in &rows {
        let tip = r.branch.tip().unwrap_or(0);
        let fork = r.fork.map_or_else(
            || "-".to_owned(),
            |f| format!("{} (event {})", short.short(file_id(f)), index(f)),
        );
        let fault = match &r.branch.fault {
            None => String::new(),
            Some(PathFault::Cycle(p)) => format!("  (stops: a cycle at event {})", index(*p)),
            Some(PathFault::Dangling(p, _)) => {
                format!("  (stops: event {}'s parent names no event)", index(*p))
            }
        };
        out.line(&format!(
            "  {:<8}  {:>5}  {:>6}  {}{}{}",
            short.short(file_id(tip)),
            index(tip),
            r.branch.events.len(),
            fork,
            if r.active && Some(tip) == active_tip {
                "  (active)"
            } else {
                ""
            },
            fault
        ))?;
    }
    if !forks.is_empty() {
        out.line("")?;
        out.line("forks:")?;
        for (p, c) in &forks {
            let kids: Vec<String> = c.iter().map(|&x| index(x).to_string()).collect();
            out.line(&format!(
                "  event {} ({}) continued by events {}",
                index(*p),
                short.short(file_id(*p)),
                kids.join(", ")
            ))?;
        }
    }
    if !subs.is_empty() {
        out.line("")?;
        out.line(&format!("{}:", n(subs.len(), "sub-agent", "sub-agents")))?;
        for s in &subs {
            out.line(&format!(
                "  {}  {}  {}",
                s.id,
                s.events.map_or_else(
                    || "unreadable".to_owned(),
                    |e| n(e as usize, "event", "events")
                ),
                s.path
            ))?;
        }
    }
    Ok(Status::OK.code())
}

/// `base_state.json`'s `leaf_event_id`, when it is a string.
fn leaf_event_id(conv: &Conversation) -> Option<String> {
    let mut parser = Parser::new();
    let doc = conv.state()?.open(&mut parser).ok()?;
    doc.root()
        .get("leaf_event_id")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

/// Every sub-agent's conversation under `conv`'s directory, depth first.
fn subagents(conv: &Conversation) -> Vec<Sub> {
    let mut subs = Vec::new();
    let Worker {
        mut reader,
        conv: mut c,
        mut ids,
        ..
    } = Worker::default();
    let _ = walk(&mut reader, &mut c, &mut ids, conv.dir(), |node| {
        let Some(parent) = node.parent else {
            return Ok(());
        };
        let events = match node.conv {
            Ok(c) => Some(c.events().count() as u64),
            Err(e) => {
                warn(&e.to_string());
                None
            }
        };
        subs.push(Sub {
            id: node.id.to_owned(),
            parent: parent.to_owned(),
            path: path_str(node.dir),
            events,
        });
        Ok(())
    });
    subs
}
