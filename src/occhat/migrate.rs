//! One-shot migration from the flat pre-session-system layout.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::json::{Map, OwnedValue};

use super::fsops::{self, Archived, Found, WriteStep};
use super::save::SaveError;
use super::store::read_owned;
use super::{LEGACY_DIR_NAME, SessionStore, fs_safe_name, py};

/// What [`SessionStore::migrate_legacy_layout`] did (`persistence.py`'s summary dict).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationSummary {
    /// Flat `{name}.json` metas moved into `{name}/` directories.
    pub migrated: u64,
    /// Always 0: `persistence.py` reports it but never counts anything.
    pub recovered: u64,
    /// Orphan chat logs moved to `legacy/`.
    pub orphans_moved: u64,
    /// `"{file}: {error}"` for each file that could not be migrated.
    pub errors: Vec<String>,
}

impl MigrationSummary {
    /// `persistence.py`'s dict: `migrated`, `recovered`, `orphans_moved`, `errors`.
    pub fn to_value(&self) -> OwnedValue {
        let mut m = Map::new();
        let e = m.entries_mut();
        e.push(("migrated".into(), OwnedValue::Number(self.migrated.into())));
        e.push((
            "recovered".into(),
            OwnedValue::Number(self.recovered.into()),
        ));
        e.push((
            "orphans_moved".into(),
            OwnedValue::Number(self.orphans_moved.into()),
        ));
        e.push((
            "errors".into(),
            OwnedValue::Array(self.errors.iter().map(|s| s.as_str().into()).collect()),
        ));
        OwnedValue::Object(m)
    }
}

/// What [`SessionStore::migrate_legacy_layout`] would do, found without
/// changing anything ([`SessionStore::plan_legacy_migration`]): the plan
/// reads every file the migration reads, so a meta or chat log that does
/// not parse is an error here as it is there. Only what no read can foresee
/// (a write or a move that then fails) can still differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationPlan {
    /// Each flat `{name}.json` meta that would migrate and the session
    /// directory it would move to (its chat log `Chat_logs/{name}_log.json`,
    /// when there is one that parses, goes with it), in name order: as many
    /// as [`MigrationSummary::migrated`] would count.
    pub sessions: Vec<(PathBuf, PathBuf)>,
    /// The files of `Chat_logs/` that would move to `legacy/` (every file
    /// but `.gitkeep`, the chat logs that move with their session, and
    /// those `legacy/` already holds byte for byte), in name order: as many
    /// as [`MigrationSummary::orphans_moved`] would count.
    pub orphans: Vec<PathBuf>,
    /// The errors the migration would report
    /// ([`MigrationSummary::errors`], the same text), for the files it
    /// would leave in place, in the order of the files' names.
    pub errors: Vec<String>,
}

fn lossy(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}

impl SessionStore {
    /// What [`migrate_legacy_layout`](Self::migrate_legacy_layout) would
    /// do: every flat meta and chat log is read as the migration reads it,
    /// nothing is locked or written.
    pub fn plan_legacy_migration(&self) -> MigrationPlan {
        let base = &self.dir;
        let chat_dir = py::join(base, "Chat_logs");
        let legacy = py::join(base, LEGACY_DIR_NAME);
        let (mut flat, _) = fsops::scan(base, fsops::ends_with(".json"));
        flat.retain(|f| f.is_file);
        flat.sort_by(|a, b| a.name.cmp(&b.name));
        let mut plan = MigrationPlan::default();
        let mut moved_logs = std::collections::HashSet::new();
        for f in &flat {
            if let Some((to, log)) = self.plan_one(f, &chat_dir, &mut plan.errors) {
                plan.sessions.push((f.path.clone(), to));
                moved_logs.extend(log);
            }
        }
        let (mut others, _) = fsops::scan(&chat_dir, |_| true);
        others.sort_by(|a, b| a.name.cmp(&b.name));
        plan.orphans = others
            .into_iter()
            .filter(|o| {
                o.is_file
                    && o.name.as_bytes() != b".gitkeep"
                    && !moved_logs.contains(&o.name)
                    && !fsops::files_equal(&py::join(&legacy, &o.name), &o.path)
            })
            .map(|o| o.path)
            .collect();
        plan
    }

    /// What [`migrate_one`](Self::migrate_one) would do with `flat_meta`,
    /// read only: the session directory it would move to and the name of
    /// the chat log that would go with it, or `None` (the reason in
    /// `errors`, worded as the migration words it).
    fn plan_one(
        &self,
        flat_meta: &Found,
        chat_dir: &Path,
        errors: &mut Vec<String>,
    ) -> Option<(PathBuf, Option<std::ffi::OsString>)> {
        let (stem, _) = py::stem_suffix(&flat_meta.name);
        let data = match read_owned(&flat_meta.path) {
            Ok(v) => v,
            Err(e) => {
                errors.push(format!("{}: {e}", lossy(&flat_meta.name)));
                return None;
            }
        };
        let name = fs_safe_name(&lossy(stem));
        let sdir = match self.checked_child(OsStr::new(&name), false) {
            Ok(d) => d,
            Err(e) => {
                errors.push(format!("{}: {e}", lossy(&flat_meta.name)));
                return None;
            }
        };
        let meta_stamp = self.tz.local_of_file_time(flat_meta.mtime).file_stamp();
        let new_meta = py::join(
            &sdir,
            Self::stamped_name(&name, &meta_stamp, "meta", "json"),
        );
        if fs::symlink_metadata(&new_meta).is_ok()
            && !fs::read(&new_meta).is_ok_and(|b| b == py::dump(&data))
        {
            errors.push(format!(
                "{}: kept: {} already exists with other content",
                lossy(&flat_meta.name),
                new_meta.display()
            ));
            return None;
        }
        let mut log_name = stem.to_os_string();
        log_name.push("_log.json");
        let old_log = py::join(chat_dir, &log_name);
        let mut moved_log = None;
        if fs::symlink_metadata(chat_dir).is_ok_and(|m| m.is_dir())
            && let Ok(m) = fs::metadata(&old_log)
        {
            let mtime = m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            let log_stamp = self.tz.local_of_file_time(mtime).file_stamp();
            let new_log = py::join(
                &sdir,
                Self::stamped_name(&name, &log_stamp, "chat_log", "json"),
            );
            if !new_log.exists() {
                match read_owned(&old_log) {
                    Err(e) => errors.push(format!("{}: {e}", lossy(&log_name))),
                    Ok(_) => moved_log = Some(log_name),
                }
            }
        }
        Some((sdir, moved_log))
    }

    /// Converts a flat-layout store to the per-session-directory layout, as
    /// `persistence.py` does; running it again changes nothing.
    ///
    /// 1. Every `{name}.json` file in the root (name order) is read (a
    ///    failure is recorded in `errors` and the file left alone) and
    ///    written, re-serialised, as `{name}/{name}_{stamp}_meta.json`, the
    ///    stamp made from the flat file's modification time; its chat log
    ///    `Chat_logs/{name}_log.json`, if any, becomes
    ///    `{name}/{name}_{stamp}_chat_log.json` the same way and the old log
    ///    is removed; then the flat file is removed.
    /// 2. Every other file in `Chat_logs/` (but `.gitkeep`) moves to
    ///    `legacy/`; `Chat_logs/` is removed when nothing else is left.
    ///
    /// Every file is written atomically and no name is ever overwritten;
    /// the root is locked for the duration, so two migrations serialise.
    ///
    /// **Difference from `persistence.py`'s code (6):** `persistence.py` deletes an orphan
    /// whose name already exists in `legacy/` without looking at either
    /// file. Here only a byte-identical orphan is deleted; a differing one
    /// is moved to `legacy/{stem}__{N}{suffix}` (first free N) and counted
    /// in `orphans_moved`. In the same spirit, a flat meta whose migrated
    /// name already exists with other content is left in place and reported
    /// in `errors` (`persistence.py` would delete it).
    ///
    /// Names and paths: a flat file's stem goes through [`fs_safe_name`]
    /// (`..json`, `...json` become `unnamed-session`), and every directory
    /// written is checked to be a real directory directly under the root and
    /// not a reserved one; a file that cannot be migrated (a reserved or
    /// unusable name, a name too long for the file system, an I/O error) is
    /// an error in the summary and the rest still migrates. A `Chat_logs` or
    /// `legacy` that is a symlink (or not a directory) is refused
    /// ([`SaveError::UnsafeLayout`]) before anything is changed: no file is
    /// moved from outside the store.
    pub fn migrate_legacy_layout(&self) -> Result<MigrationSummary, SaveError> {
        let io = self.io();
        let base = &self.dir;
        let chat_dir = self.checked_child(OsStr::new("Chat_logs"), true)?;
        let legacy = self.checked_child(OsStr::new(LEGACY_DIR_NAME), true)?;
        io.ensure_dir(base)?;
        let _lock = io.lock_dir(base)?;
        let mut summary = MigrationSummary::default();

        let (flat, _) = fsops::scan(base, fsops::ends_with(".json"));
        for flat_meta in flat.into_iter().filter(|f| f.is_file) {
            match self.migrate_one(&flat_meta, &chat_dir, &mut summary.errors) {
                Ok(true) => summary.migrated += 1,
                Ok(false) => {}
                Err(e @ SaveError::Crashed { .. }) => return Err(e),
                Err(e) => summary
                    .errors
                    .push(format!("{}: {e}", lossy(&flat_meta.name))),
            }
        }

        if chat_dir.is_dir() {
            // Checked again under the lock: a directory swapped for a
            // symlink since is refused before anything in it moves.
            self.checked_child(OsStr::new("Chat_logs"), true)?;
            self.checked_child(OsStr::new(LEGACY_DIR_NAME), true)?;
            io.ensure_dir(&legacy)?;
            self.checked_child(OsStr::new(LEGACY_DIR_NAME), true)?;
            let (orphans, _) = fsops::scan(&chat_dir, |_| true);
            let mut to_remove: Vec<Found> = Vec::new();
            for orphan in orphans {
                if orphan.name.as_bytes() == b".gitkeep" || !orphan.is_file {
                    continue;
                }
                io.step(WriteStep::Move, &orphan.path)?;
                match io.archive_copy(&orphan, &legacy) {
                    Ok(Archived::Linked) => {
                        summary.orphans_moved += 1;
                        to_remove.push(orphan);
                    }
                    Ok(Archived::Moved) => summary.orphans_moved += 1,
                    // Byte-identical copy already in legacy/: only then may
                    // the orphan go.
                    Ok(Archived::Duplicate) => to_remove.push(orphan),
                    Ok(Archived::Vanished) => {}
                    Err(e @ SaveError::Crashed { .. }) => return Err(e),
                    Err(e) => summary.errors.push(format!("{}: {e}", lossy(&orphan.name))),
                }
            }
            io.sync_dir(&legacy)?;
            for orphan in &to_remove {
                io.remove_archived(orphan)?;
            }
            let gitkeep = py::join(&chat_dir, ".gitkeep");
            let others = fs::read_dir(&chat_dir)
                .map(|rd| {
                    rd.flatten()
                        .any(|e| e.file_name().as_bytes() != b".gitkeep")
                })
                .unwrap_or(true);
            if gitkeep.exists() && !others {
                io.step(WriteStep::Remove, &gitkeep)?;
                let _ = fs::remove_file(&gitkeep);
            }
            let _ = fs::remove_dir(&chat_dir);
            io.sync_dir(base)?;
        }
        Ok(summary)
    }

    /// Migrates one flat meta (and its chat log): `Ok(true)` when it was
    /// moved, `Ok(false)` when it was kept (the reason in `errors`).
    fn migrate_one(
        &self,
        flat_meta: &Found,
        chat_dir: &Path,
        errors: &mut Vec<String>,
    ) -> Result<bool, SaveError> {
        let io = self.io();
        let (stem, _) = py::stem_suffix(&flat_meta.name);
        let data = match read_owned(&flat_meta.path) {
            Ok(v) => v,
            Err(e) => {
                errors.push(format!("{}: {e}", lossy(&flat_meta.name)));
                return Ok(false);
            }
        };
        let name = fs_safe_name(&lossy(stem));
        let sdir = self.checked_child(OsStr::new(&name), false)?;
        io.ensure_dir(&sdir)?;
        self.checked_child(OsStr::new(&name), false)?;
        let meta_stamp = self.tz.local_of_file_time(flat_meta.mtime).file_stamp();
        let new_meta = py::join(
            &sdir,
            Self::stamped_name(&name, &meta_stamp, "meta", "json"),
        );
        let bytes = py::dump(&data);
        if !io.write_new(&new_meta, &bytes)? {
            let same = fs::read(&new_meta).is_ok_and(|b| b == bytes);
            if !same {
                errors.push(format!(
                    "{}: kept: {} already exists with other content",
                    lossy(&flat_meta.name),
                    new_meta.display()
                ));
                return Ok(false);
            }
        }
        let mut log_name = stem.to_os_string();
        log_name.push("_log.json");
        let old_log = py::join(chat_dir, &log_name);
        if fs::symlink_metadata(chat_dir).is_ok_and(|m| m.is_dir())
            && let Ok(m) = fs::metadata(&old_log)
        {
            let mtime = m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            let log_stamp = self.tz.local_of_file_time(mtime).file_stamp();
            let new_log = py::join(
                &sdir,
                Self::stamped_name(&name, &log_stamp, "chat_log", "json"),
            );
            if !new_log.exists() {
                match read_owned(&old_log) {
                    Err(e) => errors.push(format!("{}: {e}", lossy(&log_name))),
                    Ok(v) => {
                        if io.write_new(&new_log, &py::dump(&v))? {
                            remove(&io, &old_log)?;
                        }
                    }
                }
            }
        }
        remove(&io, &flat_meta.path)?;
        Ok(true)
    }
}

/// Removes a migrated file.
fn remove(io: &fsops::Io<'_>, path: &Path) -> Result<(), SaveError> {
    io.sys(WriteStep::Remove, path, || fs::remove_file(path))
        .map_err(|e| fsops::io_err("remove", path, e))
}
