//! `agentlog export` (JSON lines; `--jsonl` accepted): every event of every conversation, one JSON
//! line each, for indexers.
//!
//! Each line is one object, members in this order:
//!
//! ```text
//! {"conversation": ID, "parent": ID | null, "index": N, "file": NAME, "error": null | REASON, "event": EVENT | null}
//! ```
//!
//! - `conversation`: the conversation's ID, 32 hex digits (`base_state.json`'s
//!   `id`, else `meta.json`'s, else the directory's name);
//! - `parent`: for a sub-agent's conversation, the ID of the conversation it
//!   is under (its directory's `subagents/`); `null` otherwise;
//! - `index`: the event's index, from its file name; `file`: the file name;
//! - `event`: the event file's bytes verbatim (surrounding white space
//!   removed; an event written over several lines is written on one, with
//!   the same JSON value); `null` for a malformed file, whose reason is in
//!   `error` (`null` otherwise). Verbatim means verbatim: an event a hand
//!   wrote with Python's `NaN` or `Infinity` keeps them.
//!
//! Conversations come in the order of the PATHs, each store's in sorted
//! order, each followed by its sub-agents' (depth first, by name); events in
//! index order (the events OpenHands reads: indexes 0, 1, 2… up to the first
//! missing one). One conversation is in memory at a time, read with one
//! reused reader, and the output is buffered: memory stays constant
//! whatever the store's size.
//!
//! `-o FILE` is written as [`agentlog::output`] says; an output that is
//! one of the files read (the state, the meta or an event file of any
//! conversation exported, by device and inode, links followed) stops the
//! run with status 2 before anything is replaced.

use std::path::PathBuf;

use agentlog::json::{OwnedValue, Style, write::write_str};
use agentlog::openhands::Event;
use agentlog::openhands::{DIR_EVENTS, FILE_BASE_STATE, FILE_META};

use crate::out::{Out, Res, Status, one_line, warn};
use crate::progress::Progress;
use crate::target::{IoDepth, Target, Worker, for_each_target_listed, walk};

const HELP: &str = "\
Examples:
  agentlog export ~/.openhands/conversations -o events.jsonl
  agentlog export store-a store-b | gzip > events.jsonl.gz
  agentlog export ~/.openhands/conversations --parquet dataset/   (feature `parquet`)

Each line: {\"conversation\": ID, \"parent\": ID|null, \"index\": N, \"file\": NAME,
\"error\": null|REASON, \"event\": <the event file's JSON, verbatim>|null}.
Sub-agents' conversations are included, with their parent's ID.

With --checkpoint FILE (one PATH): only what changed since FILE, then FILE
is replaced by the new checkpoint after the output is flushed and synced.
Besides event lines (new events, and a malformed one that now reads, again
under its index), two records: {\"conversation\": ID, \"parent\": ID|null,
\"record\": \"rewrite\"} (its history changed: drop what you hold of it; all
its events follow) and {..., \"record\": \"removed\"}. Exactly once: a run
killed before it saves FILE is repeated by the next one, so a consumer
commits the output of a run only once it exited with status 0, or keys
events by (conversation, index), a later line replacing an earlier one.";

/// Export every event of every conversation as JSON lines.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// OpenHands stores, conversation directories or OC Chat sessions
    /// directories (default: $AGENTLOG_STORE, else ~/.openhands/conversations).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Write JSON lines: the default format (accepted for scripts that
    /// name it).
    #[cfg_attr(feature = "parquet", arg(long, conflicts_with = "parquet"))]
    #[cfg_attr(not(feature = "parquet"), arg(long))]
    jsonl: bool,
    /// Write to FILE instead of standard output: a regular file is replaced
    /// when complete, a device, FIFO or socket written in place, `-` is
    /// standard output; one of the inputs is refused.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Export only what changed since the checkpoint FILE (everything when
    /// there is none yet), then save the new checkpoint there once the
    /// output is written and synced. One PATH. See `--help`.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// With --checkpoint: stat every event file already handed out and
    /// hand a conversation out again (as a rewrite) when any of them
    /// changed in place (an earlier event file edited to the same size and
    /// modification time); costs one stat per event file, and a listing
    /// of each conversation's `events/`.
    #[arg(long, requires = "checkpoint")]
    verify_files: bool,
    #[command(flatten)]
    io: IoDepth,
    /// `--parquet OUT_DIR` and its options.
    #[cfg(feature = "parquet")]
    #[command(flatten)]
    parquet: crate::export_parquet::ParquetArgs,
    /// `--parquet` in a build without the feature: taken, so that the
    /// command can say how to get a build that has it.
    #[cfg(not(feature = "parquet"))]
    #[arg(long, value_name = "OUT_DIR", hide = true, num_args = 0..=1)]
    parquet: Option<Option<PathBuf>>,
}

/// What `export --parquet` says in a build without the Parquet writer.
#[cfg(not(feature = "parquet"))]
const NO_PARQUET: &str = "this agentlog was built without Parquet export: build it with \
    `cargo install agentlog --features cli,parquet` (or `cargo build --features cli,parquet`), \
    or export JSON lines (drop --parquet)";

/// Runs the command.
pub fn run(mut args: Args, stdout: &mut Out) -> Res<u8> {
    args.paths = crate::find::paths_or_default(&args.paths)?;
    // JSON lines unless --parquet, whether or not --jsonl is given.
    let _jsonl_is_the_default = args.jsonl;
    #[cfg(not(feature = "parquet"))]
    if args.parquet.is_some() {
        return Err(crate::out::Fail::Fatal(NO_PARQUET.to_owned()));
    }
    #[cfg(feature = "parquet")]
    if let Some(dir) = &args.parquet.parquet {
        let cp = args.checkpoint.as_deref();
        args.parquet.verify_files = args.verify_files;
        return crate::export_parquet::run(&args.paths, cp, &args.parquet, dir);
    }
    if let Some(cp) = &args.checkpoint {
        let opts = crate::since::scan_options(args.verify_files);
        return crate::since::export(&args.paths, args.output.as_deref(), cp, opts, stdout);
    }
    let mut status = Status::OK;
    let mut targets = Vec::new();
    let ahead = args.io.read_ahead();
    // Without a checkpoint each conversation is read once and nothing is
    // recorded of it: the reads take discovery's listings.
    for_each_target_listed(&args.paths, ahead, &mut status, |_, target, status, _| {
        match target {
            Target::OcChat { root } => {
                crate::out::error(&format!(
                    "{}: an OC Chat sessions directory; export reads OpenHands stores",
                    root.display()
                ));
                status.raise(Status::FATAL);
            }
            Target::Asf { files } => {
                crate::target::refuse_asf(&files, "OpenHands stores", status);
            }
            Target::OpenHands {
                dirs,
                unreadable,
                events,
            } => {
                crate::target::warn_skipped(&unreadable);
                targets.push((dirs, events));
            }
        }
        Ok(())
    })?;
    let mut file_out = match &args.output {
        Some(p) => Some(Out::file(p)?),
        None => None,
    };
    let out = match file_out.as_mut() {
        Some(o) => o,
        None => stdout,
    };
    let Worker {
        mut reader,
        mut conv,
        mut ids,
        ..
    } = Worker::default();
    let mut line = Vec::with_capacity(1 << 16);
    let progress = Progress::new(
        targets.iter().map(|(d, _)| d.len() as u64).sum(),
        "conversations",
    );
    for (dirs, events) in targets {
        let mut events = events.into_iter();
        ahead.run(&dirs, |ahead| -> Res<()> {
            for (i, dir) in dirs.iter().enumerate() {
                ahead.begin(i);
                progress.inc(1);
                if let Some(listed) = events.next().flatten() {
                    reader.prime_events(dir, listed);
                }
                walk(&mut reader, &mut conv, &mut ids, dir, |node| {
                    let c = match node.conv {
                        Ok(c) => c,
                        Err(e) => {
                            warn(&e.to_string());
                            return Ok(());
                        }
                    };
                    if let Some(e) = c.events_error() {
                        warn(&e.to_string());
                    }
                    if out.replaces_a_file() {
                        // The output must not replace what is being read.
                        out.refuse_input(&node.dir.join(FILE_BASE_STATE))?;
                        out.refuse_input(&node.dir.join(FILE_META))?;
                        let events = node.dir.join(DIR_EVENTS);
                        for e in c.events() {
                            out.refuse_input(&events.join(e.file_name()))?;
                        }
                    }
                    for e in c.events() {
                        if let Some(err) = e.error() {
                            warn(&err.to_string());
                        }
                        push_event_line(&mut line, node.id, node.parent, &e);
                        out.bytes(&line)?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })?;
    }
    progress.finish();
    if let Some(o) = file_out {
        o.finish()?;
    }
    Ok(status.code())
}

/// The export line of one event (see the module docs), in `line`
/// (cleared first).
pub fn push_event_line(line: &mut Vec<u8>, id: &str, parent: Option<&str>, e: &Event<'_>) {
    line.clear();
    line.extend_from_slice(b"{\"conversation\":");
    write_str(line, id, false);
    line.extend_from_slice(b",\"parent\":");
    match parent {
        Some(p) => write_str(line, p, false),
        None => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b",\"index\":");
    line.extend_from_slice(e.index().to_string().as_bytes());
    line.extend_from_slice(b",\"file\":");
    write_str(line, e.file_name(), false);
    match e.error() {
        Some(err) => {
            line.extend_from_slice(b",\"error\":");
            write_str(line, &one_line(&err.to_string()), false);
            line.extend_from_slice(b",\"event\":null}\n");
        }
        None => {
            line.extend_from_slice(b",\"error\":null,\"event\":");
            push_one_line(line, e.raw());
            line.extend_from_slice(b"}\n");
        }
    }
}

/// Appends a JSON document that read as an object: its bytes verbatim when
/// they hold no line break, else the same value written on one line.
fn push_one_line(line: &mut Vec<u8>, raw: &[u8]) {
    let raw = raw.trim_ascii();
    if !raw.contains(&b'\n') && !raw.contains(&b'\r') {
        line.extend_from_slice(raw);
        return;
    }
    match OwnedValue::parse(raw) {
        Ok(v) => v.write_to(line, Style::COMPACT),
        // Cannot happen for an event that read as an object; keep the line
        // valid anyway.
        Err(_) => line.extend_from_slice(b"null"),
    }
}
