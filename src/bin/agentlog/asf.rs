//! `agentlog asf`: Agent Session Format files (RFC 0001 draft 0.10).
//!
//! - `asf check FILE...`: every problem the reader finds (a FILE may be a
//!   directory: its own ASF `*.jsonl` files), one line each
//!   (`FILE:LINE: CODE: DETAIL`) and a last line saying what was checked
//!   (`checked N ASF session files: no problems`), or with `--json` one object a line with
//!   the keys `path`, `line`, `problem`, `detail`. `problem` is the stable
//!   code of `agentlog::asf::ProblemKind::code`, or `refused` for a file the
//!   reader does not read (not a session, a format it does not name).
//!   Exit status 0 clean, 1 a rule broken (each on its line), 2 a FILE that
//!   cannot be read at all (missing, unreadable, or refused). Checking
//!   never writes: the files are opened for reading only.
//!   `--no-request-hashes` leaves out comparing each `response`'s
//!   `request_hash` with the request its path rebuilds (a check RFC 0001
//!   leaves to the reader, and the costly one).
//! - `asf context FILE [--leaf ID] [--json | --chat]`: the request at the
//!   leaf the resume rule gives (or at ID). Plain: a readable listing.
//!   `--json`: one object, `{"leaf", "request_hash", "settings", "items",
//!   "entries", "item_entries"}` (the reference fixtures' context shape with
//!   the leaf and the request hash). `--chat`: the request as a JSON array
//!   of chat-completions messages.
//! - `asf convert PATH... -o OUT_DIR [--report]`: see `asf_convert.rs`.

use std::path::PathBuf;

use agentlog::asf::{Context, Session};
use agentlog::json::OwnedValue;

use crate::out::{Fail, Obj, Out, Res, Status, path_str};

const HELP: &str = "\
Examples:
  agentlog asf check session.jsonl
  agentlog asf check sessions/
  agentlog asf context session.jsonl --chat
  agentlog asf context session.jsonl --leaf sha256:... --json
  agentlog asf convert ~/.openhands/conversations -o sessions/ --report";

/// Agent Session Format files: check them, rebuild their requests.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// Verify files: every rule the reader checks, each failure on its line.
    Check(CheckArgs),
    /// The request at the leaf (or at an entry), as the context algorithm builds it.
    Context(ContextArgs),
    /// OpenHands conversations and OC Chat sessions as ASF session files.
    Convert(crate::asf_convert::ConvertArgs),
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// ASF session files, or directories of them (their own *.jsonl files).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// One JSON object a line (`path`, `line`, `problem`, `detail`).
    #[arg(long)]
    json: bool,
    /// Every rule but the `request_hash` comparisons: entries, hashes and
    /// links are checked; what each model call was sent is not rebuilt.
    #[arg(long)]
    no_request_hashes: bool,
}

#[derive(clap::Args, Debug)]
struct ContextArgs {
    /// An ASF session file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The entry to build the context at (default: the leaf by the resume
    /// rule): its ID, or a unique prefix of its hex digits (the 12 the
    /// listing prints will do), `sha256:` optional.
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// The context as one JSON object.
    #[arg(long, conflicts_with = "chat")]
    json: bool,
    /// The request as chat-completions messages (a JSON array).
    #[arg(long)]
    chat: bool,
}

/// Runs `agentlog asf`.
pub fn run(a: Args, out: &mut Out) -> Res<u8> {
    match a.cmd {
        Cmd::Check(c) => check(c, out),
        Cmd::Context(c) => context(c, out),
        Cmd::Convert(c) => crate::asf_convert::run(c, out),
    }
}

fn read(path: &PathBuf) -> Res<Vec<u8>> {
    std::fs::read(path).map_err(|e| Fail::Fatal(format!("{}: {e}", path.display())))
}

/// The files `asf check` reads: each FILE, and each directory's own ASF
/// session files (`agentlog::asf::session_files`); a directory without one
/// is reported (nothing found, status 1).
fn check_files(given: &[PathBuf], status: &mut Status) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in given {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        match agentlog::asf::session_files(path) {
            Some(found) => files.extend(found),
            None => {
                crate::out::error(&format!(
                    "{}: no ASF session file here (a *.jsonl file whose first line is an ASF header)",
                    path.display()
                ));
                status.raise(Status::PROBLEMS);
            }
        }
    }
    files
}

fn check(a: CheckArgs, out: &mut Out) -> Res<u8> {
    let mut status = Status::OK;
    let (mut checked, mut problems) = (0u64, 0u64);
    for path in &check_files(&a.files, &mut status) {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                crate::out::error(&format!("{}: {e}", path.display()));
                status.raise(Status::FATAL);
                continue;
            }
        };
        let rows: Vec<(usize, &str, String)> = match Session::read(&bytes) {
            Err(e) => {
                // Not a session, or a format this reader does not name: the
                // file cannot be read at all.
                status.raise(Status::FATAL);
                vec![(1, "refused", e.to_string())]
            }
            Ok(s) => if a.no_request_hashes {
                s.verify_entries()
            } else {
                s.verify()
            }
            .into_iter()
            .map(|p| (p.line, p.kind.code(), p.kind.to_string()))
            .collect(),
        };
        checked += 1;
        problems += rows.len() as u64;
        if !rows.is_empty() {
            status.raise(Status::PROBLEMS);
        }
        for (line, code, detail) in rows {
            if a.json {
                out.json_line(
                    &Obj::new()
                        .put("path", path_str(path))
                        .put("line", OwnedValue::int(line as i64))
                        .put("problem", code)
                        .put("detail", detail)
                        .done(),
                )?;
            } else {
                out.line(&format!(
                    "{}:{line}: {code}: {}",
                    path.display(),
                    crate::out::one_line(&detail)
                ))?;
            }
        }
    }
    if !a.json && checked > 0 {
        let verdict = match problems {
            0 => "no problems".to_owned(),
            n => crate::out::plural(n, "problem", "problems"),
        };
        out.line(&format!(
            "checked {}: {verdict}{}",
            crate::out::plural(checked, "ASF session file", "ASF session files"),
            if a.no_request_hashes {
                " (request hashes not compared)"
            } else {
                ""
            }
        ))?;
    }
    Ok(status.code())
}

fn context(a: ContextArgs, out: &mut Out) -> Res<u8> {
    let bytes = read(&a.file)?;
    let s =
        Session::read(&bytes).map_err(|e| Fail::Problem(format!("{}: {e}", a.file.display())))?;
    let leaf = match &a.leaf {
        // Whole, or a unique prefix of the hex digits (the listing prints
        // twelve), with or without `sha256:`.
        Some(id) => {
            let ids: Vec<&str> = s.entries().iter().map(|e| e.id.as_str()).collect();
            let place = a.file.display().to_string();
            let given = if id.contains(':') {
                id.clone()
            } else {
                format!("sha256:{id}")
            };
            crate::ids::by_prefix(&given, ids.iter().copied(), "entry", &place)?.to_owned()
        }
        None => s
            .leaf()
            .map(|e| e.id.clone())
            .ok_or_else(|| Fail::Problem(format!("{}: the file has no entry", a.file.display())))?,
    };
    let ctx = s
        .context(Some(&leaf))
        .map_err(|e| Fail::Problem(format!("{}: {e}", a.file.display())))?;
    if a.chat {
        out.json_pretty(&OwnedValue::Array(ctx.chat_messages()))?;
    } else if a.json {
        let hash = ctx
            .request_hash()
            .map_err(|e| Fail::Problem(format!("{}: {e}", a.file.display())))?;
        let mut v = Obj::new()
            .put("leaf", leaf.as_str())
            .put("request_hash", hash)
            .done();
        if let (Some(m), OwnedValue::Object(c)) = (v.as_object_mut(), ctx.to_json()) {
            m.entries_mut().extend(c.entries().iter().cloned());
        }
        out.json_line(&v)?;
    } else {
        plain(&ctx, &leaf, out)?;
    }
    Ok(0)
}

fn plain(ctx: &Context, leaf: &str, out: &mut Out) -> Res<()> {
    let st = &ctx.settings;
    out.line(&format!("leaf          {leaf}"))?;
    if let Ok(h) = ctx.request_hash() {
        out.line(&format!("request_hash  {h}"))?;
    }
    out.line(&format!(
        "model         {}",
        st.model.as_deref().unwrap_or("-")
    ))?;
    let instr = st.instructions.as_deref().unwrap_or("");
    out.line(&format!("instructions  {} chars", instr.chars().count()))?;
    let tools: Vec<&str> = st
        .tools
        .iter()
        .map(|t| t.get("name").and_then(OwnedValue::as_str).unwrap_or("?"))
        .collect();
    out.line(&format!(
        "tools         {}",
        if tools.is_empty() {
            "-".into()
        } else {
            tools.join(", ")
        }
    ))?;
    out.line(&format!("items         {}", ctx.items.len()))?;
    for (item, entry) in ctx.items.iter().zip(&ctx.item_entries) {
        let ty = item.get("type").and_then(OwnedValue::as_str).unwrap_or("?");
        let role = item.get("role").and_then(OwnedValue::as_str).unwrap_or("");
        let label = if role.is_empty() {
            ty.to_owned()
        } else {
            format!("{ty}/{role}")
        };
        let short = entry.get(7..19).unwrap_or(entry);
        out.line(&format!("  {short}  {label}"))?;
    }
    Ok(())
}
