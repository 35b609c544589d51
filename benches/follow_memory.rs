//! The memory a `Follower` holds while following a store of many
//! conversations, measured with a counting allocator (every heap byte the
//! process holds, the watch thread's included), beside the checkpoint's
//! size and the memory of reading the store's largest conversation alone.
//! Not a timing bench: it prints figures (`benches/README.md`) and whether
//! the bound holds: the follower's live state at most the
//! serialised checkpoint's size, and its peak during a scan at most that
//! plus what reading the largest conversation takes.
//!
//! The store: `AGENTLOG_BENCH_FOLLOW_CONVERSATIONS` (default 10000)
//! top-level conversations × 20 generated events, built once under
//! `AGENTLOG_BENCH_CACHE` (default `/tmp/agentlog-bench-cache`).
//!
//! `cargo bench --features gen,follow --bench follow_memory`

#[path = "support/changes.rs"]
mod changes;
#[path = "support/setup.rs"]
mod setup;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agentlog::follow::{FollowOptions, Follower};
use agentlog::openhands::{Conversation, Reader, Store};
use agentlog::synth::GenConfig;
use setup::{cached, env_usize, generate};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Starts a peak measurement: the peak from now on is measured from here.
fn reset_peak() {
    PEAK.store(live(), Ordering::Relaxed);
}

fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

fn store(n: usize) -> PathBuf {
    let cfg = GenConfig {
        conversations: n,
        events_per_conversation: 20,
        seed: 3,
        ..GenConfig::default()
    };
    cached(&format!("gen-{n}x20-seed3"), |dir| generate(dir, &cfg))
}

/// The bytes of every file under `dir`.
fn tree_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            n += tree_bytes(&e.path());
        } else if let Ok(m) = e.metadata() {
            n += m.len();
        }
    }
    n
}

/// Scans, dropping what is handed out; the number of changes.
fn scan(f: &mut Follower) -> usize {
    let mut n = 0;
    f.scan(|_, _c| -> Result<(), ()> {
        n += 1;
        Ok(())
    })
    .expect("scan")
    .expect("sink");
    n
}

fn per(bytes: usize, n: usize) -> f64 {
    bytes as f64 / n.max(1) as f64
}

fn main() {
    let n = env_usize("AGENTLOG_BENCH_FOLLOW_CONVERSATIONS", 10_000);
    let root = store(n);
    std::thread::sleep(Duration::from_millis(2100));

    // The largest top-level conversation, and what reading it takes alone
    // (the reader's buffers, arena and tape, and the conversation).
    let dirs = Store::open(&root).expect("store").dirs().to_vec();
    let largest = dirs
        .iter()
        .max_by_key(|d| tree_bytes(d))
        .expect("a conversation")
        .clone();
    let largest_bytes = tree_bytes(&largest);
    drop(dirs);
    let base = live();
    reset_peak();
    {
        let mut reader = Reader::new();
        let mut conv = Conversation::new();
        let mut stack = vec![largest.clone()];
        while let Some(d) = stack.pop() {
            reader.read_into(&d, &mut conv).expect("read");
            stack.extend(conv.subagents().iter().map(|s| d.join("subagents").join(s)));
        }
    }
    let read_largest = peak() - base;

    let base = live();
    reset_peak();
    let opts = FollowOptions::default();
    let mut f = Follower::new(vec![(root.clone(), None)], opts);
    assert!(f.polling().is_none(), "{:?}", f.polling());
    let watch = live() - base;

    let t = Instant::now();
    let changes = scan(&mut f);
    let first_scan = t.elapsed();
    let after_first = live() - base;
    let first_peak = peak() - base;
    let cp = f.checkpoint(0).expect("checkpoint");
    let convs = cp.len();
    let serialised = cp.to_bytes().len();
    let before_clone = live();
    let copy = cp.clone();
    let in_memory = live() - before_clone;
    drop(copy);

    // A wake: one new event in one conversation.
    let one = Store::open(&root).expect("store").dirs()[convs / 3 % n].clone();
    let events = one.join("events");
    let names = changes::event_names(&events);
    let added = events.join(format!(
        "event-{:05}-0000f011-0000-4000-8000-000000000001.json",
        names.len()
    ));
    reset_peak();
    fs::copy(events.join(names.last().expect("an event")), &added).expect("write an event");
    f.wait(Some(Duration::from_secs(5)));
    let woke = scan(&mut f);
    let wake_peak = peak() - base;
    // A full scan from the checkpoint (as after lost events, and every
    // minute).
    reset_peak();
    f.rescan();
    let t = Instant::now();
    let full = scan(&mut f);
    let full_scan = t.elapsed();
    let full_peak = peak() - base;
    let steady = live() - base;
    fs::remove_file(&added).expect("remove the event");

    println!(
        "store: {n} top-level conversations, {convs} with sub-agents; largest {largest_bytes} bytes on disk"
    );
    println!(
        "first scan: {changes} changes in {:.2} s; wake: {woke} changes; full rescan: {full} changes in {:.2} s",
        first_scan.as_secs_f64(),
        full_scan.as_secs_f64()
    );
    println!("reading the largest conversation alone: peak {read_largest} bytes");
    println!(
        "checkpoint: {serialised} bytes serialised ({:.0} per conversation), {in_memory} in memory ({:.0} per conversation)",
        per(serialised, convs),
        per(in_memory, convs)
    );
    println!(
        "watch: {watch} bytes ({:.0} per conversation)",
        per(watch, convs)
    );
    println!(
        "follower after the first scan: {after_first} bytes ({:.0} per conversation); steady: {steady} ({:.0})",
        per(after_first, convs),
        per(steady, convs)
    );
    println!(
        "peaks above the start: first scan {first_peak} ({:.0} per conversation), wake {wake_peak} ({:.0}), full rescan {full_peak} ({:.0})",
        per(first_peak, convs),
        per(wake_peak, convs),
        per(full_peak, convs)
    );
    let bound = serialised + read_largest;
    let worst = first_peak.max(wake_peak).max(full_peak);
    println!(
        "bound (serialised checkpoint + reading the largest conversation): {bound}; worst peak {worst}: {:.2} × the bound; steady state {:.2} × the serialised checkpoint",
        worst as f64 / bound as f64,
        steady as f64 / serialised as f64
    );
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "steady state within the serialised checkpoint: {}; peak within the bound: {}",
        verdict(steady <= serialised),
        verdict(worst <= bound)
    );
}
