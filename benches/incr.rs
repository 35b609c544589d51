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

#[path = "support/changes.rs"]
mod changes;
#[path = "support/floor.rs"]
mod floor;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/setup.rs"]
mod setup;

use std::path::PathBuf;
use std::time::Duration;

use agentlog::source::opens;
use agentlog::synth::GenConfig;
use changes::{add_one_percent, checkpoint_of, rescan};
use criterion::Criterion;
use measure::{Run, bench_all, interleaved_medians};
use setup::{env_usize, generate};

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
    generate(&a, &cfg);
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
    generate(&b, &cfg);
    std::thread::sleep(Duration::from_millis(2100));
    let cp_b = checkpoint_of(&b);
    let grown = add_one_percent(&b, "-0000abcd-0000-4000-8000-").len();
    eprintln!("{grown} conversations given one more event");

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
    bench_all(&mut c, "incr", &variants);
    let rounds = env_usize("AGENTLOG_BENCH_ROUNDS", 11);
    let med = interleaved_medians("interleaved medians", &variants, rounds);
    let ratio = |x: usize, y: usize| med[x] / med[y];
    println!("  rescan_unchanged / walk  {:.2}", ratio(1, 0));
    println!("  rescan_1pct / walk       {:.2}", ratio(2, 0));
    println!("  rescan_1pct / unchanged  {:.2}", ratio(2, 1));
    println!("  full_scan / walk         {:.2}", ratio(3, 0));
}
