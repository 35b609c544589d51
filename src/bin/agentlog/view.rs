//! `agentlog view`: what the model would be sent next.
//!
//! - `--json`: a JSON array of the chat-completions messages
//!   (`LLM.format_messages_for_llm`'s dicts: `role`, `content`,
//!   `tool_calls`, `tool_call_id`, `name`, reasoning members);
//! - `--sdk-messages`: a JSON array of the SDK's `Message.model_dump(mode="json")`
//!   objects;
//! - `--event-ids --json`: a JSON array of the IDs of the view's events, in
//!   order (a condensation's summary as `<condensation id>-summary`);
//!   without `--json`, one ID a line.
//!
//! What the view noticed and worked around (malformed events, cycles,
//! dangling parents…) is reported on standard error.

use std::path::PathBuf;

use agentlog::json::{OwnedValue, Style};
use agentlog::openhands::view::{
    EventProblem, Head, PathFault, SdkVersion, View, ViewIssue, ViewOptions,
};
use agentlog::openhands::{Conversation, Reader};

use crate::out::{Fail, Out, Res, Status, warn};
use crate::target::one_conversation;

const HELP: &str = "\
Examples:
  agentlog view ~/.openhands/conversations/<id>
  agentlog view ~/.openhands/conversations/<id> --json > next_request_messages.json
  agentlog view ~/.openhands/conversations/<id> --sdk-messages
  agentlog view ~/.openhands/conversations/<id> --event-ids --json
  agentlog view ~/.openhands/conversations/<id> --branch <event id> --json

The SDK version that wrote the conversation is inferred from its files;
--sdk-version forces one (a release the crate knows; an unknown one is a
usage error). --branch takes an event ID or a unique prefix of one (see
`agentlog tree PATH`); status 1 when it names no event or several.

A missing event file: OpenHands reads the events before it only, and so
does the view (up to the last of them when the state's head is after the
gap), with a warning naming the gap and status 1.";

/// Print the messages the model would be sent next (the conversation's view).
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// A conversation directory, a file of one, or a store holding one.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// JSON: the chat-completions message list (or, with --event-ids, the IDs).
    #[arg(long)]
    json: bool,
    /// The SDK's Message objects instead of the wire form (JSON).
    #[arg(long, conflicts_with = "event_ids")]
    sdk_messages: bool,
    /// The IDs of the view's events, in order.
    #[arg(long)]
    event_ids: bool,
    /// View the branch whose head is the event with this ID (or a unique
    /// prefix of it; `agentlog tree` lists the branches).
    #[arg(long, value_name = "ID")]
    branch: Option<String>,
    /// Reproduce this SDK release (e.g. 1.31.2) instead of the inferred one.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    sdk_version: Option<SdkVersion>,
    /// Print the system prompt and tool outputs whole (by default, long
    /// ones are cut to their first lines).
    #[arg(long, conflicts_with_all = ["json", "sdk_messages", "event_ids"])]
    full: bool,
}

/// A release the crate knows; anything else is refused, naming them.
fn parse_version(s: &str) -> Result<SdkVersion, String> {
    let known = || {
        let all: Vec<SdkVersion> = SdkVersion::known_releases().collect();
        match (all.first(), all.last()) {
            (Some(a), Some(b)) => format!("{} releases from {a} to {b}", all.len()),
            _ => "none".to_owned(),
        }
    };
    match SdkVersion::parse(s) {
        None => Err(format!(
            "not an SDK version (MAJOR.MINOR.PATCH): {s}; known releases: {}",
            known()
        )),
        Some(v) if !v.is_known() => Err(format!(
            "SDK {v} is not a release this version of agentlog knows; known releases: {}",
            known()
        )),
        Some(v) => Ok(v),
    }
}

/// One line for what the view noticed, naming the file and the operating
/// system's error when a file could not be read at all (the view itself
/// sees only the bytes it was given).
fn describe(issue: &ViewIssue, conv: &Conversation) -> String {
    match issue {
        ViewIssue::Event { index, problem } => {
            let read = conv
                .event(*index)
                .and_then(|e| e.error().map(|err| (e, err)));
            match (read, problem) {
                // The reader's own error: the file, and why it gave no bytes.
                (Some((_, err)), EventProblem::Malformed { .. } | EventProblem::NotAnObject) => {
                    format!("event {index}: {err}")
                }
                (e, p) => {
                    let file = e.map(|(e, _)| e.file_name()).unwrap_or_default();
                    let what = match p {
                        EventProblem::Malformed { message, .. } => message.clone(),
                        EventProblem::NotAnObject => {
                            "a JSON value where an object was expected".to_owned()
                        }
                        EventProblem::MissingMember(m) => {
                            format!("the member {m} is missing or of another type")
                        }
                        other => other.to_string(),
                    };
                    if file.is_empty() {
                        format!("event {index}: {what}")
                    } else {
                        format!("event {index} ({file}): {what}")
                    }
                }
            }
        }
        ViewIssue::BaseState(e) => match conv.state().and_then(|f| f.error()) {
            Some(err) => err.to_string(),
            None => format!("base_state.json: {e}"),
        },
        ViewIssue::Cycle(ix) => format!("the parents form a cycle through events {}", list(ix)),
        ViewIssue::DanglingParent { index, parent_id } => {
            format!("event {index}: its parent_id {parent_id} names no event")
        }
        ViewIssue::DanglingHead(id) => format!("the head {id} names no event"),
        ViewIssue::BrokenBranch(PathFault::Cycle(i)) => {
            format!("the active branch stops early: it comes back to event {i}")
        }
        ViewIssue::BrokenBranch(PathFault::Dangling(i, id)) => {
            format!("the active branch stops early: event {i}'s parent_id {id} names no event")
        }
        ViewIssue::ConflictingEvidence => {
            "the files' version evidence contradicts itself".to_owned()
        }
        other => other.to_string(),
    }
}

/// Indexes as `1, 2, 3`.
fn list(ix: &[usize]) -> String {
    ix.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs the command.
pub fn run(args: Args, out: &mut Out) -> Res<u8> {
    let conv = one_conversation(&args.path, &mut Reader::new())?;
    // The branch's head by its file ID, given whole or by a unique prefix.
    let head = match &args.branch {
        None => None,
        Some(given) => {
            let ids: Vec<&str> = conv.events().map(|e| e.file_id()).collect();
            let place = conv.dir().display().to_string();
            Some(crate::ids::by_prefix(given, ids.iter().copied(), "event", &place)?.to_owned())
        }
    };
    let mut options = ViewOptions {
        version: args.sdk_version,
        head,
    };
    let mut view = View::from_conversation(&conv, &options);
    // A missing event file: OpenHands reads the events before it only. A
    // head among the events after it names none of those read; the view is
    // then the branch ending at the last event read, said so.
    let mut status = Status::OK;
    if let Some(missing) = conv.event_files().gap() {
        let after = conv
            .files()
            .filter(|f| f.status() == agentlog::openhands::FileStatus::Gap)
            .count();
        let mut said = format!(
            "{}: no event file has index {missing}: {} after it not read; the view \
             is of events 0 to {}",
            conv.dir().display(),
            crate::out::plural(after as u64, "event file", "event files"),
            missing.saturating_sub(1)
        );
        if args.branch.is_none()
            && matches!(view.tree().head(), Head::Dangling(_))
            && let Some(last) = conv.events().next_back()
        {
            said.push_str(&format!(
                ", up to event {} (the state's head is among those not read)",
                last.index()
            ));
            options.head = Some(last.file_id().to_owned());
            view = View::from_conversation(&conv, &options);
        }
        warn(&said);
        status.raise(Status::PROBLEMS);
    }
    if let (Some(id), Head::Dangling(_)) = (&args.branch, view.tree().head()) {
        return Err(Fail::Problem(format!(
            "{}: no event with ID {id} to view the branch of",
            conv.dir().display()
        )));
    }
    for issue in view.issues() {
        warn(&crate::out::one_line(&format!(
            "{}: {}",
            conv.dir().display(),
            describe(issue, &conv)
        )));
    }
    if args.event_ids {
        let ids = view.event_ids();
        if args.json {
            let arr = OwnedValue::Array(ids.iter().map(|s| OwnedValue::from(&**s)).collect());
            out.json_pretty(&arr)?;
        } else {
            for id in ids {
                out.line(&id)?;
            }
        }
        return Ok(status.code());
    }
    if args.sdk_messages {
        out.json_pretty(&OwnedValue::Array(view.sdk_messages()))?;
        return Ok(status.code());
    }
    let wire = view.wire_messages();
    if args.json {
        out.json_pretty(&OwnedValue::Array(wire))?;
        return Ok(status.code());
    }
    let det = view.version();
    out.line(&format!(
        "# {}: SDK {} ({}), {} in the view, {}",
        conv.dir().display(),
        det.version,
        if det.forced { "forced" } else { "inferred" },
        crate::out::plural(view.entries().len() as u64, "event", "events"),
        crate::out::plural(wire.len() as u64, "message", "messages")
    ))?;
    for (i, m) in wire.iter().enumerate() {
        render(out, i, m, args.full)?;
    }
    Ok(status.code())
}

/// How many lines of a system prompt or tool output are shown without
/// `--full`.
const SHOWN_LINES: usize = 12;

/// Writes `text`; a system or tool message longer than [`SHOWN_LINES`]
/// lines is cut there (unless `full`), saying how much is left out.
fn text(out: &mut Out, role: &str, s: &str, full: bool) -> Res<()> {
    let lines = s.lines().count();
    if full || !matches!(role, "system" | "tool") || lines <= SHOWN_LINES {
        return out.line(s);
    }
    for l in s.lines().take(SHOWN_LINES) {
        out.line(l)?;
    }
    let left = lines - SHOWN_LINES;
    out.line(&format!(
        "[… {left} more line{} ({} characters in all); --full shows them]",
        if left == 1 { "" } else { "s" },
        s.chars().count()
    ))
}

/// Writes a wire message for a human.
fn render(out: &mut Out, i: usize, m: &OwnedValue, full: bool) -> Res<()> {
    let role = m.get("role").and_then(OwnedValue::as_str).unwrap_or("?");
    let mut head = format!("── [{i}] {role}");
    if let Some(id) = m.get("tool_call_id").and_then(OwnedValue::as_str) {
        head.push_str(&format!(" (answers {id})"));
    }
    out.line(&head)?;
    match m.get("content") {
        Some(OwnedValue::String(s)) => text(out, role, s, full)?,
        Some(OwnedValue::Array(parts)) => {
            for p in parts {
                match p.get("type").and_then(OwnedValue::as_str) {
                    Some("text") => text(
                        out,
                        role,
                        p.get("text").and_then(OwnedValue::as_str).unwrap_or(""),
                        full,
                    )?,
                    Some("image_url") => out.line("[image]")?,
                    _ => out.line(&p.to_string_styled(Style::COMPACT))?,
                }
            }
        }
        _ => {}
    }
    if let Some(calls) = m.get("tool_calls").and_then(OwnedValue::as_array) {
        for c in calls {
            let f = c.get("function");
            let name = f
                .and_then(|f| f.get("name"))
                .and_then(OwnedValue::as_str)
                .unwrap_or("?");
            let args = f
                .and_then(|f| f.get("arguments"))
                .and_then(OwnedValue::as_str)
                .unwrap_or("");
            let id = c.get("id").and_then(OwnedValue::as_str).unwrap_or("?");
            out.line(&format!("→ {name}({args}) [{id}]"))?;
        }
    }
    Ok(())
}
