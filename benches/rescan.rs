//! Checkpointed rescans of large stores, beside a bare directory walk in
//! the same run (figures in `benches/README.md`). Two stores:
//!
//! - `corpus_copy`: every conversation of the shared OpenHands corpus
//!   (sub-agents included), copied `AGENTLOG_BENCH_RESCAN_COPIES` times
//!   (default 80) under fresh IDs (the directory's name and the ID in
//!   `base_state.json` and `meta.json`), side by side in one root;
//! - `gen_1g`: a generated store of `AGENTLOG_BENCH_RESCAN_GEN` top-level
//!   conversations (default 1000) × 200 events at
//!   `GenConfig::REAL_WORLD_SCALE` (about 1 GB).
//!
//! Both are built once under `AGENTLOG_BENCH_CACHE` (default
//! `/tmp/agentlog-bench-cache`; a store whose build did not finish is
//! built again) and reused by later runs. `AGENTLOG_BENCH_RESCAN_STORES`
//! picks them (`corpus_copy,gen_1g`, the default).
//!
//! Variants, per store:
//!
//! - `walk`: a bare directory walk listing every directory of the store;
//! - `rescan_unchanged`: `Store::changes_since` from a checkpoint of the
//!   store as it is (nothing changed);
//! - `rescan_1pct`: the same store from a checkpoint taken before one new
//!   event was written into each of 1 % of the top-level conversations
//!   (every iteration finds and reads them again);
//! - `rescan_plus_read`: `rescan_unchanged`, then reading those new event
//!   files (open, read, simd-json tape): the bound for
//!   `rescan_1pct`;
//! - `rescan_plus_list_read`: the same, with each changed conversation's
//!   `events/` listed once before its new file is read (the bare
//!   `getdents64` calls, names counted, on Linux): what finding the new
//!   file's name costs on top of reading it, since a new name cannot be
//!   known without listing its directory.
//!
//! Then the same four rescans with one new event in every top-level
//! conversation (`*_all`), whose differences over `rescan_unchanged_all`
//! (round by round) give what one changed conversation costs with little
//! noise: the rescan, reading the new file, listing `events/` and reading
//! it.
//!
//! Also printed: the checkpoint's size per conversation, and the files and
//! directories an unchanged rescan opens (the per-thread counter of
//! `agentlog::source::opens`). The new events are removed at the end, so
//! the cached store stays as built. After criterion's runs the variants
//! are measured again interleaved (round robin, `AGENTLOG_BENCH_ROUNDS`
//! rounds, default 11): the medians and ratios printed come from that pass.
//!
//! `cargo bench --features gen --bench rescan`

#[path = "support/changes.rs"]
mod changes;
#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/floor.rs"]
mod floor;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/setup.rs"]
mod setup;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentlog::openhands::{Store, find_sessions};
use agentlog::source::opens;
use agentlog::synth::GenConfig;
use changes::{add_every, add_one_percent, checkpoint_of, event_names, rescan};
use corpus::corpus;
use criterion::Criterion;
use measure::{Run, bench_all, interleaved, median};
use setup::{cached, env_usize, generate};

/// What the names of the bench's added event files hold (to remove them
/// again, and any left by an interrupted run).
const MARK: &str = "-0000beef-0000-4000-8000-";

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for e in fs::read_dir(from).expect("list").flatten() {
        let t = e.file_type().expect("type");
        let dest = to.join(e.file_name());
        if t.is_dir() {
            copy_tree(&e.path(), &dest);
        } else if t.is_file() {
            fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// `32 hex digits` as a UUID's hyphenated form.
fn hyphenated(hex: &str) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Replaces `old` by `new` (same length) in the file at `path`, if any.
fn replace_in(path: &Path, old: &str, new: &str) {
    let Ok(text) = fs::read(path) else { return };
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(o) {
            out.extend_from_slice(n);
            i += o.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    fs::write(path, out).expect("write");
}

fn build_corpus_copy(dest: &Path, copies: usize) {
    let convs = find_sessions(corpus()).expect("the shared corpus");
    for (c, src) in convs.iter().enumerate() {
        let old = src.file_name().unwrap().to_string_lossy().into_owned();
        for k in 0..copies {
            let new = format!(
                "{c:08x}{k:08x}{:016x}",
                0xbe5c_0000_u64 + (c * copies + k) as u64
            );
            let to = dest.join(&new);
            copy_tree(src, &to);
            if old.len() == 32 && old.bytes().all(|b| b.is_ascii_hexdigit()) {
                for f in ["base_state.json", "meta.json"] {
                    replace_in(&to.join(f), &hyphenated(&old), &hyphenated(&new));
                    replace_in(&to.join(f), &old, &new);
                }
            }
        }
    }
}

/// Removes the event files an earlier run of this bench added.
fn remove_added(root: &Path) -> usize {
    let mut n = 0;
    for dir in Store::open(root).expect("store").dirs() {
        let events = dir.join("events");
        for name in event_names(&events) {
            if name.contains(MARK) {
                fs::remove_file(events.join(name)).expect("remove");
                n += 1;
            }
        }
    }
    n
}

/// Lists the directory `dir` once, counting its entries, as cheaply as
/// the kernel allows (`getdents64` into a reused buffer, no name copied).
#[cfg(target_os = "linux")]
fn list_count(dir: &Path, buf: &mut [u8]) -> usize {
    use std::os::fd::AsRawFd;
    let f = fs::File::open(dir).expect("open a directory");
    let mut n = 0;
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`;
        // the descriptor is open for the call.
        let got = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                f.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        assert!(got >= 0, "getdents64: {}", std::io::Error::last_os_error());
        if got == 0 {
            return n;
        }
        let mut at = 0usize;
        while at + 18 < got as usize {
            n += 1;
            at += usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
        }
    }
}

/// Lists the directory `dir` once, counting its entries.
#[cfg(not(target_os = "linux"))]
fn list_count(dir: &Path, _buf: &mut [u8]) -> usize {
    fs::read_dir(dir).expect("list").count()
}

/// Reads and builds the tape of each file (the floor of reading them).
fn read_files(files: &[PathBuf], buf: &mut Vec<u8>, tape: &mut floor::TapeFloor) -> usize {
    for f in files {
        buf.clear();
        fs::File::open(f)
            .and_then(|mut h| h.read_to_end(buf))
            .expect("read");
        tape.parse(buf);
    }
    tape.nodes
}

fn bench_store(c: &mut Criterion, name: &str, root: &Path, rounds: usize) {
    let left = remove_added(root);
    if left > 0 {
        eprintln!("{name}: removed {left} event files an interrupted run left");
    }
    let mut entries = 0usize;
    let dirs = floor::walk(root, |_, _| entries += 1);
    // Past the racy margin, so that the checkpoint trusts every stamp.
    std::thread::sleep(Duration::from_millis(2100));
    let before_cp = checkpoint_of(root);
    let bytes = before_cp.to_bytes().len();
    eprintln!(
        "{name}: {} conversations (sub-agents included), {} events, {dirs} directories, \
         {entries} files; checkpoint {bytes} bytes, {} bytes per conversation",
        before_cp.len(),
        before_cp.events(),
        bytes / before_cp.len().max(1)
    );
    let o = opens::counts();
    let n = rescan(root, Some(&before_cp));
    let p = opens::counts();
    eprintln!(
        "{name}: unchanged rescan: {n} changes, {} files and {} directories opened",
        p.0 - o.0,
        p.1 - o.1
    );
    let added = add_one_percent(root, MARK);
    std::thread::sleep(Duration::from_millis(2100));
    let after_cp = checkpoint_of(root);
    let o = opens::counts();
    let n = rescan(root, Some(&before_cp));
    let p = opens::counts();
    eprintln!(
        "{name}: {} conversations given one more event; that rescan: {n} changes and events, \
         {} files and {} directories opened",
        added.len(),
        p.0 - o.0,
        p.1 - o.1
    );

    let buf = std::cell::RefCell::new(Vec::with_capacity(1 << 16));
    let listing = std::cell::RefCell::new(vec![0u8; 32 * 1024]);
    let tape = std::cell::RefCell::new(floor::TapeFloor::default());
    let variants: Vec<(&str, Run<'_>)> = vec![
        ("walk", Box::new(|| floor::bare_walk(root) as u64)),
        (
            "rescan_unchanged",
            Box::new(|| rescan(root, Some(&after_cp))),
        ),
        ("rescan_1pct", Box::new(|| rescan(root, Some(&before_cp)))),
        (
            "rescan_plus_read",
            Box::new(|| {
                rescan(root, Some(&after_cp))
                    + read_files(&added, &mut buf.borrow_mut(), &mut tape.borrow_mut()) as u64
            }),
        ),
        (
            "rescan_plus_list_read",
            Box::new(|| {
                let mut n = rescan(root, Some(&after_cp));
                for f in &added {
                    let dir = f.parent().expect("events/");
                    n += list_count(dir, &mut listing.borrow_mut()) as u64;
                }
                n + read_files(&added, &mut buf.borrow_mut(), &mut tape.borrow_mut()) as u64
            }),
        ),
    ];
    bench_all(c, &format!("rescan/{name}"), &variants);
    let title = format!("{name}: interleaved medians");
    let (med, rows) = interleaved(&title, &variants, rounds);
    let ratio = |x: usize, y: usize| med[x] / med[y];
    println!("  rescan_unchanged / walk              {:.2}", ratio(1, 0));
    println!("  rescan_1pct / walk                   {:.2}", ratio(2, 0));
    println!("  rescan_1pct / rescan_plus_read       {:.2}", ratio(2, 3));
    println!("  rescan_1pct / rescan_unchanged       {:.2}", ratio(2, 1));
    println!("  rescan_1pct / rescan_plus_list_read  {:.2}", ratio(2, 4));
    // Round by round, over the unchanged rescan of the same round: what
    // the changed conversations cost each variant, per conversation.
    let per = |x: usize| {
        let mut d: Vec<f64> = rows[x].iter().zip(&rows[1]).map(|(a, b)| a - b).collect();
        median(&mut d) * 1e3 / added.len().max(1) as f64
    };
    println!(
        "  per changed conversation, over rescan_unchanged of the same round (medians): \
         rescan_1pct {:.0} µs, rescan_plus_read {:.0} µs, rescan_plus_list_read {:.0} µs",
        per(2),
        per(3),
        per(4)
    );
    drop(variants);
    for f in &added {
        fs::remove_file(f).expect("remove an added event");
    }
    every_changed(root, &before_cp, rounds);
}

/// One new event in every top-level conversation: what one changed
/// conversation costs, over the unchanged rescan of the same round.
fn every_changed(root: &Path, before_cp: &agentlog::openhands::Checkpoint, rounds: usize) {
    let added = add_every(root, MARK, 1);
    std::thread::sleep(Duration::from_millis(2100));
    let after_cp = checkpoint_of(root);
    let buf = std::cell::RefCell::new(Vec::with_capacity(1 << 16));
    let listing = std::cell::RefCell::new(vec![0u8; 32 * 1024]);
    let tape = std::cell::RefCell::new(floor::TapeFloor::default());
    let variants: Vec<(&str, Run<'_>)> = vec![
        (
            "rescan_unchanged_all",
            Box::new(|| rescan(root, Some(&after_cp))),
        ),
        ("rescan_all", Box::new(|| rescan(root, Some(before_cp)))),
        (
            "rescan_plus_read_all",
            Box::new(|| {
                rescan(root, Some(&after_cp))
                    + read_files(&added, &mut buf.borrow_mut(), &mut tape.borrow_mut()) as u64
            }),
        ),
        (
            "rescan_plus_list_read_all",
            Box::new(|| {
                let mut n = rescan(root, Some(&after_cp));
                for f in &added {
                    let dir = f.parent().expect("events/");
                    n += list_count(dir, &mut listing.borrow_mut()) as u64;
                }
                n + read_files(&added, &mut buf.borrow_mut(), &mut tape.borrow_mut()) as u64
            }),
        ),
    ];
    let title = format!("every conversation changed ({} new events)", added.len());
    let (med, rows) = interleaved(&title, &variants, rounds);
    let per = |x: usize| {
        let mut d: Vec<f64> = rows[x].iter().zip(&rows[0]).map(|(a, b)| a - b).collect();
        median(&mut d) * 1e3 / added.len().max(1) as f64
    };
    println!(
        "  rescan_all / rescan_plus_read_all       {:.2}",
        med[1] / med[2]
    );
    println!(
        "  rescan_all / rescan_plus_list_read_all  {:.2}",
        med[1] / med[3]
    );
    println!(
        "  per changed conversation, over rescan_unchanged_all of the same round (medians): \
         rescan_all {:.1} µs, rescan_plus_read_all {:.1} µs, rescan_plus_list_read_all {:.1} µs",
        per(1),
        per(2),
        per(3)
    );
    drop(variants);
    for f in &added {
        fs::remove_file(f).expect("remove an added event");
    }
}

fn main() {
    let stores = std::env::var("AGENTLOG_BENCH_RESCAN_STORES")
        .unwrap_or_else(|_| "corpus_copy,gen_1g".to_owned());
    let rounds = env_usize("AGENTLOG_BENCH_ROUNDS", 11);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    for which in stores.split(',') {
        match which.trim() {
            "corpus_copy" => {
                let copies = env_usize("AGENTLOG_BENCH_RESCAN_COPIES", 80);
                let root = cached(&format!("corpus-copy-x{copies}"), |d| {
                    build_corpus_copy(d, copies);
                });
                bench_store(&mut c, "corpus_copy", &root, rounds);
            }
            "gen_1g" => {
                let n = env_usize("AGENTLOG_BENCH_RESCAN_GEN", 1000);
                let cfg = GenConfig {
                    conversations: n,
                    events_per_conversation: 200,
                    content_scale: GenConfig::REAL_WORLD_SCALE,
                    seed: 1,
                    ..GenConfig::default()
                };
                let root = cached(&format!("gen-{n}x200-real-seed1"), |d| {
                    generate(d, &cfg);
                });
                bench_store(&mut c, "gen_1g", &root, rounds);
            }
            "" => {}
            other => panic!("AGENTLOG_BENCH_RESCAN_STORES: unknown store {other:?}"),
        }
    }
}
