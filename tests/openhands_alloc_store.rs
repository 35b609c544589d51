//! Steady-state reads allocate nothing: with a counting global allocator,
//! reading the envelopes of one more conversation of the same shape with a
//! reused `Reader` (or through a store's stream) makes no heap allocation
//! at all — the directory listings (getdents into the reader's buffer on
//! Linux), the event files (openat relative to `events/`), the parse, the
//! envelopes and the name lists all reuse what the previous conversation
//! left. The allocations that do remain are counted exactly: a sub-agent's
//! paths.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};

use agentlog::openhands::{Conversation, Reader, Store, find_sessions};

struct Counting;

thread_local! {
    /// Allocations made by this thread while counting is on.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
}

fn note() {
    let _ = COUNT.try_with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n + 1));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Whether directories are listed with `getdents64` into the reader's
/// buffer (Linux); elsewhere the standard library's `read_dir` allocates
/// each entry's name.
const GETDENTS: bool = cfg!(all(target_os = "linux", not(agentlog_portable_dir)));

/// The allocations allowed for reading `dirs` again: none with
/// `getdents64`; else a few per directory entry (the standard library's
/// `read_dir`: its handle, and each name, twice; and each file's path).
fn allowed(dirs: &[&Path]) -> usize {
    if GETDENTS {
        return 0;
    }
    dirs.iter()
        .map(|d| 4 + 4 * fs::read_dir(d).map_or(0, |r| r.count()))
        .sum()
}

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(Some(0)));
    f();
    COUNT.with(|c| c.replace(None)).unwrap_or(0)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

fn sample() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/store"))
}

/// Touches every envelope, as an indexer would.
fn envelopes(conv: &Conversation) -> usize {
    conv.events()
        .filter(|e| {
            e.kind().is_some() && e.id().is_some() && e.timestamp().is_some() && !e.raw().is_empty()
        })
        .count()
}

/// A large real conversation (thousands of events), and copies of the
/// sample store's conversations without sub-agents, each read again under
/// another name of the same length.
fn conversations() -> Vec<PathBuf> {
    let large = common::corpus_dir()
        .join("openhands")
        .join("1.58.2")
        .join("large");
    let mut out = find_sessions(large).unwrap();
    out.truncate(1);
    for d in find_sessions(sample()).unwrap() {
        if !d.join("subagents").exists() {
            out.push(d);
        }
    }
    out
}

#[test]
fn one_more_conversation_of_the_same_shape_allocates_nothing() {
    let t = tempfile::tempdir().unwrap();
    for dir in conversations() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let a = t.path().join("a").join(&name);
        let b = t.path().join("b").join(&name);
        copy_dir(&dir, &a);
        copy_dir(&dir, &b);
        let mut reader = Reader::new();
        let mut conv = Conversation::new();
        reader.read_into(&a, &mut conv).unwrap();
        let events = envelopes(&conv);
        assert!(events > 0 && events == conv.len());
        // The same conversation again, then its copy at another path.
        for d in [&a, &b, &a] {
            let max = allowed(&[d, &d.join("events")]);
            let n = allocations(|| {
                reader.read_into(d, &mut conv).unwrap();
                assert_eq!(envelopes(&conv), events);
            });
            assert!(
                n <= max,
                "{} events of {}: {n} allocations",
                events,
                d.display()
            );
        }
    }
}

#[test]
fn a_store_stream_allocates_nothing_after_its_first_conversation() {
    let t = tempfile::tempdir().unwrap();
    let dirs = conversations();
    let small = dirs.last().unwrap();
    // Twenty conversations of one shape.
    for i in 0..20 {
        copy_dir(small, &t.path().join(format!("{i:032x}")));
    }
    let store = Store::open(t.path()).unwrap();
    assert_eq!(store.len(), 20);
    let mut s = store.stream();
    let first = s.next().unwrap().unwrap();
    let events = envelopes(first.conversation);
    let mut seen = 1;
    let n = allocations(|| {
        while let Some(item) = s.next() {
            assert_eq!(envelopes(item.unwrap().conversation), events);
            seen += 1;
        }
    });
    assert_eq!(seen, 20);
    let one = t.path().join(format!("{:032x}", 1));
    let max = 19 * allowed(&[&one, &one.join("events")]);
    assert!(n <= max, "{n} allocations for 19 conversations");
}

#[test]
fn what_a_sub_agent_costs() {
    // A conversation with sub-agents: each sub-agent's path is allocated
    // (the pending list of the stream, and the test whether its directory
    // holds a conversation); nothing per event.
    let t = tempfile::tempdir().unwrap();
    let with_subs: Vec<PathBuf> = find_sessions(sample())
        .unwrap()
        .into_iter()
        .filter(|d| d.join("subagents").exists())
        .collect();
    let src = with_subs.first().expect("the sample store has sub-agents");
    for i in 0..4 {
        copy_dir(src, &t.path().join(format!("{i:032x}")));
    }
    let store = Store::open(t.path()).unwrap();
    let mut s = store.stream();
    // Warm up on the first conversation and its sub-agents.
    let (subs, mut events) = {
        let item = s.next().unwrap().unwrap();
        (item.conversation.subagents().len(), item.conversation.len())
    };
    for _ in 0..subs {
        events += s.next().unwrap().unwrap().conversation.len();
    }
    assert!(subs > 0 && events > 0);
    assert_eq!(s.remaining(), 3);
    let mut items = 0;
    let n = allocations(|| {
        while let Some(item) = s.next() {
            item.unwrap();
            items += 1;
        }
    });
    assert_eq!(items, 3 * (1 + subs));
    let one = t.path().join(format!("{:032x}", 1));
    let listed = allowed(&[&one, &one.join("events"), &one.join("subagents")]);
    let per_sub = n.saturating_sub(3 * listed) as f64 / (3 * subs) as f64;
    assert!(
        per_sub <= 16.0 + if GETDENTS { 0.0 } else { 200.0 },
        "{n} allocations for {items} items ({subs} sub-agents each, {events} events in the first)"
    );
    eprintln!("{per_sub:.1} allocations per sub-agent, none per event");
}
