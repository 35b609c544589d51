//! `agentlog check`: reads everything and lists each problem.
//!
//! Problems (the `problem` member of `--json`, one object a line with the
//! keys `path`, `problem`, `detail`):
//!
//! | problem | what |
//! |---|---|
//! | `malformed` | an event file in the sequence that is empty, too large, not a regular file, not JSON or not an object |
//! | `gap` | the event files after a missing index (OpenHands does not read them): one problem for them all, named by the first |
//! | `id-mismatch` | an event whose file name holds another ID than its `id` member (OpenHands indexes it by the name's) |
//! | `duplicate-id` | an event whose `id` member is an earlier event's too |
//! | `duplicate` | a second event file for an index |
//! | `bad-name` | a file of `events/` whose name is not an event file's |
//! | `bad-state` | `base_state.json` that does not read as a JSON object |
//! | `bad-meta` | `meta.json` that does not read as a JSON object |
//! | `round-trip` | a file whose decoding then encoding (by its kind's decoder) changes its JSON value |
//! | `unreadable` | a conversation directory, or a directory of the store, that cannot be read; an event file in the sequence that cannot be opened or read (the operating system's error), or is over the reader's budget for one conversation; a sub-agent nested too deep to be read |
//! | `unlistable` | `events/` or `subagents/` of a conversation that cannot be listed, or is not a directory |
//! | `occhat-unreadable` | an OC Chat session whose meta or chat log cannot be read |
//! | `occhat-invalid` | an OC Chat meta that does not validate as OC Chat validates it (loaded raw) |
//! | `incomplete-tail` | an OC Chat chat log ending in an incomplete tail (`agentlog occhat recover` fixes it) |
//! | an ASF problem code (`agentlog::asf::ProblemKind::code`), or `refused` | an ASF session file (see `asf_files.rs`) breaking that rule of RFC 0001, or one the ASF reader refuses; the detail starts with `line N:` |
//!
//! Exit status 0 when clean, 1 when problems were found, 2 when a PATH
//! could not be read at all.

use std::path::{Path, PathBuf};

use agentlog::json::{OwnedValue, Parser, Value};
use agentlog::occhat::{SessionStore, detect_incomplete_tail};
use agentlog::openhands::{
    self, ActionEvent, AgentErrorEvent, Condensation, Conversation, FileStatus, Kind, MessageEvent,
    Meta, ObservationEvent, ReadError, State, SystemPromptEvent, UserRejectObservation,
};
use rayon::prelude::*;

use crate::out::{Obj, Out, Res, Status, one_line, path_str};
use crate::progress::Progress;
use crate::target::{
    IoDepth, Paths, Target, Unread, Worker, for_each_target_with, par_ordered, walk,
};

const HELP: &str = "\
Examples:
  agentlog check ~/.openhands/conversations
  agentlog check ~/.openhands/conversations oc_chat/sessions --json

Problems: malformed, gap (one for every file after a missing index),
duplicate, id-mismatch, duplicate-id, bad-name, bad-state, bad-meta,
round-trip, unreadable, unlistable, occhat-unreadable, occhat-invalid,
incomplete-tail. JSON lines have the keys path, problem, detail.

With --checkpoint FILE (one OpenHands PATH): only the conversations that
changed since FILE (new ones, new events, a new state or meta, a rewritten
history; a sub-agent's change checks its top-level conversation) are
checked, then FILE is replaced by the new checkpoint. A problem of an
unchanged conversation is not listed again: keep the problems of earlier
runs, or run without --checkpoint for the whole store.";

/// Read everything and list each problem.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(flatten)]
    paths: Paths,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
    /// Check only what changed since the checkpoint FILE (everything when
    /// there is none yet), then save the new checkpoint there.
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
}

/// One problem.
struct Problem {
    path: String,
    problem: &'static str,
    detail: String,
}

impl Problem {
    /// A problem of `path`; a detail that starts by naming `path` (the
    /// reader's errors do) has that taken off, so the path is said once.
    fn new(path: &Path, problem: &'static str, detail: impl Into<String>) -> Problem {
        let path = path_str(path);
        let detail = one_line(&detail.into());
        let detail = match detail.strip_prefix(path.as_str()) {
            Some(rest) if rest.starts_with(": ") => rest[2..].to_owned(),
            _ => detail,
        };
        Problem {
            path,
            problem,
            detail,
        }
    }
}

/// What one conversation (with its sub-agents) or session gave.
#[derive(Default)]
struct Found {
    conversations: u64,
    subagents: u64,
    sessions: u64,
    /// ASF session files.
    asf: u64,
    problems: Vec<Problem>,
}

/// Runs the command.
pub fn run(mut args: Args, out: &mut Out) -> Res<u8> {
    args.paths.or_default()?;
    let mut status = Status::OK;
    let mut total = Found::default();
    let mut problems = 0u64;
    let ahead = args.io.read_ahead();
    let mut emit = |f: Found, out: &mut Out| -> Res<()> {
        total.conversations += f.conversations;
        total.subagents += f.subagents;
        total.sessions += f.sessions;
        total.asf += f.asf;
        for p in f.problems {
            problems += 1;
            if args.json {
                out.json_line(
                    &Obj::new()
                        .put("path", p.path)
                        .put("problem", p.problem)
                        .put("detail", p.detail)
                        .done(),
                )?;
            } else {
                out.line(&format!("{}: {}: {}", p.path, p.problem, p.detail))?;
            }
        }
        Ok(())
    };
    let mut any = false;
    let mut save = None;
    let paths: &[PathBuf] = match &args.checkpoint {
        Some(cp) => {
            let root = crate::since::one_store(&args.paths.paths, cp)?;
            let (dirs, unreadable, new) =
                crate::since::changed_conversations(root, cp, args.verify_files)?;
            any = true;
            let f = Found {
                problems: unreadable
                    .into_iter()
                    .map(|e| Problem::new(root, "unreadable", e))
                    .collect(),
                ..Found::default()
            };
            emit(f, out)?;
            let progress = Progress::new(dirs.len() as u64, "conversations");
            par_ordered(&dirs, Some(&progress), ahead, check_tree, |f| emit(f, out))?;
            progress.finish();
            save = Some((cp, new));
            &[]
        }
        None => &args.paths.paths,
    };
    let resolved = for_each_target_with(paths, ahead, &mut status, |path, target, _, progress| {
        match target {
            Target::OpenHands {
                dirs, unreadable, ..
            } => {
                let f = Found {
                    problems: unreadable
                        .iter()
                        .map(|e| unreadable_problem(e, path))
                        .collect(),
                    ..Found::default()
                };
                emit(f, out)?;
                par_ordered(&dirs, Some(progress), ahead, check_tree, |f| emit(f, out))?;
            }
            Target::OcChat { root } => {
                for f in check_occhat(&root) {
                    emit(f, out)?;
                }
            }
            Target::Asf { files } => {
                for file in &files {
                    let problems = crate::asf_files::problems(file)
                        .into_iter()
                        .map(|(code, detail)| Problem::new(file, code, detail))
                        .collect();
                    emit(
                        Found {
                            asf: 1,
                            problems,
                            ..Found::default()
                        },
                        out,
                    )?;
                }
            }
        }
        Ok(())
    })?;
    let any = any || resolved > 0;
    if problems > 0 {
        status.raise(Status::PROBLEMS);
    }
    if !args.json && any {
        use crate::out::plural;
        let mut what = Vec::new();
        if total.conversations > 0 || (total.sessions == 0 && total.asf == 0) {
            what.push(format!(
                "{} ({})",
                plural(total.conversations, "conversation", "conversations"),
                plural(total.subagents, "sub-agent", "sub-agents")
            ));
        }
        if total.sessions > 0 {
            what.push(plural(
                total.sessions,
                "OC Chat session",
                "OC Chat sessions",
            ));
        }
        if total.asf > 0 {
            what.push(plural(total.asf, "ASF session", "ASF sessions"));
        }
        let what = what.join(", ");
        let verdict = match problems {
            0 => "no problems".to_owned(),
            1 => "1 problem".to_owned(),
            n => format!("{n} problems"),
        };
        out.line(&format!("checked {what}: {verdict}"))?;
    }
    if let Some((cp, new)) = save {
        crate::since::save_after(out, cp, new.as_ref())?;
    }
    Ok(status.code())
}

fn check_tree(w: &mut Worker, dir: &Path) -> Found {
    let mut found = Found::default();
    let Worker {
        reader,
        conv,
        ids,
        parsers,
    } = w;
    let _ = walk(reader, conv, ids, dir, |node| {
        match node.conv {
            Ok(c) => {
                if node.parent.is_some() {
                    found.subagents += 1;
                } else {
                    found.conversations += 1;
                }
                check_conversation(c, parsers, &mut found.problems);
            }
            Err(Unread::Read(e)) => found.problems.push(unreadable_problem(&e, node.dir)),
            Err(e @ Unread::TooDeep) => {
                found
                    .problems
                    .push(Problem::new(node.dir, "unreadable", e.to_string()));
            }
        }
        Ok(())
    });
    found
}

/// A directory that could not be read, named by its own path (`dir` when
/// the error names none).
fn unreadable_problem(e: &ReadError, dir: &Path) -> Problem {
    match e {
        ReadError::Io { path, source } => Problem::new(path, "unreadable", source.to_string()),
        other => Problem::new(dir, "unreadable", other.to_string()),
    }
}

/// Whether decoding `root` with `decode` and writing it back with `write`
/// gives the same JSON value.
fn same_after_round_trip<'a, T>(
    root: Value<'a>,
    second: &mut Parser,
    decode: impl FnOnce(Value<'a>) -> Option<T>,
    write: impl FnOnce(&T, &mut Vec<u8>),
) -> Result<(), String> {
    let Some(decoded) = decode(root) else {
        return Err("does not decode".into());
    };
    let mut buf = Vec::with_capacity(root.raw().len() + 16);
    write(&decoded, &mut buf);
    let before = OwnedValue::from(root);
    match OwnedValue::parse_with(second, &buf) {
        Ok((after, _)) if after == before => Ok(()),
        Ok(_) => Err("decoding then encoding changes its value".into()),
        Err(e) => Err(format!(
            "decoding then encoding gives JSON that does not parse: {e}"
        )),
    }
}

/// Round-trips an event by its kind's decoder; kinds without one pass.
fn round_trip_event(kind: &Kind<'_>, root: Value<'_>, second: &mut Parser) -> Result<(), String> {
    macro_rules! rt {
        ($t:ty) => {
            same_after_round_trip(root, second, <$t>::decode, |d, out| d.write_to(out))
        };
    }
    match kind {
        Kind::Message => rt!(MessageEvent),
        Kind::Action => rt!(ActionEvent),
        Kind::Observation => rt!(ObservationEvent),
        Kind::AgentError => rt!(AgentErrorEvent),
        Kind::Condensation => rt!(Condensation),
        Kind::SystemPrompt => rt!(SystemPromptEvent),
        Kind::UserReject => rt!(UserRejectObservation),
        _ => Ok(()),
    }
}

/// Events whose file name holds another ID than their `id` member, and
/// `id` members an earlier event has too.
fn check_ids(conv: &Conversation, events_dir: &Path, problems: &mut Vec<Problem>) {
    let mut seen: std::collections::HashMap<&str, (u64, &str)> = std::collections::HashMap::new();
    for e in conv.events() {
        let Some(id) = e.id() else { continue };
        let path = events_dir.join(e.file_name());
        if id != e.file_id() {
            problems.push(Problem::new(
                &path,
                "id-mismatch",
                format!(
                    "the file name holds the ID {} but the id member is {id} \
                     (OpenHands finds the event by the name's)",
                    e.file_id()
                ),
            ));
        }
        match seen.get(id) {
            Some((index, file)) => problems.push(Problem::new(
                &path,
                "duplicate-id",
                format!("the id {id} is event {index}'s too ({file})"),
            )),
            None => {
                seen.insert(id, (e.index(), e.file_name()));
            }
        }
    }
}

fn check_conversation(
    conv: &Conversation,
    (first, second): &mut (Parser, Parser),
    problems: &mut Vec<Problem>,
) {
    let dir = conv.dir();
    if let Some(e) = conv.events_error() {
        problems.push(Problem::new(dir, "unlistable", e.to_string()));
    }
    if let Some(e) = conv.subagents_error() {
        problems.push(Problem::new(dir, "unlistable", e.to_string()));
    }
    let events_dir = dir.join(openhands::DIR_EVENTS);
    // The files after a gap are one problem, named by the first of them.
    let mut gap: Option<(String, String, usize)> = None;
    for f in conv.files() {
        let problem = match f.status() {
            FileStatus::Event => continue,
            FileStatus::Gap => {
                match &mut gap {
                    None => gap = Some((f.name().to_owned(), f.name().to_owned(), 1)),
                    Some((_, last, n)) => {
                        f.name().clone_into(last);
                        *n += 1;
                    }
                }
                continue;
            }
            s => s.as_str(),
        };
        let reason = f.reason().map(|r| r.to_string()).unwrap_or_default();
        problems.push(Problem::new(&events_dir.join(f.name()), problem, reason));
    }
    if let Some((first, last, n)) = gap {
        let missing = conv.event_files().gap().unwrap_or(0);
        let detail = match n {
            1 => format!(
                "no event file has index {missing}, so OpenHands does not read this one \
                 (it reads events 0 to {})",
                missing.saturating_sub(1)
            ),
            n => format!(
                "no event file has index {missing}, so OpenHands does not read this one and \
                 the {} after it, to {last} (it reads events 0 to {})",
                n - 1,
                missing.saturating_sub(1)
            ),
        };
        problems.push(Problem::new(&events_dir.join(first), "gap", detail));
    }
    check_ids(conv, &events_dir, problems);
    if let Some(e) = conv.state().and_then(|f| f.error()) {
        problems.push(Problem::new(
            &dir.join(openhands::FILE_BASE_STATE),
            "bad-state",
            e.to_string(),
        ));
    } else if let Some(Ok(doc)) = conv.state().map(|f| f.open(first))
        && let Err(why) =
            same_after_round_trip(doc.root(), second, State::decode, |d, out| d.write_to(out))
    {
        problems.push(Problem::new(
            &dir.join(openhands::FILE_BASE_STATE),
            "round-trip",
            format!("as State: {why}"),
        ));
    }
    if let Some(e) = conv.meta().and_then(|f| f.error()) {
        problems.push(Problem::new(
            &dir.join(openhands::FILE_META),
            "bad-meta",
            e.to_string(),
        ));
    } else if let Some(Ok(doc)) = conv.meta().map(|f| f.open(first))
        && let Err(why) =
            same_after_round_trip(doc.root(), second, Meta::decode, |d, out| d.write_to(out))
    {
        problems.push(Problem::new(
            &dir.join(openhands::FILE_META),
            "round-trip",
            format!("as Meta: {why}"),
        ));
    }
    for e in conv.events() {
        let Some(kind) = e.kind() else { continue };
        let Ok(doc) = e.open(first) else { continue };
        if let Err(why) = round_trip_event(&kind, doc.root(), second) {
            problems.push(Problem::new(
                &events_dir.join(e.file_name()),
                "round-trip",
                format!("as {kind}: {why}"),
            ));
        }
    }
}

/// Checks every session of an OC Chat store.
fn check_occhat(root: &Path) -> Vec<Found> {
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    let mut out = vec![Found {
        problems: list
            .skipped
            .iter()
            .map(|s| Problem::new(&s.path, "occhat-unreadable", s.error.to_string()))
            .collect(),
        ..Found::default()
    }];
    let per: Vec<Found> = list
        .sessions
        .par_iter()
        .map(|e| {
            let mut f = Found {
                sessions: 1,
                ..Found::default()
            };
            let meta_path = path_str(&e.filepath);
            match store.load_session_metadata(&meta_path) {
                Ok(m) if !m.validated => f.problems.push(Problem::new(
                    &e.filepath,
                    "occhat-invalid",
                    "the meta does not validate; OC Chat loads it as read",
                )),
                Ok(_) => {}
                Err(err) => {
                    f.problems.push(Problem::new(
                        &e.filepath,
                        "occhat-unreadable",
                        err.to_string(),
                    ));
                    return f;
                }
            }
            match store.load_session(&meta_path) {
                Ok(s) if s.load_failed => f.problems.push(Problem::new(
                    e.filepath.parent().unwrap_or(&e.filepath),
                    "occhat-unreadable",
                    "the newest chat log cannot be read",
                )),
                Ok(s) => {
                    if let Some(r) = detect_incomplete_tail(&s.messages) {
                        f.problems.push(Problem::new(
                            e.filepath.parent().unwrap_or(&e.filepath),
                            "incomplete-tail",
                            format!("{}: {} (messages {:?})", r.kind, r.summary, r.tail_indexes),
                        ));
                    }
                }
                Err(err) => f.problems.push(Problem::new(
                    &e.filepath,
                    "occhat-unreadable",
                    err.to_string(),
                )),
            }
            f
        })
        .collect();
    out.extend(per);
    out
}
