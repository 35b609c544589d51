//! A minimal indexer over an OpenHands store: each pass reads only what
//! changed since the last one (`Store::changes_since`), hands the events to
//! a sink, makes the sink durable, and only then saves the checkpoint. A
//! pass that dies before saving is repeated by the next: the sink keys
//! events by (conversation, index), so a repeat replaces rather than
//! duplicates — exactly once in effect.
//!
//! ```text
//! cargo run --example indexer -- STORE CHECKPOINT INDEX [--every SECONDS]
//! ```
//!
//! The index here is a JSON-lines file of `{"conversation", "index",
//! "kind", "id"}`, rewritten atomically each pass; a real indexer would
//! hand the events to its database in one transaction instead.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentlog::json::{Map, OwnedValue, Style};
use agentlog::openhands::{ChangeKind, Checkpoint, ScanOptions, Store};

/// What the index holds of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The event's `kind`, or `malformed`.
    pub kind: String,
    /// The event's `id`.
    pub id: String,
}

/// The index: events by conversation ID, then index.
pub type Index = BTreeMap<String, BTreeMap<u64, Entry>>;

/// What one pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Conversations changed.
    pub changed: usize,
    /// Events handed to the sink.
    pub events: usize,
    /// Conversations rebuilt (rewrite) or dropped (removed).
    pub rebuilt: usize,
}

/// Loads the index file (none yet: empty).
pub fn load_index(path: &Path) -> Index {
    let mut index = Index::new();
    let Ok(text) = fs::read_to_string(path) else {
        return index;
    };
    for line in text.lines() {
        let Ok(v) = OwnedValue::parse(line.as_bytes()) else {
            continue;
        };
        let s = |k: &str| {
            v.get(k)
                .and_then(OwnedValue::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let i = v
            .get("index")
            .and_then(OwnedValue::as_number)
            .and_then(|n| n.as_i64())
            .unwrap_or(0) as u64;
        index.entry(s("conversation")).or_default().insert(
            i,
            Entry {
                kind: s("kind"),
                id: s("id"),
            },
        );
    }
    index
}

/// Writes the index atomically (temporary file, sync, rename).
pub fn save_index(path: &Path, index: &Index) -> std::io::Result<()> {
    let mut out = Vec::new();
    for (conv, events) in index {
        for (i, e) in events {
            let mut m = Map::new();
            m.insert("conversation", OwnedValue::string(conv));
            m.insert("index", OwnedValue::int(*i as i64));
            m.insert("kind", OwnedValue::string(&e.kind));
            m.insert("id", OwnedValue::string(&e.id));
            OwnedValue::Object(m).write_to(&mut out, Style::COMPACT);
            out.push(b'\n');
        }
    }
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp)?;
    f.write_all(&out)?;
    f.sync_all()?;
    fs::rename(&tmp, path)
}

/// One pass: the changes since the checkpoint into the index, the index
/// saved, then the checkpoint.
pub fn pass(store: &Path, checkpoint: &Path, index_path: &Path) -> Result<Pass, String> {
    let since = Checkpoint::load_or_none(checkpoint).map_err(|e| e.to_string())?;
    let mut index = load_index(index_path);
    let mut changes = Store::changes_since(store, since.as_ref(), ScanOptions::default())
        .map_err(|e| e.to_string())?;
    let mut done = Pass::default();
    while let Some(item) = changes.next() {
        let c = match item {
            Ok(c) => c,
            // Its checkpoint marks are kept: tried again next pass.
            Err(e) => {
                eprintln!("indexer: {e}");
                continue;
            }
        };
        done.changed += 1;
        if matches!(c.kind, ChangeKind::Rewrite | ChangeKind::Removed) {
            done.rebuilt += 1;
            index.remove(c.id);
        }
        if c.kind == ChangeKind::Removed {
            continue;
        }
        let events = index.entry(c.id.to_owned()).or_default();
        for e in c.events() {
            done.events += 1;
            events.insert(
                e.index(),
                Entry {
                    kind: if e.is_ok() {
                        e.kind_name().unwrap_or("").to_owned()
                    } else {
                        "malformed".to_owned()
                    },
                    id: e.id().unwrap_or("").to_owned(),
                },
            );
        }
    }
    // The sink first, durable; then the checkpoint.
    save_index(index_path, &index).map_err(|e| format!("{}: {e}", index_path.display()))?;
    changes
        .into_checkpoint()
        .save(checkpoint)
        .map_err(|e| e.to_string())?;
    Ok(done)
}

#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (paths, every) = match args.iter().position(|a| a == "--every") {
        Some(i) => (
            &args[..i],
            args.get(i + 1).and_then(|s| s.parse::<f64>().ok()),
        ),
        None => (&args[..], None),
    };
    let [store, cp, index] = paths else {
        eprintln!("usage: indexer STORE CHECKPOINT INDEX [--every SECONDS]");
        std::process::exit(2);
    };
    let (store, cp, index) = (
        PathBuf::from(store),
        PathBuf::from(cp),
        PathBuf::from(index),
    );
    loop {
        match pass(&store, &cp, &index) {
            Ok(p) => println!(
                "{} conversations changed, {} events, {} rebuilt",
                p.changed, p.events, p.rebuilt
            ),
            Err(e) => {
                eprintln!("indexer: {e}");
                std::process::exit(1);
            }
        }
        match every {
            Some(s) if s > 0.0 => std::thread::sleep(Duration::from_secs_f64(s)),
            _ => break,
        }
    }
}
