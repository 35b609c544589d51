//! `agentlog events`, `files` and `show`: one conversation's events, the
//! files of its `events/` directory, and one event.
//!
//! `events --json`, one object a line: `index` (from the file name),
//! `file` (the file name), `id`, `kind`, `source`, `parent_id`,
//! `timestamp` (the event's members, as written; `null` when absent, not a
//! string, or the file is malformed).
//!
//! `files --json`, one object a line, in name order: `name`, `index`
//! (`null` for a name that is not an event file's, or an index beyond 64
//! bits), `id` (the event ID the name holds, `null` for a bad name),
//! `status` (`event`, `malformed`, `unreadable`, `gap`, `duplicate`,
//! `bad-name`) and
//! `error` (`null`, or why the file is not an event of the sequence).

use std::path::PathBuf;

use agentlog::json::{OwnedValue, Style};
use agentlog::openhands::{Conversation, Event, FileStatus, Reader};

use agentlog::json::Parser;

use crate::brief::{columns, describe, fit, kind_label};
use crate::ids::{MIN_SHORT, Shortener};
use crate::out::{Fail, Obj, Out, Res, Status, one_line, warn};
use crate::target::one_conversation;

const EVENTS_HELP: &str = "\
Examples:
  agentlog events ~/.openhands/conversations/<id>
  agentlog events ~/.openhands/conversations/<id>/base_state.json --json | head

JSON lines have the keys index, file, id, kind, source, parent_id, timestamp.
A malformed or unreadable event file is listed with null members and reported
on standard error.

Status 1 also when base_state.json or meta.json does not read as a JSON
object, or an event file is malformed (reported on standard error).";

/// List the events of one conversation, in the order OpenHands reads them.
#[derive(clap::Args, Debug)]
#[command(after_help = EVENTS_HELP)]
pub struct EventsArgs {
    /// A conversation directory, a file of one, a store holding one, or a
    /// conversation's ID (or a unique prefix of it) in --store.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    store: crate::find::StoreArg,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
}

const FILES_HELP: &str = "\
Examples:
  agentlog files ~/.openhands/conversations/<id>
  agentlog files ~/.openhands/conversations/<id> --json | jq 'select(.status != \"event\")'

JSON lines have the keys name, index, id, status (event, malformed,
unreadable, gap, duplicate, bad-name) and error (null or the reason).

Status 1 also when base_state.json or meta.json does not read as a JSON
object (reported on standard error).";

/// List every file of a conversation's events/ directory, with its status.
#[derive(clap::Args, Debug)]
#[command(after_help = FILES_HELP)]
pub struct FilesArgs {
    /// A conversation directory, a file of one, a store holding one, or a
    /// conversation's ID (or a unique prefix of it) in --store.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    store: crate::find::StoreArg,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
}

const SHOW_HELP: &str = "\
Examples:
  agentlog show ~/.openhands/conversations/<id> --index 3
  agentlog show ~/.openhands/conversations/<id> --id 1e125f9b --raw
  agentlog show <store>/<id>/events/event-00003-1e125f9b-….json
  agentlog show 3e806943 --store ~/.openhands/conversations --index 3

PATH an event file names its event: no --index or --id needed.

--id takes an event ID or a unique prefix of one. Status 1 when no event has
that index or ID, a prefix names several (listed), or the event's file does
not parse (--raw still prints the bytes that could be read).";

/// Print one event: indented JSON, or its file byte for byte.
#[derive(clap::Args, Debug)]
#[command(after_help = SHOW_HELP)]
#[command(group(clap::ArgGroup::new("which").args(["index", "id"])))]
pub struct ShowArgs {
    /// A conversation directory, a file of one, a store holding one, or a
    /// conversation's ID (or a unique prefix of it) in --store.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    store: crate::find::StoreArg,
    /// The event's index (from its file name; default: that of PATH when
    /// it is an event file).
    #[arg(long, value_name = "N")]
    index: Option<u64>,
    /// The event's ID (its `id` member, or the ID in its file name).
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// The file's bytes as they are.
    #[arg(long)]
    raw: bool,
}

/// Reads the conversation; an `events/` that cannot be listed is fatal
/// here (there is nothing else to show). A `base_state.json` or
/// `meta.json` that does not read as a JSON object is reported, and makes
/// the status [`Status::PROBLEMS`].
fn read(path: &std::path::Path, store: &crate::find::StoreArg) -> Res<(Conversation, Status)> {
    let path = crate::find::conversation(path, store)?;
    let conv = one_conversation(&path, &mut Reader::new())?;
    if let Some(e) = conv.events_error() {
        return Err(Fail::Fatal(e.to_string()));
    }
    let mut status = Status::OK;
    for e in [
        conv.state().and_then(|f| f.error()),
        conv.meta().and_then(|f| f.error()),
    ]
    .into_iter()
    .flatten()
    {
        warn(&e.to_string());
        status.raise(Status::PROBLEMS);
    }
    Ok((conv, status))
}

fn event_json(e: &Event<'_>) -> OwnedValue {
    Obj::new()
        .uint("index", Some(e.index()))
        .put("file", e.file_name())
        .str("id", e.id())
        .str("kind", e.kind_name())
        .str("source", e.source())
        .str("parent_id", e.parent_id())
        .str("timestamp", e.timestamp())
        .done()
}

/// Runs `events`.
pub fn run_events(args: EventsArgs, out: &mut Out) -> Res<u8> {
    let (conv, mut status) = read(&args.path, &args.store)?;
    if args.json {
        for e in conv.events() {
            if let Some(err) = e.error() {
                warn(&err.to_string());
                status.raise(Status::PROBLEMS);
            }
            out.json_line(&event_json(&e))?;
        }
        return Ok(status.code());
    }
    let short = Shortener::new(conv.events().map(|e| e.id().unwrap_or(e.file_id())));
    let width = columns();
    let events = conv.events().count();
    let first = conv.events().find_map(|e| e.timestamp());
    // The conversation by its directory's name (`ls` gives the path).
    out.line(&fit(
        &format!(
            "{}: {}{}",
            conv.name(),
            crate::out::plural(events as u64, "event", "events"),
            first.map_or_else(String::new, |t| format!(
                " from {} (times as recorded, no zone)",
                t.get(..10).unwrap_or(t)
            ))
        ),
        width,
    ))?;
    let mut parser = Parser::new();
    let mut previous: Option<&str> = None;
    for e in conv.events() {
        if let Some(err) = e.error() {
            // Said once, here, on standard output.
            status.raise(Status::PROBLEMS);
            out.line(&fit(
                &one_line(&format!(
                    "{:>5}  {}  {}  {}",
                    e.index(),
                    if err.is_unreadable() {
                        "UNREADABLE"
                    } else {
                        "MALFORMED"
                    },
                    e.file_name(),
                    err
                )),
                width,
            ))?;
            previous = None;
            continue;
        }
        let id = e.id().unwrap_or(e.file_id());
        let time = e
            .timestamp()
            .and_then(|t| t.split_once('T').map(|(_, time)| time))
            .map_or("-", |t| t.get(..8).unwrap_or(t));
        let source = match e.source() {
            Some("environment") => "env",
            Some(s) => s,
            None => "-",
        };
        let mut what = String::new();
        if let Some(p) = e.parent_id()
            && Some(p) != previous
            && p != "__root__"
        {
            what.push_str(&format!("(after {}) ", short.short(p)));
        }
        if let Ok(doc) = e.open(&mut parser) {
            what.push_str(&describe(doc.root()));
        }
        let line = format!(
            "{:>5}  {:<w$}  {:<8}  {:<5}  {:<12}  {}",
            e.index(),
            short.short(id),
            time,
            source,
            kind_label(e.kind_name().unwrap_or("-")),
            what,
            w = MIN_SHORT
        );
        out.line(fit(&one_line(&line), width).trim_end())?;
        previous = e.id();
    }
    Ok(status.code())
}

/// Runs `files`.
pub fn run_files(args: FilesArgs, out: &mut Out) -> Res<u8> {
    let (conv, status) = read(&args.path, &args.store)?;
    for f in conv.files() {
        let reason = f.reason().map(|r| crate::out::one_line(&r.to_string()));
        if args.json {
            out.json_line(
                &Obj::new()
                    .put("name", f.name())
                    .uint("index", f.index())
                    .str("id", f.id())
                    .put("status", f.status().as_str())
                    .str("error", reason.as_deref())
                    .done(),
            )?;
        } else {
            let mut line = format!("{:<9}  {}", f.status().as_str(), f.name());
            if f.status() != FileStatus::Event
                && let Some(r) = reason
            {
                line.push_str("  ");
                line.push_str(&r);
            }
            out.line(&line)?;
        }
    }
    Ok(status.code())
}

/// The index of the event file PATH is (`events/event-NNNNN-ID.json`),
/// for `show` without `--index` or `--id`.
fn index_of_event_file(path: &std::path::Path) -> Res<u64> {
    let name = path.file_name().map(|n| n.to_string_lossy());
    let in_events = path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == agentlog::openhands::DIR_EVENTS);
    let parsed = name.as_deref().and_then(|n| {
        agentlog::openhands::parse_event_name(n, agentlog::openhands::NamePattern::default()).ok()
    });
    match parsed {
        Some(ev) if in_events => ev.index.ok_or_else(|| {
            Fail::Fatal(format!(
                "{}: the index in the name does not fit 64 bits; give --id",
                path.display()
            ))
        }),
        _ => Err(Fail::Fatal(format!(
            "{}: not an event file; say which event with --index N or --id ID",
            path.display()
        ))),
    }
}

/// Runs `show`.
pub fn run_show(mut args: ShowArgs, out: &mut Out) -> Res<u8> {
    if args.index.is_none() && args.id.is_none() {
        args.index = Some(index_of_event_file(&args.path)?);
    }
    let (conv, _) = read(&args.path, &args.store)?;
    let found = match (&args.index, &args.id) {
        (Some(i), _) => conv.events().find(|e| e.index() == *i),
        (None, Some(id)) => {
            // The `id` members and the IDs in the file names, whole or by
            // a unique prefix.
            let events: Vec<Event<'_>> = conv.events().collect();
            let place = conv.dir().display().to_string();
            let full = crate::ids::by_prefix(
                id,
                events
                    .iter()
                    .flat_map(|e| e.id().into_iter().chain(Some(e.file_id()))),
                "event",
                &place,
            )?;
            conv.events()
                .find(|e| e.id() == Some(full))
                .or_else(|| conv.events().find(|e| e.file_id() == full))
        }
        (None, None) => None,
    };
    let Some(e) = found else {
        let what = match (&args.index, &args.id) {
            (Some(i), _) => format!("index {i}"),
            (_, Some(id)) => format!("ID {id}"),
            _ => String::new(),
        };
        return Err(Fail::Problem(format!(
            "{}: no event with {what} (agentlog events {} lists them)",
            conv.dir().display(),
            conv.dir().display()
        )));
    };
    if args.raw {
        // A malformed event's bytes, as they are; its problem said once.
        if let Some(err) = e.error() {
            if e.raw().is_empty() {
                return Err(Fail::Problem(err.to_string()));
            }
            warn(&err.to_string());
            out.bytes(e.raw())?;
            return Ok(Status::PROBLEMS.code());
        }
        out.bytes(e.raw())?;
        return Ok(Status::OK.code());
    }
    if let Some(err) = e.error() {
        return Err(Fail::Problem(err.to_string()));
    }
    let v = OwnedValue::parse(e.raw()).map_err(|err| {
        Fail::Problem(format!(
            "{}/events/{}: {err}",
            conv.dir().display(),
            e.file_name()
        ))
    })?;
    out.line(&v.to_string_styled(Style::INDENT2_UNICODE))?;
    Ok(Status::OK.code())
}
