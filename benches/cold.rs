//! A parallel store scan on a cold and on a warm page cache, with and
//! without read-ahead (`agentlog::readahead`), beside the parse floor in the
//! same process (see `benches/README.md` for the figures):
//!
//! - `floor_parse`: one thread reads every file the reader reads and builds
//!   simd-json's tape (`benches/support/floor.rs`);
//! - `plain`: `Store::par_map` over every event's envelope with read-ahead
//!   off (the scan as it was before read-ahead), on rayon's pool (one
//!   thread per core);
//! - `plain_32t`: the same on a pool of 32 threads: more reads in flight by
//!   more readers;
//! - `ahead`: the same with the default read-ahead; `ahead_N`: depth N.
//!
//! The warm group runs on a page cache holding the store. The cold group
//! drops the page cache before every run (`sync; echo 3 >
//! /proc/sys/vm/drop_caches`: root only; without it the group is skipped
//! with a message). After criterion's runs both groups are measured once
//! more with their variants interleaved round robin (medians of wall and
//! process CPU time): the ratios printed at the end come from that pass.
//!
//! The store: `AGENTLOG_BENCH_STORE` (an existing store, e.g. the
//! corpus-copy store of `benches/corpus_store.py`), else a generated one of
//! `AGENTLOG_BENCH_CONVERSATIONS` (default 300) × `AGENTLOG_BENCH_EVENTS`
//! (default 60) under the system's temporary directory. Rounds:
//! `AGENTLOG_BENCH_ROUNDS` (warm, default 11), `AGENTLOG_BENCH_COLD_ROUNDS`
//! (default 5).
//!
//! `cargo bench --features gen,parallel --bench cold`

#[path = "support/floor.rs"]
mod floor;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/setup.rs"]
mod setup;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentlog::ReadAhead;
use agentlog::openhands::Store;
use agentlog::synth::GenConfig;
use criterion::{Criterion, SamplingMode};
use measure::{Run, interleaved_cpu};
use setup::{env_usize, generate};

/// Drops the page cache (and the dentry and inode caches); `Err` says why
/// it cannot be done here.
fn drop_caches() -> Result<(), String> {
    // SAFETY: `sync` takes no argument and cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", b"3")
        .map_err(|e| format!("/proc/sys/vm/drop_caches: {e}"))
}

/// Every event's envelope of the store, on the current rayon pool.
fn scan(root: &Path, ahead: ReadAhead) -> u64 {
    let store = Store::open(root).expect("store").with_read_ahead(ahead);
    store
        .par_map(|item| match item {
            Ok(it) => it
                .conversation
                .events()
                .filter(|e| e.kind().is_some() && e.id().is_some())
                .count() as u64,
            Err(_) => 0,
        })
        .into_iter()
        .sum()
}

fn variants(root: &Path) -> Vec<(&'static str, Run<'_>)> {
    let wide = rayon::ThreadPoolBuilder::new()
        .num_threads(32)
        .build()
        .expect("a pool of 32 threads");
    let wide = std::sync::Arc::new(wide);
    let mut v: Vec<(&'static str, Run<'_>)> = vec![
        (
            "floor_parse",
            Box::new(move || {
                let mut buf = Vec::with_capacity(1 << 16);
                let mut tape = floor::TapeFloor::default();
                floor::parse_all(root, &mut buf, &mut tape) + tape.nodes as u64
            }),
        ),
        ("plain", Box::new(move || scan(root, ReadAhead::off()))),
        (
            "plain_32t",
            Box::new(move || wide.install(|| scan(root, ReadAhead::off()))),
        ),
        ("ahead", Box::new(move || scan(root, ReadAhead::default()))),
    ];
    for (name, depth) in [("ahead_8", 8), ("ahead_32", 32), ("ahead_128", 128)] {
        v.push((name, Box::new(move || scan(root, ReadAhead::new(depth)))));
    }
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let test_mode = args.iter().any(|a| a == "--test");
    let tmp;
    let root: PathBuf = match std::env::var_os("AGENTLOG_BENCH_STORE") {
        Some(p) => PathBuf::from(p),
        None => {
            tmp = tempfile::tempdir().expect("a temporary directory");
            let (c, e) = if test_mode {
                (10, 10)
            } else {
                (
                    env_usize("AGENTLOG_BENCH_CONVERSATIONS", 300),
                    env_usize("AGENTLOG_BENCH_EVENTS", 60),
                )
            };
            let cfg = GenConfig {
                conversations: c,
                events_per_conversation: e,
                seed: 7,
                ..GenConfig::default()
            };
            generate(tmp.path(), &cfg);
            tmp.path().to_path_buf()
        }
    };
    let vs = variants(&root);
    // Every variant sees the same events.
    let want = scan(&root, ReadAhead::off());
    for (name, run) in &vs[1..] {
        assert_eq!(run(), want, "{name}");
    }
    eprintln!(
        "store {}: {want} events; load {}",
        root.display(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let cold = drop_caches();
    if let Err(why) = &cold {
        eprintln!("cold group skipped: cannot drop the page cache ({why}; needs root)");
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("cold_read_warm");
        g.sampling_mode(SamplingMode::Flat);
        for (name, run) in &vs {
            g.bench_function(*name, |b| b.iter(|| black_box(run())));
        }
        g.finish();
    }
    if cold.is_ok() {
        let mut g = c.benchmark_group("cold_read_cold");
        g.sampling_mode(SamplingMode::Flat);
        g.warm_up_time(Duration::from_millis(1));
        for (name, run) in &vs {
            g.bench_function(*name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let _ = drop_caches();
                        let t = Instant::now();
                        black_box(run());
                        total += t.elapsed();
                    }
                    total
                })
            });
        }
        g.finish();
    }
    c.final_summary();
    if test_mode {
        return;
    }
    interleaved_cpu("warm", &vs, env_usize("AGENTLOG_BENCH_ROUNDS", 11), &|| {});
    if cold.is_ok() {
        interleaved_cpu(
            "cold",
            &vs,
            env_usize("AGENTLOG_BENCH_COLD_ROUNDS", 5),
            &|| {
                let _ = drop_caches();
            },
        );
    }
    eprintln!(
        "load at end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}
