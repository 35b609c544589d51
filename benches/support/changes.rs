//! Checkpointed rescans of an OpenHands store and the growth they are
//! measured on. Shared by `benches/incr.rs`, `benches/rescan.rs` and
//! `benches/follow_memory.rs`.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::openhands::{Checkpoint, ScanOptions, Store};

/// Drains a changes-since scan; the number of changes and events it
/// handed out.
pub fn rescan(root: &Path, since: Option<&Checkpoint>) -> u64 {
    let mut ch = Store::changes_since(root, since, ScanOptions::default()).expect("scan");
    let mut n = 0u64;
    while let Some(c) = ch.next() {
        if let Ok(c) = c {
            n += c.events().count() as u64 + 1;
        }
    }
    n
}

/// The checkpoint of a full scan of `root`.
pub fn checkpoint_of(root: &Path) -> Checkpoint {
    let mut ch = Store::changes_since(root, None, ScanOptions::default()).expect("scan");
    while ch.next().is_some() {}
    ch.into_checkpoint()
}

/// The event files of `events/`, sorted by name.
pub fn event_names(events: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(events)
        .expect("events")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|s| s.starts_with("event-"))
        .collect();
    names.sort();
    names
}

/// Adds one event (a copy of its last, under the next index, `mark` in its
/// name) to every hundredth top-level conversation; the files written.
pub fn add_one_percent(root: &Path, mark: &str) -> Vec<PathBuf> {
    add_every(root, mark, 100)
}

/// Adds one event (as [`add_one_percent`]) to every `nth` top-level
/// conversation, the first included; the files written.
pub fn add_every(root: &Path, mark: &str, nth: usize) -> Vec<PathBuf> {
    let store = Store::open(root).expect("store");
    let mut added = Vec::new();
    for (i, dir) in store.dirs().iter().enumerate() {
        if i % nth.max(1) != 0 {
            continue;
        }
        let events = dir.join("events");
        let names = event_names(&events);
        let Some(last) = names.last() else { continue };
        let to = events.join(format!("event-{:05}{mark}{i:012}.json", names.len()));
        fs::copy(events.join(last), &to).expect("copy");
        added.push(to);
    }
    added
}
