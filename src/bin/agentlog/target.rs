//! What a PATH argument is, and walking what it holds.
//!
//! A PATH is told apart by itself:
//!
//! 1. a directory the OpenHands reader takes for a conversation (its
//!    `base_state.json` is OpenHands' state, or its `events/` has an event
//!    file), or a file of one (`base_state.json`, `meta.json`, an event
//!    file): one OpenHands conversation;
//! 2. a directory with the marks of an OC Chat sessions root: a
//!    `.oc_chat_clean_exit` marker, an `archive/`, `legacy/` or `Chat_logs/`
//!    directory, or a first subdirectory holding a `*_meta.json` file (the
//!    subdirectories are looked at until one holds a `*_meta.json`, or an
//!    OpenHands `base_state.json` or `events/`, whichever comes first): an
//!    OC Chat store;
//! 3. any other directory: an OpenHands store, searched with the reader's
//!    discovery (possibly holding no conversation at all).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use agentlog::ReadAhead;
use agentlog::json::{Document, Parser};
use agentlog::occhat::{ARCHIVE_DIR_NAME, LEGACY_DIR_NAME};
use agentlog::openhands::{
    self, Conversation, EventsListing, Parsed, ReadError, Reader, discover_listed, discover_with,
    is_conversation_dir,
};

use crate::out::{Fail, Res, Status, warn};
use crate::progress::Progress;

/// What a PATH holds.
pub enum Target {
    /// OpenHands conversations (top-level ones; sub-agents are under them).
    OpenHands {
        /// The conversation directories, sorted.
        dirs: Vec<PathBuf>,
        /// Directories of the walk that could not be listed.
        unreadable: Vec<ReadError>,
        /// Beside each directory, its `events/` as discovery listed it,
        /// for the read of a one-pass command to take
        /// ([`Reader::prime_events`]); empty unless the PATH was resolved
        /// with [`resolve_listed`].
        events: Vec<Option<EventsListing>>,
    },
    /// An OC Chat sessions root.
    OcChat {
        /// The root.
        root: PathBuf,
    },
    /// Agent Session Format files: the PATH itself, or a directory's own
    /// ASF `*.jsonl` files (see `asf_files`), sorted.
    Asf {
        /// The files.
        files: Vec<PathBuf>,
    },
}

/// Whether `dir` looks like an OC Chat sessions root (see the module docs):
/// [`agentlog::occhat::is_sessions_dir`].
pub fn is_occhat_root(dir: &Path) -> bool {
    agentlog::occhat::is_sessions_dir(dir)
}

/// The PATH arguments of the commands that take any number of stores
/// (none: the default store, [`crate::find::paths_or_default`]).
#[derive(clap::Args, Debug)]
pub struct Paths {
    /// Stores, conversation directories or OC Chat sessions directories
    /// (default: $AGENTLOG_STORE, else ~/.openhands/conversations).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

impl Paths {
    /// Puts the default store in when no PATH was given.
    pub fn or_default(&mut self) -> Res<()> {
        self.paths = crate::find::paths_or_default(&self.paths)?;
        Ok(())
    }
}

/// The loop every multi-PATH command runs: every PATH is [`resolve`]d
/// first (a PATH that cannot be read at all is reported, one line on
/// standard error, and raises `status` to [`Status::FATAL`]; one under
/// which nothing is found is reported as [`nothing_found`] says and raises
/// it to [`Status::PROBLEMS`]); conversations named by more than one PATH
/// (a store and a conversation inside it) are kept once
/// ([`drop_overlaps`]). Then each target is handed, in the PATHs' order,
/// to `each` with one progress bar over the OpenHands conversations of all
/// of them (`what` names the unit). Returns how many PATHs had something;
/// an error of `each` (a closed pipe) ends the loop.
pub fn for_each_target(
    paths: &[PathBuf],
    status: &mut Status,
    each: impl FnMut(&Path, Target, &mut Status, &Progress) -> Res<()>,
) -> Res<usize> {
    for_each_target_how(paths, ReadAhead::default(), false, status, each)
}

/// [`for_each_target`] resolving each PATH with [`resolve_listed`] and
/// `read_ahead`: for a command that reads every conversation once.
pub fn for_each_target_listed(
    paths: &[PathBuf],
    read_ahead: ReadAhead,
    status: &mut Status,
    each: impl FnMut(&Path, Target, &mut Status, &Progress) -> Res<()>,
) -> Res<usize> {
    for_each_target_how(paths, read_ahead, true, status, each)
}

/// [`for_each_target`] with `read_ahead` listing a store's directories
/// ahead of its discovery ([`resolve_with`]).
pub fn for_each_target_with(
    paths: &[PathBuf],
    read_ahead: ReadAhead,
    status: &mut Status,
    each: impl FnMut(&Path, Target, &mut Status, &Progress) -> Res<()>,
) -> Res<usize> {
    for_each_target_how(paths, read_ahead, false, status, each)
}

/// [`for_each_target_with`], keeping discovery's listings when `listed`.
fn for_each_target_how(
    paths: &[PathBuf],
    read_ahead: ReadAhead,
    listed: bool,
    status: &mut Status,
    mut each: impl FnMut(&Path, Target, &mut Status, &Progress) -> Res<()>,
) -> Res<usize> {
    let mut targets = Vec::with_capacity(paths.len());
    for path in paths {
        match resolve_how(path, read_ahead, listed) {
            Err(e) => {
                crate::out::error(&e);
                status.raise(Status::FATAL);
            }
            Ok(target) => {
                let nested = nested_occhat(path, &target);
                if !nested.is_empty()
                    && matches!(&target, Target::OpenHands { dirs, unreadable, .. }
                        if dirs.is_empty() && unreadable.is_empty())
                {
                    // Only OC Chat stores under it: nothing else to say.
                } else {
                    match nothing_found(path, &target) {
                        Some(msg) => {
                            crate::out::error(&msg);
                            status.raise(Status::PROBLEMS);
                        }
                        None => targets.push((path, target)),
                    }
                }
                for root in nested {
                    targets.push((path, Target::OcChat { root }));
                }
            }
        }
    }
    if targets.len() > 1 {
        drop_overlaps(&mut targets);
    }
    let total: usize = targets
        .iter()
        .map(|(_, t)| match t {
            Target::OpenHands { dirs, .. } => dirs.len(),
            _ => 0,
        })
        .sum();
    let progress = Progress::new(total as u64, "conversations");
    let resolved = targets.len();
    for (path, target) in targets {
        each(path, target, status, &progress)?;
    }
    progress.finish();
    Ok(resolved)
}

/// How deep under a PATH OC Chat sessions directories are looked for.
const OCCHAT_DEPTH: usize = 6;

/// The OC Chat sessions directories under a PATH that is neither a
/// conversation nor an OC Chat store (a folder holding stores, as the
/// OpenHands discovery finds nested stores), sorted: the directories to
/// [`OCCHAT_DEPTH`] levels down, not through symbolic links, not into the
/// conversations found (nor their `events/`, `subagents/`), nor into an OC
/// Chat store found, nor version-control directories.
fn nested_occhat(path: &Path, target: &Target) -> Vec<PathBuf> {
    let Target::OpenHands { dirs, .. } = target else {
        return Vec::new();
    };
    if !path.is_dir() || is_conversation_dir(path) {
        return Vec::new();
    }
    let skip: HashSet<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let mut found = Vec::new();
    let mut stack = vec![(path.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name();
            if matches!(
                name.to_str(),
                Some(".git" | ".hg" | ".svn" | "node_modules")
            ) {
                continue;
            }
            let sub = e.path();
            // A conversation (the discovery's, or one it did not take, as
            // a link's target): never an OC Chat store, nor walked into.
            if skip.contains(sub.as_path()) || is_conversation_dir(&sub) {
                continue;
            }
            if is_occhat_root(&sub) {
                found.push(sub);
            } else if depth + 1 < OCCHAT_DEPTH {
                stack.push((sub, depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// Removes what more than one PATH names: an OpenHands conversation listed
/// again, or under another one listed (a sub-agent's directory), an OC
/// Chat root or an ASF file given twice (all compared as canonical paths).
fn drop_overlaps(targets: &mut [(&PathBuf, Target)]) {
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let all: HashSet<PathBuf> = targets
        .iter()
        .flat_map(|(_, t)| match t {
            Target::OpenHands { dirs, .. } => dirs.iter().map(|d| canon(d)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for (_, t) in targets.iter_mut() {
        match t {
            Target::OpenHands { dirs, events, .. } => {
                let keep: Vec<bool> = dirs
                    .iter()
                    .map(|d| {
                        let c = canon(d);
                        let nested = c.ancestors().skip(1).any(|a| all.contains(a));
                        !nested && seen.insert(c)
                    })
                    .collect();
                let mut k = keep.iter();
                dirs.retain(|_| k.next().copied().unwrap_or(false));
                // The listings stay beside their directories.
                let mut k = keep.iter();
                events.retain(|_| k.next().copied().unwrap_or(false));
            }
            Target::OcChat { root } => {
                if !seen.insert(canon(root)) {
                    // Given twice: the second one holds nothing new.
                    *t = Target::OpenHands {
                        dirs: Vec::new(),
                        unreadable: Vec::new(),
                        events: Vec::new(),
                    };
                }
            }
            Target::Asf { files } => files.retain(|f| seen.insert(canon(f))),
        }
    }
}

/// Warns of each directory of a store's walk that could not be listed,
/// and so was skipped.
pub fn warn_skipped<E: std::fmt::Display>(unreadable: &[E]) {
    for e in unreadable {
        warn(&format!("{e} (skipped)"));
    }
}

/// Refuses the Agent Session Format files a PATH of `export` named (the
/// first one named): `export` reads `what`.
pub fn refuse_asf(files: &[PathBuf], what: &str, status: &mut Status) {
    crate::out::error(&format!(
        "{}: Agent Session Format files; export reads {what}",
        files
            .first()
            .map_or_else(String::new, |f| f.display().to_string())
    ));
    status.raise(Status::FATAL);
}

/// The message for a PATH under which nothing of any format is found (an
/// OpenHands store without conversations, an OC Chat root without
/// sessions, a directory of neither), naming what it is when it is an OC
/// Chat store in the flat layout from before per-session directories
/// (OC Chat's `persistence.py`: `{name}.json` metas at the root,
/// `Chat_logs/`), which `occhat migrate` converts. `None` when something
/// is there (or could not be read, which is reported as such).
pub fn nothing_found(path: &Path, target: &Target) -> Option<String> {
    let empty = match target {
        Target::OpenHands {
            dirs, unreadable, ..
        } => dirs.is_empty() && unreadable.is_empty(),
        Target::OcChat { root } => !has_session(root),
        Target::Asf { files } => files.is_empty(),
    };
    if !empty {
        return None;
    }
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    };
    if let Some(what) = legacy_occhat(dir) {
        return Some(format!(
            "{}: an OC Chat store in the flat layout from before session directories ({what}); \
             convert it with `agentlog occhat --sessions-dir {} migrate` (--dry-run first)",
            path.display(),
            dir.display()
        ));
    }
    Some(format!(
        "no OpenHands conversations or OC Chat sessions under {}",
        path.display()
    ))
}

/// Whether an OC Chat root has a session directory: a directory (not
/// `archive/`, `legacy/` or `Chat_logs/`) holding a `*_meta.json` file.
/// Stops at the first one found, so a store with sessions costs a listing
/// or two.
fn has_session(root: &Path) -> bool {
    let Ok(rd) = fs::read_dir(root) else {
        // Unreadable: reported by the command that reads it.
        return true;
    };
    rd.flatten()
        .filter(|e| {
            let name = e.file_name();
            e.file_type().is_ok_and(|t| t.is_dir())
                && name != ARCHIVE_DIR_NAME
                && name != LEGACY_DIR_NAME
                && name != "Chat_logs"
        })
        .any(|e| {
            fs::read_dir(e.path()).is_ok_and(|rd| {
                rd.flatten()
                    .any(|f| f.file_name().to_string_lossy().ends_with("_meta.json"))
            })
        })
}

/// What marks `dir` as a flat-layout OC Chat store, if anything: a
/// `Chat_logs/` directory, or `{name}.json` files at the root that read as
/// OC Chat metas (a JSON object with a `session_name`).
pub fn legacy_occhat(dir: &Path) -> Option<String> {
    let metas = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    e.file_name().to_string_lossy().ends_with(".json")
                        && e.file_type().is_ok_and(|t| t.is_file())
                })
                .filter(|e| is_flat_meta(&e.path()))
                .count()
        })
        .unwrap_or(0);
    let chat_logs = dir.join("Chat_logs").is_dir();
    match (metas, chat_logs) {
        (0, false) => None,
        (0, true) => Some("Chat_logs/".to_owned()),
        (n, logs) => Some(format!(
            "{n} flat {}{}",
            if n == 1 { "meta" } else { "metas" },
            if logs { " and Chat_logs/" } else { "" }
        )),
    }
}

/// Whether the file reads as an OC Chat meta of the flat layout: a small
/// JSON object with a `session_name` member.
fn is_flat_meta(path: &Path) -> bool {
    const MAX: u64 = 1 << 20;
    if fs::metadata(path).map_or(true, |m| m.len() > MAX) {
        return false;
    }
    let Ok(bytes) = fs::read(path) else {
        return false;
    };
    Parser::new()
        .parse(&bytes)
        .is_ok_and(|doc| doc.root().get("session_name").is_some())
}

/// The PATH's target when it is not OpenHands (ASF files, an OC Chat
/// root); `None` for a path [`resolve`] would walk as an OpenHands store,
/// told without walking it. The error is [`resolve`]'s.
pub fn resolve_other(path: &Path) -> Result<Option<Target>, String> {
    let meta = fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(files) = crate::asf_files::files(path) {
        return Ok(Some(Target::Asf { files }));
    }
    if meta.is_dir() {
        // Fail early, with the operating system's reason, on a directory
        // that cannot be listed.
        fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !is_conversation_dir(path) && is_occhat_root(path) {
            return Ok(Some(Target::OcChat {
                root: path.to_path_buf(),
            }));
        }
    }
    Ok(None)
}

/// Resolves a PATH argument (see the module docs). The error, one line
/// naming the path, is for a PATH that cannot be read at all; directories
/// under it that cannot be listed are in [`Target::OpenHands`].
pub fn resolve(path: &Path) -> Result<Target, String> {
    resolve_with(path, ReadAhead::default())
}

/// [`resolve`] with `read_ahead` listing a store's directories ahead of
/// its discovery.
pub fn resolve_with(path: &Path, read_ahead: ReadAhead) -> Result<Target, String> {
    resolve_how(path, read_ahead, false)
}

/// [`resolve`], keeping beside each conversation directory its `events/`
/// as discovery listed it ([`discover_listed`]), for a command that reads
/// each conversation once and keeps no record of what it saw: its reads
/// take those listings instead of listing the directories again.
pub fn resolve_listed(path: &Path) -> Result<Target, String> {
    resolve_how(path, ReadAhead::default(), true)
}

/// [`resolve_with`], with discovery's listings when `listed`.
fn resolve_how(path: &Path, read_ahead: ReadAhead, listed: bool) -> Result<Target, String> {
    if let Some(target) = resolve_other(path)? {
        return Ok(target);
    }
    let (found, events) = if listed {
        let l = discover_listed(path, read_ahead).map_err(|e| e.to_string())?;
        (l.discovery, l.events)
    } else {
        let d = discover_with(path, read_ahead).map_err(|e| e.to_string())?;
        (d, Vec::new())
    };
    Ok(Target::OpenHands {
        dirs: found.conversations,
        unreadable: found.unreadable,
        events,
    })
}

/// Reads the one conversation a PATH names: a conversation directory or a
/// file of one, or a store holding exactly one conversation.
pub fn one_conversation(path: &Path, reader: &mut Reader) -> Res<Conversation> {
    let meta = fs::metadata(path).map_err(|e| Fail::Fatal(format!("{}: {e}", path.display())))?;
    if meta.is_dir() && !is_conversation_dir(path) && is_occhat_root(path) {
        return Err(Fail::Fatal(format!(
            "{}: an OC Chat sessions directory, not an OpenHands conversation (see `agentlog occhat --help`)",
            path.display()
        )));
    }
    match reader.read(path) {
        Ok(c) => Ok(c),
        Err(ReadError::NoConversation { .. }) => {
            let dirs = openhands::find_sessions(path).map_err(|e| Fail::Fatal(e.to_string()))?;
            match dirs.as_slice() {
                [one] => reader.read(one).map_err(|e| Fail::Fatal(e.to_string())),
                [] => Err(Fail::Problem(
                    legacy_occhat(path)
                        .map(|what| {
                            format!(
                                "{}: an OC Chat store in the flat layout ({what}), not an \
                                 OpenHands conversation; see `agentlog occhat migrate --help`",
                                path.display()
                            )
                        })
                        .unwrap_or_else(|| {
                            format!("no OpenHands conversation under {}", path.display())
                        }),
                )),
                many => Err(Fail::Fatal(format!(
                    "{}: holds {} conversations; name one of them (agentlog ls {})",
                    path.display(),
                    many.len(),
                    path.display()
                ))),
            }
        }
        Err(e) => Err(Fail::Fatal(e.to_string())),
    }
}

/// The deepest nesting of sub-agents followed.
pub const MAX_SUBAGENT_DEPTH: usize = 64;

/// Why [`walk`] has no conversation for a directory it met.
#[derive(Debug)]
pub enum Unread {
    /// The reader could not read it.
    Read(ReadError),
    /// A sub-agent nested deeper than [`MAX_SUBAGENT_DEPTH`]: not read.
    TooDeep,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Read(e) => e.fmt(f),
            Unread::TooDeep => write!(
                f,
                "a sub-agent nested deeper than {MAX_SUBAGENT_DEPTH} levels: not read"
            ),
        }
    }
}

/// One conversation met by [`walk`].
pub struct Node<'a> {
    /// The conversation's directory.
    pub dir: &'a Path,
    /// The conversation, or why it could not be read.
    pub conv: Result<&'a Conversation, Unread>,
    /// The ID of the conversation it is a sub-agent of.
    pub parent: Option<&'a str>,
    /// Its own ID as 32 hex digits: `base_state.json`'s `id`, else
    /// `meta.json`'s, else the directory's name (also when it could not be
    /// read).
    pub id: &'a str,
}

/// What a thread keeps from one conversation to the next: a reader, a
/// conversation to read into, and parsers.
#[derive(Default)]
pub struct Worker {
    /// The reader.
    pub reader: Reader,
    /// The conversation read into.
    pub conv: Conversation,
    /// A parser for the conversations' IDs ([`walk`]).
    pub ids: Parser,
    /// Parsers for the caller.
    pub parsers: (Parser, Parser),
}

/// Reads the conversation at `top` and every sub-agent's conversation under
/// it (depth first, sub-agents in name order), one at a time into `conv`,
/// calling `visit` on each. A directory met twice (a link loop) is warned
/// about and not followed; a sub-agent nested deeper than
/// [`MAX_SUBAGENT_DEPTH`] is not read, and handed to `visit` as
/// [`Unread::TooDeep`].
pub fn walk(
    reader: &mut Reader,
    conv: &mut Conversation,
    parser: &mut Parser,
    top: &Path,
    visit: impl FnMut(Node<'_>) -> Res<()>,
) -> Res<()> {
    walk_with(reader, conv, parser, top, |_, _| {}, visit)
}

/// The `id` member of a parsed state or meta, as 32 hex digits.
fn id_of(doc: &Document<'_>) -> Option<String> {
    doc.root()
        .get("id")
        .and_then(|v| v.as_str())
        .map(openhands::hex_id)
}

/// Like [`walk`], handing `on_doc` each file of a conversation that parses
/// as a JSON object while the reader has it parsed (the state, the meta,
/// each event: [`Reader::read_into_with`]), before `visit` gets the
/// conversation: members beyond the envelope without a second parse. The
/// conversation's ID is taken the same way.
pub fn walk_with(
    reader: &mut Reader,
    conv: &mut Conversation,
    _parser: &mut Parser,
    top: &Path,
    mut on_doc: impl FnMut(Parsed, &Document<'_>),
    mut visit: impl FnMut(Node<'_>) -> Res<()>,
) -> Res<()> {
    // Canonical paths of the directories read, to read each once: the
    // top's is taken only when it has sub-agents to tell apart from it
    // (resolving a path costs a system call per component, and most
    // conversations have none).
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut top_seen = false;
    // (dir, parent id, depth)
    let mut stack: Vec<(PathBuf, Option<String>, usize)> = vec![(top.to_path_buf(), None, 0)];
    while let Some((dir, parent, depth)) = stack.pop() {
        if depth > 0
            && !std::mem::replace(&mut top_seen, true)
            && let Ok(canon) = fs::canonicalize(top)
        {
            seen.insert(canon);
        }
        if depth > 0
            && let Ok(canon) = fs::canonicalize(&dir)
            && !seen.insert(canon)
        {
            warn(&format!(
                "{}: met twice (a link loop?), not followed",
                dir.display()
            ));
            continue;
        }
        // The conversation's ID, from the reader's own parse.
        let (mut state_id, mut meta_id) = (None, None);
        let read = reader.read_into_with(&dir, conv, |p, doc| {
            match p {
                Parsed::State => state_id = id_of(doc),
                Parsed::Meta => meta_id = id_of(doc),
                _ => {}
            }
            on_doc(p, doc);
        });
        match read {
            Ok(()) => {
                for name in conv.subagent_loops() {
                    warn(&format!(
                        "{}: met twice (a link loop?), not followed",
                        dir.join(agentlog::openhands::DIR_SUBAGENTS)
                            .join(name)
                            .display()
                    ));
                }
                let id = state_id
                    .or(meta_id)
                    .unwrap_or_else(|| conv.name().to_owned());
                let subs: Vec<PathBuf> = conv.subagent_dirs().collect();
                visit(Node {
                    dir: &dir,
                    conv: Ok(conv),
                    parent: parent.as_deref(),
                    id: &id,
                })?;
                if depth >= MAX_SUBAGENT_DEPTH {
                    for s in &subs {
                        let name = s.file_name().map(|n| n.to_string_lossy().into_owned());
                        visit(Node {
                            dir: s,
                            conv: Err(Unread::TooDeep),
                            parent: Some(&id),
                            id: name.as_deref().unwrap_or_default(),
                        })?;
                    }
                    continue;
                }
                for s in subs.into_iter().rev() {
                    stack.push((s, Some(id.clone()), depth + 1));
                }
            }
            Err(e) => {
                let id = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                visit(Node {
                    dir: &dir,
                    conv: Err(Unread::Read(e)),
                    parent: parent.as_deref(),
                    id: &id,
                })?;
            }
        }
    }
    Ok(())
}

/// How far a command's scan reads ahead of its readers (`--io-depth`).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct IoDepth {
    /// Read N conversations ahead of the parsers on I/O threads, so that a
    /// store not in the page cache is read with many requests in flight
    /// (network file systems may want more); 0: no read-ahead.
    #[arg(long = "io-depth", value_name = "N", default_value_t = agentlog::readahead::DEFAULT_DEPTH)]
    pub io_depth: usize,
}

impl IoDepth {
    /// The read-ahead it asks for.
    pub fn read_ahead(self) -> ReadAhead {
        ReadAhead::new(self.io_depth)
    }
}

/// How many conversations are handed to the thread pool at once: results
/// are emitted in order after each batch, so output starts early and memory
/// stays bounded whatever the store's size.
const BATCH: usize = 128;

/// Runs `work` on every directory in parallel (each job with a
/// [`Worker`], reused from job to job), and hands the results to `emit` in
/// the directories' order, [`BATCH`] directories at a time, with
/// `read_ahead` reading the next directories ahead of the jobs.
pub fn par_ordered<T, W, E>(
    dirs: &[PathBuf],
    progress: Option<&Progress>,
    read_ahead: ReadAhead,
    work: W,
    emit: E,
) -> Res<()>
where
    T: Send,
    W: Fn(&mut Worker, &Path) -> T + Sync,
    E: FnMut(T) -> Res<()>,
{
    par_ordered_primed(dirs, Vec::new(), progress, read_ahead, work, emit)
}

/// A directory of [`par_ordered_primed`], with the listing its job primes
/// its reader with (taken by that one job).
struct Primed<'a> {
    dir: &'a Path,
    events: std::sync::Mutex<Option<EventsListing>>,
}

impl AsRef<Path> for Primed<'_> {
    fn as_ref(&self) -> &Path {
        self.dir
    }
}

/// [`par_ordered`], each job's reader primed with its directory's `events/`
/// listing from `events` (beside `dirs`, as [`Target::OpenHands`] holds
/// them; empty or short: the rest list their directories) before `work`
/// runs ([`Reader::prime_events`]).
pub fn par_ordered_primed<T, W, E>(
    dirs: &[PathBuf],
    events: Vec<Option<EventsListing>>,
    progress: Option<&Progress>,
    read_ahead: ReadAhead,
    work: W,
    mut emit: E,
) -> Res<()>
where
    T: Send,
    W: Fn(&mut Worker, &Path) -> T + Sync,
    E: FnMut(T) -> Res<()>,
{
    let mut events = events.into_iter();
    let inputs: Vec<Primed<'_>> = dirs
        .iter()
        .map(|d| Primed {
            dir: d,
            events: std::sync::Mutex::new(events.next().flatten()),
        })
        .collect();
    agentlog::parallel::for_each_ordered_ahead(
        &inputs,
        BATCH,
        read_ahead,
        Worker::default,
        |worker, input| {
            let listed = input.events.lock().map(|mut l| l.take()).unwrap_or(None);
            if let Some(listed) = listed {
                worker.reader.prime_events(input.dir, listed);
            }
            let t = work(worker, input.dir);
            if let Some(p) = progress {
                p.inc(1);
            }
            t
        },
        &mut emit,
    )
}
