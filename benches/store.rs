//! Whole-store benchmarks over generated stores, each beside its baselines
//! in the same run (see `benches/README.md` for the figures):
//!
//! - baselines: (walk) a bare directory walk; (1) `floor_io`, reading every
//!   file the reader reads; (2) `floor_parse`, the same plus simd-json's
//!   tape; (2∥) `floor_parse_par`, that on one plain thread per core;
//!   (3) `serde`, the obvious reader: serde_json into owned structs with a
//!   `Value` catch-all for undeclared members.
//! - ours: (a) `list`, discovery from names alone; (b) `envelopes`, every
//!   event's envelope (streamed, one reused reader); (b∥) `envelopes_par`,
//!   the same on every core, results in order; (c) `decode`, every kind
//!   decoded; (d) `roundtrip`, decoded and encoded again; (e) the OC Chat
//!   store listed and every session loaded, beside its own floors.
//!
//! Sizes (environment): `AGENTLOG_BENCH_CONVERSATIONS` (default 100) ×
//! `AGENTLOG_BENCH_EVENTS` (default 200) for the main store, whose size is
//! doubled twice for the scaling group; `AGENTLOG_BENCH_LIST_CONVERSATIONS`
//! (default 10000, 20 events each) for the listing group;
//! `AGENTLOG_BENCH_OCCHAT_SESSIONS` (default 200). Stores are generated
//! under the system's temporary directory and removed at the end.
//!
//! After criterion's runs, every group is measured once more with its
//! variants interleaved (round robin, `AGENTLOG_BENCH_ROUNDS` rounds,
//! default 11): the table of medians and ratios printed at the end comes
//! from that pass, which a machine's changing load skews far less than
//! consecutive runs. Both wall time and the process's CPU time (user + sys
//! of every thread, `CLOCK_PROCESS_CPUTIME_ID`) are given.
//!
//! `cargo bench --features gen,parallel --bench store`

#[path = "support/floor.rs"]
mod floor;
#[path = "support/serde_reader.rs"]
mod serde_reader;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentlog::json::Parser;
use agentlog::occhat;
use agentlog::openhands::{self, Event, Store};
use agentlog::synth::{GenConfig, write_store};
use criterion::{Criterion, Throughput};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One way of reading a store, returning a checksum (events or bytes).
type Run<'a> = Box<dyn Fn() -> u64 + 'a>;

struct Variant<'a> {
    name: &'static str,
    run: Run<'a>,
}

// ---------------------------------------------------------------- ours

/// (b) Every event's envelope, streamed through one reader.
fn envelopes(root: &Path) -> u64 {
    let store = Store::open(root).expect("store");
    let mut n = 0u64;
    let mut s = store.stream();
    while let Some(item) = s.next() {
        let item = item.expect("conversation");
        for e in item.conversation.events() {
            n += u64::from(e.kind().is_some() && e.id().is_some());
        }
    }
    n
}

/// (b∥) The same on every core, results in order.
#[cfg(feature = "parallel")]
fn envelopes_par(root: &Path) -> u64 {
    let store = Store::open(root).expect("store");
    store
        .par_map(|item| {
            let item = item.expect("conversation");
            item.conversation
                .events()
                .filter(|e| e.kind().is_some() && e.id().is_some())
                .count() as u64
        })
        .into_iter()
        .sum()
}

/// (2∥) The parse floor on every core: one plain thread per core, each
/// taking the next conversation directory (an atomic counter) and reading
/// and parsing its files with its own buffer and tape. What the machine
/// gives a parallel reader with no framework at all.
#[cfg(feature = "parallel")]
fn floor_parse_par(root: &Path) -> u64 {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("store")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let next = AtomicUsize::new(0);
    let total = AtomicU64::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut buf = Vec::with_capacity(1 << 16);
                let mut tape = floor::TapeFloor::default();
                let mut n = 0;
                while let Some(d) = dirs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    n += floor::parse_all(d, &mut buf, &mut tape);
                }
                total.fetch_add(n + tape.nodes as u64, Ordering::Relaxed);
            });
        }
    });
    total.into_inner()
}

/// Decodes one event by its kind; with `out`, encodes it again.
fn decode_event(e: &Event<'_>, parser: &mut Parser, out: Option<&mut Vec<u8>>) -> u64 {
    let Ok(doc) = e.open(parser) else {
        return 0;
    };
    macro_rules! go {
        ($x:expr) => {{
            let x = $x;
            if let Some(out) = out {
                x.write_to(out);
            }
            x.members.len() as u64
        }};
    }
    match e.kind_name().unwrap_or("") {
        openhands::KIND_MESSAGE => go!(doc.message()),
        openhands::KIND_ACTION => go!(doc.action()),
        openhands::KIND_OBSERVATION => go!(doc.observation()),
        openhands::KIND_AGENT_ERROR => go!(doc.agent_error()),
        openhands::KIND_CONDENSATION => go!(doc.condensation()),
        openhands::KIND_SYSTEM_PROMPT => go!(doc.system_prompt()),
        openhands::KIND_USER_REJECT => go!(doc.user_reject()),
        _ => 1,
    }
}

/// (c) / (d): every event decoded by kind, and the state and meta; with
/// `roundtrip`, each encoded again into a reused buffer.
fn decode(root: &Path, roundtrip: bool) -> u64 {
    let store = Store::open(root).expect("store");
    let mut n = 0u64;
    let mut out = Vec::with_capacity(1 << 16);
    let mut s = store.stream();
    while let Some(item) = s.next() {
        let item = item.expect("conversation");
        let conv = item.conversation;
        let parser = item.parser;
        for e in conv.events() {
            out.clear();
            n += decode_event(&e, parser, roundtrip.then_some(&mut out));
            n += out.len() as u64;
        }
        if let Some(Ok(doc)) = conv.state().map(|f| f.open(parser)) {
            let st = doc.state();
            if roundtrip {
                out.clear();
                st.write_to(&mut out);
            }
            n += st.members.len() as u64 + out.len() as u64;
        }
        if let Some(Ok(doc)) = conv.meta().map(|f| f.open(parser)) {
            let m = doc.meta();
            if roundtrip {
                out.clear();
                m.write_to(&mut out);
            }
            n += m.members.len() as u64 + out.len() as u64;
        }
    }
    n
}

/// (a) Discovery from names alone.
fn list(root: &Path) -> u64 {
    openhands::list(root).expect("list").events() as u64
}

// ---------------------------------------------------------------- fixtures

struct Fixtures {
    _tmp: tempfile::TempDir,
    main: PathBuf,
    scale: Vec<(PathBuf, u64)>,
    listing: PathBuf,
    occhat: PathBuf,
    main_events: u64,
    main_bytes: u64,
}

fn generate(dir: &Path, conversations: usize, events: usize) -> u64 {
    let cfg = GenConfig {
        conversations,
        events_per_conversation: events,
        seed: 7,
        ..GenConfig::default()
    };
    let t = Instant::now();
    let s = write_store(dir, &cfg).expect("generate");
    eprintln!(
        "generated {} ({} conversations + {} sub-agents, {} files, {:.1} MB) in {:.1?}",
        dir.display(),
        s.conversations,
        s.subagents,
        s.files,
        s.bytes as f64 / 1e6,
        t.elapsed()
    );
    s.files
}

/// An OC Chat store of `n` sessions of 20 to 60 messages each.
fn generate_occhat(dir: &Path, n: usize) {
    let store = occhat::SessionStore::new(dir);
    let para = "The quick brown fox jumps over the lazy dog; ".repeat(12);
    for i in 0..n {
        let mut s = occhat::ChatSession::new(format!("session {i:05}"), "gpt-5");
        for m in 0..(20 + i % 41) {
            let json = if m % 3 == 2 {
                format!(
                    r#"{{"role":"tool","tool_call_id":"call_{i}_{m}","content":"exit 0\n{para}"}}"#
                )
            } else if m % 3 == 1 {
                format!(
                    r#"{{"role":"assistant","content":"{para}","tool_calls":[{{"id":"call_{i}_{m}","type":"function","function":{{"name":"shell","arguments":"{{\"cmd\":\"ls -la\"}}"}}}}],"usage":{{"total_tokens":{m}}}}}"#
                )
            } else {
                format!(r#"{{"role":"user","content":"question {m}: {para}"}}"#)
            };
            s.messages
                .push(agentlog::json::OwnedValue::parse(json.as_bytes()).expect("message"));
        }
        store.save_all(&mut s).expect("save");
    }
}

impl Fixtures {
    fn build(test_mode: bool) -> Fixtures {
        let (n, ev, nl, no) = if test_mode {
            (3, 20, 20, 3)
        } else {
            (
                env_usize("AGENTLOG_BENCH_CONVERSATIONS", 100),
                env_usize("AGENTLOG_BENCH_EVENTS", 200),
                env_usize("AGENTLOG_BENCH_LIST_CONVERSATIONS", 10_000),
                env_usize("AGENTLOG_BENCH_OCCHAT_SESSIONS", 200),
            )
        };
        let tmp = tempfile::Builder::new()
            .prefix("agentlog-bench-")
            .tempdir()
            .expect("tempdir");
        let mut scale = Vec::new();
        for k in [1, 2, 4] {
            let dir = tmp.path().join(format!("store-{}", n * k));
            generate(&dir, n * k, ev);
            let events = envelopes(&dir);
            scale.push((dir, events));
        }
        let main = scale[0].0.clone();
        let main_events = scale[0].1;
        let listing = tmp.path().join("listing");
        generate(&listing, nl, 20);
        let occ = tmp.path().join("occhat");
        generate_occhat(&occ, no);
        let mut buf = Vec::new();
        let main_bytes = floor::read_all(&main, &mut buf, |_| {});
        // The baselines must read what we read.
        let serde = serde_reader::read_store(&main);
        assert_eq!(serde.errors, 0, "the serde baseline failed on some files");
        assert_eq!(serde.events as u64, main_events);
        Fixtures {
            _tmp: tmp,
            main,
            scale,
            listing,
            occhat: occ,
            main_events,
            main_bytes,
        }
    }
}

// ---------------------------------------------------------------- OC Chat

/// Every session's newest meta and chat log, as the floor reads them.
fn occhat_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).expect("occhat").flatten() {
        let name = e.file_name();
        if name == occhat::ARCHIVE_DIR_NAME || name == occhat::LEGACY_DIR_NAME {
            continue;
        }
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for f in std::fs::read_dir(e.path()).expect("session").flatten() {
            let n = f.file_name();
            let n = n.to_string_lossy();
            if n.ends_with("_meta.json") || n.ends_with("_chat_log.json") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn occhat_floor(root: &Path, parse: bool, serde: bool) -> u64 {
    let mut buf = Vec::new();
    let mut tape = floor::TapeFloor::default();
    let mut n = 0u64;
    for p in occhat_files(root) {
        buf.clear();
        let Ok(mut f) = std::fs::File::open(&p) else {
            continue;
        };
        let _ = std::io::Read::read_to_end(&mut f, &mut buf);
        n += buf.len() as u64;
        if serde {
            let v: serde_json::Value = serde_json::from_slice(&buf).expect("json");
            n += v.as_object().map_or(0, |o| o.len() as u64);
        } else if parse {
            tape.parse(&mut buf);
        }
    }
    n + tape.nodes as u64
}

fn occhat_ours(root: &Path) -> u64 {
    let store = occhat::SessionStore::new(root);
    let list = store.list_sessions();
    let mut n = 0u64;
    for s in &list.sessions {
        let Some(name) = s.name_str() else { continue };
        let session = store.load_session(name).expect("load");
        n += session.messages.len() as u64;
    }
    n
}

// ---------------------------------------------------------------- groups

struct Group<'a> {
    name: String,
    throughput: Option<Throughput>,
    variants: Vec<Variant<'a>>,
    /// Ratios to print: (variant, baseline).
    ratios: Vec<(&'static str, &'static str)>,
}

fn groups(fx: &Fixtures) -> Vec<Group<'_>> {
    let main = fx.main.as_path();
    let mut g = Vec::new();
    let mut v: Vec<Variant<'_>> = vec![
        Variant {
            name: "walk",
            run: Box::new(move || floor::bare_walk(main) as u64),
        },
        Variant {
            name: "floor_io",
            run: Box::new(move || floor::read_all(main, &mut Vec::new(), |_| {})),
        },
        Variant {
            name: "floor_parse",
            run: Box::new(move || {
                let mut t = floor::TapeFloor::default();
                floor::parse_all(main, &mut Vec::new(), &mut t) + t.nodes as u64
            }),
        },
        Variant {
            name: "serde",
            run: Box::new(move || serde_reader::read_store(main).events as u64),
        },
        Variant {
            name: "a_list",
            run: Box::new(move || list(main)),
        },
        Variant {
            name: "b_envelopes",
            run: Box::new(move || envelopes(main)),
        },
    ];
    #[cfg(feature = "parallel")]
    v.push(Variant {
        name: "floor_parse_par",
        run: Box::new(move || floor_parse_par(main)),
    });
    #[cfg(feature = "parallel")]
    v.push(Variant {
        name: "b_envelopes_par",
        run: Box::new(move || envelopes_par(main)),
    });
    v.push(Variant {
        name: "c_decode",
        run: Box::new(move || decode(main, false)),
    });
    v.push(Variant {
        name: "d_roundtrip",
        run: Box::new(move || decode(main, true)),
    });
    g.push(Group {
        name: "store".into(),
        throughput: Some(Throughput::Bytes(fx.main_bytes)),
        variants: v,
        ratios: vec![
            ("floor_parse", "floor_io"),
            ("b_envelopes", "floor_parse"),
            ("b_envelopes", "floor_io"),
            ("c_decode", "floor_parse"),
            ("serde", "c_decode"),
            ("d_roundtrip", "floor_parse"),
            ("a_list", "walk"),
            ("b_envelopes", "b_envelopes_par"),
            ("floor_parse", "floor_parse_par"),
            ("b_envelopes_par", "floor_parse_par"),
        ],
    });
    let listing = fx.listing.as_path();
    g.push(Group {
        name: "listing".into(),
        throughput: None,
        variants: vec![
            Variant {
                name: "walk",
                run: Box::new(move || floor::bare_walk(listing) as u64),
            },
            Variant {
                name: "a_list",
                run: Box::new(move || list(listing)),
            },
            Variant {
                name: "find_sessions",
                run: Box::new(move || {
                    openhands::find_sessions(listing).expect("find").len() as u64
                }),
            },
        ],
        ratios: vec![("a_list", "walk"), ("find_sessions", "walk")],
    });
    let mut scale = Vec::new();
    for (i, (dir, _)) in fx.scale.iter().enumerate() {
        let d = dir.as_path();
        let name: &'static str = ["b_envelopes_x1", "b_envelopes_x2", "b_envelopes_x4"][i];
        scale.push(Variant {
            name,
            run: Box::new(move || envelopes(d)),
        });
    }
    g.push(Group {
        name: "scale".into(),
        throughput: None,
        variants: scale,
        ratios: vec![
            ("b_envelopes_x2", "b_envelopes_x1"),
            ("b_envelopes_x4", "b_envelopes_x1"),
        ],
    });
    let occ = fx.occhat.as_path();
    g.push(Group {
        name: "occhat".into(),
        throughput: None,
        variants: vec![
            Variant {
                name: "floor_io",
                run: Box::new(move || occhat_floor(occ, false, false)),
            },
            Variant {
                name: "floor_parse",
                run: Box::new(move || occhat_floor(occ, true, false)),
            },
            Variant {
                name: "serde_value",
                run: Box::new(move || occhat_floor(occ, false, true)),
            },
            Variant {
                name: "e_list_load",
                run: Box::new(move || occhat_ours(occ)),
            },
        ],
        ratios: vec![
            ("e_list_load", "floor_io"),
            ("e_list_load", "floor_parse"),
            ("serde_value", "e_list_load"),
        ],
    });
    g
}

// ---------------------------------------------------------------- interleaved pass

/// The process's CPU time (user + sys, every thread: the parallel
/// variants' workers included), from `CLOCK_PROCESS_CPUTIME_ID`.
fn process_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn interleaved(groups: &[Group<'_>], rounds: usize, filter: Option<&str>) {
    println!();
    println!("interleaved medians ({rounds} rounds, round robin):");
    for g in groups {
        if filter
            .is_some_and(|f| !g.name.contains(f) && !g.variants.iter().any(|v| v.name.contains(f)))
        {
            continue;
        }
        let k = g.variants.len();
        let mut wall = vec![Vec::new(); k];
        let mut cpu = vec![Vec::new(); k];
        for (i, v) in g.variants.iter().enumerate() {
            black_box((v.run)()); // warm up
            let _ = i;
        }
        for _ in 0..rounds {
            for (i, v) in g.variants.iter().enumerate() {
                let c0 = process_cpu();
                let t = Instant::now();
                black_box((v.run)());
                let w = t.elapsed();
                let c = process_cpu().zip(c0).map(|(b, a)| b.saturating_sub(a));
                wall[i].push(w.as_secs_f64() * 1e3);
                cpu[i].push(c.map_or(f64::NAN, |c| c.as_secs_f64() * 1e3));
            }
        }
        let med: Vec<(f64, f64)> = (0..k)
            .map(|i| (median(&mut wall[i]), median(&mut cpu[i])))
            .collect();
        println!("  {}", g.name);
        for (i, v) in g.variants.iter().enumerate() {
            println!(
                "    {:<18} wall {:>9.2} ms   cpu {:>9.2} ms",
                v.name, med[i].0, med[i].1
            );
        }
        for (a, b) in &g.ratios {
            let ia = g.variants.iter().position(|v| v.name == *a);
            let ib = g.variants.iter().position(|v| v.name == *b);
            if let (Some(ia), Some(ib)) = (ia, ib) {
                println!(
                    "    {a} / {b}: wall {:.2}x   cpu {:.2}x",
                    med[ia].0 / med[ib].0,
                    med[ia].1 / med[ib].1
                );
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let test_mode = args.iter().any(|a| a == "--test");
    let filter = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    let fx = Fixtures::build(test_mode);
    eprintln!(
        "main store: {} events, {:.1} MB read; load {}",
        fx.main_events,
        fx.main_bytes as f64 / 1e6,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let groups = groups(&fx);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    for g in &groups {
        let mut cg = c.benchmark_group(&g.name);
        if let Some(t) = &g.throughput {
            cg.throughput(t.clone());
        }
        for v in &g.variants {
            cg.bench_function(v.name, |b| b.iter(|| black_box((v.run)())));
        }
        cg.finish();
    }
    c.final_summary();
    if !test_mode {
        let rounds = env_usize("AGENTLOG_BENCH_ROUNDS", 11);
        interleaved(&groups, rounds, filter);
        for (dir, events) in &fx.scale {
            println!("  scale store {}: {events} events", dir.display());
        }
        eprintln!(
            "load at end: {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
    }
}
