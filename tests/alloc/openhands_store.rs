//! Steady-state reads allocate nothing: with a counting global allocator,
//! reading the envelopes of one more conversation of the same shape with a
//! reused `Reader` (or through a store's stream) makes no heap allocation
//! at all — the directory listings (getdents into the reader's buffer on
//! Linux), the event files (openat relative to `events/`), the parse, the
//! envelopes and the name lists all reuse what the previous conversation
//! left. The allocations that do remain are counted exactly: a sub-agent's
//! paths.

use crate::{allocations, common};

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::openhands::{Conversation, Reader, Store, find_sessions};

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
    let _g = crate::measure_lock();
    let t = tempfile::tempdir().unwrap();
    for dir in conversations() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let a = t.path().join("a").join(&name);
        let b = t.path().join("b").join(&name);
        common::copy_tree(&dir, &a);
        common::copy_tree(&dir, &b);
        let mut reader = Reader::new();
        let mut conv = Conversation::new();
        reader.read_into(&a, &mut conv).unwrap();
        let events = envelopes(&conv);
        assert!(events > 0 && events == conv.len());
        // The same conversation again, then its copy at another path.
        for d in [&a, &b, &a] {
            let max = allowed(&[d, &d.join("events")]);
            let (n, ()) = allocations(|| {
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
    let _g = crate::measure_lock();
    let t = tempfile::tempdir().unwrap();
    let dirs = conversations();
    let small = dirs.last().unwrap();
    // Twenty conversations of one shape.
    for i in 0..20 {
        common::copy_tree(small, &t.path().join(format!("{i:032x}")));
    }
    let store = Store::open(t.path()).unwrap();
    assert_eq!(store.len(), 20);
    let mut s = store.stream();
    let first = s.next().unwrap().unwrap();
    let events = envelopes(first.conversation);
    let mut seen = 1;
    let (n, ()) = allocations(|| {
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
    let _g = crate::measure_lock();
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
        common::copy_tree(src, &t.path().join(format!("{i:032x}")));
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
    let (n, ()) = allocations(|| {
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
