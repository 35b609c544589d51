//! Parquet export of a generated store beside a `stats`-like pass over the
//! same store, in the same run (figures in `benches/README.md`):
//!
//! - `stats_like`: every conversation read (`Store::stream`), its events
//!   counted by kind and its usage totalled (`Conversation::usage`): the
//!   work `agentlog stats` does on one thread;
//! - `export`: the same conversations written as a Parquet dataset
//!   (`agentlog::parquet`: all five tables, the verbatim JSON included) to
//!   a new directory, the events' details taken from the reader's parse as
//!   `agentlog export --parquet` takes them (`add_openhands_with`);
//! - `export_no_json`: the same without the `events.json` column.
//!
//! Sizes (environment): `AGENTLOG_BENCH_PARQUET_CONVERSATIONS` (default
//! 60) × `AGENTLOG_BENCH_PARQUET_EVENTS` (default 150), content at the
//! corpus' scale. After criterion's runs the variants are measured once
//! more interleaved (`AGENTLOG_BENCH_ROUNDS` rounds, default 7): the medians
//! and ratios printed at the end come from that pass, with the dataset's
//! size against the store's.
//!
//! The floor (`floor`, issue 31's definition of what a Parquet export must
//! do): reading the same files the export reads and building simd-json's
//! tape of each (`benches/support/floor.rs`), and compressing the same
//! column bytes with the same codec and level — every page of the dataset
//! the export writes, dictionary pages included, as the writer hands it to
//! its codec (taken once, before any timing, from a dataset written by
//! `export`, uncompressed by the Parquet reader), compressed with zstd at
//! the export's level with one reused context, as the writer does.
//! `compress` is that compression alone. After the passes above, `floor`,
//! `compress`, `stats_like` and `export` run round robin and their medians
//! of process CPU time (user + sys) and wall time are printed with each
//! one's ratio to `floor` (`AGENTLOG_BENCH_ROUNDS` rounds; the export's
//! output directory removed before each run, outside the timing). Under
//! `--test` neither round-robin pass runs.
//!
//! `AGENTLOG_BENCH_PARQUET_STORE` names an existing store to read instead
//! of generating one (read only; nothing is written into it), e.g. the
//! repository's corpus, `tests/data/corpus/openhands`.
//!
//! `cargo bench --features gen,parquet --bench parquet`

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentlog::json::Parser;
use agentlog::openhands::{Kind, Parsed, Store};
use agentlog::parquet::{
    Dataset, DatasetDir, DatasetOptions, EventDetails, EventSelection, OpenHandsInput, RunId,
    RunMode, add_openhands_with,
};
use agentlog::synth::{GenConfig, write_store};
use criterion::Criterion;
use parquet::file::reader::{FileReader, SerializedFileReader};

#[path = "support/floor.rs"]
mod floor;
#[path = "support/measure.rs"]
mod measure;
use measure::{Run, interleaved_cpu};

/// The export's codec level: zstd's level of `ZstdLevel::default()`, the
/// one `agentlog::parquet` writes with (`src/parquet/part.rs`).
fn zstd_level() -> i32 {
    parquet::basic::ZstdLevel::default().compression_level()
}

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
    // As `agentlog export --parquet`: the events' details and the state's
    // rows taken from the reader's parse of each file, not from a parse of
    // their own.
    let mut details = EventDetails::new();
    loop {
        details.clear();
        let next = stream.next_with(|p, doc| match p {
            Parsed::Event { index } => details.add(index, doc),
            Parsed::State => details.add_state(doc),
            _ => {}
        });
        let Some(item) = next else { break };
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
        add_openhands_with(&mut ds, &input, &details, &mut parser).expect("rows");
        ds.bound_memory().expect("bound");
    }
    let w = ds.finish(true).expect("finish");
    let rows = w.rows.iter().sum();
    dir.stage(&run, w, RunMode::Full, None, &[])
        .and_then(|p| p.publish())
        .expect("publish");
    rows
}

/// Every `*.parquet` file under `p`, sorted.
fn parquet_files(p: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        let path = e.path();
        if e.file_type().expect("type").is_dir() {
            parquet_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "parquet") {
            out.push(path);
        }
    }
    out.sort();
}

/// Every page of every column chunk of the dataset under `p` (dictionary
/// pages included), uncompressed: the bytes its writer compressed.
fn pages_of(p: &Path) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    parquet_files(p, &mut files);
    let mut pages = Vec::new();
    for f in files {
        let r = SerializedFileReader::new(std::fs::File::open(&f).expect("part")).expect("reader");
        for g in 0..r.num_row_groups() {
            let rg = r.get_row_group(g).expect("row group");
            for c in 0..rg.num_columns() {
                for page in rg.get_column_page_reader(c).expect("pages") {
                    pages.push(page.expect("page").buffer().to_vec());
                }
            }
        }
    }
    pages
}

/// What the floor reuses between runs: the read buffer, simd-json's
/// buffers and tape, zstd's context and its output buffer.
struct FloorState {
    buf: Vec<u8>,
    tape: floor::TapeFloor,
    zstd: zstd::bulk::Compressor<'static>,
    out: Vec<u8>,
}

impl FloorState {
    fn new() -> FloorState {
        FloorState {
            buf: Vec::with_capacity(1 << 16),
            tape: floor::TapeFloor::default(),
            zstd: zstd::bulk::Compressor::new(zstd_level()).expect("zstd level"),
            out: Vec::new(),
        }
    }

    /// Compresses every page as the writer does (one call per page, the
    /// output reserved to zstd's bound); the compressed bytes.
    fn compress(&mut self, pages: &[Vec<u8>]) -> u64 {
        let mut n = 0u64;
        for p in pages {
            self.out.clear();
            self.out.reserve(zstd::zstd_safe::compress_bound(p.len()));
            n += self
                .zstd
                .compress_to_buffer(p.as_slice(), &mut self.out)
                .expect("compress") as u64;
        }
        n
    }

    /// The floor: read and parse every file the export reads, compress
    /// every page it writes.
    fn floor(&mut self, root: &Path, pages: &[Vec<u8>]) -> u64 {
        let n = floor::parse_all(root, &mut self.buf, &mut self.tape);
        n + self.compress(pages)
    }
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
    let test_mode = std::env::args().any(|a| a == "--test");
    let tmp = tempfile::tempdir().expect("tmp");
    let root = match std::env::var_os("AGENTLOG_BENCH_PARQUET_STORE") {
        Some(p) => PathBuf::from(p),
        None => {
            let root = tmp.path().join("store");
            let cfg = GenConfig {
                conversations: env_usize("AGENTLOG_BENCH_PARQUET_CONVERSATIONS", 60),
                events_per_conversation: env_usize("AGENTLOG_BENCH_PARQUET_EVENTS", 150),
                seed: 15,
                threads: 0,
                ..GenConfig::default()
            };
            write_store(&root, &cfg).expect("generate");
            root
        }
    };
    // The pages the export's writer compresses, from one export written
    // before any timing.
    let pages = {
        let out = tmp.path().join("pages");
        export(&root, &out, true);
        let pages = pages_of(&out);
        let _ = std::fs::remove_dir_all(&out);
        pages
    };
    let page_bytes: usize = pages.iter().map(Vec::len).sum();
    let state = RefCell::new(FloorState::new());
    let mut n = 0u64;
    let mut fresh = || {
        n += 1;
        tmp.path().join(format!("ds{n}"))
    };
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    let mut g = c.benchmark_group("parquet");
    g.bench_function("stats_like", |b| b.iter(|| black_box(stats_like(&root))));
    g.bench_function("floor", |b| {
        b.iter(|| black_box(state.borrow_mut().floor(&root, &pages)))
    });
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
    if test_mode {
        return;
    }

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
    let rr = tmp.path().join("rr");
    let variants: Vec<(&'static str, Run<'_>)> = vec![
        (
            "floor",
            Box::new(|| state.borrow_mut().floor(&root, &pages)),
        ),
        ("compress", Box::new(|| state.borrow_mut().compress(&pages))),
        ("stats_like", Box::new(|| stats_like(&root))),
        ("export", Box::new(|| export(&root, &rr, true))),
    ];
    println!(
        "floor: {} pages, {page_bytes} B uncompressed, zstd level {}",
        pages.len(),
        zstd_level()
    );
    interleaved_cpu("parquet, process CPU", &variants, rounds, &|| {
        let _ = std::fs::remove_dir_all(&rr);
    });
}
