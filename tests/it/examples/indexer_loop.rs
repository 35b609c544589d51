//! Runs the indexer loop of `examples/indexer.rs`: passes over a store
//! while it grows give the index a full read gives; an unchanged store
//! changes nothing; a removed conversation leaves the index.

use crate::common;

#[path = "../../../examples/indexer.rs"]
#[allow(dead_code)]
mod indexer;

use std::fs;
use std::path::Path;

use agentlog::openhands::Store;

/// The index a full read of the store gives.
fn full_index(root: &Path) -> indexer::Index {
    let mut want = indexer::Index::new();
    let mut ch = Store::changes_since(root, None, Default::default()).unwrap();
    while let Some(c) = ch.next() {
        let c = c.unwrap();
        let m = want.entry(c.id.to_owned()).or_default();
        for e in c.events() {
            m.insert(
                e.index(),
                indexer::Entry {
                    kind: if e.is_ok() {
                        e.kind_name().unwrap_or("").to_owned()
                    } else {
                        "malformed".to_owned()
                    },
                    id: e.id().unwrap_or("").to_owned(),
                },
            );
        }
    }
    want
}

#[test]
fn indexer_passes_follow_a_growing_store() {
    let t = tempfile::tempdir().unwrap();
    let src = common::corpus_dir().join("openhands/1.7.4");
    let root = t.path().join("store");
    fs::create_dir_all(&root).unwrap();
    let cp = t.path().join("cp");
    let index = t.path().join("index.jsonl");
    // The store grows one scenario at a time, a pass after each.
    let mut scenarios: Vec<_> = fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name())
        .collect();
    scenarios.sort();
    assert!(scenarios.len() > 3);
    let mut total = 0;
    for s in &scenarios {
        common::copy_tree(&src.join(s), &root.join(s));
        let p = indexer::pass(&root, &cp, &index).unwrap();
        assert!(p.changed >= 1, "{s:?}: {p:?}");
        total += p.events;
    }
    let want = full_index(&root);
    let got = indexer::load_index(&index);
    assert_eq!(got, want);
    assert_eq!(total, want.values().map(|m| m.len()).sum::<usize>());
    // Unchanged: nothing.
    let p = indexer::pass(&root, &cp, &index).unwrap();
    assert_eq!(p, indexer::Pass::default());
    // A scenario removed: its conversations leave the index.
    fs::remove_dir_all(root.join(&scenarios[0])).unwrap();
    let p = indexer::pass(&root, &cp, &index).unwrap();
    assert!(p.rebuilt >= 1 && p.events == 0, "{p:?}");
    assert_eq!(indexer::load_index(&index), full_index(&root));
}
