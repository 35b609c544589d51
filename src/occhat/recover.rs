//! Recovering a session's incomplete tail on disk: the load, the choice
//! and the save as one operation (what `agentlog occhat recover` runs).

use std::path::PathBuf;

use super::save::{SaveAll, SaveError, SaveNote};
use super::tail::{RecoveryChoice, apply_tail_recovery};
use super::{SessionStore, fsops};

/// What [`SessionStore::recover_session`] did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Recovery {
    /// The session's name as loaded (the meta's `session_name`).
    pub name: String,
    /// The session directory acted on.
    pub dir: PathBuf,
    /// Messages before the recovery.
    pub before: usize,
    /// Messages the choice keeps.
    pub after: usize,
    /// The newest chat log could not be read: nothing was recovered.
    pub load_failed: bool,
    /// The meta that an interrupted earlier save left unpublished, now
    /// published.
    pub completed: Option<PathBuf>,
    /// The save, when one was made (`None`: nothing to change, a dry run,
    /// or a failed load).
    pub saved: Option<SaveAll>,
    /// What the save noticed (see [`SaveNote`]).
    pub notes: Vec<SaveNote>,
}

impl SessionStore {
    /// Applies `choice` to the newest chat log of the session
    /// `name_or_path` resolves to and saves the result (unless `dry_run`,
    /// or nothing changes):
    ///
    /// 1. the session directory is checked ([`SaveError::UnsafeLayout`]
    ///    before anything is changed) and an interrupted earlier save in it
    ///    is completed;
    /// 2. the session is loaded, recording what was read
    ///    ([`ChatSession::origin`](super::ChatSession::origin));
    /// 3. the save writes the directory that was resolved, whatever the
    ///    meta's `session_name` names, and publishes only if the files
    ///    loaded are still the newest ([`SaveError::Changed`]).
    pub fn recover_session(
        &self,
        name_or_path: &str,
        choice: RecoveryChoice,
        dry_run: bool,
    ) -> Result<Recovery, SaveError> {
        let meta = self.resolve_record_path(name_or_path, super::RecordKind::Meta)?;
        let dir = fsops::parent_of(&meta);
        self.target_for_dir(&dir)?;
        let completed = if dry_run {
            None
        } else {
            self.complete_interrupted_save(name_or_path)?
        };
        let mut session = self.load_session(name_or_path)?;
        let dir = session
            .origin
            .as_ref()
            .map_or_else(|| dir.clone(), |o| o.dir.clone());
        let before = session.messages.len();
        let mut out = Recovery {
            name: session.name.clone(),
            dir,
            before,
            after: before,
            load_failed: session.load_failed,
            completed,
            saved: None,
            notes: Vec::new(),
        };
        if session.load_failed {
            return Ok(out);
        }
        let recovered = apply_tail_recovery(&session.messages, choice);
        out.after = recovered.len();
        if recovered == session.messages || dry_run {
            return Ok(out);
        }
        session.messages = recovered;
        session.dirty = true;
        let saved = self.save_all(&mut session)?;
        out.notes.clone_from(&saved.notes);
        out.saved = Some(saved);
        Ok(out)
    }
}
