//! Writing the store: session metadata and chat logs with
//! archive-before-overwrite, tool artifacts, the superseded mark and the
//! clean-exit marker. Every write is atomic (see the module README).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::json::OwnedValue;

use super::fsops::{self, Found, WriteStep};
use super::session::ChatSession;
use super::store::{LoadError, RecordKind, read_owned};
use super::time::unix_nanos;
use super::{CLEAN_EXIT_MARKER_NAME, Store, fs_safe_name, py};

/// Why a write did not happen (or did not finish).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The chat log's load failed and the buffer is near-empty, so the
    /// chat log on disk is not overwritten (the seed's `RuntimeError`).
    #[error(
        "Refusing to save chat log for '{name}': previous load failed and the message buffer is empty/near-empty.  The original chat log on disk is being preserved."
    )]
    Refused {
        /// The session's (canonical) name.
        name: String,
    },
    /// A file-system operation failed.
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
}

/// What [`Store::save_all`] did.
#[derive(Debug)]
pub struct SaveAll {
    /// The chat log written, unless the save was refused.
    pub chat_log: Option<PathBuf>,
    /// The refusal ([`SaveError::Refused`]) when the chat log was not saved.
    pub refused: Option<SaveError>,
    /// The meta file written.
    pub meta: PathBuf,
}

impl SaveAll {
    /// The lines the seed prints after saving.
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

impl Store {
    /// `{fs_safe_name(name)}_{stamp}_{kind}.{ext}`.
    pub(crate) fn stamped_name(name: &str, stamp: &str, kind: &str, ext: &str) -> String {
        format!("{}_{stamp}_{kind}.{ext}", fs_safe_name(name))
    }

    /// Writes `bytes` as `sdir/fname`, then archives every other file in
    /// `sdir` that `archived` matches, under the session directory's lock:
    ///
    /// 1. the bytes go to a temporary file in `sdir`, flushed;
    /// 2. if `fname` is taken (a save in the same second), a link to that
    ///    file goes into the archive first, then the temporary file is
    ///    renamed over it: the name holds the old bytes or the new, never
    ///    neither, never a mix;
    /// 3. otherwise the temporary file is linked to `fname`, which fails
    ///    rather than replace anything;
    /// 4. the older files are linked into `archive/{name}/` (same bytes
    ///    there: nothing added; other bytes: a `__N` name), the archive
    ///    directory is flushed, and only then are the originals removed.
    ///
    /// A crash at any point leaves the previous file or the new one live
    /// under a complete name, and every earlier version live or archived.
    pub(crate) fn save_file(
        &self,
        sdir: &Path,
        archive: &Path,
        fname: &str,
        bytes: &[u8],
        archived: &dyn Fn(&[u8]) -> bool,
    ) -> Result<PathBuf, SaveError> {
        let io = self.io();
        io.ensure_dir(sdir)?;
        let tmp = io.write_temp(sdir, bytes)?;
        let target = py::join(sdir, fname);
        let published = (|| {
            let lock = io.lock_dir(sdir)?;
            loop {
                if let Ok(meta) = fs::metadata(&target) {
                    io.ensure_dir(archive)?;
                    let found = Found {
                        path: target.clone(),
                        name: fsops::file_name(&target).to_os_string(),
                        mtime: meta.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
                        len: meta.len(),
                        is_file: meta.is_file(),
                    };
                    if matches!(
                        io.archive_link(&found, archive, true)?,
                        fsops::Archived::Vanished
                    ) {
                        continue;
                    }
                    io.sync_dir(archive)?;
                    io.replace(&tmp, &target)?;
                    break;
                }
                if io.publish_new(&tmp, &target)? {
                    break;
                }
            }
            Ok::<_, SaveError>(lock)
        })();
        let lock = match published {
            Ok(lock) => lock,
            Err(e) => return Err(io.cleanup(e, &tmp)),
        };
        io.sync_dir(sdir)?;
        let (mut olds, _) = fsops::scan(sdir, archived);
        olds.retain(|f| f.path != target);
        io.archive_all(&olds, archive, sdir)?;
        drop(lock);
        Ok(target)
    }

    /// `_canonical_session_name`: normalises the live session's name to
    /// its [`fs_safe_name`] and returns it.
    fn canonical_name(session: &mut ChatSession) -> String {
        let safe = fs_safe_name(&session.name);
        if safe != session.name {
            session.name.clone_from(&safe);
        }
        safe
    }

    /// Saves the session's metadata as
    /// `{root}/{name}/{name}_{stamp}_meta.json` (the seed's members in its
    /// order, then [`ChatSession::meta_extra`]), archiving the previous meta
    /// files; normalises `session.name`, sets `filepath` and clears `dirty`.
    /// Returns the path written.
    pub fn save_session_metadata(&self, session: &mut ChatSession) -> Result<PathBuf, SaveError> {
        let name = Self::canonical_name(session);
        let now = self.now_local();
        let fname = Self::stamped_name(&name, &now.file_stamp(), "meta", "json");
        let record = session.meta_record(&name, &now.compact_stamp());
        let bytes = py::dump(&record);
        let sdir = self.session_dir(&name);
        let path = self.save_file(
            &sdir,
            &self.archive_dir(&name),
            &fname,
            &bytes,
            &fsops::kind_any_ext("meta"),
        )?;
        session.filepath = Some(path.clone());
        session.dirty = false;
        Ok(path)
    }

    /// Saves the conversation as `{root}/{name}/{name}_{stamp}_chat_log.json`,
    /// archiving the previous chat logs; sets `chat_logs` to the new file's
    /// name and clears `dirty`.
    ///
    /// Refused ([`SaveError::Refused`]) when `load_failed` is set and the
    /// buffer holds at most two messages, so a chat log that could not be
    /// read is never overwritten by a near-empty one.
    pub fn save_chat_log(&self, session: &mut ChatSession) -> Result<PathBuf, SaveError> {
        let name = Self::canonical_name(session);
        if session.load_failed && session.messages.len() <= 2 {
            return Err(SaveError::Refused { name });
        }
        let now = self.now_local();
        let fname = Self::stamped_name(&name, &now.file_stamp(), "chat_log", "json");
        let record = session.chat_log_record(&name, &now.compact_stamp());
        let bytes = py::dump(&record);
        let sdir = self.session_dir(&name);
        let path = self.save_file(
            &sdir,
            &self.archive_dir(&name),
            &fname,
            &bytes,
            &fsops::kind_any_ext("chat_log"),
        )?;
        session.chat_logs = vec![OwnedValue::string(fname)];
        session.dirty = false;
        Ok(path)
    }

    /// Saves the chat log then the metadata. A refused chat log is reported
    /// and the metadata still saved (so the stats persist); any other error
    /// stops the save.
    pub fn save_all(&self, session: &mut ChatSession) -> Result<SaveAll, SaveError> {
        let (chat_log, refused) = match self.save_chat_log(session) {
            Ok(p) => (Some(p), None),
            Err(e @ SaveError::Refused { .. }) => (None, Some(e)),
            Err(e) => return Err(e),
        };
        let meta = self.save_session_metadata(session)?;
        Ok(SaveAll {
            chat_log,
            refused,
            meta,
        })
    }

    /// Spills a long tool output to
    /// `{root}/{name}/artifacts/{name}_{stamp}_tool_{tool}_{ns}_{hex6}.txt`
    /// and returns its path. The tool name keeps alphanumerics, `-` and `_`
    /// (others become `_`). The name is made unique by the nanosecond time
    /// and six random hex digits, as the seed makes it, and the file is put
    /// in place with a no-clobber link, retried with a fresh suffix should
    /// the name exist: two spills can never overwrite each other.
    pub fn save_tool_artifact(
        &self,
        session_name: &str,
        tool_name: &str,
        text: &str,
    ) -> Result<PathBuf, SaveError> {
        let io = self.io();
        let dir = py::join(&self.session_dir(session_name), "artifacts");
        io.ensure_dir(&dir)?;
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
    /// there is no such record; `Ok(true)` when the mark landed. The seed
    /// answers `False` for any failure too; here a failure is an error
    /// (callers wanting the seed's answer use `.unwrap_or(false)`).
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
        let dir = fsops::parent_of(&path);
        let _lock = io.lock_dir(&dir)?;
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
        let meta = fs::metadata(&path).map_err(|e| fsops::io_err("stat", &path, e))?;
        let unchanged = fs::read(&path).is_ok_and(|old| old == bytes);
        if !unchanged {
            let dir_name = fsops::file_name(&dir).to_string_lossy().into_owned();
            let archive = self.archive_dir(&dir_name);
            io.ensure_dir(&archive)?;
            let found = Found {
                path: path.clone(),
                name: fsops::file_name(&path).to_os_string(),
                mtime: meta.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
                len: meta.len(),
                is_file: meta.is_file(),
            };
            io.archive_link(&found, &archive, true)?;
            io.sync_dir(&archive)?;
        }
        io.write_replace(&path, &bytes)?;
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
