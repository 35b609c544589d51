//! `agentlog occhat …`: the OC Chat store operations of the library, on the
//! sessions directory `--sessions-dir` names (default: `$OC_CHAT_SESSIONS_DIR`,
//! else `oc_chat/sessions`, as the library resolves it).
//!
//! JSON shapes:
//!
//! - `list --json`: an array of OC Chat's `list_sessions` entries, keys
//!   `name`, `model`, `stats`, `last_modified`, `filepath`, `chat_logs`,
//!   `reasoning_effort`, `chat_log_size_bytes`, `ui`;
//! - `tail NAME_OR_PATH --json`: the incomplete-tail report (`kind`,
//!   `tail_indexes`, `summary`) or `null`;
//! - `show NAME --json`: `{"filepath": META FILE, "validated": BOOL,
//!   "metadata": META, "messages": [MESSAGE…], "chat_log_load_failed": BOOL}`;
//! - `migrate --json`: the migration summary (`migrated`, `recovered`,
//!   `orphans_moved`, `errors`);
//! - `migrate --dry-run --json`: the plan, `{"sessions": [{"from", "to"}],
//!   "orphans": [PATH], "errors": [TEXT]}`: what the migration would
//!   migrate, move to `legacy/` and report (the files read as it reads them).

use std::path::{Path, PathBuf};

use agentlog::json::{OwnedValue, Style};
use agentlog::occhat::{
    LoadError, RecoveryChoice, SaveError, SessionEntry, SessionStore, detect_incomplete_tail,
    fs_safe_name,
};

use crate::ls::text_of;
use crate::out::{Fail, Obj, Out, Res, Status, one_line, path_str, plural, warn};

const HELP: &str = "\
Examples:
  agentlog occhat --sessions-dir oc_chat/sessions list --json
  agentlog occhat show weekly-report
  agentlog occhat tail weekly-report --json
  agentlog occhat recover weekly-report --choice drop
  agentlog occhat export-md weekly-report
  agentlog occhat migrate --json
  agentlog occhat safe-name 'my: session?'

The sessions directory is --sessions-dir, else $OC_CHAT_SESSIONS_DIR, else
oc_chat/sessions.";

/// OC Chat session store operations.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// The sessions directory (default: $OC_CHAT_SESSIONS_DIR, else oc_chat/sessions).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

/// `--sessions-dir` after a subcommand that reads a store (`safe-name`
/// reads none and does not take it).
#[derive(clap::Args, Debug)]
struct Dir {
    /// The sessions directory (default: $OC_CHAT_SESSIONS_DIR, else oc_chat/sessions).
    #[arg(long = "sessions-dir", value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// List the sessions, as OC Chat lists them.
    #[command(after_help = "Example:\n  agentlog occhat list --json\n\n\
        JSON: an array of objects with the keys name, model, stats, last_modified,\n\
        filepath, chat_logs, reasoning_effort, chat_log_size_bytes, ui.")]
    List {
        #[command(flatten)]
        dir: Dir,
        /// A JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Show a session: its metadata and a summary of its messages.
    #[command(after_help = "Example:\n  agentlog occhat show weekly-report\n\n\
        JSON: {\"filepath\", \"validated\", \"metadata\", \"messages\", \"chat_log_load_failed\"}.")]
    Show {
        #[command(flatten)]
        dir: Dir,
        /// The session's name, or the path of its meta file.
        name: String,
        /// The metadata and every message, as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Report the incomplete tail of a session's newest chat log.
    #[command(
        after_help = "Example:\n  agentlog occhat tail weekly-report --json\n\n\
        JSON: {\"kind\", \"tail_indexes\", \"summary\"}, or null when the tail is complete."
    )]
    Tail {
        #[command(flatten)]
        dir: Dir,
        /// The session's name, or the path of a chat log.
        name_or_path: String,
        /// The report as JSON (null when there is none).
        #[arg(long)]
        json: bool,
    },
    /// Apply a tail recovery and save the session (earlier files archived).
    #[command(
        after_help = "Example:\n  agentlog occhat recover weekly-report --choice drop\n\n\
        drop removes the incomplete tail, keep keeps everything, fresh keeps only a\n\
        leading system message. Nothing is written when nothing changes; the\n\
        previous chat log and meta move to archive/, never lost."
    )]
    Recover {
        #[command(flatten)]
        dir: Dir,
        /// The session's name, or the path of its meta file.
        name: String,
        /// What to do with the tail.
        #[arg(long, value_parser = ["drop", "keep", "fresh"])]
        choice: String,
        /// Say what would change, write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Write the Markdown export of a session.
    #[command(name = "export-md")]
    #[command(
        after_help = "Example:\n  agentlog occhat export-md weekly-report -o report.md\n\n\
        Without -o the export goes to the session directory (earlier exports archived).\n\
        -o FILE: a regular file is replaced when complete, a device, FIFO or socket\n\
        written in place, - is standard output; a record of the store (a meta, a\n\
        chat log, an export, anything under archive/ or legacy/) is refused."
    )]
    ExportMd {
        #[command(flatten)]
        dir: Dir,
        /// The session's name, or the path of its meta file.
        name: String,
        /// Write here instead of the session directory (`-`: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Convert a flat pre-session-system store to per-session directories.
    #[command(
        after_help = "Example:\n  agentlog occhat --sessions-dir old_sessions migrate --dry-run\n\n\
        JSON: {\"migrated\", \"recovered\", \"orphans_moved\", \"errors\"}; with\n\
        --dry-run {\"sessions\": [{\"from\", \"to\"}], \"orphans\": [PATH], \"errors\": [TEXT]}:\n\
        the dry run reads every file the migration reads, so it predicts the same\n\
        sessions, orphans and errors (status 1 when there would be errors)."
    )]
    Migrate {
        #[command(flatten)]
        dir: Dir,
        /// The summary as JSON.
        #[arg(long)]
        json: bool,
        /// Say what would move, write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print each name's file-system-safe form, one a line.
    #[command(name = "safe-name")]
    #[command(after_help = "Example:\n  agentlog occhat safe-name 'a/b' 'x?'")]
    SafeName {
        /// Session names.
        #[arg(required = true)]
        names: Vec<String>,
    },
}

/// The first line of a message's text, shortened.
fn preview(m: &OwnedValue) -> String {
    let text = match m.get("content") {
        Some(OwnedValue::String(s)) => s.clone(),
        Some(OwnedValue::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(OwnedValue::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Some(OwnedValue::Null) | None => String::new(),
        Some(v) => v.to_string_styled(Style::COMPACT),
    };
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = first.chars().take(100).collect();
    if s.len() < first.len() {
        s.push('…');
    }
    let calls = m
        .get("tool_calls")
        .and_then(OwnedValue::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|c| {
                    c.get("function")
                        .and_then(|f| f.get("name"))
                        .and_then(OwnedValue::as_str)
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if !calls.is_empty() {
        s.push_str(&format!(" → {}", calls.join(", ")));
    }
    s
}

/// Why a sessions directory lists nothing: an OpenHands store, a store in
/// the flat layout, or nothing of either.
fn nothing_here(dir: &std::path::Path) -> String {
    if let Ok(crate::target::Target::OpenHands { dirs, .. }) = crate::target::resolve(dir)
        && !dirs.is_empty()
    {
        return format!(
            "{}: an OpenHands store ({}), not an OC Chat sessions directory (agentlog ls {})",
            dir.display(),
            plural(dirs.len() as u64, "conversation", "conversations"),
            dir.display()
        );
    }
    crate::target::nothing_found(dir, &crate::target::Target::Asf { files: Vec::new() })
        .map(|m| m.replace("OpenHands conversations or ", ""))
        .unwrap_or_default()
}

/// Refuses a sessions directory that is not there, or not a directory
/// (status 2), before any subcommand reads it. A session named by the path
/// of its file is read wherever it is, so with the default directory
/// (neither `--sessions-dir` nor `$OC_CHAT_SESSIONS_DIR`, `given` false) a
/// NAME that is an existing path is let through.
fn missing_dir(store: &SessionStore, given: bool, cmd: &Cmd) -> Res<()> {
    let dir = store.dir();
    let name = match cmd {
        Cmd::Show { name, .. } | Cmd::Recover { name, .. } | Cmd::ExportMd { name, .. } => {
            Some(name.as_str())
        }
        Cmd::Tail { name_or_path, .. } => Some(name_or_path.as_str()),
        _ => None,
    };
    if !given && name.is_some_and(|n| Path::new(n).exists()) {
        return Ok(());
    }
    let whence = if given {
        ""
    } else {
        " (the default; give --sessions-dir DIR or set $OC_CHAT_SESSIONS_DIR)"
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Fail::Fatal(format!(
            "{}: no such folder: the sessions directory is missing{whence}",
            dir.display()
        ))),
        Ok(m) if !m.is_dir() => Err(Fail::Fatal(format!(
            "{}: not a directory: a sessions directory is a folder{whence}",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// The failure for a session that does not load: not there (status 1),
/// with the store's names close to the one asked for, or not readable
/// (status 2).
pub fn load_error(store: &SessionStore, e: LoadError) -> Fail {
    if !e.is_not_found() {
        return Fail::Fatal(e.to_string());
    }
    let msg = e.to_string();
    let Some(asked) = not_found_name(&e) else {
        return Fail::Problem(msg);
    };
    let list = store.list_sessions();
    let names: Vec<String> = list.sessions.iter().map(|s| text_of(&s.name)).collect();
    let hint = crate::suggest::hint(&asked, names.iter().map(String::as_str));
    Fail::Problem(format!("{msg}{hint}"))
}

/// The name a not-found error is about (a name, not a path).
fn not_found_name(e: &LoadError) -> Option<String> {
    match e {
        LoadError::NotFound { query, .. } => Some(query.clone()),
        _ => None,
    }
}

/// Runs the command.
pub fn run(args: Args, out: &mut Out) -> Res<u8> {
    let dir = match &args.cmd {
        Cmd::List { dir, .. }
        | Cmd::Show { dir, .. }
        | Cmd::Tail { dir, .. }
        | Cmd::Recover { dir, .. }
        | Cmd::ExportMd { dir, .. }
        | Cmd::Migrate { dir, .. } => dir.sessions_dir.clone().or(args.sessions_dir),
        Cmd::SafeName { .. } => {
            if args.sessions_dir.is_some() {
                return Err(Fail::Fatal(
                    "--sessions-dir: safe-name reads no store; give it names only".into(),
                ));
            }
            None
        }
    };
    let given = dir.is_some() || std::env::var_os("OC_CHAT_SESSIONS_DIR").is_some();
    let store = SessionStore::locate(dir.as_deref());
    if !matches!(args.cmd, Cmd::SafeName { .. }) {
        missing_dir(&store, given, &args.cmd)?;
    }
    let fatal = |e: &dyn std::fmt::Display| Fail::Fatal(e.to_string());
    // A session that is not there is what was asked for missing (1), with
    // the close names the store has; a store that cannot be read is fatal
    // (2).
    let load = |e: LoadError| load_error(&store, e);
    match args.cmd {
        Cmd::List { json, .. } => {
            if !store.dir().is_dir() {
                return Err(Fail::Fatal(format!(
                    "{}: not a directory (give --sessions-dir)",
                    store.dir().display()
                )));
            }
            let list = store.list_sessions();
            for s in &list.skipped {
                warn(&format!("{} (skipped)", s.error));
            }
            let nothing = (list.sessions.is_empty() && list.skipped.is_empty())
                .then(|| nothing_here(store.dir()));
            if json {
                out.json_pretty(&list.to_value())?;
            } else {
                session_table(&list.sessions, store.dir(), out)?;
            }
            if let Some(msg) = nothing {
                out.flush()?;
                crate::out::error(&msg);
                return Ok(Status::PROBLEMS.code());
            }
        }
        Cmd::Show { name, json, .. } => {
            let meta = store.load_session_metadata(&name).map_err(load)?;
            let session = store.load_session(&path_str(&meta.path)).map_err(load)?;
            if session.load_failed {
                warn(&format!(
                    "{}: the newest chat log cannot be read",
                    meta.path.display()
                ));
            }
            if json {
                out.json_pretty(
                    &Obj::new()
                        .put("filepath", path_str(&meta.path))
                        .put("validated", meta.validated)
                        .put("metadata", meta.metadata.clone())
                        .put("messages", OwnedValue::Array(session.messages.clone()))
                        .put("chat_log_load_failed", session.load_failed)
                        .done(),
                )?;
            } else {
                let st = &session.stats;
                let tz = agentlog::occhat::TimeZone::local();
                let g = |n: i64| {
                    let s = crate::ls::group(n.unsigned_abs());
                    if n < 0 { format!("-{s}") } else { s }
                };
                out.line(&format!("name:      {}", session.name))?;
                out.line(&format!("id:        {}", session.session_id))?;
                out.line(&format!(
                    "created:   {}",
                    session
                        .created
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), |c| crate::when::second(c, &tz))
                ))?;
                out.line(&format!(
                    "model:     {} (reasoning effort {})",
                    session.model, session.reasoning_effort
                ))?;
                out.line(&format!(
                    "tokens:    {} prompt, {} completion, {} total, {} cache hit, {} cache miss",
                    g(st.total_prompt_tokens),
                    g(st.total_completion_tokens),
                    g(st.total_tokens),
                    g(st.prompt_cache_hit_tokens),
                    g(st.prompt_cache_miss_tokens)
                ))?;
                out.line(&format!("meta:      {}", meta.path.display()))?;
                out.line(&format!(
                    "messages:  {}",
                    crate::ls::group(session.messages.len() as u64)
                ))?;
                for (i, m) in session.messages.iter().enumerate() {
                    let role = m.get("role").and_then(OwnedValue::as_str).unwrap_or("?");
                    out.line(&format!("  [{i:>3}] {role:<9} {}", preview(m)))?;
                }
                if let Some(r) = detect_incomplete_tail(&session.messages) {
                    out.line(&format!(
                        "incomplete tail: {} (messages {:?}): {}",
                        r.kind, r.tail_indexes, r.summary
                    ))?;
                }
            }
        }
        Cmd::Tail {
            name_or_path, json, ..
        } => {
            let log = store.load_chat_log(&name_or_path).map_err(load)?;
            let report = detect_incomplete_tail(log.messages());
            if json {
                let v = report.as_ref().map_or(OwnedValue::Null, |r| r.to_value());
                out.json_line(&v)?;
            } else {
                match &report {
                    None => out.line(&format!("{}: the tail is complete", log.path.display()))?,
                    Some(r) => out.line(&format!(
                        "{}: {} (messages {:?}): {}",
                        log.path.display(),
                        r.kind,
                        r.tail_indexes,
                        r.summary
                    ))?,
                }
            }
            // An incomplete tail is a problem found, as `check` says.
            if report.is_some() {
                return Ok(Status::PROBLEMS.code());
            }
        }
        Cmd::Recover {
            name,
            choice,
            dry_run,
            ..
        } => {
            let choice: RecoveryChoice = choice.parse().map_err(|e| fatal(&e))?;
            let r = store
                .recover_session(&name, choice, dry_run)
                .map_err(|e| match e {
                    SaveError::Load(e) => load(e),
                    e => fatal(&e),
                })?;
            if let Some(meta) = &r.completed {
                warn(&format!(
                    "{}: completed an interrupted save (the meta was not published)",
                    meta.display()
                ));
            }
            if r.load_failed {
                return Err(Fail::Problem(format!(
                    "{}: the newest chat log cannot be read; nothing recovered",
                    r.dir.display()
                )));
            }
            let Some(saved) = &r.saved else {
                if r.after == r.before {
                    out.line(&format!(
                        "{}: nothing to change ({} kept)",
                        r.name,
                        plural(r.before as u64, "message", "messages")
                    ))?;
                } else {
                    out.line(&format!(
                        "{}: {} keeps {} of {} (dry run: nothing written)",
                        r.name,
                        choice.as_str(),
                        r.after,
                        plural(r.before as u64, "message", "messages")
                    ))?;
                }
                return Ok(Status::OK.code());
            };
            for n in &r.notes {
                warn(&n.to_string());
            }
            out.line(&format!(
                "{}: {} keeps {} of {}",
                r.name,
                choice.as_str(),
                r.after,
                plural(r.before as u64, "message", "messages")
            ))?;
            for l in saved.report_lines() {
                out.line(&l)?;
            }
            if saved.refused.is_some() {
                return Ok(Status::PROBLEMS.code());
            }
        }
        Cmd::ExportMd { name, output, .. } => {
            let session = store.load_session(&name).map_err(load)?;
            let path = store
                .export_markdown(&session, output.as_deref())
                .map_err(|e| fatal(&e))?;
            if let Some(o) = &session.origin
                && o.recorded_name
                    .as_ref()
                    .and_then(OwnedValue::as_str)
                    .is_none_or(|n| {
                        Some(fs_safe_name(n).as_str()) != o.dir.file_name().and_then(|d| d.to_str())
                    })
            {
                warn(&format!(
                    "{}: the meta names the session {}; exported from this directory",
                    o.dir.display(),
                    o.recorded_name
                        .as_ref()
                        .map_or_else(|| "null".to_owned(), OwnedValue::to_string)
                ));
            }
            // With `-o -` the export itself is the standard output.
            if path.as_os_str() != "-" {
                out.line(&format!("[Exported to {}]", path.display()))?;
            }
        }
        Cmd::Migrate { json, dry_run, .. } => {
            if !store.dir().is_dir() {
                return Err(Fail::Fatal(format!(
                    "{}: not a directory (give --sessions-dir)",
                    store.dir().display()
                )));
            }
            if dry_run {
                let plan = store.plan_legacy_migration();
                if json {
                    out.json_pretty(
                        &Obj::new()
                            .put(
                                "sessions",
                                OwnedValue::Array(
                                    plan.sessions
                                        .iter()
                                        .map(|(from, to)| {
                                            Obj::new()
                                                .put("from", path_str(from))
                                                .put("to", path_str(to))
                                                .done()
                                        })
                                        .collect(),
                                ),
                            )
                            .put(
                                "orphans",
                                OwnedValue::Array(
                                    plan.orphans.iter().map(|p| path_str(p).into()).collect(),
                                ),
                            )
                            .put(
                                "errors",
                                OwnedValue::Array(
                                    plan.errors.iter().map(|e| e.as_str().into()).collect(),
                                ),
                            )
                            .done(),
                    )?;
                } else {
                    for (from, to) in &plan.sessions {
                        out.line(&format!("{} -> {}/", from.display(), to.display()))?;
                    }
                    for o in &plan.orphans {
                        out.line(&format!("{} -> legacy/", o.display()))?;
                    }
                    let errors = if plan.errors.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", plural(plan.errors.len() as u64, "error", "errors"))
                    };
                    out.line(&format!(
                        "would migrate {} and move {} to legacy/{errors} (dry run: nothing written)",
                        plural(plan.sessions.len() as u64, "session", "sessions"),
                        plural(
                            plan.orphans.len() as u64,
                            "orphan chat log",
                            "orphan chat logs"
                        )
                    ))?;
                    for e in &plan.errors {
                        out.line(&format!("  error: {e}"))?;
                    }
                }
                if !plan.errors.is_empty() {
                    return Ok(Status::PROBLEMS.code());
                }
                return Ok(Status::OK.code());
            }
            let summary = store.migrate_legacy_layout().map_err(|e| fatal(&e))?;
            if json {
                out.json_line(&summary.to_value())?;
            } else {
                out.line(&format!(
                    "migrated {}, moved {} to legacy/, {}",
                    plural(summary.migrated, "session", "sessions"),
                    plural(summary.orphans_moved, "orphan chat log", "orphan chat logs"),
                    plural(summary.errors.len() as u64, "error", "errors")
                ))?;
                for e in &summary.errors {
                    out.line(&format!("  error: {e}"))?;
                }
            }
            if !summary.errors.is_empty() {
                return Ok(Status::PROBLEMS.code());
            }
        }
        Cmd::SafeName { names } => {
            for n in names {
                out.line(&fs_safe_name(&n))?;
            }
        }
    }
    Ok(Status::OK.code())
}

/// The human form of `list`: a heading, aligned columns (the time as OC
/// Chat lists it, the chat log's size with thousands separators), the
/// meta file's path relative to the sessions directory, keeping its end
/// when the line would pass the terminal's width.
fn session_table(sessions: &[SessionEntry], dir: &Path, out: &mut Out) -> Res<()> {
    if sessions.is_empty() {
        return Ok(());
    }
    const HEAD: [&str; 5] = ["UPDATED", "NAME", "MODEL", "CHAT LOG", "META"];
    let cells: Vec<[String; 5]> = sessions
        .iter()
        .map(|s| {
            let rel = s.filepath.strip_prefix(dir).unwrap_or(&s.filepath);
            [
                one_line(&s.last_modified),
                crate::brief::fit(&text_of(&s.name), NAME_WIDTH),
                crate::brief::fit(&text_of(&s.model), NAME_WIDTH),
                format!("{} B", crate::ls::group(s.chat_log_size_bytes)),
                one_line(&rel.to_string_lossy()),
            ]
        })
        .collect();
    let mut width = HEAD.map(|h| h.chars().count());
    for c in &cells {
        for (w, cell) in width.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let columns = crate::brief::columns();
    let line = |c: &[String; 5]| {
        let mut l = String::new();
        for (i, (cell, w)) in c.iter().zip(width).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            match i {
                3 => l.push_str(&format!("{cell:>w$}")),
                4 => {
                    let room = columns.saturating_sub(l.chars().count()).max(12);
                    l.push_str(&crate::brief::fit_end(cell, room));
                }
                _ => l.push_str(&format!("{cell:<w$}")),
            }
        }
        l
    };
    out.line(&line(&HEAD.map(str::to_owned)))?;
    for c in &cells {
        out.line(&line(c))?;
    }
    Ok(())
}

/// The widest a name or model is shown in `list` (cut with `…`).
const NAME_WIDTH: usize = 24;
