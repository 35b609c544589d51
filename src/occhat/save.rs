//! Writing the store: session metadata and chat logs with
//! archive-before-publish, tool artifacts, the superseded mark and the
//! clean-exit marker. Every write is atomic (see the module README).

use std::fs;
use std::io;
use std::path::PathBuf;

use crate::json::OwnedValue;

use super::fsops::{self, Found, WriteStep};
use super::journal::Pending;
use super::layout::{LayoutProblem, SessionTarget};
use super::origin::{FileStamp, hash_bytes};
use super::session::ChatSession;
use super::store::{LoadError, RecordKind, read_owned};
use super::time::unix_nanos;
use super::{CLEAN_EXIT_MARKER_NAME, SessionStore, fs_safe_name, py};

/// Why a write did not happen (or did not finish).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The chat log's load failed and the buffer is near-empty, so the
    /// chat log on disk is not overwritten (the `RuntimeError` of OC Chat's
    /// `persistence.py`).
    #[error(
        "Refusing to save chat log for '{name}': previous load failed and the message buffer is empty/near-empty.  The original chat log on disk is being preserved."
    )]
    Refused {
        /// The session's (canonical) name.
        name: String,
    },
    /// A file-system operation failed. `path` is the file the operation was
    /// for (never a temporary name).
    #[error("{}: {op}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The write hook simulated a crash at this step (tests only).
    #[error("{}: simulated crash at {step:?}", path.display())]
    Crashed {
        /// The step.
        step: WriteStep,
        /// The path of the step.
        path: PathBuf,
    },
    /// A record to be rewritten could not be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An export to a given path could not be written there, or was
    /// refused (the path is a record of the store).
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The store's layout is refused for writing (a symlink on the way, a
    /// reserved directory as a session, an archive leading back to the
    /// session, a directory outside the store); nothing was changed.
    #[error("{}: refused: it {problem}; nothing was changed", path.display())]
    UnsafeLayout {
        /// The path refused.
        path: PathBuf,
        /// Why.
        problem: LayoutProblem,
    },
    /// A file the session was loaded from is no longer the newest of its
    /// kind, or changed (another program, such as OC Chat, which takes no
    /// lock, saved meanwhile); nothing was published.
    #[error(
        "{}: changed since the session was loaded (another program saved meanwhile); nothing was published, load the session again",
        path.display()
    )]
    Changed {
        /// The newest file of the kind now (or the one loaded, if none).
        path: PathBuf,
    },
}

/// Something a save did or found that the caller should know.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SaveNote {
    /// The session directory written is not the one the recorded
    /// `session_name` maps to: the save wrote the directory the session was
    /// loaded from, and the records now carry its name.
    NameMismatch {
        /// The directory written.
        dir: PathBuf,
        /// The meta's `session_name` as it was (`null` when missing).
        recorded: OwnedValue,
    },
    /// An earlier save of this session, interrupted between its chat log
    /// and its meta, was completed: this meta was published.
    CompletedInterrupted {
        /// The meta published.
        meta: PathBuf,
    },
}

impl std::fmt::Display for SaveNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SaveNote::NameMismatch { dir, recorded } => write!(
                f,
                "{}: the meta names the session {}; written to this directory, under its name",
                dir.display(),
                recorded
            ),
            SaveNote::CompletedInterrupted { meta } => write!(
                f,
                "{}: completed an interrupted save (the meta was not published)",
                meta.display()
            ),
        }
    }
}

/// What [`SessionStore::save_all`] did.
#[derive(Debug)]
pub struct SaveAll {
    /// The chat log written, unless the save was refused.
    pub chat_log: Option<PathBuf>,
    /// The refusal ([`SaveError::Refused`]) when the chat log was not saved.
    pub refused: Option<SaveError>,
    /// The meta file written.
    pub meta: PathBuf,
    /// What the save noticed (a name mismatch, an interrupted save
    /// completed).
    pub notes: Vec<SaveNote>,
}

impl SaveAll {
    /// The lines OC Chat's `persistence.py` prints after saving.
    pub fn report_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(r) = &self.refused {
            out.push(format!("[Chat log NOT saved: {r}]"));
        }
        if let Some(p) = &self.chat_log {
            out.push(format!("[Chat log saved to {}]", p.display()));
        }
        out.push(format!(
            "[Session metadata saved to {}]",
            self.meta.display()
        ));
        out
    }
}

/// A save in progress: the checked target, its lock, and the notes so far.
pub(crate) struct Begun {
    pub(crate) target: SessionTarget,
    _lock: fsops::DirLock,
    pub(crate) notes: Vec<SaveNote>,
}

impl SessionStore {
    /// `{fs_safe_name(name)}_{stamp}_{kind}.{ext}`.
    pub(crate) fn stamped_name(name: &str, stamp: &str, kind: &str, ext: &str) -> String {
        format!("{}_{stamp}_{kind}.{ext}", fs_safe_name(name))
    }

    /// The directory a session's writes go to: the one it was loaded from
    /// ([`ChatSession::origin`]), else `{root}/{fs_safe_name(name)}`;
    /// checked ([`SaveError::UnsafeLayout`]).
    pub(crate) fn target_of(&self, session: &ChatSession) -> Result<SessionTarget, SaveError> {
        match &session.origin {
            Some(o) => self.target_for_dir(&o.dir),
            None => self.target_for_name(&session.name),
        }
    }

    /// Checks the target, creates it, locks it and completes an
    /// interrupted save found there.
    pub(crate) fn begin(&self, session: &mut ChatSession) -> Result<Begun, SaveError> {
        let target = self.target_of(session)?;
        let io = self.io();
        io.ensure_dir(&target.dir)?;
        self.recheck(&target)?;
        let lock = io.lock_dir(&target.dir)?;
        let mut notes = Vec::new();
        if let Some((meta, chat_log)) = self.complete_pending_locked(&target)? {
            // A session holding the interrupted save's chat log (the one
            // that made it, retrying) continues from its meta.
            if let Some(o) = session.origin.as_mut()
                && o.chat_log.as_ref().is_some_and(|c| c.path == chat_log)
            {
                o.meta = FileStamp::of(&meta);
            }
            notes.push(SaveNote::CompletedInterrupted { meta });
        }
        if let Some(o) = &session.origin {
            let recorded = o.recorded_name.clone().unwrap_or(OwnedValue::Null);
            let maps_here = recorded
                .as_str()
                .is_some_and(|n| fs_safe_name(n) == target.name);
            if !maps_here || fs_safe_name(&session.name) != target.name {
                notes.push(SaveNote::NameMismatch {
                    dir: target.dir.clone(),
                    recorded,
                });
            }
        }
        Ok(Begun {
            target,
            _lock: lock,
            notes,
        })
    }

    /// Writes `bytes` as `{t.dir}/{fname}` (the session directory's lock
    /// held), archiving every other file of `t.dir` that `archived`
    /// matches:
    ///
    /// 1. the bytes go to a temporary file in `t.dir`, flushed;
    /// 2. when `origin` is given, the files it records must still be the
    ///    newest of their kinds, unchanged ([`SaveError::Changed`]);
    /// 3. every file `archived` matches (the target's name included, when a
    ///    save in the same second took it) is linked into `t.archive` (or
    ///    copied and flushed where it cannot be linked: another file
    ///    system), and the archive directory is flushed;
    /// 4. the layout and `origin` are checked again (the last check);
    /// 5. the new file is published: a no-clobber link for a new name, an
    ///    atomic rename for a name taken by a file archived in 3;
    /// 6. only then are the archived originals removed, each only while it
    ///    is still the file archived.
    ///
    /// A failure or crash at any step before 5 leaves the old state (plus,
    /// at most, archive copies of live files); after 5 the new file is live
    /// and every earlier version live or archived.
    pub(crate) fn save_file_locked(
        &self,
        t: &SessionTarget,
        fname: &str,
        bytes: &[u8],
        archived: &dyn Fn(&[u8]) -> bool,
        origin: Option<&super::Origin>,
    ) -> Result<PathBuf, SaveError> {
        let io = self.io();
        let target = py::join(&t.dir, fname);
        let verify = || -> Result<(), SaveError> {
            if let Some(o) = origin {
                io.step(WriteStep::Verify, &t.dir)?;
                o.verify()?;
            }
            Ok(())
        };
        verify()?;
        let tmp = io.write_temp(&target, bytes)?;
        let staged = (|| {
            verify()?;
            let (olds, _) = fsops::scan(&t.dir, archived);
            let safe: Vec<Found> = io
                .archive_all(&olds, &t.archive)?
                .into_iter()
                .cloned()
                .collect();
            self.recheck(t)?;
            verify()?;
            if fs::symlink_metadata(&target).is_ok() {
                // A save in the same second: the name holds a file that
                // must be in the archive by now, unchanged.
                if !safe.iter().any(|f| f.path == target && f.same_as_now()) {
                    return Err(SaveError::Changed {
                        path: target.clone(),
                    });
                }
                io.replace(&tmp, &target)?;
            } else if !io.publish_new(&tmp, &target)? {
                return Err(SaveError::Changed {
                    path: target.clone(),
                });
            }
            Ok(safe)
        })();
        let safe = match staged {
            Ok(s) => s,
            Err(e) => return Err(io.cleanup(e, &tmp)),
        };
        io.sync_dir(&t.dir)?;
        let mut removed = false;
        for old in safe.iter().filter(|f| f.path != target) {
            io.remove_archived(old)?;
            removed = true;
        }
        if removed {
            io.sync_dir(&t.dir)?;
        }
        Ok(target)
    }

    /// The chat log's file name and bytes (the session's name already
    /// canonical).
    fn chat_log_file(&self, session: &ChatSession) -> (String, Vec<u8>) {
        let now = self.now_local();
        let fname = Self::stamped_name(&session.name, &now.file_stamp(), "chat_log", "json");
        let record = session.chat_log_record(&session.name, &now.compact_stamp());
        (fname, py::dump(&record))
    }

    /// The meta's file name and bytes.
    fn meta_file(&self, session: &ChatSession) -> (String, Vec<u8>) {
        let now = self.now_local();
        let fname = Self::stamped_name(&session.name, &now.file_stamp(), "meta", "json");
        let record = session.meta_record(&session.name, &now.compact_stamp());
        (fname, py::dump(&record))
    }

    /// Publishes one record of `session` into the begun save and records it
    /// in the session's origin.
    fn publish_record(
        &self,
        b: &Begun,
        session: &mut ChatSession,
        kind: RecordKind,
        fname: &str,
        bytes: &[u8],
    ) -> Result<PathBuf, SaveError> {
        let saved = self.save_file_locked(
            &b.target,
            fname,
            bytes,
            &fsops::kind_any_ext(kind.as_str()),
            session.origin.as_ref(),
        );
        // Published, even if a later step (a flush, a removal) failed: the
        // session now continues from this file.
        let path = py::join(&b.target.dir, fname);
        let live = saved.is_ok() || fs::read(&path).is_ok_and(|b| b == bytes);
        if live && let Some(o) = session.origin.as_mut() {
            *o.stamp_mut(kind) = FileStamp::of(&path);
            o.recorded_name = Some(OwnedValue::string(session.name.clone()));
        }
        saved
    }

    /// Saves the session's metadata as `{dir}/{name}_{stamp}_meta.json`
    /// (the members of OC Chat's `persistence.py` in its order, then
    /// [`ChatSession::meta_extra`]), archiving the previous meta files.
    ///
    /// `dir` is the directory the session was loaded from
    /// ([`ChatSession::origin`]) and `name` its name, whatever the meta's
    /// `session_name` said; a session made in memory goes to
    /// `{root}/{fs_safe_name(name)}`. A reserved directory, a symlink or a
    /// directory outside the store is refused ([`SaveError::UnsafeLayout`]);
    /// a loaded session whose files changed since is refused
    /// ([`SaveError::Changed`]). Sets `session.name` to the directory's
    /// name, `filepath`, clears `dirty`. Returns the path written.
    pub fn save_session_metadata(&self, session: &mut ChatSession) -> Result<PathBuf, SaveError> {
        let b = self.begin(session)?;
        session.name.clone_from(&b.target.name);
        let (fname, bytes) = self.meta_file(session);
        let path = self.publish_record(&b, session, RecordKind::Meta, &fname, &bytes)?;
        session.filepath = Some(path.clone());
        session.dirty = false;
        Ok(path)
    }

    /// Saves the conversation as `{dir}/{name}_{stamp}_chat_log.json` (the
    /// directory and checks as [`save_session_metadata`](Self::save_session_metadata)),
    /// archiving the previous chat logs; sets `chat_logs` to the new file's
    /// name and clears `dirty`.
    ///
    /// Refused ([`SaveError::Refused`]) when `load_failed` is set and the
    /// buffer holds at most two messages, so a chat log that could not be
    /// read is never overwritten by a near-empty one.
    pub fn save_chat_log(&self, session: &mut ChatSession) -> Result<PathBuf, SaveError> {
        let b = self.begin(session)?;
        session.name.clone_from(&b.target.name);
        if session.load_failed && session.messages.len() <= 2 {
            return Err(SaveError::Refused {
                name: session.name.clone(),
            });
        }
        let (fname, bytes) = self.chat_log_file(session);
        let path = self.publish_record(&b, session, RecordKind::ChatLog, &fname, &bytes)?;
        session.chat_logs = vec![OwnedValue::string(fname)];
        session.dirty = false;
        Ok(path)
    }

    /// Saves the chat log then the metadata, under one lock. A refused chat
    /// log is reported and the metadata still saved (so the stats persist);
    /// any other error stops the save.
    ///
    /// The two files are one save: before the chat log is published, a
    /// record of the save (`.occhat-pending`, holding the meta's bytes) is
    /// written in the session directory, and removed once the meta is live.
    /// A save stopped between the two (a full disk, a crash) is completed by
    /// the next save of the session or by
    /// [`complete_interrupted_save`](Self::complete_interrupted_save).
    pub fn save_all(&self, session: &mut ChatSession) -> Result<SaveAll, SaveError> {
        let b = self.begin(session)?;
        session.name.clone_from(&b.target.name);
        let refused = session.load_failed && session.messages.len() <= 2;
        if refused {
            let (fname, bytes) = self.meta_file(session);
            let meta = self.publish_record(&b, session, RecordKind::Meta, &fname, &bytes)?;
            session.filepath = Some(meta.clone());
            session.dirty = false;
            return Ok(SaveAll {
                chat_log: None,
                refused: Some(SaveError::Refused {
                    name: session.name.clone(),
                }),
                meta,
                notes: b.notes,
            });
        }
        let (log_name, log_bytes) = self.chat_log_file(session);
        let previous_logs =
            std::mem::replace(&mut session.chat_logs, vec![OwnedValue::string(&*log_name)]);
        let (meta_name, meta_bytes) = self.meta_file(session);
        session.chat_logs = previous_logs;
        self.write_pending(
            &b.target,
            &Pending {
                chat_log: log_name.clone(),
                chat_log_hash: hash_bytes(&log_bytes),
                meta: meta_name.clone(),
                meta_bytes: meta_bytes.clone(),
            },
        )?;
        let published =
            self.publish_record(&b, session, RecordKind::ChatLog, &log_name, &log_bytes);
        let chat_log = match published {
            Ok(p) => p,
            Err(e) => {
                // When the chat log did not go live, nothing of this save
                // is: drop its record (unless this is a simulated crash,
                // which cleans up nothing). When it did (a failure after
                // the publish), the record stays for the next save.
                let live = super::journal::read_pending(&b.target.dir)
                    .is_ok_and(|p| p.is_some_and(|(_, forward)| forward));
                if !live && !matches!(e, SaveError::Crashed { .. }) {
                    let _ = self.remove_pending(&b.target);
                }
                return Err(e);
            }
        };
        session.chat_logs = vec![OwnedValue::string(log_name)];
        let meta = self.publish_record(&b, session, RecordKind::Meta, &meta_name, &meta_bytes)?;
        self.remove_pending(&b.target)?;
        session.filepath = Some(meta.clone());
        session.dirty = false;
        Ok(SaveAll {
            chat_log: Some(chat_log),
            refused: None,
            meta,
            notes: b.notes,
        })
    }

    /// Spills a long tool output to
    /// `{root}/{name}/artifacts/{name}_{stamp}_tool_{tool}_{ns}_{hex6}.txt`
    /// and returns its path. The tool name keeps alphanumerics, `-` and `_`
    /// (others become `_`). The name is made unique by the nanosecond time
    /// and six random hex digits, as `persistence.py` makes it, and the file is put
    /// in place with a no-clobber link, retried with a fresh suffix should
    /// the name exist: two spills can never overwrite each other.
    pub fn save_tool_artifact(
        &self,
        session_name: &str,
        tool_name: &str,
        text: &str,
    ) -> Result<PathBuf, SaveError> {
        let io = self.io();
        let t = self.target_for_name(session_name)?;
        let dir = py::join(&t.dir, "artifacts");
        super::layout::real_dir_or_missing(&dir)?;
        io.ensure_dir(&dir)?;
        super::layout::real_dir_or_missing(&dir)?;
        let safe_tool: String = tool_name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        loop {
            let now = self.clock.now();
            let stamp = self.tz.local_of(now).file_stamp();
            let uniq = format!("{}_{}", unix_nanos(now), fsops::random_hex6());
            let fname = Self::stamped_name(
                session_name,
                &stamp,
                &format!("tool_{safe_tool}_{uniq}"),
                "txt",
            );
            let path = py::join(&dir, fname);
            if io.write_new(&path, text.as_bytes())? {
                return Ok(path);
            }
        }
    }

    /// Writes the additive `superseded_by` mark (the canonical name of
    /// `new_name`) into the record `old_name` resolves to. `Ok(false)` when
    /// there is no such record; `Ok(true)` when the mark landed. `persistence.py`
    /// answers `False` for any failure too; here a failure is an error
    /// (callers wanting `persistence.py`'s answer use `.unwrap_or(false)`).
    ///
    /// The rewrite is atomic, and the record's previous bytes are first
    /// linked into `archive/{dir}/` (same rules as a save), so no version
    /// is lost; the meta keeps its name and every member in place.
    pub fn mark_record_superseded(
        &self,
        old_name: &str,
        new_name: &str,
    ) -> Result<bool, SaveError> {
        let path = match self.resolve_record_path(old_name, RecordKind::Meta) {
            Ok(p) => p,
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let io = self.io();
        let t = self.target_for_dir(&fsops::parent_of(&path))?;
        let _lock = io.lock_dir(&t.dir)?;
        let mut raw = read_owned(&path)?;
        let Some(obj) = raw.as_object_mut() else {
            return Err(LoadError::NotAnObject {
                path,
                found: raw.json_type(),
            }
            .into());
        };
        obj.insert("superseded_by", OwnedValue::string(fs_safe_name(new_name)));
        let bytes = py::dump(&raw);
        let unchanged = fs::read(&path).is_ok_and(|old| old == bytes);
        if unchanged {
            return Ok(true);
        }
        let Some(found) = Found::of(&path) else {
            return Ok(false);
        };
        let tmp = io.write_temp(&path, &bytes)?;
        let r = (|| {
            let safe = io.archive_all(std::slice::from_ref(&found), &t.archive)?;
            self.recheck(&t)?;
            if safe.is_empty() || !found.same_as_now() {
                return Err(SaveError::Changed { path: path.clone() });
            }
            io.replace(&tmp, &path)
        })();
        if let Err(e) = r {
            return Err(io.cleanup(e, &tmp));
        }
        io.sync_dir(&t.dir)?;
        Ok(true)
    }

    /// Writes the clean-exit marker `{root}/.oc_chat_clean_exit` holding
    /// `{"timestamp": "<local ISO time, seconds>"}`, atomically (creating
    /// the root if needed). Returns its path.
    pub fn write_clean_exit_marker(&self) -> Result<PathBuf, SaveError> {
        let io = self.io();
        io.ensure_dir(&self.dir)?;
        let path = py::join(&self.dir, CLEAN_EXIT_MARKER_NAME);
        let payload = OwnedValue::Object(
            [(
                "timestamp".to_owned(),
                OwnedValue::string(self.now_local().iso_seconds()),
            )]
            .into_iter()
            .collect(),
        );
        let mut bytes = Vec::new();
        py::write_json(&payload, true, &mut bytes);
        io.write_replace(&path, &bytes)?;
        Ok(path)
    }
}
