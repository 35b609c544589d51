//! Runs: the part files of one export belong to it, and readers see them
//! all or none.
//!
//! A dataset directory holds, beside its tables, `_agentlog/` (a name that
//! no table glob reaches, and that Spark and PyArrow skip):
//!
//! ```text
//! OUT_DIR/_agentlog/lock                    held (flock) by the run writing the directory
//! OUT_DIR/_agentlog/pending/<run>.json      a run's manifest before its parts are published
//! OUT_DIR/_agentlog/runs/<run>.json         a published run's manifest
//! ```
//!
//! A run writes its parts under hidden temporary names
//! ([`super::Dataset`]), then [`DatasetDir::stage`] writes its manifest
//! (one JSON line naming the parts, the snapshot, the checkpoint it
//! leaves and what it supersedes) into `pending/`, atomically. An
//! incremental run then saves its checkpoint, and [`Pending::publish`]
//! renames the parts to their final names and moves the manifest to
//! `runs/`. [`DatasetDir::open`] (the next run) finishes what a killed run
//! left: a pending full run, or a pending incremental run whose checkpoint
//! was saved (the checkpoint file's digest is the manifest's
//! `checkpoint_after`), is published; any other pending run is removed,
//! and so is every temporary part file no manifest names. So a killed
//! run's rows are never read, and a run's rows are read once its
//! checkpoint is saved, whatever moment the run was stopped at.
//!
//! Every directory and file a run writes is inside OUT_DIR: `_agentlog/`,
//! `runs/`, `pending/`, the table and partition directories are made (or
//! found) as real directories by
//! [`create_dir_inside`], the lock is
//! opened without following a link, the manifests are written as files the
//! tool owns ([`Output::create_entry`]: a link at a manifest's name is
//! replaced, never written through), and part files are new files. A
//! symbolic link where one of these directories, or the lock, would be is
//! refused ([`OutputError::Link`]) before
//! anything is written. OUT_DIR itself may be reached through links: it is
//! the user's.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use crate::output::{Output, OutputError, create_dir_inside, dir_inside};

use crate::json::Parser;
use crate::json::write::write_str;

use super::DatasetError;
use super::dataset::Written;
use super::part::{publish, sync_dir, tmp_name};
use super::schema::{SCHEMA_VERSION, Table};

/// The directory of a dataset's own files (lock and manifests).
pub const META_DIR: &str = "_agentlog";

/// The version of the manifests' format (their `manifest_version`).
pub const MANIFEST_VERSION: i64 = 1;

/// A run's name: its snapshot (microseconds since the Unix epoch, 16
/// digits, so that names sort by time) and a random UUID (version 4), so
/// that runs on different machines at the same microsecond differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunId {
    snapshot: i64,
    name: String,
}

impl RunId {
    /// A new run at `snapshot` (microseconds since the Unix epoch).
    pub fn new(snapshot: i64) -> RunId {
        let uuid = uuid::Uuid::new_v4();
        RunId {
            snapshot,
            name: format!("{snapshot:016}-{}", uuid.simple()),
        }
    }

    /// The snapshot: the `snapshot_at` of every row the run writes.
    pub fn snapshot(&self) -> i64 {
        self.snapshot
    }

    /// The name: `<snapshot>-<uuid>`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a run exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Everything (a dataset of its own).
    Full,
    /// What changed since a checkpoint.
    Incremental,
}

impl RunMode {
    /// `full` or `incremental`, as in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Full => "full",
            RunMode::Incremental => "incremental",
        }
    }
}

/// A conversation whose earlier rows a run's rows supersede.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superseded {
    /// The conversation.
    pub conversation_id: String,
    /// `updated` (its rows of the whole-conversation tables are written
    /// again; its events are added to), `rewrite` (every row of it, events
    /// included, is written again) or `removed` (gone: every row of it is
    /// superseded).
    pub change: &'static str,
}

impl Superseded {
    /// The tables whose rows of the conversation with an earlier
    /// `snapshot_at` the change supersedes.
    pub fn tables(&self) -> &'static [Table] {
        const WHOLE: [Table; 4] = [
            Table::Conversations,
            Table::Messages,
            Table::ToolCalls,
            Table::LlmCalls,
        ];
        match self.change {
            "updated" => &WHOLE,
            _ => &Table::ALL,
        }
    }
}

/// The digest that names a checkpoint in the manifests: SHA-256 of the
/// checkpoint file's bytes, hex.
pub fn checkpoint_digest(bytes: &[u8]) -> String {
    crate::hash::sha256_hex(bytes)
}

/// What the last published run of a dataset says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    /// Its name.
    pub name: String,
    /// Full or incremental.
    pub mode: RunMode,
    /// The digest of the checkpoint it saved ([`checkpoint_digest`]).
    pub checkpoint_after: Option<String>,
}

/// A dataset directory opened for writing: locked, and what killed runs
/// left finished or removed (see the [module docs](self)).
#[derive(Debug)]
pub struct DatasetDir {
    root: PathBuf,
    _lock: File,
    latest: Option<RunRecord>,
    empty: bool,
    foreign: Vec<String>,
    /// `open` created the directory itself.
    made_root: bool,
    /// `open` created `_agentlog` (with its lock, `runs` and `pending`).
    made_meta: bool,
}

/// A parsed manifest: the fields recovery uses.
struct ManifestFacts {
    mode: RunMode,
    checkpoint_after: Option<String>,
    parts: Vec<PathBuf>,
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> DatasetError + '_ {
    move |e| DatasetError::io(path, e)
}

/// How long [`DatasetDir::open`] waits for the lock held by someone else
/// before calling the directory busy. A process that another thread of the
/// locking process forks holds a copy of the lock's descriptor, and so the
/// lock, until it runs its program: a moment, after which the lock is free
/// again although no export is running.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(250);

/// Takes the lock of `lock`, trying again for [`LOCK_PATIENCE`] while it is
/// held by someone else.
fn take_lock(lock: &fs::File) -> Result<(), fs::TryLockError> {
    let start = std::time::Instant::now();
    loop {
        match lock.try_lock() {
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

impl DatasetDir {
    /// Opens (creating it when missing) the dataset directory `root` and
    /// takes its lock; finishes or removes what killed runs left:
    /// `checkpoint` is the digest of the checkpoint file as it is now
    /// (`None`: none), which tells a pending incremental run that saved its
    /// checkpoint from one that did not.
    pub fn open(root: &Path, checkpoint: Option<&str>) -> Result<DatasetDir, DatasetError> {
        let made_root = fs::symlink_metadata(root).is_err();
        let made_meta = made_root || fs::symlink_metadata(root.join(META_DIR)).is_err();
        fs::create_dir_all(root).map_err(io_at(root))?;
        // Inside OUT_DIR, never through a link: looked at before anything
        // is created.
        let meta = create_dir_inside(root, Path::new(META_DIR))?;
        let lock_path = meta.join("lock");
        match fs::symlink_metadata(&lock_path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(OutputError::Link { path: lock_path }.into());
            }
            Ok(m) if !m.is_file() => {
                return Err(DatasetError::io(
                    &lock_path,
                    io::Error::other("not a regular file"),
                ));
            }
            _ => {}
        }
        for d in ["runs", "pending"] {
            create_dir_inside(root, &Path::new(META_DIR).join(d))?;
        }
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&lock_path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => DatasetError::from(OutputError::Link {
                    path: lock_path.clone(),
                }),
                _ => DatasetError::io(&lock_path, e),
            })?;
        if let Err(e) = take_lock(&lock) {
            let why = match e {
                fs::TryLockError::WouldBlock => {
                    io::Error::other("another export is writing this dataset")
                }
                fs::TryLockError::Error(e) => e,
            };
            return Err(DatasetError::io(root, why));
        }
        // A table's directory that is a link is never written through,
        // nor cleaned.
        for table in Table::ALL {
            dir_inside(root, Path::new(table.name()))?;
        }
        let mut dir = DatasetDir {
            root: root.to_path_buf(),
            _lock: lock,
            latest: None,
            empty: true,
            foreign: Vec::new(),
            made_root,
            made_meta,
        };
        dir.recover(checkpoint)?;
        dir.survey()?;
        Ok(dir)
    }

    /// Gives the directory up without writing a run into it, for a caller
    /// that refuses the run after looking: what `open` made is removed (the
    /// `_agentlog` folder with its lock, `runs` and `pending` when it was
    /// not there before, and the directory itself when `open` created it),
    /// so a refused run leaves the directory as it found it. Best effort: a
    /// folder no longer empty is left as it is.
    pub fn give_up(self) {
        let DatasetDir {
            root,
            _lock,
            made_root,
            made_meta,
            ..
        } = self;
        if made_meta {
            let meta = root.join(META_DIR);
            for d in ["runs", "pending"] {
                let _ = fs::remove_dir(meta.join(d));
            }
            let _ = fs::remove_file(meta.join("lock"));
            let _ = fs::remove_dir(&meta);
        }
        drop(_lock);
        if made_root {
            let _ = fs::remove_dir(&root);
        }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The last published run, when there is one.
    pub fn latest_run(&self) -> Option<&RunRecord> {
        self.latest.as_ref()
    }

    /// Whether the directory holds no dataset: no published run, no part
    /// file, nothing but empty table directories and [`META_DIR`].
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// The names in the directory that are neither a table's directory nor
    /// [`META_DIR`].
    pub fn foreign_entries(&self) -> &[String] {
        &self.foreign
    }

    /// Finishes or removes each pending run, then removes every temporary
    /// part file left.
    fn recover(&mut self, checkpoint: Option<&str>) -> Result<(), DatasetError> {
        let pending = self.root.join(META_DIR).join("pending");
        let mut parser = Parser::new();
        for name in json_files(&pending)? {
            let path = pending.join(&name);
            let bytes = fs::read(&path).map_err(io_at(&path))?;
            let facts = parse_manifest(&bytes, &mut parser);
            let publish_it = match &facts {
                Some(f) => f.mode == RunMode::Full || f.checkpoint_after.as_deref() == checkpoint,
                None => false,
            };
            match facts {
                Some(f) if publish_it => {
                    let staged: Vec<(PathBuf, PathBuf)> = f
                        .parts
                        .iter()
                        .map(|rel| {
                            let dest = self.root.join(rel);
                            (tmp_of(&dest), dest)
                        })
                        .collect();
                    publish_all(&self.root, &staged, &path, &name)?;
                }
                _ => {
                    for rel in facts.iter().flat_map(|f| &f.parts) {
                        // Only inside the dataset (no link on the way).
                        let dir = rel.parent().unwrap_or(Path::new(""));
                        if dir_inside(&self.root, dir)? {
                            let tmp = tmp_of(&self.root.join(rel));
                            let _ = fs::remove_file(&tmp);
                        }
                    }
                    fs::remove_file(&path).map_err(io_at(&path))?;
                }
            }
        }
        for table in Table::ALL {
            remove_tmp_parts(&self.root.join(table.name()))?;
        }
        // A manifest's temporary file that a killed run left (its write is
        // atomic: the name holds the whole manifest or nothing); this run
        // holds the dataset's lock, so no other writer is making one.
        for d in ["pending", "runs"] {
            let dir = self.root.join(META_DIR).join(d);
            for e in fs::read_dir(&dir).map_err(io_at(&dir))?.flatten() {
                let stale = e
                    .file_name()
                    .to_str()
                    .is_some_and(crate::output::is_temporary_name);
                if stale && e.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    /// Reads what the directory holds: the last published run, whether it
    /// is empty, its foreign entries.
    fn survey(&mut self) -> Result<(), DatasetError> {
        let runs = self.root.join(META_DIR).join("runs");
        let names = json_files(&runs)?;
        if let Some(last) = names.last() {
            let path = runs.join(last);
            let bytes = fs::read(&path).map_err(io_at(&path))?;
            let facts = parse_manifest(&bytes, &mut Parser::new()).ok_or_else(|| {
                DatasetError::io(&path, io::Error::other("not an agentlog manifest"))
            })?;
            self.latest = Some(RunRecord {
                name: last.trim_end_matches(".json").to_owned(),
                mode: facts.mode,
                checkpoint_after: facts.checkpoint_after,
            });
        }
        let mut parts = false;
        for e in fs::read_dir(&self.root)
            .map_err(io_at(&self.root))?
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == META_DIR {
                continue;
            }
            match Table::ALL.iter().find(|t| t.name() == name) {
                Some(_) if e.file_type().is_ok_and(|t| t.is_dir()) => {
                    parts |= holds_anything(&e.path());
                }
                _ => self.foreign.push(name),
            }
        }
        self.foreign.sort();
        self.empty = self.latest.is_none() && !parts && self.foreign.is_empty();
        Ok(())
    }

    /// Writes the manifest of a run whose parts are `written` into
    /// `pending/`, atomically: from then on the run is published by
    /// [`Pending::publish`], or by the next [`open`](Self::open) when it
    /// was stopped (a full run; an incremental one once its checkpoint,
    /// `checkpoint_after`, is saved).
    pub fn stage(
        &self,
        run: &RunId,
        written: Written,
        mode: RunMode,
        checkpoint_after: Option<&str>,
        supersedes: &[Superseded],
    ) -> Result<Pending, DatasetError> {
        let mut line = Vec::with_capacity(512 + written.parts.len() * 160);
        let snapshot = jiff::Timestamp::from_microsecond(run.snapshot())
            .map(|t| t.to_string())
            .unwrap_or_default();
        line.extend_from_slice(b"{\"manifest_version\":");
        line.extend_from_slice(MANIFEST_VERSION.to_string().as_bytes());
        line.extend_from_slice(b",\"schema_version\":");
        write_str(&mut line, SCHEMA_VERSION, false);
        line.extend_from_slice(b",\"run\":");
        write_str(&mut line, run.name(), false);
        line.extend_from_slice(b",\"snapshot_at\":");
        write_str(&mut line, &snapshot, false);
        line.extend_from_slice(format!(",\"snapshot_us\":{}", run.snapshot()).as_bytes());
        line.extend_from_slice(b",\"mode\":");
        write_str(&mut line, mode.as_str(), false);
        line.extend_from_slice(b",\"checkpoint_after\":");
        match checkpoint_after {
            Some(d) => write_str(&mut line, d, false),
            None => line.extend_from_slice(b"null"),
        }
        line.extend_from_slice(b",\"parts\":[");
        let mut staged = Vec::with_capacity(written.parts.len());
        for (i, p) in written.parts.iter().enumerate() {
            let rel = relative(&self.root, &p.dest)?;
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(b"{\"table\":");
            write_str(&mut line, p.table.name(), false);
            line.extend_from_slice(b",\"path\":");
            write_str(&mut line, &rel, false);
            line.extend_from_slice(format!(",\"rows\":{}}}", p.rows).as_bytes());
            staged.push((p.tmp.clone(), p.dest.clone()));
        }
        line.extend_from_slice(b"],\"supersedes\":[");
        for (i, s) in supersedes.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(b"{\"conversation_id\":");
            write_str(&mut line, &s.conversation_id, false);
            line.extend_from_slice(b",\"change\":");
            write_str(&mut line, s.change, false);
            line.extend_from_slice(b",\"tables\":[");
            for (j, t) in s.tables().iter().enumerate() {
                if j > 0 {
                    line.push(b',');
                }
                write_str(&mut line, t.name(), false);
            }
            line.extend_from_slice(b"],\"before_snapshot_us\":");
            line.extend_from_slice(run.snapshot().to_string().as_bytes());
            line.push(b'}');
        }
        line.extend_from_slice(b"]}\n");
        let name = format!("{}.json", run.name());
        let pending = self.root.join(META_DIR).join("pending");
        write_atomic_in(&pending, &name, &line)?;
        Ok(Pending {
            root: self.root.clone(),
            manifest: pending.join(&name),
            name,
            staged,
        })
    }
}

/// A staged run: its manifest written, its parts under their temporary
/// names. [`publish`](Self::publish) gives them their final names.
#[derive(Debug)]
pub struct Pending {
    root: PathBuf,
    manifest: PathBuf,
    name: String,
    staged: Vec<(PathBuf, PathBuf)>,
}

impl Pending {
    /// Publishes the run: each part renamed to its final name, the
    /// directories synced, the manifest moved to `runs/`.
    pub fn publish(self) -> Result<(), DatasetError> {
        publish_all(&self.root, &self.staged, &self.manifest, &self.name)
    }

    /// The parts' final paths.
    pub fn parts(&self) -> impl Iterator<Item = &Path> {
        self.staged.iter().map(|(_, d)| d.as_path())
    }
}

/// Renames every `(tmp, dest)`, syncs their directories, then moves the
/// manifest `pending` (named `name`) to `runs/`.
fn publish_all(
    root: &Path,
    staged: &[(PathBuf, PathBuf)],
    pending: &Path,
    name: &str,
) -> Result<(), DatasetError> {
    let mut dirs: Vec<&Path> = Vec::new();
    for (tmp, dest) in staged {
        // Renamed only inside the dataset: no link on the way to the
        // part's directory.
        let rel = relative(root, dest)?;
        if let Some(dir) = Path::new(&rel).parent() {
            dir_inside(root, dir)?;
        }
        publish(tmp, dest)?;
        if let Some(d) = dest.parent()
            && !dirs.contains(&d)
        {
            dirs.push(d);
        }
    }
    for d in dirs {
        sync_dir(d);
    }
    let runs = root.join(META_DIR).join("runs");
    let done = runs.join(name);
    fs::rename(pending, &done).map_err(io_at(&done))?;
    sync_dir(&runs);
    if let Some(p) = pending.parent() {
        sync_dir(p);
    }
    Ok(())
}

/// The temporary path of the part whose final path is `dest`.
fn tmp_of(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(tmp_name(&name))
}

/// `path` relative to `root`, with `/` between its components.
fn relative(root: &Path, path: &Path) -> Result<String, DatasetError> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| DatasetError::io(path, io::Error::other("a part outside its dataset")))?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

/// A manifest's part path as a relative path under a table's directory:
/// `None` for anything else (an absolute path, `..`, another directory),
/// which is never touched.
fn part_path(text: &str) -> Option<PathBuf> {
    let p = Path::new(text);
    let mut comps = p.components();
    let first = comps.next()?;
    let Component::Normal(t) = first else {
        return None;
    };
    if !Table::ALL.iter().any(|x| t == x.name()) {
        return None;
    }
    if !comps.all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let name = p.file_name()?.to_string_lossy();
    (name.starts_with("part-") && name.ends_with(".parquet")).then(|| p.to_path_buf())
}

/// The facts of a manifest line; `None` when it is not one.
fn parse_manifest(bytes: &[u8], parser: &mut Parser) -> Option<ManifestFacts> {
    let doc = parser.parse(bytes).ok()?;
    let root = doc.root();
    root.get("manifest_version")?.as_i64()?;
    let mode = match root.get("mode")?.as_str()? {
        "full" => RunMode::Full,
        "incremental" => RunMode::Incremental,
        _ => return None,
    };
    let checkpoint_after = root
        .get("checkpoint_after")
        .and_then(|v| v.as_str())
        .map(str::to_owned);
    let mut parts = Vec::new();
    for p in root.get("parts")?.as_array()?.iter() {
        parts.push(part_path(p.get("path")?.as_str()?)?);
    }
    Some(ManifestFacts {
        mode,
        checkpoint_after,
        parts,
    })
}

/// The `*.json` names of regular files in `dir` (not hidden; a link is
/// not a manifest), sorted.
fn json_files(dir: &Path) -> Result<Vec<String>, DatasetError> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(io_at(dir))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// Whether `dir` or a directory under it holds a file.
fn holds_anything(dir: &Path) -> bool {
    let Ok(rd) = fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_dir() => holds_anything(&e.path()),
        Ok(_) => true,
        Err(_) => true,
    })
}

/// Removes the temporary part files (`.part-*.parquet.tmp`) in `dir` and
/// the directories under it (links are not followed).
fn remove_tmp_parts(dir: &Path) -> Result<(), DatasetError> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            remove_tmp_parts(&e.path())?;
        } else if name.starts_with(".part-") && name.ends_with(".parquet.tmp") {
            let p = e.path();
            fs::remove_file(&p).map_err(io_at(&p))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `dir/name` atomically, as a file the tool owns
/// ([`Output::create_entry`]): a new temporary file beside it, synced,
/// renamed over the name (a link there replaced, never written through),
/// the directory synced.
fn write_atomic_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), DatasetError> {
    let dest = dir.join(name);
    let mut f = Output::create_entry(&dest)?;
    f.write_all(bytes).map_err(io_at(&dest))?;
    f.commit()?;
    Ok(())
}

/// Puts the directory `new` (a complete dataset beside `target`, in the
/// same parent) in the place of `target`, whole: on Linux the two are
/// exchanged in one `renameat2(RENAME_EXCHANGE)`, so that a reader sees
/// the old dataset or the new one; elsewhere (or where the file system
/// cannot exchange) `target` is renamed aside first, leaving a moment with
/// no `target`. The old dataset is then removed. A `target` that does not
/// exist is created by the rename.
pub fn replace_dir(target: &Path, new: &Path) -> Result<(), DatasetError> {
    if fs::symlink_metadata(target).is_err() {
        fs::rename(new, target).map_err(io_at(target))?;
        if let Some(p) = target.parent() {
            sync_dir(p);
        }
        return Ok(());
    }
    if !exchange(new, target)? {
        let aside = new.with_extension("old");
        fs::rename(target, &aside).map_err(io_at(target))?;
        fs::rename(new, target).map_err(io_at(target))?;
        fs::rename(&aside, new).map_err(io_at(&aside))?;
    }
    if let Some(p) = target.parent() {
        sync_dir(p);
    }
    // `new` now holds the old dataset.
    fs::remove_dir_all(new).map_err(io_at(new))
}

/// Exchanges two paths atomically; `false` when this system or file
/// system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<bool, DatasetError> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| DatasetError::io(p, io::Error::other("a path with a NUL byte")))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are NUL-terminated paths that live through the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP) => Ok(false),
        _ => Err(DatasetError::io(b, e)),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> Result<bool, DatasetError> {
    Ok(false)
}
