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
//! Samples are paired: each iteration runs one pass of every variant back
//! to back (rotating the order) and each benchmark counts its own pass, so
//! the ratios hold on a machine whose load changes during the run. Groups
//! `json/*` measure wall-clock time; groups `json_cpu/*` the same by the
//! thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time
//! spent waiting for a core on a busy machine.
//!
//! Targets: in memory, (c) within 1.2x of (b) and at least 1.7x faster than
//! (d). Figures: `benches/README.md`.
//!
//! On a busy machine timings wander; instruction counts do not. With
//! `AGENTLOG_BENCH_PASSES=N AGENTLOG_BENCH_VARIANT=b|c|d|p` set, the binary
//! skips criterion and makes N in-memory passes of one variant (`p`: (c)'s
//! parse without the lookups), for `valgrind --tool=callgrind` (see the
//! README).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use agentlog::json::{Parser, Value};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput, criterion_group};
use simd_json::{Buffers, INPUT_PADDING, Tape};

/// The corpus the repository carries (`tests/data/corpus`).
fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus"))
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

fn load() -> (Vec<PathBuf>, Vec<Vec<u8>>) {
    let mut files = Vec::new();
    event_files(&corpus_dir().join("openhands"), &mut files);
    files.sort();
    let contents = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    (files, contents)
}

/// N in-memory passes of one variant, outside criterion (for callgrind).
fn passes(n: usize, variant: &str) {
    let (_, contents) = load();
    let mut parser = Parser::new();
    let mut floor = Floor::new();
    let mut total = 0;
    for _ in 0..n {
        for c in &contents {
            total += match variant {
                "b" => floor.parse(black_box(c)),
                "c" => lazy_envelope(&mut parser, black_box(c)),
                "d" => serde_envelope(black_box(c)),
                // (c) without the lookups: the parser alone.
                "p" => parser.parse(black_box(c)).map_or(0, |d| d.node_count()),
                other => panic!("unknown variant {other:?}: b, c, d or p"),
            };
        }
    }
    eprintln!(
        "{n} passes of {variant} over {} files: {total}",
        contents.len()
    );
}

/// Everything the three variants reuse, and the corpus.
struct Runner {
    files: Vec<PathBuf>,
    contents: Vec<Vec<u8>>,
    parser: Parser,
    floor: Floor,
    buf: Vec<u8>,
}

/// The variants, in the order of their names.
const VARIANTS: [&str; 3] = ["b_simd_tape", "c_lazy_envelope", "d_serde_value"];

impl Runner {
    /// One pass of variant `v` over every event file, from memory or with
    /// each file read into the reused buffer first.
    fn pass(&mut self, v: usize, reads: bool) -> usize {
        let mut n = 0;
        if reads {
            for p in &self.files {
                self.buf.clear();
                if agentlog::source::read_into(p, &mut self.buf).is_err() {
                    continue;
                }
                n += match v {
                    0 => self.floor.parse(&self.buf),
                    1 => lazy_envelope(&mut self.parser, &self.buf),
                    _ => serde_envelope(&self.buf),
                };
            }
        } else {
            for c in &self.contents {
                n += match v {
                    0 => self.floor.parse(black_box(c)),
                    1 => lazy_envelope(&mut self.parser, black_box(c)),
                    _ => serde_envelope(black_box(c)),
                };
            }
        }
        n
    }
}

/// A clock the paired samples read: wall time, or this thread's CPU time.
type Clock = fn() -> Duration;

/// Wall-clock time since the first call.
fn wall_now() -> Duration {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// The CPU time this thread has used (user and system), from
/// `CLOCK_THREAD_CPUTIME_ID`: on a busy machine it leaves out the time the
/// thread waits for a core, which wall-clock time counts at random.
fn thread_cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Criterion measurement by thread CPU time (formatted as durations).
struct CpuTime;

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu_now()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_now().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

/// The two groups (in memory, with reads) under one clock.
fn groups<M: Measurement<Value = Duration>>(c: &mut Criterion<M>, prefix: &str, now: Clock) {
    let (files, contents) = load();
    if files.is_empty() {
        eprintln!("corpus not found; nothing to measure");
        return;
    }
    let bytes: u64 = contents.iter().map(|c| c.len() as u64).sum();
    eprintln!("{} event files, {bytes} bytes", contents.len());
    let mut r = Runner {
        files,
        contents,
        parser: Parser::new(),
        floor: Floor::new(),
        buf: Vec::with_capacity(64 * 1024),
    };

    // The three agree on what they read.
    for c in &r.contents {
        assert_eq!(lazy_envelope(&mut r.parser, c), serde_envelope(c));
        assert!(r.floor.parse(c) > 1);
    }

    // Paired sampling: every iteration runs one pass of each variant, back
    // to back, in a rotating order, and each benchmark counts only its own
    // pass. The three thus share the machine's conditions sample by sample
    // (on a busy machine, timings measured minutes apart can differ by 2x),
    // at the price of three times the running time.
    for (group, reads) in [("in_memory", false), ("with_reads", true)] {
        let mut g = c.benchmark_group(format!("{prefix}/{group}"));
        g.throughput(Throughput::Bytes(bytes));
        for (v, name) in VARIANTS.iter().enumerate() {
            g.bench_function(*name, |b| {
                b.iter_custom(|iters| {
                    let mut mine = Duration::ZERO;
                    for i in 0..iters {
                        for k in 0..VARIANTS.len() {
                            let w = (i as usize + k) % VARIANTS.len();
                            let t = now();
                            black_box(r.pass(w, reads));
                            if w == v {
                                mine += now().saturating_sub(t);
                            }
                        }
                    }
                    mine
                })
            });
        }
        g.finish();
    }
}

fn wall(c: &mut Criterion) {
    groups(c, "json", wall_now);
}

fn cpu(c: &mut Criterion<CpuTime>) {
    groups(c, "json_cpu", thread_cpu_now);
}

criterion_group!(benches, wall);
criterion_group! {
    name = cpu_benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}

fn main() {
    if let Ok(n) = std::env::var("AGENTLOG_BENCH_PASSES") {
        let variant = std::env::var("AGENTLOG_BENCH_VARIANT").unwrap_or_else(|_| "c".into());
        passes(n.parse().expect("a number of passes"), &variant);
        return;
    }
    benches();
    cpu_benches();
    Criterion::default().configure_from_args().final_summary();
}
