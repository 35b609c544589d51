//! `--checkpoint FILE`: what changed in a store since a checkpoint
//! (`agentlog::openhands::Store::changes_since`), and the records besides
//! events that incremental output carries.
//!
//! Records other than events are objects with the `conversation` and
//! `parent` members of an event line and a `record` member:
//!
//! ```text
//! {"conversation": ID, "parent": ID | null, "record": "rewrite"}   its history changed: drop it, all its events follow
//! {"conversation": ID, "parent": ID | null, "record": "removed"}   gone from the store
//! ```
//!
//! The checkpoint is saved only after the output is flushed and synced,
//! so it is never ahead of what was written: a run killed before it saves
//! is repeated by the next (at least once). A consumer gets exactly once by
//! committing a run's output only when the command exits with status 0, or
//! by keying events by (conversation, index), a later line replacing an
//! earlier one (a repaired event comes again under its index).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use agentlog::json::write::write_str;
use agentlog::openhands::{Change, ChangeKind, Checkpoint, ScanOptions, Store};

use crate::export::push_event_line;
use crate::out::{Fail, Out, Res, Status, warn};
use crate::target::{Target, nothing_found, resolve, resolve_other};

/// Appends the record line `{"conversation":…,"parent":…,"record":WHAT`
/// and the members of `rest` (already JSON, starting with `,`), then `}`.
pub fn push_record(line: &mut Vec<u8>, id: &str, parent: Option<&str>, what: &str, rest: &[u8]) {
    line.clear();
    line.extend_from_slice(b"{\"conversation\":");
    write_str(line, id, false);
    line.extend_from_slice(b",\"parent\":");
    match parent {
        Some(p) => write_str(line, p, false),
        None => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b",\"record\":");
    write_str(line, what, false);
    line.extend_from_slice(rest);
    line.extend_from_slice(b"}\n");
}

/// Writes the lines of one change: a `rewrite` or `removed` record when
/// it is one, then its events.
pub fn write_change(out: &mut Out, line: &mut Vec<u8>, c: &Change<'_>) -> Res<()> {
    match c.kind {
        ChangeKind::Removed => {
            push_record(line, c.id, c.parent, "removed", b"");
            return out.bytes(line);
        }
        ChangeKind::Rewrite => {
            push_record(line, c.id, c.parent, "rewrite", b"");
            out.bytes(line)?;
        }
        ChangeKind::New | ChangeKind::Updated => {}
    }
    if let Some(conv) = c.conversation
        && let Some(e) = conv.events_error()
    {
        warn(&e.to_string());
    }
    for e in c.events() {
        if let Some(err) = e.error() {
            warn(&err.to_string());
        }
        push_event_line(line, c.id, c.parent, &e);
        out.bytes(line)?;
    }
    Ok(())
}

/// Loads the checkpoint at `path` (none yet is a first run; an empty file
/// is none yet, said on standard error).
pub fn load(path: &Path) -> Res<Option<Checkpoint>> {
    check_path(path)?;
    if is_empty_file(path) {
        warn(&format!(
            "{}: empty: no checkpoint yet (a first run; the checkpoint is saved there)",
            path.display()
        ));
    }
    Checkpoint::load_or_none(path).map_err(|e| Fail::Fatal(e.to_string()))
}

/// Refuses, before anything is read or written, a checkpoint path that
/// could not be saved (a missing directory, a directory, FIFO or device
/// there: `OutputPath::classify_entry`) or is a symbolic link (a
/// checkpoint is the regular file at the path given; `CheckpointError::Link`).
/// The checkpoint's contents are not read.
pub fn check_path(path: &Path) -> Res<()> {
    agentlog::output::OutputPath::classify_entry(path).map_err(|e| Fail::Fatal(e.to_string()))?;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let e = agentlog::openhands::CheckpointError::Link {
            path: path.to_path_buf(),
        };
        return Err(Fail::Fatal(e.to_string()));
    }
    Ok(())
}

/// Whether `path` is an empty regular file: no checkpoint yet.
pub fn is_empty_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0)
}

/// The one OpenHands store PATH of a `--checkpoint` run whose checkpoint
/// is `cp`. On a first run (no checkpoint at `cp` yet) a PATH under which
/// nothing is found is a problem, reported as every command reports it
/// ([`nothing_found`]); once a checkpoint of the store exists, a store
/// that is empty now is a store whose conversations were removed, which
/// the run reports as such.
pub fn one_store<'p>(paths: &'p [PathBuf], cp: &Path) -> Res<&'p Path> {
    let first_run = std::fs::symlink_metadata(cp).is_err() || is_empty_file(cp);
    // Only a first run refuses a store with nothing in it; a later one
    // does not walk the store twice (the scan walks it) to tell.
    let (path, empty) = one_openhands_path(paths, first_run)?;
    match empty {
        Some(msg) if first_run => Err(Fail::Problem(msg)),
        _ => Ok(path),
    }
}

/// The one OpenHands store PATH of `follow --checkpoint`: a store under
/// which nothing is found yet is followed (it may fill), with a warning.
pub fn one_store_to_follow(paths: &[PathBuf]) -> Res<&Path> {
    let (path, empty) = one_openhands_path(paths, true)?;
    if let Some(msg) = empty {
        warn(&format!("{msg} (yet): following it"));
    }
    Ok(path)
}

/// The one PATH of a `--checkpoint` run, which must be an OpenHands store;
/// with `tell_empty`, walked to tell a directory of nothing yet (then with
/// the [`nothing_found`] message).
fn one_openhands_path(paths: &[PathBuf], tell_empty: bool) -> Res<(&Path, Option<String>)> {
    let [path] = paths else {
        return Err(Fail::Fatal(format!(
            "--checkpoint takes one PATH ({} given): a checkpoint is of one store",
            paths.len()
        )));
    };
    let target = if tell_empty {
        resolve(path).map(Some)
    } else {
        resolve_other(path)
    };
    match target {
        Err(e) => Err(Fail::Fatal(e)),
        Ok(Some(Target::OcChat { root })) => Err(Fail::Fatal(format!(
            "{}: an OC Chat sessions directory; --checkpoint reads OpenHands stores",
            root.display()
        ))),
        Ok(Some(target @ Target::OpenHands { .. })) => Ok((path, nothing_found(path, &target))),
        Ok(None) => Ok((path, None)),
        Ok(Some(Target::Asf { .. })) => Err(Fail::Fatal(format!(
            "{}: Agent Session Format files; --checkpoint reads OpenHands stores",
            path.display()
        ))),
    }
}

/// Syncs standard output when it is a file (a pipe or terminal cannot be
/// synced, and need not be).
pub fn sync_stdout() -> Res<()> {
    use std::os::fd::AsFd;
    let fd = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Fail::Fatal(format!("standard output: {e}")))?;
    let f = std::fs::File::from(fd);
    if f.metadata().is_ok_and(|m| m.is_file()) {
        f.sync_all()
            .map_err(|e| Fail::Fatal(format!("standard output: {e}")))?;
    }
    Ok(())
}

/// Saves the checkpoint `new` at `path` once what `out` holds is flushed
/// and (when standard output is a file) synced: never ahead of the output.
/// `new` is `None` when the scan recorded nothing new
/// ([`Checkpoint::records_nothing_new`]): the file is left as it is, not
/// rewritten nor synced.
pub fn save_after(out: &mut Out, path: &Path, new: Option<&Checkpoint>) -> Res<()> {
    let Some(new) = new else {
        return out.flush();
    };
    out.flush()?;
    sync_stdout()?;
    let _ = io::stderr().flush();
    new.save(path).map_err(|e| Fail::Fatal(e.to_string()))
}

/// The scan's options: `--verify-files` or not.
pub fn scan_options(verify_files: bool) -> ScanOptions {
    ScanOptions {
        verify_files,
        ..ScanOptions::default()
    }
}

/// `export --checkpoint FILE`.
pub fn export(
    paths: &[PathBuf],
    output: Option<&Path>,
    cp_path: &Path,
    opts: ScanOptions,
    stdout: &mut Out,
) -> Res<u8> {
    let root = one_store(paths, cp_path)?;
    let since = load(cp_path)?;
    let mut changes =
        Store::changes_since(root, since.as_ref(), opts).map_err(|e| Fail::Fatal(e.to_string()))?;
    crate::target::warn_skipped(changes.unreadable());
    let status = Status::OK;
    let mut file_out = match output {
        Some(p) => Some(Out::file(p)?),
        None => None,
    };
    let out = match file_out.as_mut() {
        Some(o) => o,
        None => &mut *stdout,
    };
    let mut line = Vec::with_capacity(1 << 16);
    while let Some(item) = changes.next() {
        match item {
            Ok(c) => write_change(out, &mut line, &c)?,
            Err(e) => {
                // Kept in the checkpoint as it was: tried again next run
                // (a warning, as `export` warns of what it cannot read).
                warn(&e.to_string());
            }
        }
    }
    match file_out {
        Some(o) => o.finish()?,
        None => {
            stdout.flush()?;
            sync_stdout()?;
        }
    }
    let _ = io::stderr().flush();
    let new = changes.into_checkpoint();
    // Nothing new since the checkpoint (nothing was written either): it
    // stays as it is, not rewritten nor synced.
    if !since
        .as_ref()
        .is_some_and(|old| new.records_nothing_new(old))
    {
        new.save(cp_path).map_err(|e| Fail::Fatal(e.to_string()))?;
    }
    Ok(status.code())
}

/// The top-level conversation directories of `root` that changed since
/// the checkpoint at `cp_path` (a sub-agent's change names its top-level
/// conversation; removed ones are not named), the directories of the walk
/// that could not be listed, and the checkpoint to save once what was
/// done with them is durable (`None` when it records nothing new: the file
/// is left as it is). A conversation that could not be read is
/// named too (its checkpoint marks are kept: it is named again next run).
pub fn changed_conversations(
    root: &Path,
    cp_path: &Path,
    verify_files: bool,
) -> Res<(Vec<PathBuf>, Vec<String>, Option<Checkpoint>)> {
    let since = load(cp_path)?;
    let mut changes = Store::changes_since(root, since.as_ref(), scan_options(verify_files))
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    let unreadable = changes.unreadable().iter().map(|e| e.to_string()).collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut failed = Vec::new();
    while let Some(item) = changes.next() {
        match item {
            // A directory handed out again only because another of its ID
            // changed did not change itself.
            Ok(c) if c.kind == ChangeKind::Removed || c.again => {}
            Ok(c) => {
                // A sub-agent at depth d lies 2 d components under its
                // top-level conversation (`subagents/NAME` each).
                let mut top = c.dir.to_path_buf();
                for _ in 0..2 * c.depth {
                    top.pop();
                }
                if dirs.last() != Some(&top) {
                    dirs.push(top);
                }
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    dirs.sort();
    dirs.dedup();
    // A conversation that could not be read is checked (and its problem
    // listed) by the full reader too.
    let mut unreadable: Vec<String> = unreadable;
    unreadable.extend(failed);
    let new = changes.into_checkpoint();
    let new = (!since
        .as_ref()
        .is_some_and(|old| new.records_nothing_new(old)))
    .then_some(new);
    Ok((dirs, unreadable, new))
}
