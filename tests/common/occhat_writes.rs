//! Helpers for the tests of the OC Chat writer under hostile layouts, a
//! live app and faults: store snapshots that do not follow links, hashes of
//! every file version, the command, and a tmpfs mount that unmounts itself.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, ManualClock, SessionStore, TimeZone};

/// 2025-04-07 08:55:43 UTC.
pub const T0: u64 = 1_744_016_143_000_000_000;
/// One minute in nanoseconds.
pub const MIN: u64 = 60_000_000_000;

/// A message object.
pub fn msg(role: &str, content: &str) -> OwnedValue {
    let mut m = agentlog::json::Map::new();
    m.insert("role", role.into());
    m.insert("content", content.into());
    OwnedValue::Object(m)
}

/// A store in UTC with a manual clock at `ns`.
pub fn store_at(root: &Path, ns: u64) -> SessionStore {
    SessionStore::new(root)
        .with_time_zone(TimeZone::utc())
        .with_clock(std::sync::Arc::new(ManualClock::at_unix_nanos(ns)))
}

/// Saves session `name` twice (at `T0` and `T0 + MIN`, so `archive/` holds
/// a version), its newest chat log ending in an unanswered user message.
pub fn two_saves(root: &Path, name: &str) {
    let mut s = ChatSession::new(name, "m");
    s.messages = vec![msg("system", "sys"), msg("user", "one")];
    store_at(root, T0).save_all(&mut s).unwrap();
    s.messages.push(msg("assistant", "two"));
    s.messages.push(msg("user", &format!("three of {name}")));
    store_at(root, T0 + MIN).save_all(&mut s).unwrap();
}

fn hash(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(b);
    h.finish()
}

/// What one name in the store is: a file's hash, a link's target, a
/// directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Entry {
    File(u64),
    Link(PathBuf),
    Dir,
    Other,
}

/// Every name under `root`, links not followed.
pub fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let Ok(m) = fs::symlink_metadata(&p) else {
                continue;
            };
            let entry = if m.file_type().is_symlink() {
                Entry::Link(fs::read_link(&p).unwrap())
            } else if m.is_dir() {
                walk(root, &p, out);
                Entry::Dir
            } else if m.is_file() {
                Entry::File(hash(&fs::read(&p).unwrap()))
            } else {
                Entry::Other
            };
            out.insert(rel, entry);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Whether a name is a temporary file or the journal (not a version).
pub fn is_scratch(rel: &str) -> bool {
    let name = Path::new(rel)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with(".occhat-tmp-") || name == ".occhat-pending"
}

/// The hash of every file version in the store (archived copies included;
/// temporary files and the journal left out).
pub fn versions(root: &Path) -> BTreeSet<u64> {
    snapshot(root)
        .into_iter()
        .filter(|(rel, _)| !is_scratch(rel) && !rel.ends_with(".oc_chat_clean_exit"))
        .filter_map(|(_, e)| match e {
            Entry::File(h) => Some(h),
            _ => None,
        })
        .collect()
}

/// [`versions`] where a JSON file counts by its value (a migration
/// re-serialises the flat records, as OC Chat's `persistence.py` does).
pub fn json_versions(root: &Path) -> BTreeSet<u64> {
    snapshot(root)
        .into_iter()
        .filter(|(rel, e)| !is_scratch(rel) && matches!(e, Entry::File(_)))
        .map(|(rel, _)| {
            let b = fs::read(root.join(&rel)).unwrap();
            match OwnedValue::parse(&b) {
                Ok(v) if rel.ends_with(".json") => hash(&v.to_json()),
                _ => hash(&b),
            }
        })
        .collect()
}

/// Panics unless every JSON value (or other file) of `before`
/// ([`json_versions`]) is still in `root`.
pub fn assert_kept_json(root: &Path, before: &BTreeSet<u64>, what: &str) {
    let lost = before.difference(&json_versions(root)).count();
    assert!(
        lost == 0,
        "{what}: {lost} version(s) lost: {:#?}",
        snapshot(root)
    );
}

/// Panics unless every version of `before` is still in `root`.
pub fn assert_kept(root: &Path, before: &BTreeSet<u64>, what: &str) {
    let now = versions(root);
    let lost: Vec<_> = before.difference(&now).collect();
    assert!(
        lost.is_empty(),
        "{what}: {} version(s) lost; store now: {:#?}",
        lost.len(),
        snapshot(root)
    );
}

/// Runs `agentlog occhat --sessions-dir ROOT ARGS…` in UTC.
#[cfg(feature = "cli")]
pub fn occhat(root: &Path, args: &[&str]) -> Output {
    use std::process::Stdio;
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
    c.stdin(Stdio::null())
        .env_remove("OC_CHAT_SESSIONS_DIR")
        .env("TZ", "UTC")
        .arg("occhat")
        .arg("--sessions-dir")
        .arg(root)
        .args(args);
    let out = c.output().expect("run agentlog");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    out
}

/// The exit code and the two streams, for messages.
pub fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The live files of a session directory whose names end in `suffix`.
pub fn live(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Reads a JSON file.
pub fn json(path: &Path) -> OwnedValue {
    OwnedValue::parse(&fs::read(path).unwrap()).unwrap()
}

/// A tmpfs mounted on a directory, unmounted when dropped.
pub struct Tmpfs {
    pub path: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs with `options` on `path` (created), or says why not
    /// and gives `None` (not root, or no mount allowed here).
    pub fn mount(path: &Path, options: &str, test: &str) -> Option<Tmpfs> {
        if unsafe { libc::geteuid() } != 0 {
            crate::common::skip_unless_ci(test, "mounting a tmpfs needs root");
            return None;
        }
        fs::create_dir_all(path).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(path)
            .status();
        match st {
            Ok(s) if s.success() => Some(Tmpfs {
                path: path.to_path_buf(),
            }),
            other => {
                crate::common::skip_unless_ci(test, &format!("cannot mount a tmpfs ({other:?})"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.path)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Busy (a file still open while a test unwinds): detach it now,
            // the kernel frees it once the last file closes.
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}
