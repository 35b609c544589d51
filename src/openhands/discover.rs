//! Finding conversation directories.
//!
//! A directory holds a conversation when its `base_state.json` is
//! OpenHands' state (a JSON object with a string `id` and an object
//! `agent`), or its `events/` has a file named like an event file. A
//! `base_state.json` that is there but cannot be told apart (empty, not
//! JSON: a torn write; over [`MAX_SIZE`](crate::MAX_SIZE); a file that
//! cannot be opened in a directory that can be listed) makes a
//! conversation too, so that the reader reports it rather than passing over
//! it; a `base_state.json` that is JSON but not OpenHands' state does not.
//! Conversations live in a store directory (`~/.openhands/conversations`,
//! the agent server's `workspace/conversations`, Agent Canvas's
//! `~/.openhands/agent-canvas/conversations`, an SDK caller's own), one
//! directory each; sub-agents' conversations nest under `subagents/`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::json::Parser;
use crate::readahead::ReadAhead;
use crate::source::dir::{Dir, DirEntryKind, ListBuf};
use crate::source::{self, SourceError};

use super::error::ReadError;
use super::event_files::{EventFiles, NamePattern, parse_event_name};
use super::listed::NameList;
use super::{DIR_EVENTS, DIR_SUBAGENTS, FILE_BASE_STATE, FILE_META};

/// Directories [`find_sessions`] never walks into: the parts of a
/// conversation, what the agent server and ACP agents keep beside them, and
/// version control.
pub(crate) const SKIPPED_DIRS: [&str; 13] = [
    "events",
    "subagents",
    "observations",
    "bash_events",
    "acp",
    "npm-cache",
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".jj",
    "_darcs",
    "CVS",
];

/// Whether a directory entry is a directory, following a symbolic link.
pub(crate) fn entry_is_dir(entry: &fs::DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if t.is_dir() => true,
        Ok(t) if t.is_symlink() => fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()),
        _ => false,
    }
}

/// Whether `bytes` are OpenHands' state: a JSON object with a string `id`
/// and an object `agent`.
pub(crate) fn is_state_bytes(parser: &mut Parser, bytes: &[u8]) -> bool {
    let Ok(doc) = parser.parse(bytes) else {
        return false;
    };
    let Some(obj) = doc.root().as_object() else {
        return false;
    };
    let [id, agent] = obj.get_many(["id", "agent"]);
    id.is_some_and(|v| v.as_str().is_some()) && agent.is_some_and(|v| v.as_object().is_some())
}

/// Whether `dir` holds a conversation: a `base_state.json` that is
/// OpenHands' state or cannot be told apart from a damaged one (see the
/// module docs), or an `events` directory with an event file in it.
pub fn is_conversation_dir(dir: impl AsRef<Path>) -> bool {
    is_conversation_dir_with(dir.as_ref(), &mut Parser::new(), &mut Vec::new())
}

pub(crate) fn is_conversation_dir_with(dir: &Path, parser: &mut Parser, buf: &mut Vec<u8>) -> bool {
    is_conversation_dir_at(None, dir, parser, buf)
}

/// [`is_conversation_dir_with`] of `dir`, the entry `name` of the open
/// directory `parent` when `at` is given: its `events/` is then opened
/// relative to `parent` (the kernel resolves two names, not the whole
/// path).
pub(crate) fn is_conversation_dir_at(
    at: Option<(&Dir, &OsStr)>,
    dir: &Path,
    parser: &mut Parser,
    buf: &mut Vec<u8>,
) -> bool {
    let found = open_events(at, dir).is_ok_and(|d| has_event_file_in(&d));
    found || is_conversation_by_state(dir, parser, buf)
}

/// [`is_conversation_dir_at`], listing `events/` to its end onto the end
/// of `listing`: whether `dir` is a conversation, and whether the names
/// added are the whole of its `events/` (false when there is none or
/// listing it failed part way).
pub(crate) fn conversation_listing_at(
    at: Option<(&Dir, &OsStr)>,
    dir: &Path,
    parser: &mut Parser,
    buf: &mut Vec<u8>,
    listing: &mut NameList,
) -> (bool, bool) {
    let (found, whole) = match open_events(at, dir) {
        Ok(d) => list_events_in(&d, listing),
        Err(_) => (false, false),
    };
    (found || is_conversation_by_state(dir, parser, buf), whole)
}

/// Opens `dir`'s `events/`, relative to the open parent when `at` is given
/// (`dir` being its entry `name`: the kernel resolves two names, not the
/// whole path).
fn open_events(at: Option<(&Dir, &OsStr)>, dir: &Path) -> io::Result<Dir> {
    match at {
        Some((parent, name)) if name.len() + 1 + DIR_EVENTS.len() <= MAX_NAME => {
            let mut rel = OsString::with_capacity(name.len() + 1 + DIR_EVENTS.len());
            rel.push(name);
            rel.push("/");
            rel.push(DIR_EVENTS);
            parent.open_dir(&rel)
        }
        _ => Dir::open(&dir.join(DIR_EVENTS)),
    }
}

/// Whether `dir`'s `base_state.json` makes it a conversation (see the
/// module docs), read into `buf`.
fn is_conversation_by_state(dir: &Path, parser: &mut Parser, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    let ok = match source::read_into(&dir.join(FILE_BASE_STATE), buf) {
        Ok(_) => marks_conversation(parser, buf),
        Err(SourceError::Empty { .. } | SourceError::TooLarge { .. }) => true,
        Err(SourceError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => false,
        // A file that cannot be opened where the directory can be listed:
        // a damaged conversation (a directory that cannot be listed is
        // reported as such by the walk).
        Err(SourceError::Io { .. }) => fs::read_dir(dir).is_ok(),
        Err(_) => false,
    };
    buf.clear();
    ok
}

/// Whether the bytes of a `base_state.json` make its directory a
/// conversation: OpenHands' state, or not JSON at all (a torn write).
pub(crate) fn marks_conversation(parser: &mut Parser, bytes: &[u8]) -> bool {
    parser.parse(bytes).is_err() || is_state_bytes(parser, bytes)
}

std::thread_local! {
    /// The listing buffer of [`with_listing_buf`], kept from one directory
    /// to the next.
    static LISTING: std::cell::RefCell<ListBuf> = std::cell::RefCell::new(ListBuf::default());
}

/// The longest relative name [`is_conversation_dir_at`] opens relative to
/// a directory (a file name's limit on Linux); a longer one is opened by
/// its whole path.
const MAX_NAME: usize = 255;

/// Whether the open `events` directory `d` lists a name matching the SDK
/// 1.30+ pattern. The listing stops at the first one.
fn has_event_file_in(d: &Dir) -> bool {
    let found = |listing: &mut ListBuf| {
        d.any(listing, |name, _| name.to_str().is_some_and(is_event_name))
            .unwrap_or(false)
    };
    with_listing_buf(found)
}

/// Runs `f` with this thread's listing buffer ([`LISTING`]), or a new one
/// when it is in use.
fn with_listing_buf<R>(mut f: impl FnMut(&mut ListBuf) -> R) -> R {
    LISTING.with(|l| match l.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        Err(_) => f(&mut ListBuf::default()),
    })
}

/// Lists the open `events` directory `d` to its end onto `listing`:
/// whether a name matches the SDK 1.30+ pattern (one listed before a
/// failure counts, as [`has_event_file_in`] counts it), and whether the
/// listing is whole.
fn list_events_in(d: &Dir, listing: &mut NameList) -> (bool, bool) {
    let mut found = false;
    let mut fits = true;
    let listed = with_listing_buf(|buf| {
        d.for_each(buf, |name, _| {
            found |= name.to_str().is_some_and(is_event_name);
            fits &= listing.push(name);
        })
    });
    (found, listed.is_ok() && fits)
}

/// Whether `path` is a file a conversation directory is found by: its
/// `base_state.json`, or an event file (by the SDK 1.30+ pattern) in its
/// `events` directory.
pub fn is_conversation_file(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    if !fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name == FILE_BASE_STATE || (in_events_dir(path) && is_event_name(name))
}

fn is_event_name(name: &str) -> bool {
    parse_event_name(name, NamePattern::FiveOrMoreDigits).is_ok()
}

fn in_events_dir(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == DIR_EVENTS)
}

/// The parent of `path`, `.` for a bare relative name.
fn parent_or_dot(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The conversation directory `path` names: the path itself when it is a
/// directory, the directory of its `base_state.json` or `meta.json`, or the
/// conversation of an event file (`<dir>/events/<event file>`). The path is
/// returned as given, not made absolute.
pub fn conversation_dir(path: impl AsRef<Path>) -> Result<PathBuf, ReadError> {
    conversation_dir_cow(path.as_ref()).map(Cow::into_owned)
}

/// [`conversation_dir`], borrowing `path` when it is the directory.
pub(crate) fn conversation_dir_cow(path: &Path) -> Result<Cow<'_, Path>, ReadError> {
    let meta = fs::metadata(path).map_err(|e| ReadError::io(path, e))?;
    if meta.is_dir() {
        return Ok(Cow::Borrowed(path));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == FILE_BASE_STATE || name == FILE_META {
        return Ok(Cow::Owned(parent_or_dot(path)));
    }
    if in_events_dir(path)
        && is_event_name(name)
        && let Some(events) = path.parent()
    {
        return Ok(Cow::Owned(parent_or_dot(events)));
    }
    Err(ReadError::NotAConversationFile {
        path: path.to_path_buf(),
    })
}

/// The conversation directory a sub-agent's directory,
/// `<parent>/subagents/<hex>`, is under; `None` when `dir` is not one (by
/// its path alone).
pub fn subagent_parent(dir: impl AsRef<Path>) -> Option<PathBuf> {
    let dir = dir.as_ref();
    let name = dir.file_name()?.to_str()?;
    if name.starts_with('.') {
        return None;
    }
    let subagents = dir.parent()?;
    if subagents.file_name()? != DIR_SUBAGENTS {
        return None;
    }
    Some(parent_or_dot(subagents))
}

/// The conversation ID the `base_state.json` of `dir` holds (its `id`,
/// dashed as written); `None` when it holds none or cannot be read.
pub fn state_id(dir: impl AsRef<Path>) -> Option<String> {
    let mut buf = Vec::new();
    source::read_into(&dir.as_ref().join(FILE_BASE_STATE), &mut buf).ok()?;
    let mut parser = Parser::new();
    let doc = parser.parse(&buf).ok()?;
    doc.root().get("id")?.as_str().map(str::to_owned)
}

/// The event IDs the events directory of `dir` names, from the file names
/// alone (no file is opened): the file IDs of the event sequence, indexes 0
/// up to the first missing one, by the SDK 1.30+ pattern. A fork's copied
/// events are told by these: they keep their IDs.
pub fn event_ids(dir: impl AsRef<Path>) -> Result<HashSet<String>, ReadError> {
    let events = dir.as_ref().join(DIR_EVENTS);
    let files = EventFiles::scan(&events, NamePattern::FiveOrMoreDigits)
        .map_err(|e| ReadError::io(&events, e))?;
    Ok(files.ids().map(str::to_owned).collect())
}

/// The identity of a directory, to walk each once whatever links lead to it.
#[cfg(unix)]
pub(crate) fn dir_key(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(crate) fn dir_key(path: &Path) -> Option<PathBuf> {
    fs::canonicalize(path).ok()
}

/// What [`discover`] found under a root: the conversation directories, and
/// the directories it could not list.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The conversation directories, sorted.
    pub conversations: Vec<PathBuf>,
    /// The directories under the root that could not be listed (and so may
    /// hold conversations nobody saw), in the order met.
    pub unreadable: Vec<ReadError>,
}

/// The conversation directories under `root`, sorted.
///
/// `root` may be a directory of conversations (`~/.openhands/conversations`),
/// a directory above several (`~/.openhands`), one conversation directory,
/// or a file in one, whose conversation is returned. Sub-agents'
/// conversations under `subagents/` are part of their parent's and are not
/// listed; nor are a conversation's own directories (`events`,
/// `observations`…), the agent server's and ACP agents' (`bash_events`,
/// `acp`, `npm-cache`) and version-control directories walked. A directory
/// that cannot be read is skipped; each directory is walked once, so
/// symbolic-link loops end. A symbolic link to a conversation directory is
/// listed (by the link's path); a link to any other directory is not walked
/// through, since it may lead anywhere out of the store (`/`, a home
/// directory). Fails only when `root` cannot be examined or, being a
/// directory, listed.
///
/// [`discover`] also tells which directories were skipped.
pub fn find_sessions(root: impl AsRef<Path>) -> Result<Vec<PathBuf>, ReadError> {
    discover(root).map(|d| d.conversations)
}

/// Like [`find_sessions`], also reporting each directory of the walk that
/// could not be listed (a conversation directory whose files cannot be
/// read is one of them: it cannot be told from any other directory).
///
/// The directories are looked at one at a time in the calling thread, with
/// the default [`ReadAhead`] listing the next ones ahead on a cold page
/// cache ([`discover_with`] sets it).
pub fn discover(root: impl AsRef<Path>) -> Result<Discovery, ReadError> {
    discover_with(root, ReadAhead::default())
}

/// [`discover`] with `read_ahead` listing a directory's subdirectories
/// ahead of the walk (those of directories of at least [`LIST_AHEAD_MIN`]
/// entries): the same result, [`ReadAhead::off`] included.
pub fn discover_with(
    root: impl AsRef<Path>,
    read_ahead: ReadAhead,
) -> Result<Discovery, ReadError> {
    let mut parser = Parser::new();
    let mut buf = Vec::new();
    let (found, unreadable) = walk_sessions(root.as_ref(), read_ahead, |dir, at| {
        is_conversation_dir_at(at, dir, &mut parser, &mut buf).then_some(())
    })?;
    Ok(Discovery {
        conversations: found.into_iter().map(|(p, ())| p).collect(),
        unreadable,
    })
}

/// The fewest subdirectories a directory must have for [`discover_with`]
/// to list them ahead of the walk: below it, starting I/O threads costs
/// more than it saves.
pub const LIST_AHEAD_MIN: usize = 16;

/// What [`walk_sessions`] found: the conversation directories with what the
/// visit kept of each, sorted by path; and the directories it could not
/// list.
pub(crate) type Walked<T> = (Vec<(PathBuf, T)>, Vec<ReadError>);

/// The walk of [`discover`], with the test of a directory given:
/// `visit(dir)` answers `Some` for a conversation directory (what to keep
/// of it), `None` for a directory to walk into. A `root` that is a file
/// gives its conversation directory, with what `visit` answers for it or
/// the default.
pub(crate) fn walk_sessions<T: Default>(
    root: &Path,
    read_ahead: ReadAhead,
    mut visit: impl FnMut(&Path, Option<(&Dir, &OsStr)>) -> Option<T>,
) -> Result<Walked<T>, ReadError> {
    let meta = fs::metadata(root).map_err(|e| ReadError::io(root, e))?;
    if !meta.is_dir() {
        let dir = conversation_dir(root)?;
        let t = visit(&dir, None).unwrap_or_default();
        return Ok((vec![(dir, t)], Vec::new()));
    }
    if let Some(t) = visit(root, None) {
        return Ok((vec![(root.to_path_buf(), t)], Vec::new()));
    }
    // Fail on a root that cannot be listed; report any other.
    let mut opened = Some(Dir::open(root).map_err(|e| ReadError::io(root, e))?);
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    let mut seen = HashSet::new();
    if let Some(k) = dir_key(root) {
        seen.insert(k);
    }
    let mut listing = ListBuf::default();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let d = match opened.take().map_or_else(|| Dir::open(&dir), Ok) {
            Ok(d) => d,
            Err(e) => {
                unreadable.push(ReadError::io(&dir, e));
                continue;
            }
        };
        // (path, is a link), in the listing's order.
        let mut subdirs: Vec<(PathBuf, bool)> = Vec::new();
        let listed = d.for_each(&mut listing, |name, kind| {
            if SKIPPED_DIRS.iter().any(|s| name == *s) {
                return;
            }
            if let Some(link) = subdir_kind(&d, &dir, name, kind) {
                subdirs.push((dir.join(name), link));
            }
        });
        if let Err(e) = listed {
            // Listed in part: what was listed is walked, the rest reported.
            unreadable.push(ReadError::io(&dir, e));
        }
        let ahead = if subdirs.len() >= LIST_AHEAD_MIN {
            read_ahead
        } else {
            ReadAhead::off()
        };
        let paths: Vec<&Path> = subdirs.iter().map(|(p, _)| p.as_path()).collect();
        ahead.run_listings(&paths, |ahead| {
            for (i, (path, link)) in subdirs.iter().enumerate() {
                ahead.begin(i);
                let Some(name) = path.file_name() else {
                    continue;
                };
                let Some(key) = dir_key_in(&d, name, path) else {
                    continue;
                };
                if !seen.insert(key) {
                    continue;
                }
                match visit(path, Some((&d, name))) {
                    Some(t) => out.push((path.clone(), t)),
                    // A link is followed to a conversation, never walked
                    // through: it may lead anywhere (`/`), out of the store.
                    None if *link => {}
                    None => stack.push(path.clone()),
                }
            }
        });
    }
    sort_by_path(&mut out);
    Ok((out, unreadable))
}

/// Sorts `out` by path, in [`Path`]'s order (component by component),
/// stably: each path split into its components once, rather than again at
/// every comparison.
fn sort_by_path<T>(out: &mut Vec<(PathBuf, T)>) {
    let order: Vec<usize> = {
        let mut keys: Vec<(Vec<std::path::Component<'_>>, usize)> = out
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (p.components().collect(), i))
            .collect();
        // The position breaks ties: as stable as `sort_by`.
        keys.sort_unstable();
        keys.into_iter().map(|(_, i)| i).collect()
    };
    let mut slots: Vec<Option<(PathBuf, T)>> = std::mem::take(out).into_iter().map(Some).collect();
    out.extend(
        order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// Whether the entry `name` of `d` (the directory at `dir`), of the kind
/// its listing gave, is a directory the walk looks at: `Some(is a link)`
/// for a directory or a symbolic link to one, `None` for anything else.
fn subdir_kind(d: &Dir, dir: &Path, name: &OsStr, kind: DirEntryKind) -> Option<bool> {
    match kind {
        DirEntryKind::Dir => Some(false),
        DirEntryKind::Symlink => d.is_dir(name, kind).then_some(true),
        DirEntryKind::File | DirEntryKind::Other => None,
        // The file system did not say: ask it, link or not.
        DirEntryKind::Unknown => {
            let path = dir.join(name);
            let meta = fs::symlink_metadata(&path).ok()?;
            if meta.file_type().is_symlink() {
                fs::metadata(&path)
                    .is_ok_and(|m| m.is_dir())
                    .then_some(true)
            } else {
                meta.is_dir().then_some(false)
            }
        }
    }
}

/// [`dir_key`] of the entry `name` of the open directory `d` (at `path`),
/// resolved relative to it.
#[cfg(unix)]
fn dir_key_in(d: &Dir, name: &OsStr, _path: &Path) -> Option<(u64, u64)> {
    d.stat_at(name).ok().flatten().map(|s| (s.dev, s.ino))
}

#[cfg(not(unix))]
fn dir_key_in(_d: &Dir, _name: &OsStr, path: &Path) -> Option<PathBuf> {
    dir_key(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sort_by_path` orders as `sort_by` with `Path`'s `cmp` does, ties
    /// kept in their order, on paths whose bytes order otherwise.
    #[test]
    fn sort_by_path_is_paths_order() {
        let paths = [
            "s/a-b", "s/a/b", "s/a", "s//a", "s/a/", "s/./a", "/s/a", "s/a.b", "s/a b", "s/A",
            "s/a", "s/ab", "t", "s",
        ];
        let mut got: Vec<(PathBuf, usize)> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (PathBuf::from(p), i))
            .collect();
        let mut want = got.clone();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        sort_by_path(&mut got);
        assert_eq!(got, want);
    }
}
