//! `agentlog ls`: one line per conversation or session.
//!
//! JSON (`--json`), one object a line, members in this order:
//!
//! | key | OpenHands | OC Chat | ASF |
//! |---|---|---|---|
//! | `format` | `"openhands"` | `"occhat"` | `"asf"` |
//! | `path` | the conversation directory | the session directory | the session file |
//! | `id` | the conversation ID, 32 hex digits (`base_state.json`'s `id`, else `meta.json`'s, else the directory name) | the session name (its JSON text when the meta's `session_name` is not a string) | the header's `id` |
//! | `title` | `meta.json`'s `title`, else `null` | `null` | `null` |
//! | `model` | `base_state.json`'s `agent.llm.model`, else `null` | the meta's `model` (`"?"` when absent, as OC Chat lists it) | the `model` of the leaf's context (settings replayed), else `null` |
//! | `events` | the event files OpenHands reads (indexes 0, 1, 2… up to the first missing one), counted from the names alone | the chat log's messages; `null` when it cannot be read | the entries (the header not counted); `null` when the file is refused |
//! | `created` | `meta.json`'s `created_at`, else the first event's `timestamp`, as written | the meta's `created`, as written | the header's `created_at`, as written |
//! | `updated` | `meta.json`'s `updated_at`, else the last event's `timestamp`, as written | the meta file's modification time, local, `YYYY-MM-DD HH:MM` | the last entry's `ts`, as written |
//! | `subagents` | the sub-agents' conversations under `subagents/`, nested ones included | `null` | `null` (subsessions are files of their own) |
//!
//! Values that are unknown are `null`. Only the files named above are read:
//! no event file but the first and the last one is opened. An ASF session
//! file (a PATH as `asf_files.rs` tells it) is read whole.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use agentlog::json::{OwnedValue, Parser, Style};
use agentlog::occhat::SessionStore;
use agentlog::openhands::{
    self, DIR_EVENTS, DIR_SUBAGENTS, EventFiles, FILE_BASE_STATE, FILE_META, NamePattern,
    is_conversation_dir,
};
use agentlog::source;
use rayon::prelude::*;

use crate::ids::Shortener;
use crate::out::{Fail, Obj, Out, Res, Status, one_line, path_str, warn};
use crate::table::Col;
use crate::target::{MAX_SUBAGENT_DEPTH, Paths, Target, for_each_target, par_ordered};
use crate::when::minute;

const HELP: &str = "\
Examples:
  agentlog ls ~/.openhands/conversations
  agentlog ls --json ~/.openhands/conversations oc_chat/sessions | jq .id
  agentlog ls --sort updated -r --since 2026-01-01 --model claude
  agentlog ls          (the default store: $AGENTLOG_STORE, else ~/.openhands/conversations)

JSON lines have the keys format, path, id, title, model, events, created,
updated, subagents (null when unknown).

With --checkpoint FILE (one OpenHands PATH): only the conversations that
changed since FILE are listed (new ones, new events, a new state or meta, a
rewritten history; a sub-agent's change lists its top-level conversation;
everything when FILE does not exist yet), then FILE is replaced by the new
checkpoint once the listing is flushed and synced. A removed conversation
is not listed (`export --checkpoint` prints a `removed` record for it). A
checkpoint file is one consumer's: give each command its own.

Status 1 also when a listed conversation's base_state.json, meta.json or
events/ could not be read, or events/ misses an index that later files have
(each reported on standard error).";

/// List the conversations (OpenHands) or sessions (OC Chat) under each PATH.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(flatten)]
    paths: Paths,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
    /// List only the conversations changed since the checkpoint FILE
    /// (every one when there is none yet), then save the new checkpoint
    /// there once the listing is written out.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// With --checkpoint: stat every event file already handed out and
    /// hand a conversation out again (as a rewrite) when any of them
    /// changed in place (an earlier event file edited to the same size and
    /// modification time); costs one stat per event file, and a listing
    /// of each conversation's `events/`.
    #[arg(long, requires = "checkpoint")]
    verify_files: bool,
    /// Sort by this column (unknown values last) instead of by path.
    #[arg(long, value_name = "KEY", value_parser = SORT_KEYS)]
    sort: Option<String>,
    /// Reverse the order (newest, most events or last name first).
    #[arg(short, long)]
    reverse: bool,
    /// Only what was updated (else created) at or after T, local time:
    /// YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], or RFC 3339 with an offset.
    #[arg(long, value_name = "T")]
    since: Option<String>,
    /// Only the conversations whose model contains M (ASCII case ignored).
    #[arg(long, value_name = "M")]
    model: Option<String>,
}

/// The columns `--sort` takes.
const SORT_KEYS: [&str; 8] = [
    "path",
    "id",
    "title",
    "model",
    "events",
    "subagents",
    "created",
    "updated",
];

/// What `--sort`, `--since` and `--model` ask of the rows.
struct Select {
    tz: agentlog::occhat::TimeZone,
    since: Option<jiff::civil::DateTime>,
    model: Option<String>,
}

impl Select {
    fn of(args: &Args) -> Res<Select> {
        let tz = agentlog::occhat::TimeZone::local();
        let since = match &args.since {
            None => None,
            Some(t) => Some(crate::when::local(t, &tz).ok_or_else(|| {
                Fail::Fatal(format!(
                    "--since {t}: not a date or time (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339)"
                ))
            })?),
        };
        Ok(Select {
            tz,
            since,
            model: args.model.as_ref().map(|m| m.to_ascii_lowercase()),
        })
    }

    /// Whether the row is listed.
    fn keeps(&self, row: &Row) -> bool {
        if let Some(m) = &self.model
            && !row
                .model
                .as_deref()
                .is_some_and(|rm| rm.to_ascii_lowercase().contains(m.as_str()))
        {
            return false;
        }
        if let Some(since) = self.since {
            let when = row
                .updated
                .as_deref()
                .or(row.created.as_deref())
                .and_then(|t| crate::when::local(t, &self.tz));
            if when.is_none_or(|w| w < since) {
                return false;
            }
        }
        true
    }

    /// Sorts `rows` by `key` (stable: rows equal by it keep the path
    /// order), unknown values last either way.
    fn sort(&self, rows: &mut [Row], key: &str, reverse: bool) {
        use std::cmp::Ordering;
        let time = |t: &Option<String>| t.as_deref().and_then(|t| crate::when::local(t, &self.tz));
        let cmp = |a: &Row, b: &Row| -> Ordering {
            fn last<T: Ord>(a: Option<T>, b: Option<T>, reverse: bool) -> Ordering {
                match (a, b) {
                    (Some(a), Some(b)) if reverse => b.cmp(&a),
                    (Some(a), Some(b)) => a.cmp(&b),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
            }
            match key {
                "id" => last(a.id.as_ref(), b.id.as_ref(), reverse),
                "title" => last(a.title.as_ref(), b.title.as_ref(), reverse),
                "model" => last(a.model.as_ref(), b.model.as_ref(), reverse),
                "events" => last(a.events, b.events, reverse),
                "subagents" => last(a.subagents, b.subagents, reverse),
                "created" => last(time(&a.created), time(&b.created), reverse),
                "updated" => last(time(&a.updated), time(&b.updated), reverse),
                _ => last(Some(&a.path), Some(&b.path), reverse),
            }
        };
        rows.sort_by(cmp);
    }
}

/// One line of the listing.
#[derive(Debug, Default)]
struct Row {
    format: &'static str,
    path: String,
    id: Option<String>,
    title: Option<String>,
    model: Option<String>,
    events: Option<u64>,
    created: Option<String>,
    updated: Option<String>,
    subagents: Option<u64>,
    /// What could not be read of the files the row is made from (reported
    /// on standard error, not part of the row).
    problems: Vec<String>,
}

impl Row {
    fn to_value(&self) -> OwnedValue {
        Obj::new()
            .put("format", self.format)
            .put("path", self.path.as_str())
            .str("id", self.id.as_deref())
            .str("title", self.title.as_deref())
            .str("model", self.model.as_deref())
            .uint("events", self.events)
            .str("created", self.created.as_deref())
            .str("updated", self.updated.as_deref())
            .uint("subagents", self.subagents)
            .done()
    }
}

/// Runs the command.
pub fn run(mut args: Args, out: &mut Out) -> Res<u8> {
    args.paths.or_default()?;
    let select = Select::of(&args)?;
    let sorted = args.sort.is_some() || args.reverse;
    let mut status = Status::OK;
    let mut problems = false;
    // Human output is aligned, and sorted output sorted, so their rows are
    // kept until the end.
    let mut rows: Vec<Row> = Vec::new();
    let mut emit = |mut row: Row| {
        for p in std::mem::take(&mut row.problems) {
            warn(&p);
            problems = true;
        }
        if !select.keeps(&row) {
            return Ok(());
        }
        if args.json && !sorted {
            return out.json_line(&row.to_value());
        }
        rows.push(row);
        Ok(())
    };
    let mut save = None;
    let paths: &[PathBuf] = match &args.checkpoint {
        Some(cp) => {
            let root = crate::since::one_store(&args.paths.paths, cp)?;
            let (dirs, unreadable, new) =
                crate::since::changed_conversations(root, cp, args.verify_files)?;
            crate::target::warn_skipped(&unreadable);
            par_ordered(
                &dirs,
                None,
                // Names and states only: nothing worth reading ahead.
                agentlog::ReadAhead::off(),
                |w, dir| openhands_row(&mut w.ids, dir),
                &mut emit,
            )?;
            save = Some((cp, new));
            &[]
        }
        None => &args.paths.paths,
    };
    for_each_target(paths, &mut status, |_, target, _, progress| match target {
        Target::OpenHands {
            dirs, unreadable, ..
        } => {
            crate::target::warn_skipped(&unreadable);
            par_ordered(
                &dirs,
                Some(progress),
                agentlog::ReadAhead::off(),
                |w, dir| openhands_row(&mut w.ids, dir),
                &mut emit,
            )
        }
        Target::OcChat { root } => {
            for row in occhat_rows(&root) {
                emit(row)?;
            }
            Ok(())
        }
        Target::Asf { files } => {
            for row in files.par_iter().map(|f| asf_row(f)).collect::<Vec<_>>() {
                emit(row)?;
            }
            Ok(())
        }
    })?;
    if sorted {
        let key = args.sort.as_deref().unwrap_or("path");
        select.sort(&mut rows, key, args.reverse);
    }
    if args.json {
        for row in &rows {
            out.json_line(&row.to_value())?;
        }
    } else {
        table(&rows, out)?;
    }
    if let Some((cp, new)) = save {
        crate::since::save_after(out, cp, new.as_ref())?;
    }
    if problems {
        status.raise(Status::PROBLEMS);
    }
    Ok(status.code())
}

/// The human listing: aligned columns ([`crate::table`]: display widths,
/// the widest column cut in the middle until the table fits the terminal,
/// every column kept), IDs shortened to a unique prefix (OpenHands and ASF
/// IDs; OC Chat names whole), times in one format ([`crate::when`]), the
/// path relative to the directory all rows share (a directory named by the
/// ID shown by the ID's prefix), a TITLE column last when a row has one.
/// `created` is in `--json` only.
fn table(rows: &[Row], out: &mut Out) -> Res<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let tz = agentlog::occhat::TimeZone::local();
    let short = Shortener::new(
        rows.iter()
            .filter(|r| r.format != "occhat")
            .filter_map(|r| r.id.as_deref()),
    );
    let base = common_dir(rows.iter().map(|r| Path::new(&r.path)));
    let text = |s: &Option<String>| s.as_deref().map_or_else(|| "-".into(), one_line);
    let count = |v: Option<u64>| v.map_or_else(|| "-".into(), group);
    let time = |t: &Option<String>| t.as_deref().map_or_else(|| "-".into(), |t| minute(t, &tz));
    let any_title = rows.iter().any(|r| r.title.is_some());
    let mut head = vec![
        "FORMAT",
        "ID",
        "EVENTS",
        "SUB",
        "UPDATED (local)",
        "MODEL",
        "PATH",
    ];
    let mut kinds = vec![
        Col::Fixed,
        Col::Text,
        Col::Number,
        Col::Number,
        Col::Fixed,
        Col::Text,
        Col::Text,
    ];
    if any_title {
        head.push("TITLE");
        kinds.push(Col::Text);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let id = match (&r.id, r.format) {
                (Some(id), "occhat") => one_line(id),
                (Some(id), _) => short.short(id).to_owned(),
                (None, _) => "-".into(),
            };
            let rel = Path::new(&r.path)
                .strip_prefix(&base)
                .ok()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(&r.path));
            // A directory named by the ID is shown by the ID's prefix.
            let rel = match (rel.file_name(), &r.id) {
                (Some(name), Some(full)) if r.format == "openhands" && name == full.as_str() => {
                    rel.with_file_name(short.short(full))
                }
                _ => rel.to_path_buf(),
            };
            let rel = rel.to_string_lossy().into_owned();
            let mut row = vec![
                r.format.to_owned(),
                id,
                count(r.events),
                count(r.subagents),
                time(&r.updated),
                text(&r.model),
                one_line(&rel),
            ];
            if any_title {
                row.push(text(&r.title));
            }
            row
        })
        .collect();
    for l in crate::table::lines(&head, &kinds, &cells, crate::brief::columns()) {
        out.line(&l)?;
    }
    Ok(())
}

/// The deepest directory every path is under (the parent of a lone path).
fn common_dir<'a>(paths: impl Iterator<Item = &'a Path>) -> std::path::PathBuf {
    let mut base: Option<std::path::PathBuf> = None;
    for p in paths {
        let parent = p.parent().unwrap_or(p);
        base = Some(match base {
            None => parent.to_path_buf(),
            Some(b) => {
                let mut b = b.as_path();
                while !parent.starts_with(b) {
                    match b.parent() {
                        Some(up) => b = up,
                        None => break,
                    }
                }
                b.to_path_buf()
            }
        });
    }
    base.unwrap_or_default()
}

/// `n` with thousands separated by commas.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Reads a small JSON file and hands its root to `f`.
fn with_json<T>(
    path: &Path,
    parser: &mut Parser,
    buf: &mut Vec<u8>,
    f: impl FnOnce(agentlog::json::Value<'_>) -> T,
) -> Option<T> {
    buf.clear();
    source::read_into(path, buf).ok()?;
    let doc = parser.parse(buf).ok()?;
    Some(f(doc.root()))
}

/// Like [`with_json`] for a file that should be there when it exists:
/// `Ok(None)` when it does not, the reason when it does not read as a JSON
/// object.
fn with_json_file<T>(
    path: &Path,
    parser: &mut Parser,
    buf: &mut Vec<u8>,
    f: impl FnOnce(agentlog::json::Value<'_>) -> T,
) -> Result<Option<T>, String> {
    buf.clear();
    match source::read_into(path, buf) {
        Ok(_) => {}
        Err(source::SourceError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    }
    let doc = parser
        .parse(buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let root = doc.root();
    if root.as_object().is_none() {
        return Err(format!(
            "{}: a JSON {} where an object was expected",
            path.display(),
            root.json_type().as_str()
        ));
    }
    Ok(Some(f(root)))
}

/// What [`with_json_file`] gave, its reason kept in `problems`.
fn kept<T>(r: Result<Option<T>, String>, problems: &mut Vec<String>) -> Option<T> {
    r.unwrap_or_else(|e| {
        problems.push(e);
        None
    })
}

fn str_member(v: agentlog::json::Value<'_>, key: &str) -> Option<String> {
    v.get(key).and_then(|v| v.as_str()).map(str::to_owned)
}

/// The row of one OpenHands conversation, from `base_state.json`,
/// `meta.json`, the names in `events/` and the first and last events.
fn openhands_row(parser: &mut Parser, dir: &Path) -> Row {
    let mut buf = Vec::new();
    let mut problems = Vec::new();
    let state = with_json_file(&dir.join(FILE_BASE_STATE), parser, &mut buf, |root| {
        let id = str_member(root, "id");
        let model = root
            .get("agent")
            .and_then(|a| a.get("llm"))
            .and_then(|l| l.get("model"))
            .and_then(|m| m.as_str())
            .map(str::to_owned);
        (id, model)
    });
    let (state_id, model) = kept(state, &mut problems).unwrap_or_default();
    let meta = with_json_file(&dir.join(FILE_META), parser, &mut buf, |root| {
        (
            str_member(root, "id"),
            str_member(root, "title"),
            str_member(root, "created_at"),
            str_member(root, "updated_at"),
        )
    });
    let (meta_id, title, created, updated) = kept(meta, &mut problems).unwrap_or_default();
    let events_dir = dir.join(DIR_EVENTS);
    let files = match EventFiles::scan(&events_dir, NamePattern::default()) {
        Ok(f) => Some(f),
        Err(e) => {
            problems.push(format!("{}: {e}", events_dir.display()));
            None
        }
    };
    let events = files.as_ref().map(|f| f.len() as u64);
    if let Some(f) = &files
        && let Some(missing) = f.gap()
    {
        let after = f
            .files()
            .filter(|f| f.status() == openhands::FileStatus::Gap)
            .count();
        problems.push(format!(
            "{}: no event file has index {missing}: {} after it not read, the {} \
             counted are those before (`agentlog check` lists the files)",
            events_dir.display(),
            crate::out::plural(after as u64, "event file", "event files"),
            crate::out::plural(missing, "event", "events"),
        ));
    }
    let mut ts = |name: &str| {
        with_json(&events_dir.join(name), parser, &mut buf, |root| {
            str_member(root, "timestamp")
        })
        .flatten()
    };
    let (mut first, mut last) = (None, None);
    if let Some(files) = &files
        && (created.is_none() || updated.is_none())
    {
        first = files.sequence().find_map(|f| ts(f.name()));
        last = files.sequence().rev().find_map(|f| ts(f.name()));
    }
    let id = state_id
        .or(meta_id)
        .map(|s| openhands::hex_id(&s))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()));
    Row {
        format: "openhands",
        path: path_str(dir),
        id,
        title,
        model,
        events,
        created: created.or(first),
        updated: updated.or(last),
        subagents: Some(count_subagents(dir)),
        problems,
    }
}

/// The sub-agents' conversations under `dir/subagents/`, nested ones
/// included (to [`MAX_SUBAGENT_DEPTH`]; a directory met twice through links
/// counts once).
fn count_subagents(dir: &Path) -> u64 {
    // The real paths met, from the conversation's own: taken when a
    // `subagents/` is there (resolving a path costs a system call per
    // component, and most conversations have none).
    let mut seen: Option<HashSet<std::path::PathBuf>> = None;
    let mut n = 0u64;
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        if depth >= MAX_SUBAGENT_DEPTH {
            continue;
        }
        let Ok(rd) = fs::read_dir(d.join(DIR_SUBAGENTS)) else {
            continue;
        };
        let seen = seen.get_or_insert_with(|| fs::canonicalize(dir).into_iter().collect());
        for e in rd.flatten() {
            let p = e.path();
            let new = fs::canonicalize(&p).is_ok_and(|c| seen.insert(c));
            if new && p.is_dir() && is_conversation_dir(&p) {
                n = n.saturating_add(1);
                stack.push((p, depth + 1));
            }
        }
    }
    n
}

/// A JSON value as text: a string as itself, anything else as its JSON.
pub fn text_of(v: &OwnedValue) -> String {
    match v.as_str() {
        Some(s) => s.to_owned(),
        None => v.to_string_styled(Style::COMPACT),
    }
}

/// The rows of an OC Chat store, in the listing's order.
/// One ASF session file: its header's `id` and `created_at`, the model of
/// its leaf's context, its entries, the last entry's `ts`.
fn asf_row(file: &Path) -> Row {
    let mut row = Row {
        format: "asf",
        path: path_str(file),
        ..Row::default()
    };
    let bytes = match crate::asf_files::read(file) {
        Ok(b) => b,
        Err(e) => {
            row.problems.push(e);
            return row;
        }
    };
    match agentlog::asf::Session::read(&bytes) {
        Err(e) => row.problems.push(format!("{}: {e}", file.display())),
        Ok(s) => {
            row.id = Some(s.header().id.clone());
            row.created = OwnedValue::parse(s.header_raw()).ok().and_then(|h| {
                h.get("created_at")
                    .and_then(OwnedValue::as_str)
                    .map(str::to_owned)
            });
            row.events = Some(s.entries().len() as u64);
            row.updated = s.entries().last().map(|e| e.ts.clone());
            row.model = s.context(None).ok().and_then(|c| c.settings.model);
        }
    }
    row
}

fn occhat_rows(root: &Path) -> Vec<Row> {
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    for s in &list.skipped {
        warn(&format!("{} (skipped)", s.error));
    }
    list.sessions
        .par_iter()
        .map(|e| {
            let session = store.load_session(&path_str(&e.filepath));
            let (events, created) = match &session {
                Ok(s) if !s.load_failed => (Some(s.messages.len() as u64), s.created.clone()),
                Ok(s) => (None, s.created.clone()),
                Err(_) => (None, None),
            };
            Row {
                format: "occhat",
                path: e
                    .filepath
                    .parent()
                    .map_or_else(|| path_str(&e.filepath), path_str),
                id: Some(text_of(&e.name)),
                title: None,
                model: Some(text_of(&e.model)),
                events,
                created,
                updated: Some(e.last_modified.clone()),
                subagents: None,
                problems: Vec::new(),
            }
        })
        .collect()
}
