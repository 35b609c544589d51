//! `agentlog export --parquet OUT_DIR PATH...`: a Parquet dataset of the
//! stores (`agentlog::parquet`; the schema is `docs/parquet.md`).
//!
//! OpenHands stores (every conversation, sub-agents' included, in the order
//! `export --jsonl` writes them) and OC Chat sessions directories. Nothing
//! is printed on standard output; what could not be read is warned about
//! on standard error and written as rows with their status and error
//! where it is an event file. An error writing the dataset stops the run
//! (status 2): its part files are removed, none takes a final name.
//!
//! The parts of a run are published together ([`agentlog::parquet::run`]):
//! written under hidden temporary names, then the run's manifest, then
//! (with `--checkpoint`) the checkpoint, then the parts renamed. A run
//! stopped at any moment leaves the dataset as it was; the next run into
//! OUT_DIR finishes a run that got as far as its manifest (and checkpoint)
//! and removes what any other left.
//!
//! OUT_DIR is a new dataset (a missing or empty directory), or, with
//! `--checkpoint FILE` (one OpenHands store), the incremental dataset that
//! FILE was saved with: only what changed since FILE is added, in new part
//! files. Anything else is refused (status 2) unless `--replace`, which
//! writes the whole dataset beside OUT_DIR and puts it in OUT_DIR's place
//! in one rename (Linux; elsewhere two), and with `--checkpoint` starts the
//! checkpoint afresh.
//!
//! Nothing is written outside OUT_DIR: a symbolic link where one of the
//! dataset's directories or its lock would be is refused
//! ([`agentlog::parquet::run`]). The checkpoint path is checked (a link,
//! a missing directory refused) before anything is written, `--replace`
//! included.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use agentlog::occhat::SessionStore as OcStore;
use agentlog::openhands::Parsed;
use agentlog::openhands::{ChangeKind, Checkpoint, Conversation, Reader, Store};
use agentlog::parquet::{
    Dataset, DatasetDir, DatasetError, DatasetOptions, EventDetails, EventSelection,
    OpenHandsInput, Partitioning, RunId, RunMode, Superseded, Written, add_occhat, add_openhands,
    add_openhands_with, add_removed, checkpoint_digest, replace_dir,
};

use crate::out::{Fail, Res, Status, warn};
use crate::target::{Target, Worker, for_each_target_listed, walk_with};
use agentlog::ReadAhead;

/// The `--parquet` options of `export`.
#[derive(clap::Args, Debug)]
pub struct ParquetArgs {
    /// Write a Parquet dataset to OUT_DIR (tables conversations, events,
    /// messages, tool_calls, llm_calls: OUT_DIR/<table>/…/*.parquet) instead
    /// of JSON lines. OUT_DIR must be new or empty, or with --checkpoint the
    /// dataset that checkpoint was saved with; see --replace.
    #[arg(long, value_name = "OUT_DIR", conflicts_with_all = ["jsonl", "output"])]
    pub parquet: Option<PathBuf>,
    /// With --parquet: Hive-style partitions (`date`: date=YYYY-MM-DD/ by
    /// the conversation's creation date).
    #[arg(long, value_name = "KEY", requires = "parquet", value_parser = ["date"])]
    pub partition_by: Option<String>,
    /// With --parquet: leave the events' verbatim JSON out (`events.event_json`
    /// is null).
    #[arg(long, requires = "parquet")]
    pub no_json: bool,
    /// With --parquet: replace the dataset in OUT_DIR whole (written beside
    /// it, then renamed into its place); with --checkpoint, everything is
    /// exported and the checkpoint starts afresh.
    #[arg(long, requires = "parquet")]
    pub replace: bool,
    /// `--verify-files` of the command (see `export --help`).
    #[arg(skip)]
    pub verify_files: bool,
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

/// The digest of the checkpoint file at `cp` as it is now: `None` when
/// there is none (or it is empty).
fn digest_of(cp: &Path) -> Option<String> {
    fs::read(cp)
        .ok()
        .filter(|b| !b.is_empty())
        .map(|b| checkpoint_digest(&b))
}

const REPLACE_HINT: &str =
    "give a new or empty directory, or --replace to replace the dataset whole";

/// Runs `export --parquet OUT_DIR`.
pub fn run(
    paths: &[PathBuf],
    checkpoint: Option<&Path>,
    args: &ParquetArgs,
    out_dir: &Path,
) -> Res<u8> {
    if args.replace {
        return run_replace(paths, checkpoint, args, out_dir);
    }
    // The checkpoint and the store before anything is written: a
    // checkpoint that could not be saved (a link, a missing directory) or
    // read leaves OUT_DIR as it was (not even created).
    let since = match checkpoint {
        Some(cp) => Some((crate::since::load(cp)?, crate::since::one_store(paths, cp)?)),
        None => None,
    };
    let now = checkpoint.and_then(digest_of);
    let dir = DatasetDir::open(out_dir, now.as_deref()).map_err(fatal)?;
    let shown = out_dir.display();
    let refusal = match (checkpoint, dir.latest_run()) {
        (None, _) if !dir.is_empty() => Some(format!(
            "{shown}: holds a dataset or other files already; a full export writes a new \
             dataset: {REPLACE_HINT} (or --checkpoint FILE to add to an incremental one)"
        )),
        (Some(cp), None) if !dir.is_empty() || now.is_some() => {
            let why = if dir.is_empty() {
                format!("the checkpoint {} is not of a dataset in it", cp.display())
            } else {
                "it holds files that no agentlog run published (another dataset, \
                 or one of schema version 1)"
                    .to_owned()
            };
            Some(format!("{shown}: {why}: {REPLACE_HINT}"))
        }
        (Some(_), Some(last)) if last.mode == RunMode::Full => Some(format!(
            "{shown}: holds a full export, not an incremental dataset: {REPLACE_HINT}"
        )),
        (Some(cp), Some(last)) if last.checkpoint_after != now => Some(format!(
            "{shown}: its last run saved another checkpoint than {} holds now (another \
             dataset's, or changed since): {REPLACE_HINT}",
            cp.display()
        )),
        _ => None,
    };
    if let Some(why) = refusal {
        // Refused: OUT_DIR is left as it was found.
        dir.give_up();
        return Err(Fail::Fatal(why));
    }
    let run = RunId::new(now_micros());
    match checkpoint.zip(since) {
        None => {
            let (written, status) = write_full(&dir, &run, paths, args)?;
            let pending = dir
                .stage(&run, written, RunMode::Full, None, &[])
                .map_err(fatal)?;
            pending.publish().map_err(fatal)?;
            Ok(status.code())
        }
        Some((cp, (since, root))) => {
            let (written, next, supersedes) = write_since(&dir, &run, root, since.as_ref(), args)?;
            let after = checkpoint_digest(&next.to_bytes());
            let pending = dir
                .stage(
                    &run,
                    written,
                    RunMode::Incremental,
                    Some(&after),
                    &supersedes,
                )
                .map_err(fatal)?;
            // The commit: from here on the run's rows are the dataset's
            // (the next run publishes them if this one is stopped).
            next.save(cp).map_err(|e| Fail::Fatal(e.to_string()))?;
            pending.publish().map_err(fatal)?;
            Ok(Status::OK.code())
        }
    }
}

/// `--replace`: the whole dataset written into a new directory beside
/// OUT_DIR, published there, then put in OUT_DIR's place.
fn run_replace(
    paths: &[PathBuf],
    checkpoint: Option<&Path>,
    args: &ParquetArgs,
    out_dir: &Path,
) -> Res<u8> {
    let shown = out_dir.display();
    // The checkpoint path before anything is written: one that could not
    // be saved once the dataset is replaced (a link, a missing directory)
    // leaves OUT_DIR as it was. Its contents are not read: --replace
    // starts it afresh.
    let store = match checkpoint {
        Some(cp) => {
            crate::since::check_path(cp)?;
            Some(crate::since::one_store(paths, cp)?)
        }
        None => None,
    };
    let mut old_lock = None;
    if let Ok(m) = fs::symlink_metadata(out_dir) {
        if m.file_type().is_symlink() || !m.is_dir() {
            return Err(Fail::Fatal(format!(
                "{shown}: not a directory (a link is not replaced: name the directory itself)"
            )));
        }
        // Only a dataset (or an empty directory) is replaced; its lock is
        // held until it is.
        let old = DatasetDir::open(out_dir, None).map_err(fatal)?;
        if let Some(first) = old.foreign_entries().first().cloned() {
            old.give_up();
            return Err(Fail::Fatal(format!(
                "{shown}: holds `{first}`, which is not part of a dataset: not replaced"
            )));
        }
        old_lock = Some(old);
    }
    let parent = match out_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Fail::Fatal(format!("{shown}: not a directory name")))?;
    let prefix = format!(".{name}.agentlog-new-");
    // What a killed --replace left beside OUT_DIR.
    for e in fs::read_dir(&parent).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
    let run = RunId::new(now_micros());
    let new = parent.join(format!("{prefix}{}", run.name()));
    let dir = DatasetDir::open(&new, None).map_err(fatal)?;
    let (status, next) = match checkpoint.zip(store) {
        None => {
            let (written, status) = write_full(&dir, &run, paths, args)?;
            let pending = dir
                .stage(&run, written, RunMode::Full, None, &[])
                .map_err(fatal)?;
            pending.publish().map_err(fatal)?;
            (status, None)
        }
        Some((cp, root)) => {
            let (written, next, _) = write_since(&dir, &run, root, None, args)?;
            let after = checkpoint_digest(&next.to_bytes());
            let pending = dir
                .stage(&run, written, RunMode::Incremental, Some(&after), &[])
                .map_err(fatal)?;
            pending.publish().map_err(fatal)?;
            (Status::OK, Some((cp, next)))
        }
    };
    drop(dir);
    replace_dir(out_dir, &new).map_err(fatal)?;
    drop(old_lock);
    if let Some((cp, next)) = next {
        next.save(cp).map_err(|e| Fail::Fatal(e.to_string()))?;
    }
    Ok(status.code())
}

/// Writes every conversation and session of `paths` as the run `run`'s
/// parts of `dir`.
fn write_full(
    dir: &DatasetDir,
    run: &RunId,
    paths: &[PathBuf],
    args: &ParquetArgs,
) -> Res<(Written, Status)> {
    let mut status = Status::OK;
    let mut ds = Dataset::create(dir.root(), run, options(args)).map_err(fatal)?;
    let Worker {
        mut reader,
        mut conv,
        mut ids,
        mut parsers,
    } = Worker::default();
    // A full export reads each conversation once and records nothing of
    // it: the reads take discovery's listings.
    for_each_target_listed(
        paths,
        ReadAhead::default(),
        &mut status,
        |_, target, status, _| {
            match target {
                Target::Asf { files } => {
                    crate::target::refuse_asf(
                        &files,
                        "OpenHands stores and OC Chat sessions",
                        status,
                    );
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
                Target::OpenHands {
                    dirs,
                    unreadable,
                    events,
                } => {
                    crate::target::warn_skipped(&unreadable);
                    // What the rows need beyond the envelopes, taken from the
                    // reader's parse of each event: one for the whole store,
                    // cleared before each conversation's tree, so that its
                    // buffers keep their room from one to the next.
                    let details = std::cell::RefCell::new(EventDetails::new());
                    let mut events = events.into_iter();
                    for dir in &dirs {
                        if let Some(listed) = events.next().flatten() {
                            reader.prime_events(dir, listed);
                        }
                        let mut depth_of: Vec<(String, usize)> = Vec::new();
                        details.borrow_mut().clear();
                        let on_doc = |p: Parsed, doc: &agentlog::json::Document<'_>| match p {
                            Parsed::Event { index } => details.borrow_mut().add(index, doc),
                            Parsed::State => details.borrow_mut().add_state(doc),
                            _ => {}
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
                            let added = add_openhands_with(
                                &mut ds,
                                &input,
                                &details.borrow(),
                                &mut parsers.0,
                            );
                            details.borrow_mut().clear();
                            added.map_err(fatal)
                        })?;
                    }
                }
            }
            Ok(())
        },
    )?;
    let written = ds.finish(true).map_err(fatal)?;
    Ok((written, status))
}

/// One conversation directory a run writes rows of, gathered from the scan
/// (a directory can come twice in one scan: handed out, then again at its
/// end when another directory of its ID changed) and written after it.
struct Planned {
    /// The directory.
    dir: PathBuf,
    id: String,
    parent: Option<String>,
    depth: usize,
    /// `new`, `updated` or `rewrite`: the strongest of its changes.
    kind: ChangeKind,
    /// The events to write (the union of its changes'): `from..to`, the
    /// repaired ones, and the files outside the sequence when `outside`.
    from: u64,
    to: u64,
    repaired: Vec<u64>,
    outside: bool,
}

impl Planned {
    /// Adds another change of the same directory.
    fn merge(&mut self, kind: ChangeKind, from: u64, to: u64, repaired: &[u64]) {
        if kind == ChangeKind::Rewrite
            || (kind == ChangeKind::New && self.kind != ChangeKind::Rewrite)
        {
            self.kind = kind;
        }
        if self.from == self.to {
            (self.from, self.to) = (from, to);
        } else if from < to {
            (self.from, self.to) = (self.from.min(from), self.to.max(to));
        }
        for &i in repaired {
            if !self.repaired.contains(&i) {
                self.repaired.push(i);
            }
        }
        self.outside |= kind != ChangeKind::Updated;
    }
}

/// What changed in the store `root` since `since`, as the run `run`'s
/// parts of `dir`; the checkpoint to save once they are staged, and the
/// conversations whose earlier rows they supersede.
///
/// The rows of a run, applied by the current-state rule of
/// `docs/parquet.md` (a conversation ID's latest snapshot, its events
/// since its last `new`/`rewrite` snapshot), give what a full export
/// gives, also for an ID that several directories hold (a copied
/// directory): each directory's whole-conversation rows are written once
/// per run, and when a run writes rows of an ID, it writes those of every
/// directory holding it (an unchanged one as `updated`, with no events),
/// so that the ID's latest snapshot holds all of them. A renamed
/// directory is its ID written again, never removed.
fn write_since(
    dir: &DatasetDir,
    run: &RunId,
    root: &Path,
    since: Option<&Checkpoint>,
    args: &ParquetArgs,
) -> Res<(Written, Checkpoint, Vec<Superseded>)> {
    let opts = crate::since::scan_options(args.verify_files);
    let mut changes =
        Store::changes_since(root, since, opts).map_err(|e| Fail::Fatal(e.to_string()))?;
    crate::target::warn_skipped(changes.unreadable());
    let mut plan: Vec<Planned> = Vec::new();
    let mut at: HashMap<PathBuf, usize> = HashMap::new();
    let mut removed: Vec<(String, Option<String>, usize)> = Vec::new();
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
            // Written after the rest: a conversation whose ID this run
            // writes again (its directory renamed) is not removed.
            removed.push((c.id.to_owned(), c.parent.map(str::to_owned), c.depth));
            continue;
        }
        if let Some(&i) = at.get(c.rel) {
            plan[i].merge(c.kind, c.from, c.to, c.repaired);
            continue;
        }
        at.insert(c.rel.to_path_buf(), plan.len());
        plan.push(Planned {
            dir: c.dir.to_path_buf(),
            id: c.id.to_owned(),
            parent: c.parent.map(str::to_owned),
            depth: c.depth,
            kind: c.kind,
            from: c.from,
            to: c.to,
            repaired: c.repaired.to_vec(),
            outside: c.kind != ChangeKind::Updated,
        });
    }
    let next = changes.into_checkpoint();
    // The other directories of the IDs written: their whole-conversation
    // rows again (no events), so that the ID's latest snapshot is whole.
    let written_ids: HashSet<String> = plan.iter().map(|p| p.id.clone()).collect();
    let marks: Vec<(PathBuf, agentlog::openhands::checkpoint::ConversationMark)> = next
        .conversations()
        .map(|(rel, m)| (rel.to_path_buf(), m))
        .collect();
    for (rel, m) in &marks {
        if rel.as_os_str().is_empty() || at.contains_key(rel) || !written_ids.contains(&m.id) {
            continue;
        }
        let parent = (m.depth > 0)
            .then(|| rel.parent().and_then(Path::parent))
            .flatten()
            .and_then(|p| marks.iter().find(|(r, _)| r == p))
            .map(|(_, pm)| pm.id.clone());
        at.insert(rel.clone(), plan.len());
        plan.push(Planned {
            dir: root.join(rel),
            id: m.id.clone(),
            parent,
            depth: m.depth,
            kind: ChangeKind::Updated,
            from: 0,
            to: 0,
            repaired: Vec::new(),
            outside: false,
        });
    }

    let mut ds = Dataset::create(dir.root(), run, options(args)).map_err(fatal)?;
    let mut reader = Reader::new();
    let mut whole = Conversation::default();
    let mut parser = agentlog::json::Parser::new();
    let mut supersedes: Vec<Superseded> = Vec::new();
    for p in &plan {
        // The tables of the whole conversation need all of it.
        if let Err(e) = reader.read_into(&p.dir, &mut whole) {
            warn(&e.to_string());
            continue;
        }
        for e in whole.events() {
            if let Some(err) = e.error()
                && (p.from..p.to).contains(&e.index())
            {
                warn(&err.to_string());
            }
        }
        let input = OpenHandsInput {
            conversation: &whole,
            id: &p.id,
            parent: p.parent.as_deref(),
            depth: p.depth,
            change: p.kind.as_str(),
            events: EventSelection::Since {
                outside: p.outside,
                from: p.from,
                to: p.to,
                repaired: &p.repaired,
            },
        };
        add_openhands(&mut ds, &input, &mut parser).map_err(fatal)?;
        ds.bound_memory().map_err(fatal)?;
        if p.kind == ChangeKind::New {
            continue;
        }
        match supersedes.iter_mut().find(|s| s.conversation_id == p.id) {
            Some(s) if p.kind == ChangeKind::Rewrite => s.change = "rewrite",
            Some(_) => {}
            None => supersedes.push(Superseded {
                conversation_id: p.id.clone(),
                change: p.kind.as_str(),
            }),
        }
    }
    for (id, parent, depth) in removed {
        if written_ids.contains(&id) || supersedes.iter().any(|s| s.conversation_id == id) {
            continue;
        }
        add_removed(&mut ds, &id, parent.as_deref(), depth).map_err(fatal)?;
        supersedes.push(Superseded {
            conversation_id: id,
            change: "removed",
        });
    }
    let written = ds.finish(true).map_err(fatal)?;
    Ok((written, next, supersedes))
}
