//! Listing the sessions, as `persistence.py`'s `list_sessions` lists them.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::json::{Map, OwnedValue, Value};

use super::fsops::{self, Found};
use super::session::TokenStats;
use super::store::{LoadError, collapse_duplicates, unlistable, with_json};
use super::{ARCHIVE_DIR_NAME, LEGACY_DIR_NAME, SessionStore, py};

/// One session of [`SessionStore::list_sessions`]: `persistence.py`'s list entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// `session_name` from the meta (any JSON value, as `persistence.py` passes it
    /// on), or the directory's name when the meta has none.
    pub name: OwnedValue,
    /// `model`, or `"?"`.
    pub model: OwnedValue,
    /// `TokenStats.from_dict(stats)`.
    pub stats: TokenStats,
    /// The meta file's modification time, local, `YYYY-MM-DD HH:MM`.
    pub last_modified: String,
    /// The current meta file (`{root}/{dir}/{name}_{stamp}_meta.json`).
    pub filepath: PathBuf,
    /// `chat_logs` from the meta (informational), or `[]`.
    pub chat_logs: OwnedValue,
    /// `reasoning_effort`, or `"high"`.
    pub reasoning_effort: OwnedValue,
    /// Size of the newest chat log in bytes, 0 when there is none.
    pub chat_log_size_bytes: u64,
    /// `ui` when truthy, else `{}`.
    pub ui: OwnedValue,
    /// The meta file's modification time (not part of `persistence.py`'s entry;
    /// used for the crash signal).
    pub mtime: SystemTime,
}

impl SessionEntry {
    /// The name as a string, when it is one.
    pub fn name_str(&self) -> Option<&str> {
        self.name.as_str()
    }

    /// The entry as `persistence.py`'s dict: exactly its keys, in its order
    /// (`name`, `model`, `stats`, `last_modified`, `filepath`, `chat_logs`,
    /// `reasoning_effort`, `chat_log_size_bytes`, `ui`).
    pub fn to_value(&self) -> OwnedValue {
        let mut m = Map::new();
        let e = m.entries_mut();
        e.push(("name".into(), self.name.clone()));
        e.push(("model".into(), self.model.clone()));
        e.push(("stats".into(), self.stats.to_value()));
        e.push(("last_modified".into(), self.last_modified.as_str().into()));
        e.push((
            "filepath".into(),
            self.filepath.to_string_lossy().into_owned().into(),
        ));
        e.push(("chat_logs".into(), self.chat_logs.clone()));
        e.push(("reasoning_effort".into(), self.reasoning_effort.clone()));
        e.push((
            "chat_log_size_bytes".into(),
            OwnedValue::Number(self.chat_log_size_bytes.into()),
        ));
        e.push(("ui".into(), self.ui.clone()));
        OwnedValue::Object(m)
    }
}

/// A session directory the listing skipped because its meta could not be
/// read: `persistence.py` logs these and goes on.
#[derive(Debug)]
pub struct Skipped {
    /// The meta file (the session directory when it cannot be listed).
    pub path: PathBuf,
    /// Why.
    pub error: LoadError,
}

/// What [`SessionStore::list_sessions`] found.
#[derive(Debug, Default)]
pub struct SessionList {
    /// One entry per readable session, in directory-name order.
    pub sessions: Vec<SessionEntry>,
    /// Sessions whose meta could not be read or is not an object.
    pub skipped: Vec<Skipped>,
}

impl SessionList {
    /// The entries as `persistence.py`'s list of dicts.
    pub fn to_value(&self) -> OwnedValue {
        OwnedValue::Array(self.sessions.iter().map(SessionEntry::to_value).collect())
    }
}

impl SessionStore {
    /// Lists the sessions: every directory under the root, in name order,
    /// except `archive/` and `legacy/`, whose newest `*_meta.json` (by
    /// modification time) reads as a JSON object. A directory without a
    /// meta is skipped silently; one whose meta cannot be read is skipped
    /// and reported in [`SessionList::skipped`]. A root that is not a
    /// directory lists nothing.
    ///
    /// **Difference from `persistence.py`'s code (2):** `persistence.py` raises on a meta
    /// that is not UTF-8 (UTF-16, Latin-1) or whose JSON is not an object,
    /// breaking its promise never to fail the listing for one session; here
    /// those are skipped and reported like any unreadable meta.
    pub fn list_sessions(&self) -> SessionList {
        let mut out = SessionList::default();
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return out;
        };
        let mut children: Vec<_> = rd.flatten().map(|e| e.file_name()).collect();
        children.sort_by(|a, b| py::cmp_names(a, b));
        for name in children {
            let child = py::join(&self.dir, &name);
            if !child.is_dir() {
                continue;
            }
            if name.as_bytes() == ARCHIVE_DIR_NAME.as_bytes()
                || name.as_bytes() == LEGACY_DIR_NAME.as_bytes()
            {
                continue;
            }
            // A save may archive the meta between the scan and the read:
            // scan again (a newer meta is live by then).
            let mut attempts = 0;
            loop {
                let (meta, log) = fsops::latest_meta_and_log(&child);
                let Some(meta) = meta else {
                    // No meta, or a directory that cannot be listed: that
                    // one is reported, not passed over.
                    if let Err(e) = unlistable(&child) {
                        out.skipped.push(Skipped {
                            path: child,
                            error: e,
                        });
                    }
                    break;
                };
                match self.entry(&child, &meta, log.map_or(0, |f| f.len)) {
                    Ok(e) => out.sessions.push(e),
                    Err(e) if e.is_not_found() && attempts < fsops::CONCURRENT_SAVE_RETRIES => {
                        fsops::before_retry(&mut attempts);
                        continue;
                    }
                    Err(error) => out.skipped.push(Skipped {
                        path: meta.path,
                        error,
                    }),
                }
                break;
            }
        }
        out
    }

    fn entry(
        &self,
        child: &Path,
        meta: &Found,
        chat_log_size_bytes: u64,
    ) -> Result<SessionEntry, LoadError> {
        let dir_name = fsops::file_name(child).to_string_lossy().into_owned();
        let fields = with_json(&meta.path, |root| {
            let obj = root.as_object()?;
            let [name, model, stats, chat_logs, effort, ui] = obj.get_many([
                "session_name",
                "model",
                "stats",
                "chat_logs",
                "reasoning_effort",
                "ui",
            ]);
            let owned = |v: Option<Value<'_>>| {
                v.map(|v| {
                    let mut o = OwnedValue::from(v);
                    collapse_duplicates(&mut o);
                    o
                })
            };
            Some((
                owned(name),
                owned(model),
                TokenStats::from_json(stats),
                owned(chat_logs),
                owned(effort),
                owned(ui),
            ))
        });
        let (name, model, stats, chat_logs, effort, ui) = match fields {
            Ok(Some(f)) => f,
            Ok(None) => {
                let found = with_json(&meta.path, |root| root.json_type())?;
                return Err(LoadError::NotAnObject {
                    path: meta.path.clone(),
                    found,
                });
            }
            Err(e) => return Err(e),
        };
        Ok(SessionEntry {
            name: name.unwrap_or_else(|| dir_name.into()),
            model: model.unwrap_or_else(|| "?".into()),
            stats,
            last_modified: self.tz.local_of_file_time(meta.mtime).minute_stamp(),
            filepath: meta.path.clone(),
            chat_logs: chat_logs.unwrap_or_else(|| OwnedValue::Array(Vec::new())),
            reasoning_effort: effort.unwrap_or_else(|| "high".into()),
            chat_log_size_bytes,
            ui: ui
                .filter(py::truthy)
                .unwrap_or_else(|| OwnedValue::Object(Map::new())),
            mtime: meta.mtime,
        })
    }
}
