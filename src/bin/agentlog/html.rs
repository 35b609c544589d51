//! `agentlog html`: a self-contained HTML page of one conversation, to
//! read in a browser.
//!
//! - an OpenHands conversation (a directory, a file of one, or a store
//!   holding exactly one): the transcript of
//!   [`agentlog::openhands::html`] — what the model saw, tool calls and
//!   results collapsible, condensations and sub-agents marked, token usage
//!   and cost per response;
//! - an OC Chat session (its directory, its `*_meta.json`, or a name with
//!   `--sessions-dir`): OC Chat's HTML export
//!   ([`agentlog::occhat::render_html`], written by `SessionStore::export_html`).
//!
//! Both pages are in one theme, `--theme light` (the default) or `dark`
//! ([`agentlog::theme::Theme`]): the same colours whichever store the
//! page is of.
//!
//! The page goes to standard output, or to `-o FILE` as every output path is written
//! ([`agentlog::output`]: a regular file replaced atomically when complete,
//! a device or FIFO in place, through a symbolic link to its target, `-`
//! standard output). An OpenHands transcript is never written into the
//! conversation's own directory; an OC Chat export never over a record of
//! the store.

use std::fs;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use agentlog::occhat::{LoadError, SessionStore};
use agentlog::openhands::html::write_transcript_themed;
use agentlog::openhands::view::ViewOptions;
use agentlog::openhands::{Reader, is_conversation_dir};
use agentlog::output::OutputPath;
use agentlog::theme::Theme;

use crate::out::{Fail, Res, Status, warn};
use crate::target::{is_occhat_root, one_conversation};

const HELP: &str = "\
Examples:
  agentlog html ~/.openhands/conversations/<id> -o transcript.html
  agentlog html oc_chat/sessions/weekly-report -o report.html
  agentlog html --sessions-dir oc_chat/sessions weekly-report > report.html

The page loads nothing from the network: inline CSS, no script, images
embedded as data: URLs. It goes to standard output without -o; -o FILE: a
regular file is replaced when complete, a device or FIFO written in place,
- is standard output. Pages of both stores are in one theme: --theme light
(the default) or dark.

Status 1 also when a chat log or sub-agent could not be read (the page says
which).";

/// Write a self-contained HTML transcript of a conversation or OC Chat session.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    /// An OpenHands conversation directory (or a file of one, or its ID or
    /// a unique prefix of it in --store), an OC Chat session directory (or
    /// its *_meta.json); with --sessions-dir, a session's name.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    store: crate::find::StoreArg,
    /// Where to write the page (default and `-`: standard output).
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    output: PathBuf,
    /// PATH names a session of this OC Chat sessions directory.
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// The colours of the page, the same for both stores.
    #[arg(long, value_name = "THEME", default_value = "light", value_parser = ["light", "dark"])]
    theme: String,
    /// OpenHands: show the branch whose head is the event with this ID.
    #[arg(long, value_name = "ID")]
    branch: Option<String>,
}

/// Runs the command.
pub fn run(args: Args) -> Res<u8> {
    if let Some(dir) = &args.sessions_dir {
        let store = SessionStore::locate(Some(dir));
        return occhat(&store, &args.path.to_string_lossy(), &args);
    }
    let found = crate::find::conversation(&args.path, &args.store)?;
    let path = &found;
    let meta = fs::metadata(path).map_err(|e| Fail::Fatal(format!("{}: {e}", path.display())))?;
    if let Some((root, name)) = occhat_session(path, meta.is_dir()) {
        return occhat(&SessionStore::locate(Some(&root)), &name, &args);
    }
    if meta.is_dir() && !is_conversation_dir(path) && is_occhat_root(path) {
        return Err(Fail::Fatal(format!(
            "{}: an OC Chat sessions directory; give one session's directory, or --sessions-dir {} NAME",
            path.display(),
            path.display()
        )));
    }
    openhands(path, &args)
}

/// The OC Chat session a PATH names, as (sessions root, name or meta
/// path): a `*_meta.json` file, or a directory (not an OpenHands
/// conversation) holding one.
fn occhat_session(path: &Path, is_dir: bool) -> Option<(PathBuf, String)> {
    let abs = fs::canonicalize(path).ok()?;
    if !is_dir {
        let name = abs.file_name()?.to_string_lossy();
        if !name.ends_with("_meta.json") {
            return None;
        }
        let root = abs.parent()?.parent()?.to_path_buf();
        return Some((root, abs.to_string_lossy().into_owned()));
    }
    if is_conversation_dir(&abs) {
        return None;
    }
    let holds_meta = fs::read_dir(&abs).ok()?.flatten().any(|e| {
        e.file_name().to_string_lossy().ends_with("_meta.json")
            && e.file_type().is_ok_and(|t| t.is_file())
    });
    if !holds_meta {
        return None;
    }
    let name = abs.file_name()?.to_string_lossy().into_owned();
    Some((abs.parent()?.to_path_buf(), name))
}

/// The theme `--theme` names.
fn theme(args: &Args) -> Theme {
    args.theme.parse().unwrap_or(Theme::Light)
}

/// Renders an OC Chat session with its HTML export.
fn occhat(store: &SessionStore, name: &str, args: &Args) -> Res<u8> {
    let session = store
        .load_session(name)
        .map_err(|e: LoadError| crate::occhat::load_error(store, e))?;
    store
        .export_html_themed(&session, Some(&args.output), theme(args))
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    if session.load_failed {
        warn(&format!(
            "{}: the newest chat log cannot be read; the page shows no messages",
            session
                .origin
                .as_ref()
                .map_or_else(|| name.to_owned(), |o| o.dir.display().to_string())
        ));
        return Ok(Status::PROBLEMS.code());
    }
    Ok(Status::OK.code())
}

/// Renders an OpenHands conversation's transcript.
fn openhands(path: &Path, args: &Args) -> Res<u8> {
    let conv = one_conversation(path, &mut Reader::new())?;
    if let Some(id) = &args.branch
        && !conv.events().any(|e| e.id() == Some(id.as_str()))
    {
        return Err(Fail::Problem(format!(
            "{}: no event with ID {id} to show the branch of",
            conv.dir().display()
        )));
    }
    let what = args.output.display().to_string();
    let target = OutputPath::classify(&args.output).map_err(|e| Fail::Fatal(e.to_string()))?;
    if target.under(conv.dir()).is_some() {
        return Err(Fail::Fatal(format!(
            "{what}: inside the conversation directory {}; the page is not written into the conversation it shows",
            conv.dir().display()
        )));
    }
    let out = target.open().map_err(|e| Fail::Fatal(e.to_string()))?;
    let mut w = BufWriter::with_capacity(1 << 18, out);
    let options = ViewOptions {
        version: None,
        head: args.branch.clone(),
    };
    let summary = write_transcript_themed(&conv, &options, theme(args), &mut w)
        .map_err(|e| Fail::write(e, &what))?;
    let out = w
        .into_inner()
        .map_err(|e| Fail::write(e.into_error(), &what))?;
    out.commit().map_err(|e| match e.io_error() {
        Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Fail::Pipe,
        _ => Fail::Fatal(e.to_string()),
    })?;
    for (dir, why) in &summary.unread {
        warn(&format!("{}: {why}", dir.display()));
    }
    Ok(if summary.unread.is_empty() {
        Status::OK.code()
    } else {
        Status::PROBLEMS.code()
    })
}
