//! `agentlog follow PATH...`: every change of OpenHands stores as it is
//! written, as JSON lines (`agentlog::follow`).
//!
//! Events are lines of `export`'s shape. Besides them, records with the
//! `conversation` and `parent` members of an event line and a `record`
//! member:
//!
//! ```text
//! {"conversation": ID, "parent": ID | null, "record": "new"}        a conversation (or sub-agent) appeared; its events follow
//! {"conversation": ID, "parent": ID | null, "record": "state", "execution_status": S | null, "title": T | null}
//! {"conversation": ID, "parent": ID | null, "record": "rewrite"}    its history changed: drop it, all its events follow
//! {"conversation": ID, "parent": ID | null, "record": "removed"}
//! ```
//!
//! An OC Chat sessions directory among the PATHs is followed too:
//! `{"session": NAME, "index": N, "message": MESSAGE}` per message a save
//! added, and `{"session": NAME, "record": "new"|"rewrite"|"removed"}`.
//!
//! A `state` record comes when a conversation's `execution_status` (from
//! `base_state.json`) or title (from `meta.json`) differs from the last
//! one this run printed for it (and for each conversation first seen).
//! What is already in the stores is printed first (everything, or what
//! changed since `--checkpoint FILE`), then changes as they are written.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use agentlog::follow::occhat::SessionChange;
use agentlog::follow::{FollowOptions, Follower, SessionsCheckpoint};
use agentlog::json::{Parser, Style, write::write_str};
use agentlog::openhands::{Change, ChangeKind};

use crate::out::{Fail, Out, Res, warn};
use crate::since::{load, one_store_to_follow, push_record, sync_stdout, write_change};
use crate::target::{Target, legacy_occhat, nothing_found, resolve};

const HELP: &str = "\
Examples:
  agentlog follow ~/.openhands/conversations
  agentlog follow /mnt/nfs/conversations --poll 5
  agentlog follow ~/.openhands/conversations --checkpoint follow.cp | indexer

Lines: events in the export shape ({\"conversation\", \"parent\", \"index\",
\"file\", \"error\", \"event\"}), and records {\"conversation\", \"parent\",
\"record\": \"new\"|\"state\"|\"rewrite\"|\"removed\"} (a state record also has
\"execution_status\" and \"title\"); for an OC Chat sessions directory,
{\"session\", \"index\", \"message\"} per message a save added and
{\"session\", \"record\": \"new\"|\"rewrite\"|\"removed\"}. What is there is printed first, then
changes as they are written. An event file caught half-written is printed
once complete, never as malformed while it is still being written (one left
malformed for the settle time is printed as malformed). With --checkpoint
FILE (one PATH: an OpenHands store or an OC Chat sessions directory) a
restart goes on where the last run stopped: FILE is saved after each batch
of lines is flushed and synced. For an OC Chat sessions directory FILE
keeps, per session, how many messages were printed and a digest of them:
a restart prints the messages added since, or a rewrite record when the
chat log no longer begins with what was printed.";

/// Follow OpenHands stores and OC Chat sessions: print new events and messages as written.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// OpenHands stores, conversation directories, or OC Chat sessions
    /// directories (default: $AGENTLOG_STORE, else ~/.openhands/conversations).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Poll every SECONDS instead of waiting for file-system events (for
    /// network mounts and file systems without them).
    #[arg(long, value_name = "SECONDS")]
    poll: Option<f64>,
    /// How long a malformed event file must be left alone before it is
    /// printed as malformed (a writer may still be writing it).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    settle: f64,
    /// Resume from, and save to, the checkpoint FILE (one PATH: an
    /// OpenHands store or an OC Chat sessions directory).
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// OpenHands stores: on every scan of a conversation, stat every event
    /// file already handed out and hand the conversation out again (as a
    /// rewrite) when any of them changed in place; costs one stat per
    /// event file, and a listing of each conversation's `events/`, on
    /// every scan.
    #[arg(long)]
    verify_files: bool,
}

fn seconds(what: &str, s: f64) -> Res<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|_| s.is_finite())
        .ok_or_else(|| Fail::Fatal(format!("--{what}: not a number of seconds: {s}")))
}

/// `execution_status` of the state and `title` of the meta.
fn status_title(c: &Change<'_>, parser: &mut Parser) -> (Option<String>, Option<String>) {
    let Some(conv) = c.conversation else {
        return (None, None);
    };
    let mut get = |raw: Option<&[u8]>, key: &str| -> Option<String> {
        let doc = parser.parse(raw?).ok()?;
        doc.root().get(key)?.as_str().map(str::to_owned)
    };
    (
        get(conv.state().map(|f| f.raw()), "execution_status"),
        get(conv.meta().map(|f| f.raw()), "title"),
    )
}

fn push_str_or_null(rest: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => write_str(rest, s, false),
        None => rest.extend_from_slice(b"null"),
    }
}

/// Refuses a PATH that is a flat-layout (legacy) OC Chat store, with or
/// without `--checkpoint`: it never shows sessions until it is migrated,
/// so following it would wait forever. An empty directory may fill and is
/// followed (with a warning).
fn refuse_legacy(paths: &[PathBuf]) -> Res<()> {
    for p in paths {
        let target = resolve(p).map_err(Fail::Fatal)?;
        if let Some(msg) = nothing_found(p, &target)
            && legacy_occhat(p).is_some()
        {
            return Err(Fail::Problem(msg));
        }
    }
    Ok(())
}

/// Runs the command (until standard output closes or an error).
pub fn run(mut args: Args, out: &mut Out) -> Res<u8> {
    args.paths = crate::find::paths_or_default(&args.paths)?;
    let opts = FollowOptions {
        poll: args.poll.map(|s| seconds("poll", s)).transpose()?,
        settle: seconds("settle", args.settle)?,
        verify_files: args.verify_files,
        ..FollowOptions::default()
    };
    let mut roots = Vec::new();
    let mut sessions = Vec::new();
    // With --checkpoint, of an OC Chat sessions directory.
    let mut sessions_from = Vec::new();
    refuse_legacy(&args.paths)?;
    match &args.checkpoint {
        Some(cp) => match args.paths.as_slice() {
            [one] if matches!(resolve(one), Ok(Target::OcChat { .. })) => {
                crate::since::check_path(cp)?;
                if crate::since::is_empty_file(cp) {
                    crate::out::warn(&format!(
                        "{}: empty: no checkpoint yet (a first run; the checkpoint is saved there)",
                        cp.display()
                    ));
                }
                let since =
                    SessionsCheckpoint::load_or_none(cp).map_err(|e| Fail::Fatal(e.to_string()))?;
                sessions_from.push((one.clone(), since));
            }
            _ => {
                let root = one_store_to_follow(&args.paths)?;
                roots.push((root.to_path_buf(), load(cp)?));
            }
        },
        None => {
            for p in &args.paths {
                let target = resolve(p).map_err(Fail::Fatal)?;
                if let Some(msg) = nothing_found(p, &target) {
                    warn(&format!("{msg} (yet): following it"));
                }
                match target {
                    Target::OcChat { root } => sessions.push(root),
                    Target::OpenHands { .. } => roots.push((p.clone(), None)),
                    Target::Asf { .. } => {
                        return Err(Fail::Fatal(format!(
                            "{}: Agent Session Format files; follow reads OpenHands and OC Chat stores",
                            p.display()
                        )));
                    }
                }
            }
        }
    }
    let mut f = Follower::new(roots, opts)
        .with_occhat(sessions)
        .with_occhat_from(sessions_from)
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    if let Some(why) = f.polling() {
        warn(&format!("{why}; polling every {:?}", opts.fallback_poll));
    }
    // The last (status, title) printed, by root and conversation directory.
    let mut shown: HashMap<(usize, PathBuf), (Option<String>, Option<String>)> = HashMap::new();
    // The warnings printed (a conversation that cannot be read, by path
    // and reason).
    let mut warned: HashSet<String> = HashSet::new();
    let mut parser = Parser::new();
    let mut line = Vec::with_capacity(1 << 16);
    let mut rest = Vec::new();
    loop {
        let mut wrote = false;
        let r = f
            .scan(|root, item| -> Res<()> {
                let c = match item {
                    Ok(c) => c,
                    Err(e) => {
                        // Each scan tries a conversation that could not be
                        // read again: its warning is printed once.
                        let e = e.to_string();
                        if !warned.contains(&e) {
                            warn(&e);
                            warned.insert(e);
                        }
                        return Ok(());
                    }
                };
                wrote = true;
                let key = (root, c.dir.to_path_buf());
                if c.kind == ChangeKind::New {
                    push_record(&mut line, c.id, c.parent, "new", b"");
                    out.bytes(&line)?;
                }
                if c.kind == ChangeKind::Removed {
                    shown.remove(&key);
                } else if c.kind != ChangeKind::Updated || c.state_changed || c.meta_changed {
                    let now = status_title(&c, &mut parser);
                    if shown.get(&key) != Some(&now) {
                        rest.clear();
                        rest.extend_from_slice(b",\"execution_status\":");
                        push_str_or_null(&mut rest, now.0.as_deref());
                        rest.extend_from_slice(b",\"title\":");
                        push_str_or_null(&mut rest, now.1.as_deref());
                        push_record(&mut line, c.id, c.parent, "state", &rest);
                        out.bytes(&line)?;
                        shown.insert(key, now);
                    }
                }
                write_change(out, &mut line, &c)
            })
            .map_err(|e| Fail::Fatal(e.to_string()))?;
        r?;
        f.scan_occhat(|_, c| -> Res<()> {
            wrote = true;
            write_session_change(out, &mut line, &c)
        })?;
        out.flush()?;
        if wrote && let Some(cp) = &args.checkpoint {
            sync_stdout()?;
            if let Some(c) = f.checkpoint(0) {
                c.save(cp).map_err(|e| Fail::Fatal(e.to_string()))?;
            } else if let Some(c) = f.occhat_checkpoint(0) {
                c.save(cp).map_err(|e| Fail::Fatal(e.to_string()))?;
            }
        }
        f.wait(None);
    }
}

/// The lines of an OC Chat session's change: `{"session": NAME, "index": N,
/// "message": MESSAGE}` per message, after a `{"session": NAME, "record":
/// "new"|"rewrite"|"removed"}` record where there is one.
fn write_session_change(out: &mut Out, line: &mut Vec<u8>, c: &SessionChange<'_>) -> Res<()> {
    let record = |line: &mut Vec<u8>, session: &str, what: &str| {
        line.clear();
        line.extend_from_slice(b"{\"session\":");
        write_str(line, session, false);
        line.extend_from_slice(b",\"record\":");
        write_str(line, what, false);
        line.extend_from_slice(b"}\n");
    };
    let (session, from, messages) = match c {
        SessionChange::Removed { session } => {
            record(line, session, "removed");
            return out.bytes(line);
        }
        SessionChange::Rewrite { session, messages } => {
            record(line, session, "rewrite");
            out.bytes(line)?;
            (*session, 0, *messages)
        }
        SessionChange::Added {
            session,
            new,
            from,
            messages,
        } => {
            if *new {
                record(line, session, "new");
                out.bytes(line)?;
            }
            (*session, *from, *messages)
        }
    };
    for (k, m) in messages.iter().enumerate() {
        line.clear();
        line.extend_from_slice(b"{\"session\":");
        write_str(line, session, false);
        line.extend_from_slice(b",\"index\":");
        line.extend_from_slice((from + k).to_string().as_bytes());
        line.extend_from_slice(b",\"message\":");
        m.write_to(line, Style::COMPACT);
        line.extend_from_slice(b"}\n");
        out.bytes(line)?;
    }
    Ok(())
}
