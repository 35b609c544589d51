//! `agentlog index PATH... --index DIR`: builds or updates the full-text
//! search index of stores (`agentlog::search`), for `agentlog search`.
//!
//! `--json` prints one object, members in this order:
//!
//! ```text
//! {
//!   "indexed": N,            conversations and sessions (re)indexed: new, changed, rewritten
//!   "removed": N,            conversations and sessions gone from their store, their documents deleted
//!   "documents": N,          documents added by this run
//!   "unreadable_events": N,  event files that did not read (not indexed until they do)
//!   "rebuilt_stores": N,     stores indexed again from nothing (checkpoint missing or damaged, directory replaced)
//!   "total_documents": N     documents in the index after the run
//! }
//! ```
//!
//! The first run reads every conversation; later runs read only the
//! conversations that changed since the last one (each replaces its
//! documents), through the checkpoint the index keeps for each store.

use std::path::PathBuf;

use agentlog::openhands::is_conversation_dir;
use agentlog::search::{SearchIndex, StoreKind};

use crate::out::{Fail, Obj, Out, Res, Status, error, plural, uint, warn};
use crate::target::{Paths, is_occhat_root};

const HELP: &str = "\
Examples:
  agentlog index ~/.openhands/conversations oc_chat/sessions --index ~/.cache/agentlog-index
  agentlog search ~/.cache/agentlog-index 'flaky test'

Indexes every message, tool call (tool name and arguments), tool output and
error of every conversation (sub-agents included) and OC Chat session, each
document knowing its conversation, event index, kind, role, timestamp, model,
and whether it is on the active branch and in the model's context. A second
run reads only what changed since the first. DIR is created if missing; a
non-empty DIR that is not an index, or one that holds a symbolic link, is
refused. A killed run leaves the previous index searchable; the next run
completes it. JSON keys: indexed, removed, documents, unreadable_events,
rebuilt_stores, total_documents.

Status 1 also when nothing is found under a PATH, or something could not be
read (reported on standard error; the rest is indexed).";

/// Build or update a full-text search index of stores.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(flatten)]
    paths: Paths,
    /// The index directory.
    #[arg(long, value_name = "DIR")]
    index: PathBuf,
    /// One JSON object.
    #[arg(long)]
    json: bool,
}

/// What kind of store `path` is: an OC Chat sessions root, or OpenHands
/// (a store, or one conversation); ASF files are refused.
fn kind_of(path: &std::path::Path) -> Res<StoreKind> {
    let meta =
        std::fs::metadata(path).map_err(|e| Fail::Fatal(format!("{}: {e}", path.display())))?;
    if crate::asf_files::files(path).is_some() {
        return Err(Fail::Fatal(format!(
            "{}: Agent Session Format files; index reads OpenHands stores and OC Chat sessions",
            path.display()
        )));
    }
    if meta.is_dir() && !is_conversation_dir(path) && is_occhat_root(path) {
        return Ok(StoreKind::OcChat);
    }
    Ok(StoreKind::OpenHands)
}

/// Runs `agentlog index`.
pub fn run(mut args: Args, out: &mut Out) -> Res<u8> {
    args.paths.or_default()?;
    let mut stores = Vec::with_capacity(args.paths.paths.len());
    for p in &args.paths.paths {
        stores.push((kind_of(p)?, p.clone()));
    }
    let mut index =
        SearchIndex::open_or_create(&args.index).map_err(|e| Fail::Fatal(e.to_string()))?;
    let report = index
        .update(&stores)
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    let mut status = Status::OK;
    for p in &report.problems {
        warn(p);
        status.raise(Status::PROBLEMS);
    }
    for ((_, path), found) in stores.iter().zip(&report.found) {
        if *found == 0 {
            error(&format!(
                "no OpenHands conversations or OC Chat sessions under {}",
                path.display()
            ));
            status.raise(Status::PROBLEMS);
        }
    }
    let total = index.num_docs().map_err(|e| Fail::Fatal(e.to_string()))?;
    if args.json {
        let v = Obj::new()
            .put("indexed", uint(report.indexed))
            .put("removed", uint(report.removed))
            .put("documents", uint(report.documents))
            .put("unreadable_events", uint(report.unreadable_events))
            .put("rebuilt_stores", uint(report.rebuilt_stores))
            .put("total_documents", uint(total))
            .done();
        out.json_line(&v)?;
    } else {
        out.line(&format!(
            "{} indexed ({}), {} removed; {} in {}",
            plural(report.indexed, "conversation", "conversations"),
            plural(report.documents, "document", "documents"),
            report.removed,
            plural(total, "document", "documents"),
            args.index.display()
        ))?;
        if report.unreadable_events > 0 {
            out.line(&format!(
                "{} not indexed (unreadable)",
                plural(report.unreadable_events, "event", "events")
            ))?;
        }
    }
    Ok(status.code())
}
