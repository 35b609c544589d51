//! The JSON layer against its floor and a common baseline, over every event
//! file of the shared OpenHands corpus (`openhands/*/*/*/events/event-*.json`,
//! sub-agents included), in the same run:
//!
//! - `b_simd_tape` (the parse floor): simd-json's tape alone
//!   (`fill_tape_padded` over a padded copy, `Buffers`, tape and copy buffer
//!   reused);
//! - `c_lazy_envelope`: [`Parser::parse`] plus the envelope lookup (`kind`,
//!   `id`, `timestamp`, `source`, `parent_id` in one pass);
//! - `d_serde_value`: `serde_json::from_slice::<serde_json::Value>` plus the
//!   same lookups.
//!
//! Group `json/in_memory` runs them over the files loaded in memory first;
//! group `json/with_reads` reads each file into a reused buffer
//! (`source::read_into`) before parsing it. Throughput is the corpus bytes.
//!
//! Targets: in memory, (c) within 1.2x of (b) and at least 1.7x faster than
//! (d). Figures: `benches/README.md`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agentlog::json::{Parser, Value};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simd_json::{Buffers, INPUT_PADDING, Tape};

fn corpus_dir() -> PathBuf {
    let beside = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/corpus")
    }
}

/// Every `events/event-*.json` under `dir`, sorted.
fn event_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            event_files(&p, out);
        } else if let Some(name) = p.file_name().and_then(|n| n.to_str())
            && name.starts_with("event-")
            && name.ends_with(".json")
            && p.parent()
                .and_then(|d| d.file_name())
                .is_some_and(|d| d == "events")
        {
            out.push(p);
        }
    }
}

/// (b): the tape alone.
struct Floor {
    buffers: Buffers,
    tape: Tape<'static>,
    padded: Vec<u8>,
}

impl Floor {
    fn new() -> Self {
        Floor {
            buffers: Buffers::new(16 * 1024),
            tape: Tape::null().reset(),
            padded: Vec::with_capacity(16 * 1024 + INPUT_PADDING),
        }
    }

    fn parse(&mut self, input: &[u8]) -> usize {
        self.padded.clear();
        self.padded.extend_from_slice(input);
        self.padded.resize(input.len() + INPUT_PADDING, 0);
        let mut tape = std::mem::replace(&mut self.tape, Tape(Vec::new())).reset();
        let ok = simd_json::fill_tape_padded(
            &mut self.padded,
            input.len(),
            &mut self.buffers,
            &mut tape,
        )
        .is_ok();
        let n = tape.0.len() + usize::from(ok);
        self.tape = tape.reset();
        n
    }
}

/// (c): our document and the envelope lookup.
fn lazy_envelope(parser: &mut Parser, input: &[u8]) -> usize {
    let Ok(doc) = parser.parse(input) else {
        return 0;
    };
    let Some(obj) = doc.root().as_object() else {
        return 1;
    };
    let [kind, id, ts, source, parent] =
        obj.get_many(["kind", "id", "timestamp", "source", "parent_id"]);
    let s = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map_or(0, str::len);
    s(kind) + s(id) + s(ts) + s(source) + s(parent)
}

/// (d): serde_json's `Value` and the same lookups.
fn serde_envelope(input: &[u8]) -> usize {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(input) else {
        return 0;
    };
    let s = |k: &str| v.get(k).and_then(|v| v.as_str()).map_or(0, str::len);
    s("kind") + s("id") + s("timestamp") + s("source") + s("parent_id")
}

fn bench(c: &mut Criterion) {
    let mut files = Vec::new();
    event_files(&corpus_dir().join("openhands"), &mut files);
    files.sort();
    if files.is_empty() {
        eprintln!("corpus not found; nothing to measure");
        return;
    }
    let contents: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    let bytes: u64 = contents.iter().map(|c| c.len() as u64).sum();
    eprintln!("{} event files, {bytes} bytes", contents.len());

    // The three agree on what they read.
    let mut parser = Parser::new();
    let mut floor = Floor::new();
    for c in &contents {
        assert_eq!(lazy_envelope(&mut parser, c), serde_envelope(c));
        assert!(floor.parse(c) > 1);
    }

    let mut g = c.benchmark_group("json/in_memory");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("b_simd_tape", |b| {
        b.iter(|| {
            let mut n = 0;
            for c in &contents {
                n += floor.parse(black_box(c));
            }
            n
        })
    });
    g.bench_function("c_lazy_envelope", |b| {
        b.iter(|| {
            let mut n = 0;
            for c in &contents {
                n += lazy_envelope(&mut parser, black_box(c));
            }
            n
        })
    });
    g.bench_function("d_serde_value", |b| {
        b.iter(|| {
            let mut n = 0;
            for c in &contents {
                n += serde_envelope(black_box(c));
            }
            n
        })
    });
    g.finish();

    let mut g = c.benchmark_group("json/with_reads");
    g.throughput(Throughput::Bytes(bytes));
    let mut buf = Vec::with_capacity(64 * 1024);
    let read = |buf: &mut Vec<u8>, p: &Path| {
        buf.clear();
        agentlog::source::read_into(p, buf).is_ok()
    };
    g.bench_function("b_simd_tape", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &files {
                if read(&mut buf, p) {
                    n += floor.parse(&buf);
                }
            }
            n
        })
    });
    g.bench_function("c_lazy_envelope", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &files {
                if read(&mut buf, p) {
                    n += lazy_envelope(&mut parser, &buf);
                }
            }
            n
        })
    });
    g.bench_function("d_serde_value", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &files {
                if read(&mut buf, p) {
                    n += serde_envelope(&buf);
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
