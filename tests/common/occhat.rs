//! Helpers for the OC Chat tests: restoring a corpus case into a temporary
//! directory (mtimes and empty directories, which git does not keep), and
//! small builders.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, ManualClock, SessionStore, TimeZone};

/// The OC Chat corpus folder.
pub fn corpus() -> PathBuf {
    super::corpus_dir().join("occhat")
}

/// Reads a JSON file of the corpus.
pub fn read_json(path: &Path) -> OwnedValue {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    OwnedValue::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A member of an object, panicking with the key when absent.
pub fn at<'a>(v: &'a OwnedValue, key: &str) -> &'a OwnedValue {
    v.get(key)
        .unwrap_or_else(|| panic!("missing {key:?} in {v}"))
}

/// An array's elements.
pub fn arr(v: &OwnedValue) -> &[OwnedValue] {
    v.as_array()
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("not an array: {v}"))
}

/// A string value.
pub fn s(v: &OwnedValue) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// A restored corpus case: `dir/sessions` is the store, `dir` the cwd the
/// oracle was recorded in.
pub struct Case {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub oracle: OwnedValue,
}

impl Case {
    pub fn sessions(&self) -> PathBuf {
        self.dir.join("sessions")
    }
}

/// Sets a file's or directory's modification time.
pub fn set_mtime(path: &Path, t: SystemTime) {
    let f = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.set_modified(t)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Writes `bytes` as the meta file of the session directory `dir` under
/// `root` (created as needed), for a meta the listing must cope with.
pub fn put_meta(root: &Path, dir: &str, bytes: &[u8]) {
    let d = root.join(dir);
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join(format!("{dir}_2025-01-01--00-00-00_meta.json")),
        bytes,
    )
    .unwrap();
}

pub fn from_ns(ns: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(ns)
}

fn ns_of(v: &OwnedValue) -> u64 {
    at(v, "mtime_ns")
        .as_number()
        .unwrap()
        .as_str()
        .parse()
        .unwrap()
}

/// Copies `<case>/sessions` into a temporary directory and restores what git
/// does not keep: every `store.dirs[]` entry, every file's mtime, then the
/// directories' mtimes, deepest first.
pub fn restore(case: &str) -> Case {
    let src = corpus().join(case);
    let oracle = read_json(&src.join("oracle.json"));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(case);
    let sessions = dir.join("sessions");
    super::copy_tree(&src.join("sessions"), &sessions);
    let store = at(&oracle, "store");
    for d in arr(at(store, "dirs")) {
        fs::create_dir_all(sessions.join(s(at(d, "path")))).unwrap();
    }
    for f in arr(at(store, "files")) {
        set_mtime(&sessions.join(s(at(f, "path"))), from_ns(ns_of(f)));
    }
    let mut dirs: Vec<&OwnedValue> = arr(at(store, "dirs")).iter().collect();
    dirs.sort_by_key(|d| {
        std::cmp::Reverse(
            s(at(d, "path")).matches('/').count() + usize::from(s(at(d, "path")) != "."),
        )
    });
    for d in dirs {
        set_mtime(&sessions.join(s(at(d, "path"))), from_ns(ns_of(d)));
    }
    Case { tmp, dir, oracle }
}

/// A store in UTC with a manual clock at `ns`.
pub fn store_at(dir: impl Into<PathBuf>, ns: u64) -> (SessionStore, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::at_unix_nanos(ns));
    let store = SessionStore::new(dir)
        .with_time_zone(TimeZone::utc())
        .with_clock(clock.clone());
    (store, clock)
}

/// Every file under `root` (relative path, bytes), sorted.
pub fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Parses an ISO-8601 UTC time of the build log (`2025-04-07T08:30:00.042Z`)
/// to nanoseconds since the epoch.
pub fn iso_ns(t: &str) -> u64 {
    let t = t.trim_end_matches('Z');
    let (date, time) = t.split_once('T').unwrap();
    let mut d = date.split('-').map(|x| x.parse::<i64>().unwrap());
    let (y, m, dd) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.split(':').map(|x| x.parse::<i64>().unwrap());
    let (hh, mm, ss) = (h.next().unwrap(), h.next().unwrap(), h.next().unwrap());
    let frac_ns: u64 = format!("{frac:0<9}").get(..9).unwrap().parse().unwrap();
    // Days from civil (Howard Hinnant).
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    secs as u64 * 1_000_000_000 + frac_ns
}

/// A chat message `{"role": role, "content": text}`.
pub fn message(role: &str, text: &str) -> OwnedValue {
    OwnedValue::parse(format!(r#"{{"role":"{role}","content":"{text}"}}"#).as_bytes()).unwrap()
}

/// Saves the session `name` as OC Chat does (`save_all`), its messages
/// `texts`, the user's and the assistant's in turn.
pub fn save_texts(store: &SessionStore, name: &str, texts: &[&str]) -> ChatSession {
    let mut s = ChatSession::new(name, "gpt-5");
    for (k, t) in texts.iter().enumerate() {
        s.messages
            .push(message(if k % 2 == 0 { "user" } else { "assistant" }, t));
    }
    store.save_all(&mut s).unwrap();
    s
}

/// An empty sessions directory in a temporary directory, and its store.
pub fn empty_sessions() -> (tempfile::TempDir, PathBuf, SessionStore) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("sessions");
    fs::create_dir_all(&root).unwrap();
    let store = SessionStore::new(&root);
    (t, root, store)
}

/// The directory OC Chat saved the session `name` in.
pub fn session_dir(root: &Path, name: &str) -> PathBuf {
    fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains(name))
        .unwrap()
}
