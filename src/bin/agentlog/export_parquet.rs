//! `agentlog export --parquet OUT_DIR PATH...`: a Parquet dataset of the
//! stores (`agentlog::parquet`; the schema is `docs/parquet.md`).
//!
//! OpenHands stores (every conversation, sub-agents' included, in the order
//! `export --jsonl` writes them) and OC Chat sessions directories. Nothing
//! is printed on standard output; what could not be read is warned about
//! on standard error and written as rows with their status and error
//! where it is an event file. An error writing the dataset stops the run
//! (status 2): the part files it had not completed are removed, none is
//! left under a final name half-written.
//!
//! With `--checkpoint FILE` (one OpenHands store): only what changed since
//! FILE, in new part files; FILE is saved once they are complete and
//! synced. A run that stops before saving is repeated by the next one (its
//! rows may then appear twice: key `events` by `conversation_id`, `index`).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use agentlog::occhat::SessionStore as OcStore;
use agentlog::openhands::Parsed;
use agentlog::openhands::{ChangeKind, Conversation, Reader, ScanOptions, Store};
use agentlog::parquet::{
    Dataset, DatasetError, DatasetOptions, EventDetails, EventSelection, OpenHandsInput,
    Partitioning, add_occhat, add_openhands, add_openhands_with, add_removed,
};

use crate::out::{Fail, Res, Status, warn};
use crate::target::{Target, Worker, for_each_target, walk_with};

/// The `--parquet` options of `export`.
#[derive(clap::Args, Debug)]
pub struct ParquetArgs {
    /// Write a Parquet dataset to OUT_DIR (tables conversations, events,
    /// messages, tool_calls, llm_calls: OUT_DIR/<table>/…/*.parquet) instead
    /// of JSON lines; new part files are added, none is rewritten.
    #[arg(long, value_name = "OUT_DIR", conflicts_with_all = ["jsonl", "output"])]
    pub parquet: Option<PathBuf>,
    /// With --parquet: Hive-style partitions (`date`: date=YYYY-MM-DD/ by
    /// the conversation's creation date).
    #[arg(long, value_name = "KEY", requires = "parquet", value_parser = ["date"])]
    pub partition_by: Option<String>,
    /// With --parquet: leave the events' verbatim JSON out (`events.json`
    /// is null).
    #[arg(long, requires = "parquet")]
    pub no_json: bool,
}

fn fatal(e: DatasetError) -> Fail {
    Fail::Fatal(e.to_string())
}

/// The export's snapshot: now, in microseconds since the Unix epoch.
fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

fn options(args: &ParquetArgs) -> DatasetOptions {
    DatasetOptions {
        json: !args.no_json,
        partitioning: match args.partition_by.as_deref() {
            Some("date") => Partitioning::Date,
            _ => Partitioning::None,
        },
        ..DatasetOptions::default()
    }
}

/// Runs `export --parquet OUT_DIR`.
pub fn run(
    paths: &[PathBuf],
    checkpoint: Option<&Path>,
    args: &ParquetArgs,
    out_dir: &Path,
) -> Res<u8> {
    if let Some(cp) = checkpoint {
        return run_since(paths, cp, args, out_dir);
    }
    let mut status = Status::OK;
    let mut ds = Dataset::create(out_dir, now_micros(), options(args)).map_err(fatal)?;
    let Worker {
        mut reader,
        mut conv,
        mut ids,
        mut parsers,
    } = Worker::default();
    for_each_target(paths, &mut status, |_, target, status, _| {
        match target {
            Target::Asf { files } => {
                crate::out::error(&format!(
                    "{}: Agent Session Format files; export reads OpenHands stores and OC Chat sessions",
                    files
                        .first()
                        .map_or_else(String::new, |f| f.display().to_string())
                ));
                status.raise(Status::FATAL);
            }
            Target::OcChat { root } => {
                let store = OcStore::new(&root);
                let list = store.list_sessions();
                for s in &list.skipped {
                    warn(&format!("{} (skipped)", s.error));
                }
                for e in &list.sessions {
                    let loaded = match store.load_session(&crate::out::path_str(&e.filepath)) {
                        Ok(s) if !s.load_failed => Some(s),
                        Ok(_) => {
                            warn(&format!(
                                "{}: the chat log could not be read",
                                e.filepath.display()
                            ));
                            None
                        }
                        Err(err) => {
                            warn(&err.to_string());
                            None
                        }
                    };
                    add_occhat(&mut ds, e, loaded.as_ref()).map_err(fatal)?;
                    ds.bound_memory().map_err(fatal)?;
                }
            }
            Target::OpenHands { dirs, unreadable } => {
                for e in &unreadable {
                    warn(&format!("{e} (skipped)"));
                }
                for dir in &dirs {
                    let mut depth_of: Vec<(String, usize)> = Vec::new();
                    // What the rows need beyond the envelopes, taken from
                    // the reader's parse of each event.
                    let details = std::cell::RefCell::new(EventDetails::new());
                    let on_doc = |p: Parsed, doc: &agentlog::json::Document<'_>| {
                        if let Parsed::Event { index } = p {
                            details.borrow_mut().add(index, doc);
                        }
                    };
                    walk_with(&mut reader, &mut conv, &mut ids, dir, on_doc, |node| {
                        let c = match node.conv {
                            Ok(c) => c,
                            Err(e) => {
                                details.borrow_mut().clear();
                                warn(&e.to_string());
                                return Ok(());
                            }
                        };
                        if let Some(e) = c.events_error() {
                            warn(&e.to_string());
                        }
                        for e in c.events() {
                            if let Some(err) = e.error() {
                                warn(&err.to_string());
                            }
                        }
                        let depth = node
                            .parent
                            .and_then(|p| depth_of.iter().find(|(id, _)| id == p))
                            .map_or(0, |(_, d)| d + 1);
                        depth_of.push((node.id.to_owned(), depth));
                        let input = OpenHandsInput {
                            conversation: c,
                            id: node.id,
                            parent: node.parent,
                            depth,
                            change: "full",
                            events: EventSelection::All,
                        };
                        let added =
                            add_openhands_with(&mut ds, &input, &details.borrow(), &mut parsers.0);
                        details.borrow_mut().clear();
                        added.map_err(fatal)
                    })?;
                }
            }
        }
        Ok(())
    })?;
    ds.finish(true).map_err(fatal)?;
    Ok(status.code())
}

/// `export --parquet OUT_DIR --checkpoint FILE`: the rows of what changed.
fn run_since(paths: &[PathBuf], cp_path: &Path, args: &ParquetArgs, out_dir: &Path) -> Res<u8> {
    let root = crate::since::one_store(paths, cp_path)?;
    let since = crate::since::load(cp_path)?;
    let mut changes = Store::changes_since(root, since.as_ref(), ScanOptions::default())
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    for e in changes.unreadable() {
        warn(&format!("{e} (skipped)"));
    }
    let mut ds = Dataset::create(out_dir, now_micros(), options(args)).map_err(fatal)?;
    let mut reader = Reader::new();
    let mut whole = Conversation::default();
    let mut parser = agentlog::json::Parser::new();
    while let Some(item) = changes.next() {
        let c = match item {
            Ok(c) => c,
            Err(e) => {
                // Kept in the checkpoint as it was: tried again next run.
                warn(&e.to_string());
                continue;
            }
        };
        if c.kind == ChangeKind::Removed {
            add_removed(&mut ds, c.id, c.parent, c.depth).map_err(fatal)?;
            continue;
        }
        // The change holds the events from the first new one on; the
        // tables of the whole conversation need all of it.
        if let Err(e) = reader.read_into(c.dir, &mut whole) {
            warn(&e.to_string());
            continue;
        }
        for e in whole.events() {
            if let Some(err) = e.error()
                && (c.from..c.to).contains(&e.index())
            {
                warn(&err.to_string());
            }
        }
        let input = OpenHandsInput {
            conversation: &whole,
            id: c.id,
            parent: c.parent,
            depth: c.depth,
            change: c.kind.as_str(),
            events: EventSelection::Since {
                outside: c.kind != ChangeKind::Updated,
                from: c.from,
                to: c.to,
                repaired: c.repaired,
            },
        };
        add_openhands(&mut ds, &input, &mut parser).map_err(fatal)?;
        ds.bound_memory().map_err(fatal)?;
    }
    ds.finish(true).map_err(fatal)?;
    changes
        .into_checkpoint()
        .save(cp_path)
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    Ok(Status::OK.code())
}
