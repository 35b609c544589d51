//! Parquet export of a generated store beside a `stats`-like pass over the
//! same store, in the same run (figures in `benches/README.md`):
//!
//! - `stats_like`: every conversation read (`Store::stream`), its events
//!   counted by kind and its usage totalled (`Conversation::usage`): the
//!   work `agentlog stats` does on one thread;
//! - `export`: the same conversations written as a Parquet dataset
//!   (`agentlog::parquet`: all five tables, the verbatim JSON included) to
//!   a new directory;
//! - `export_no_json`: the same without the `events.json` column.
//!
//! Sizes (environment): `AGENTLOG_BENCH_PARQUET_CONVERSATIONS` (default
//! 60) × `AGENTLOG_BENCH_PARQUET_EVENTS` (default 150), content at the
//! corpus' scale. After criterion's runs the variants are measured once
//! more interleaved (`AGENTLOG_BENCH_ROUNDS` rounds, default 7): the medians
//! and ratios printed at the end come from that pass, with the dataset's
//! size against the store's.
//!
//! `cargo bench --features gen,parquet --bench parquet`

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agentlog::json::Parser;
use agentlog::openhands::{Kind, Store};
use agentlog::parquet::{
    Dataset, DatasetDir, DatasetOptions, EventSelection, OpenHandsInput, RunId, RunMode,
    add_openhands,
};
use agentlog::synth::{GenConfig, write_store};
use criterion::Criterion;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stats_like(root: &Path) -> u64 {
    let store = Store::open(root).expect("store");
    let mut stream = store.stream();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut tokens = 0u64;
    while let Some(item) = stream.next() {
        let Ok(item) = item else { continue };
        for e in item.conversation.events() {
            let k = e.kind();
            *kinds
                .entry(k.as_ref().map_or("(none)", Kind::as_str).to_owned())
                .or_default() += 1;
        }
        if let Ok(u) = item.conversation.usage(item.parser) {
            tokens += u.values().map(|u| u.prompt_tokens).sum::<u64>();
        }
    }
    tokens + kinds.values().sum::<u64>()
}

fn export(root: &Path, out: &Path, json: bool) -> u64 {
    let store = Store::open(root).expect("store");
    let dir = DatasetDir::open(out, None).expect("dataset directory");
    let run = RunId::new(1);
    let mut ds = Dataset::create(
        out,
        &run,
        DatasetOptions {
            json,
            ..DatasetOptions::default()
        },
    )
    .expect("dataset");
    let mut stream = store.stream();
    let mut parser = Parser::new();
    while let Some(item) = stream.next() {
        let Ok(item) = item else { continue };
        let conv = item.conversation;
        let id = conv.name().to_owned();
        let input = OpenHandsInput {
            conversation: conv,
            id: &id,
            parent: None,
            depth: item.depth,
            change: "full",
            events: EventSelection::All,
        };
        add_openhands(&mut ds, &input, &mut parser).expect("rows");
        ds.bound_memory().expect("bound");
    }
    let w = ds.finish(true).expect("finish");
    let rows = w.rows.iter().sum();
    dir.stage(&run, w, RunMode::Full, None, &[])
        .and_then(|p| p.publish())
        .expect("publish");
    rows
}

fn du(p: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        let t = e.file_type().expect("type");
        if t.is_dir() {
            n += du(&e.path());
        } else {
            n += e.metadata().map_or(0, |m| m.len());
        }
    }
    n
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("store");
    let cfg = GenConfig {
        conversations: env_usize("AGENTLOG_BENCH_PARQUET_CONVERSATIONS", 60),
        events_per_conversation: env_usize("AGENTLOG_BENCH_PARQUET_EVENTS", 150),
        seed: 15,
        threads: 0,
        ..GenConfig::default()
    };
    write_store(&root, &cfg).expect("generate");
    let mut n = 0u64;
    let mut fresh = || {
        n += 1;
        tmp.path().join(format!("ds{n}"))
    };
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    let mut g = c.benchmark_group("parquet");
    g.bench_function("stats_like", |b| b.iter(|| black_box(stats_like(&root))));
    g.bench_function("export", |b| {
        b.iter_batched(
            &mut fresh,
            |out| {
                let r = export(&root, &out, true);
                let _ = std::fs::remove_dir_all(&out);
                black_box(r)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.bench_function("export_no_json", |b| {
        b.iter_batched(
            &mut fresh,
            |out| {
                let r = export(&root, &out, false);
                let _ = std::fs::remove_dir_all(&out);
                black_box(r)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
    c.final_summary();

    let rounds = env_usize("AGENTLOG_BENCH_ROUNDS", 7);
    let (mut s, mut e, mut e2) = (Vec::new(), Vec::new(), Vec::new());
    let (mut full, mut slim) = (0, 0);
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(stats_like(&root));
        s.push(t.elapsed());
        let out = fresh();
        let t = Instant::now();
        black_box(export(&root, &out, true));
        e.push(t.elapsed());
        full = du(&out);
        let _ = std::fs::remove_dir_all(&out);
        let out = fresh();
        let t = Instant::now();
        black_box(export(&root, &out, false));
        e2.push(t.elapsed());
        slim = du(&out);
        let _ = std::fs::remove_dir_all(&out);
    }
    let (s, e, e2) = (median(&mut s), median(&mut e), median(&mut e2));
    let input = du(&root);
    println!(
        "interleaved medians ({rounds} rounds): stats_like {s:?}, export {e:?} ({:.2}x), \
         export_no_json {e2:?} ({:.2}x)",
        e.as_secs_f64() / s.as_secs_f64(),
        e2.as_secs_f64() / s.as_secs_f64()
    );
    println!(
        "sizes: store {input} B, dataset {full} B ({:.3}), without json {slim} B ({:.3})",
        full as f64 / input as f64,
        slim as f64 / input as f64
    );
}
