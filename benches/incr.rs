//! Checkpointed rescans of a generated store, beside a bare directory
//! walk in the same run (figures in `benches/README.md`):
//!
//! - `walk`: a bare directory walk listing every directory of the store
//!   (nothing opened but the directories);
//! - `rescan_unchanged`: `Store::changes_since` from a checkpoint of the
//!   same store (nothing changed);
//! - `rescan_1pct`: the same with one new event in each of 1 % of the
//!   conversations (the checkpoint is taken before they were written, so
//!   each iteration reads them again);
//! - `full_scan`: the first scan, without a checkpoint (every event read).
//!
//! Also printed: the checkpoint's size per conversation (serialised), and
//! the files and directories one unchanged rescan opens (the per-thread
//! counter of `agentlog::source::opens`).
//!
//! Sizes (environment): `AGENTLOG_BENCH_INCR_CONVERSATIONS` (default 2000)
//! × `AGENTLOG_BENCH_INCR_EVENTS` (default 20). After criterion's runs the
//! variants are measured once more interleaved (round robin,
//! `AGENTLOG_BENCH_ROUNDS` rounds, default 11): the medians and ratios
//! printed at the end come from that pass.
//!
//! `cargo bench --features gen --bench incr`

#[path = "support/floor.rs"]
mod floor;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentlog::openhands::{Checkpoint, ScanOptions, Store};
use agentlog::source::opens;
use agentlog::synth::{GenConfig, write_store};
use criterion::Criterion;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Drains a changes-since scan; the number of events it handed out.
fn rescan(root: &Path, since: Option<&Checkpoint>) -> u64 {
    let mut ch = Store::changes_since(root, since, ScanOptions::default()).expect("scan");
    let mut n = 0u64;
    while let Some(c) = ch.next() {
        if let Ok(c) = c {
            n += c.events().count() as u64 + 1;
        }
    }
    n
}

fn checkpoint_of(root: &Path) -> Checkpoint {
    let mut ch = Store::changes_since(root, None, ScanOptions::default()).expect("scan");
    while ch.next().is_some() {}
    ch.into_checkpoint()
}

/// Adds one event (a copy of its last, under the next index) to every
/// hundredth top-level conversation.
fn add_one_percent(root: &Path) -> usize {
    let store = Store::open(root).expect("store");
    let mut n = 0;
    for (i, dir) in store.dirs().iter().enumerate() {
        if i % 100 != 0 {
            continue;
        }
        let events = dir.join("events");
        let mut names: Vec<String> = fs::read_dir(&events)
            .expect("events")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|s| s.starts_with("event-"))
            .collect();
        names.sort();
        let Some(last) = names.last() else { continue };
        let next = names.len();
        fs::copy(
            events.join(last),
            events.join(format!(
                "event-{next:05}-0000abcd-0000-4000-8000-{i:012}.json"
            )),
        )
        .expect("copy");
        n += 1;
    }
    n
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let conversations = env_usize("AGENTLOG_BENCH_INCR_CONVERSATIONS", 2000);
    let events = env_usize("AGENTLOG_BENCH_INCR_EVENTS", 20);
    let tmp = tempfile::tempdir().expect("tempdir");
    let a: PathBuf = tmp.path().join("unchanged");
    let cfg = GenConfig {
        conversations,
        events_per_conversation: events,
        seed: 11,
        ..GenConfig::default()
    };
    let s = write_store(&a, &cfg).expect("generate");
    eprintln!(
        "generated {} conversations + {} sub-agents, {} files, {:.1} MB",
        s.conversations,
        s.subagents,
        s.files,
        s.bytes as f64 / 1e6
    );
    // Past the racy margin, so that the checkpoint trusts every stamp.
    std::thread::sleep(Duration::from_millis(2100));
    let cp_a = checkpoint_of(&a);
    let bytes = cp_a.to_bytes().len();
    eprintln!(
        "checkpoint: {} conversations, {} bytes serialised, {} bytes per conversation",
        cp_a.len(),
        bytes,
        bytes / cp_a.len().max(1)
    );
    let before = opens::counts();
    let n = rescan(&a, Some(&cp_a));
    let after = opens::counts();
    eprintln!(
        "unchanged rescan: {n} changes, {} files and {} directories opened",
        after.0 - before.0,
        after.1 - before.1
    );
    // The second store: the same, then 1 % of the conversations grow.
    let b = tmp.path().join("grown");
    write_store(&b, &cfg).expect("generate");
    std::thread::sleep(Duration::from_millis(2100));
    let cp_b = checkpoint_of(&b);
    let grown = add_one_percent(&b);
    eprintln!("{grown} conversations given one more event");

    type Run<'a> = Box<dyn Fn() -> u64 + 'a>;
    let variants: Vec<(&str, Run<'_>)> = vec![
        ("walk", Box::new(|| floor::bare_walk(&a) as u64)),
        ("rescan_unchanged", Box::new(|| rescan(&a, Some(&cp_a)))),
        ("rescan_1pct", Box::new(|| rescan(&b, Some(&cp_b)))),
        ("full_scan", Box::new(|| rescan(&a, None))),
    ];
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("incr");
        for (name, run) in &variants {
            g.bench_function(*name, |bch| bch.iter(|| black_box(run())));
        }
        g.finish();
    }
    let rounds = env_usize("AGENTLOG_BENCH_ROUNDS", 11);
    let mut wall = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, (_, run)) in variants.iter().enumerate() {
            let t = Instant::now();
            black_box(run());
            wall[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let med: Vec<f64> = wall.iter_mut().map(|w| median(w)).collect();
    println!();
    println!("interleaved medians ({rounds} rounds, round robin):");
    for (i, (name, _)) in variants.iter().enumerate() {
        println!("  {name:<18} {:>9.2} ms", med[i]);
    }
    let ratio = |x: usize, y: usize| med[x] / med[y];
    println!("  rescan_unchanged / walk  {:.2}", ratio(1, 0));
    println!("  rescan_1pct / walk       {:.2}", ratio(2, 0));
    println!("  rescan_1pct / unchanged  {:.2}", ratio(2, 1));
    println!("  full_scan / walk         {:.2}", ratio(3, 0));
}
