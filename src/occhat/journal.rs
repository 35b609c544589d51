//! The record of a multi-file save in progress, so a save interrupted
//! between its two files (a full disk, a crash) is completed by the next
//! save or recovery of that session.
//!
//! [`SessionStore::save_all`] writes the chat log, then the meta that names it.
//! Before the chat log is published, `.occhat-pending` is written in the
//! session directory (atomically; its name has no `_`, so no glob of the
//! store sees it) holding the chat log's name and hash and the meta's name
//! and bytes; it is removed once the meta is live. Finding it, the next
//! save of the session (or [`SessionStore::complete_interrupted_save`]) decides:
//!
//! - the chat log it names is live with the recorded bytes, and no meta is
//!   newer than the record: the chat log was published and the meta not,
//!   so the meta is published (roll forward);
//! - otherwise the chat log never went live (or another program saved
//!   since): nothing of the save is live, the record is dropped (roll
//!   back; the chat log's bytes, if published, were archived by that
//!   other save).

use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use super::fsops::{self, WriteStep, io_err};
use super::layout::SessionTarget;
use super::origin::hash_bytes;
use super::save::SaveError;
use super::{SessionStore, py};

/// The journal's file name in a session directory.
pub const PENDING_NAME: &str = ".occhat-pending";

const MAGIC: &str = "occhat-pending 1";

/// A multi-file save in progress.
pub(crate) struct Pending {
    pub(crate) chat_log: String,
    pub(crate) chat_log_hash: u64,
    pub(crate) meta: String,
    pub(crate) meta_bytes: Vec<u8>,
}

impl Pending {
    fn encode(&self) -> Vec<u8> {
        let mut out = format!(
            "{MAGIC}\n{}\n{:016x}\n{}\n",
            self.chat_log, self.chat_log_hash, self.meta
        )
        .into_bytes();
        out.extend_from_slice(&self.meta_bytes);
        out
    }

    fn decode(b: &[u8]) -> Option<Pending> {
        let mut parts = b.splitn(5, |&c| c == b'\n');
        let magic = parts.next()?;
        let chat = std::str::from_utf8(parts.next()?).ok()?;
        let hash = u64::from_str_radix(std::str::from_utf8(parts.next()?).ok()?, 16).ok()?;
        let meta = std::str::from_utf8(parts.next()?).ok()?;
        let bytes = parts.next()?;
        let safe = |n: &str| !n.is_empty() && !n.contains('/') && n != "." && n != "..";
        if magic != MAGIC.as_bytes() || !safe(chat) || !safe(meta) {
            return None;
        }
        Some(Pending {
            chat_log: chat.to_owned(),
            chat_log_hash: hash,
            meta: meta.to_owned(),
            meta_bytes: bytes.to_vec(),
        })
    }
}

fn path_in(t: &SessionTarget) -> PathBuf {
    py::join(&t.dir, PENDING_NAME)
}

/// The journal in `dir`, if any, and whether it rolls forward: the chat log
/// it names is live with the recorded bytes and no meta is newer than it.
pub(crate) fn read_pending(dir: &Path) -> Result<Option<(Pending, bool)>, SaveError> {
    let path = py::join(dir, PENDING_NAME);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read the record of an interrupted save", &path, e)),
    };
    let Some(p) = Pending::decode(&bytes) else {
        return Err(io_err(
            "read the record of an interrupted save",
            &path,
            io::Error::new(ErrorKind::InvalidData, "not a record this crate wrote"),
        ));
    };
    let recorded_at = fs::metadata(&path)
        .and_then(|m| m.modified())
        .map_err(|e| io_err("stat", &path, e))?;
    let chat = py::join(dir, &p.chat_log);
    let chat_live = fs::read(&chat).is_ok_and(|b| hash_bytes(&b) == p.chat_log_hash)
        && fsops::latest(dir, "_chat_log.json").is_some_and(|f| f.path == chat);
    let meta_newer = fsops::latest(dir, "_meta.json")
        .is_some_and(|m| m.mtime > recorded_at && m.name != p.meta.as_str());
    Ok(Some((p, chat_live && !meta_newer)))
}

impl SessionStore {
    /// Writes the journal of a save into `t` (lock held).
    pub(crate) fn write_pending(&self, t: &SessionTarget, p: &Pending) -> Result<(), SaveError> {
        let path = path_in(t);
        self.io().step(WriteStep::Journal, &path)?;
        self.io().write_replace(&path, &p.encode())
    }

    /// Removes the journal of `t` (lock held).
    pub(crate) fn remove_pending(&self, t: &SessionTarget) -> Result<(), SaveError> {
        let path = path_in(t);
        match self
            .io()
            .sys(WriteStep::Journal, &path, || fs::remove_file(&path))
        {
            Ok(()) => self.io().sync_dir(&t.dir),
            Err(e) if !fsops::is_crash(&e) && e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err("remove the record of a save in progress", &path, e)),
        }
    }

    /// Archives every file of `kind` in `t` but `keep`, then removes them.
    fn archive_others(&self, t: &SessionTarget, kind: &str, keep: &Path) -> Result<(), SaveError> {
        let (mut olds, _) = fsops::scan(&t.dir, fsops::kind_any_ext(kind));
        olds.retain(|f| f.path != keep);
        let safe: Vec<_> = self
            .io()
            .archive_all(&olds, &t.archive)?
            .into_iter()
            .cloned()
            .collect();
        for old in &safe {
            self.io().remove_archived(old)?;
        }
        if !safe.is_empty() {
            self.io().sync_dir(&t.dir)?;
        }
        Ok(())
    }

    /// Completes or rolls back an interrupted save of `t` (lock held).
    /// Returns the meta it published and the chat log it belongs to, if it
    /// rolled forward.
    pub(crate) fn complete_pending_locked(
        &self,
        t: &SessionTarget,
    ) -> Result<Option<(PathBuf, PathBuf)>, SaveError> {
        let Some((p, forward)) = read_pending(&t.dir)? else {
            return Ok(None);
        };
        let published = if forward {
            // The chat log is live: the older ones go to the archive, as
            // its save would have done had it finished.
            let chat = py::join(&t.dir, &p.chat_log);
            self.archive_others(t, "chat_log", &chat)?;
            let meta_path = py::join(&t.dir, &p.meta);
            if fs::read(&meta_path).is_ok_and(|b| b == p.meta_bytes) {
                // Published already; archive what the save would have.
                self.archive_others(t, "meta", &meta_path)?;
                Some(meta_path)
            } else {
                Some(self.save_file_locked(
                    t,
                    &p.meta,
                    &p.meta_bytes,
                    &fsops::kind_any_ext("meta"),
                    None,
                )?)
            }
        } else {
            None
        };
        self.remove_pending(t)?;
        Ok(published.map(|m| (m, py::join(&t.dir, &p.chat_log))))
    }

    /// Completes (or rolls back) a save of the session `name_or_path`
    /// resolves to that was interrupted between its chat log and its meta
    /// (see the module docs of `journal`): returns the meta it published,
    /// `None` when there was nothing to complete.
    pub fn complete_interrupted_save(
        &self,
        name_or_path: &str,
    ) -> Result<Option<PathBuf>, SaveError> {
        let dir = match self.resolve_record_path(name_or_path, super::RecordKind::Meta) {
            Ok(p) => fsops::parent_of(&p),
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let t = self.target_for_dir(&dir)?;
        if !Path::new(&path_in(&t)).exists() {
            return Ok(None);
        }
        let _lock = self.io().lock_dir(&t.dir)?;
        Ok(self.complete_pending_locked(&t)?.map(|(meta, _)| meta))
    }
}
