//! `agentlog search DIR QUERY`: ranked hits from the index `agentlog
//! index` made (`agentlog::search`).
//!
//! `--json` prints one object a line, best hit first, members in this
//! order:
//!
//! ```text
//! {
//!   "score": F,                 relevance (BM25), higher first
//!   "store": "openhands" | "occhat",
//!   "conversation": ID,         the conversation's ID (OC Chat: the session's name)
//!   "parent": ID | null,        the parent conversation of a sub-agent
//!   "path": DIR,                the conversation's directory, what `agentlog show` takes (OC Chat: the sessions directory)
//!   "event": N,                 the event's index, `agentlog show DIR --index N` (OC Chat: the message's index)
//!   "kind": KIND,               message | action | observation | error | summary
//!   "event_kind": NAME,         the event's class (ActionEvent…; OC Chat: the message's role)
//!   "role": ROLE | null,        user | assistant | tool | system, or the event's source
//!   "tool": NAME | null,        the tool of a call, its output or its error
//!   "timestamp": T | null,      as written
//!   "model": NAME | null,       the conversation's model
//!   "active": BOOL,             on the active branch
//!   "in_context": BOOL,         in the model's context (not condensed away, not on an abandoned branch)
//!   "snippet": TEXT,            the text around the best match
//!   "highlights": [[S, E]...]   byte ranges of `snippet` (UTF-8) that matched
//! }
//! ```

use std::io::IsTerminal;
use std::path::PathBuf;

use agentlog::json::OwnedValue;
use agentlog::search::{Branch, DocKind, Hit, Query, SearchIndex, StoreKind, wall_seconds};

use crate::out::{Fail, Obj, Out, Res, float, uint};

const HELP: &str = "\
Examples:
  agentlog search ~/.cache/agentlog-index 'flaky test'
  agentlog search ~/.cache/agentlog-index 'tool:terminal pytest' --kind action --json | jq .path
  agentlog search ~/.cache/agentlog-index 'timeout -retry' --since 2025-04-01 --branch active

QUERY: words (all must match, case-insensitive), \"a phrase\", word* (a
prefix), -word (not), a OR b. Each hit names the conversation directory and
the event to open: `agentlog show PATH --index N` (OC Chat: `agentlog occhat
--sessions-dir PATH show NAME`), and says when the event is off the active
branch or out of the model's context (condensed away). --since takes a date
or time as the stores write them (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]),
compared with the recorded local time. JSON keys: score, store,
conversation, parent, path, event, kind, event_kind, role, tool, timestamp,
model, active, in_context, snippet, highlights.

Status 1 when nothing matches; 2 when DIR holds no index or QUERY does not
parse.";

/// Which events to search.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchArg {
    /// On the active branch only.
    Active,
    /// Every event, abandoned fork branches included.
    All,
}

/// What a document holds.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindArg {
    /// A message's text.
    Message,
    /// A tool call: the tool's name, its arguments, the thought with it.
    Action,
    /// A tool's output.
    Observation,
    /// An error.
    Error,
    /// A condensation's summary.
    Summary,
}

impl KindArg {
    fn kind(self) -> DocKind {
        match self {
            KindArg::Message => DocKind::Message,
            KindArg::Action => DocKind::Action,
            KindArg::Observation => DocKind::Observation,
            KindArg::Error => DocKind::Error,
            KindArg::Summary => DocKind::Summary,
        }
    }
}

/// Search an index that `agentlog index` made.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// The index directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// What to look for.
    #[arg(value_name = "QUERY")]
    query: String,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
    /// At most this many hits.
    #[arg(long, value_name = "N", default_value_t = 10)]
    limit: usize,
    /// Only documents of this kind.
    #[arg(long, value_name = "K", value_enum)]
    kind: Option<KindArg>,
    /// Only events at or after this time (recorded local time).
    #[arg(long, value_name = "T")]
    since: Option<String>,
    /// Which events.
    #[arg(long, value_enum, default_value_t = BranchArg::All)]
    branch: BranchArg,
}

fn opt(v: &Option<String>) -> OwnedValue {
    v.as_deref().map_or(OwnedValue::Null, OwnedValue::from)
}

fn hit_json(h: &Hit) -> OwnedValue {
    let ranges = h
        .highlights
        .iter()
        .map(|r| OwnedValue::Array(vec![uint(r.start as u64), uint(r.end as u64)]))
        .collect();
    Obj::new()
        .put("score", float(f64::from(h.score)))
        .put("store", h.store.as_str())
        .put("conversation", h.conversation.as_str())
        .put("parent", opt(&h.parent))
        .put("path", h.path.as_str())
        .put("event", uint(h.event))
        .put("kind", h.kind.as_str())
        .put("event_kind", h.event_kind.as_str())
        .put("role", opt(&h.role))
        .put("tool", opt(&h.tool))
        .put("timestamp", opt(&h.timestamp))
        .put("model", opt(&h.model))
        .put("active", OwnedValue::Bool(h.active))
        .put("in_context", OwnedValue::Bool(h.in_context))
        .put("snippet", h.snippet.as_str())
        .put("highlights", OwnedValue::Array(ranges))
        .done()
}

/// The snippet on one line, the matches marked (bold on a terminal,
/// `[…]` otherwise).
fn marked(h: &Hit, bold: bool) -> String {
    let (open, close) = if bold {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("[", "]")
    };
    let mut s = String::with_capacity(h.snippet.len() + 8 * h.highlights.len());
    let mut at = 0;
    for r in &h.highlights {
        let (Some(before), Some(word)) =
            (h.snippet.get(at..r.start), h.snippet.get(r.start..r.end))
        else {
            continue;
        };
        s.push_str(before);
        s.push_str(open);
        s.push_str(word);
        s.push_str(close);
        at = r.end;
    }
    s.push_str(h.snippet.get(at..).unwrap_or(""));
    s.replace(['\n', '\r', '\t'], " ")
}

fn hit_text(h: &Hit, bold: bool) -> String {
    let open = match h.store {
        StoreKind::OpenHands => format!("agentlog show {} --index {}", h.path, h.event),
        StoreKind::OcChat => format!(
            "agentlog occhat --sessions-dir {} show {}  (message {})",
            h.path, h.conversation, h.event
        ),
    };
    let mut facts = vec![h.kind.as_str().to_owned()];
    facts.extend(h.role.clone());
    facts.extend(h.tool.as_ref().map(|t| format!("tool {t}")));
    facts.extend(h.timestamp.clone());
    if !h.active {
        facts.push("off the active branch".into());
    }
    if !h.in_context {
        facts.push("not in the model's context".into());
    }
    format!("{open}\n  {}\n  {}", facts.join(", "), marked(h, bold))
}

/// Runs `agentlog search`.
pub fn run(args: Args, out: &mut Out) -> Res<u8> {
    let since = match &args.since {
        None => None,
        Some(t) => Some(wall_seconds(t).ok_or_else(|| {
            Fail::Fatal(format!(
                "--since {t}: not a date or time (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS])"
            ))
        })?),
    };
    let index = SearchIndex::open(&args.dir).map_err(|e| Fail::Fatal(e.to_string()))?;
    let mut q = Query::new(args.query.clone());
    q.limit = args.limit;
    q.kind = args.kind.map(KindArg::kind);
    q.since = since;
    q.branch = match args.branch {
        BranchArg::Active => Branch::Active,
        BranchArg::All => Branch::All,
    };
    let hits = index.search(&q).map_err(|e| Fail::Fatal(e.to_string()))?;
    if hits.is_empty() {
        return Err(Fail::Problem(format!(
            "nothing matches {:?} in {}",
            args.query,
            args.dir.display()
        )));
    }
    let bold = !args.json && std::io::stdout().is_terminal();
    for h in &hits {
        if args.json {
            out.json_line(&hit_json(h))?;
        } else {
            out.line(&hit_text(h, bold))?;
        }
    }
    Ok(0)
}
