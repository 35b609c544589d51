//! `agentlog asf convert PATH... -o OUT_DIR [--report]`: OpenHands
//! conversations (a store, a conversation directory or a file of one; every
//! sub-agent's conversation too) and OC Chat sessions (a sessions
//! directory: every session it lists) as ASF session files, one
//! `<session id>.jsonl` per conversation in OUT_DIR (sub-agents beside
//! their parent, naming it in `parent_session`), each written to a
//! temporary file in OUT_DIR, flushed and renamed into place (a symbolic
//! link at `OUT_DIR/<session id>.jsonl` is replaced by the file, never
//! written through: the files the command names are created inside
//! OUT_DIR, as [`agentlog::output::OutputPath::classify_entry`] says; a
//! directory, device or FIFO there is an error); OUT_DIR is flushed once,
//! after the last rename (so the renames are durable once the command has
//! exited, whatever its status; a name holds its old file or its new one,
//! never a part, at every moment before).
//!
//! Standard output: the path of each file written, one a line; with
//! `--report`, instead, one JSON object per source event with the keys
//! `session`, `event`, `kind`, `outcome` (`mapped`, `kept-extension`,
//! `dropped`) and `detail`. Exit status 0 when everything converted, 1 when
//! a conversation could not be read or converted (the others are), 2 on a
//! PATH or OUT_DIR that cannot be used.

use std::path::{Path, PathBuf};

use agentlog::convert::Converted;
use agentlog::convert::openhands::{Options, convert_with, session_id};
use agentlog::occhat::SessionStore;
use agentlog::openhands::Reader;
use agentlog::output::{DirSync, Output};

use crate::out::{Fail, Obj, Out, Res, Status, error};
use crate::target::{Target, nothing_found, resolve, walk};

/// Arguments of `asf convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// OpenHands stores, conversation directories or files of one, or OC Chat sessions directories.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The directory the session files go to (created if missing).
    #[arg(short = 'o', long = "out", value_name = "OUT_DIR")]
    out_dir: PathBuf,
    /// Print what each source event became (JSON lines) instead of the files.
    #[arg(long)]
    report: bool,
}

/// Runs `asf convert`.
pub fn run(a: ConvertArgs, out: &mut Out) -> Res<u8> {
    std::fs::create_dir_all(&a.out_dir)
        .map_err(|e| Fail::Fatal(format!("{}: {e}", a.out_dir.display())))?;
    let mut status = Status::OK;
    let mut pending = DirSync::new();
    let mut reader = Reader::new();
    let mut conv = agentlog::openhands::Conversation::default();
    let mut parser = agentlog::json::Parser::new();
    for path in &a.paths {
        let target = resolve(path).map_err(Fail::Fatal)?;
        if let Some(msg) = nothing_found(path, &target) {
            crate::out::error(&msg);
            status.raise(Status::PROBLEMS);
            continue;
        }
        let dirs = match target {
            Target::OpenHands { dirs, .. } => dirs,
            Target::OcChat { root } => {
                occhat(&root, &a, out, &mut pending, &mut status)?;
                continue;
            }
            Target::Asf { .. } => {
                crate::out::error(&format!(
                    "{}: already Agent Session Format; nothing to convert",
                    path.display()
                ));
                status.raise(Status::FATAL);
                continue;
            }
        };
        for top in dirs {
            walk(&mut reader, &mut conv, &mut parser, &top, |node| {
                let c = match node.conv {
                    Ok(c) => c,
                    Err(e) => {
                        error(&format!("{}: {e}", node.dir.display()));
                        status.raise(Status::PROBLEMS);
                        return Ok(());
                    }
                };
                let options = Options {
                    parent_session: node.parent.map(session_id),
                    subsessions: c.subagents().iter().map(|n| session_id(n)).collect(),
                };
                match convert_with(c, &options) {
                    Ok(done) => emit(&a.out_dir, a.report, &done, out, &mut pending)?,
                    Err(e) => {
                        error(&format!("{}: {e}", node.dir.display()));
                        status.raise(Status::PROBLEMS);
                    }
                }
                Ok(())
            })?;
        }
    }
    pending.finish().map_err(|e| Fail::Fatal(e.to_string()))?;
    Ok(status.code())
}

/// Converts every session of an OC Chat sessions directory.
fn occhat(
    root: &Path,
    a: &ConvertArgs,
    out: &mut Out,
    dirs: &mut DirSync,
    status: &mut Status,
) -> Res<()> {
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    for skipped in &list.skipped {
        error(&format!("{skipped:?}"));
        status.raise(Status::PROBLEMS);
    }
    for entry in &list.sessions {
        let path = entry.filepath.display().to_string();
        let done = match store
            .load_session(&path)
            .map_err(|e| e.to_string())
            .and_then(|s| agentlog::convert::occhat::convert(&s).map_err(|e| e.to_string()))
        {
            Ok(d) => d,
            Err(e) => {
                error(&format!("{path}: {e}"));
                status.raise(Status::PROBLEMS);
                continue;
            }
        };
        emit(&a.out_dir, a.report, &done, out, dirs)?;
    }
    Ok(())
}

/// Writes one converted session and prints its path (or its report).
fn emit(
    out_dir: &Path,
    report: bool,
    done: &Converted,
    out: &mut Out,
    dirs: &mut DirSync,
) -> Res<()> {
    let file = out_dir.join(format!("{}.jsonl", done.session_id));
    write(&file, &done.bytes, dirs)?;
    if report {
        for row in &done.report {
            out.json_line(
                &Obj::new()
                    .put("session", done.session_id.as_str())
                    .put("event", row.event.as_str())
                    .put("kind", row.kind.as_str())
                    .put("outcome", row.outcome.code())
                    .put("detail", row.outcome.to_string())
                    .done(),
            )?;
        }
    } else {
        out.line(&file.display().to_string())?;
    }
    Ok(())
}

/// Writes a session file as [`agentlog::output`] says (the bytes in one
/// piece, no buffer between), leaving its directory's flush to `dirs`.
fn write(path: &Path, bytes: &[u8], dirs: &mut DirSync) -> Res<()> {
    use std::io::Write;
    let fatal = |e: agentlog::output::OutputError| Fail::Fatal(e.to_string());
    let mut f = Output::create_entry(path).map_err(fatal)?;
    f.write_all(bytes)
        .map_err(|e| Fail::write(e, &path.display().to_string()))?;
    f.commit_into(dirs).map_err(fatal)
}
