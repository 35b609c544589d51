//! `export --parquet OUT_DIR`: every directory and file of the dataset is
//! created inside OUT_DIR, never through a link. A link planted at
//! `_agentlog`, `_agentlog/lock`, `_agentlog/runs`, `_agentlog/pending` or a
//! table's directory (dangling or to a directory outside) is refused (status
//! 2) before anything is written, and what it leads to is left as it was.
//! The checkpoint path is checked before anything is written, with
//! `--replace` too: a link there is refused, a missing directory leaves the
//! dataset as it was (and creates no dataset).

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::{p as s, run};

/// What is under `dir` (links not followed): each path relative to it,
/// with a file's bytes, a link's target, or nothing for a directory.
fn listing(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let t = e.file_type().unwrap();
            let what = if t.is_symlink() {
                format!("link {}", fs::read_link(&p).unwrap().display())
            } else if t.is_dir() {
                stack.push(p.clone());
                "dir".to_owned()
            } else {
                let bytes = fs::read(&p).unwrap();
                let mut h = DefaultHasher::new();
                bytes.hash(&mut h);
                format!("file of {} bytes, hash {:x}", bytes.len(), h.finish())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// A store of one conversation, in `t`.
fn store(t: &Path) -> PathBuf {
    let store = t.join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2/chat"), &store);
    store
}

/// Adds a second conversation to `store`.
fn grow(store: &Path) {
    let from = common::corpus_dir().join("openhands/1.31.2/coding");
    common::copy_tree(&from, store);
}

fn parquet(args: &[&str]) -> Output {
    let mut a = vec!["export", "--parquet"];
    a.extend_from_slice(args);
    run(&a)
}

fn assert_refused(o: &Output, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_dangling_lock_link_is_refused_nothing_created_outside() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let target = outside.join("lock");
    // A new dataset directory holding only the link.
    let pq = t.path().join("pq");
    fs::create_dir_all(pq.join("_agentlog")).unwrap();
    symlink(&target, pq.join("_agentlog/lock")).unwrap();
    let o = parquet(&[s(&pq), s(&store)]);
    assert_refused(&o, "full");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("lock"), "{err}");
    assert!(fs::symlink_metadata(&target).is_err(), "created outside");
    assert!(listing(&outside).is_empty());
    // An incremental dataset whose lock became a dangling link.
    let pq2 = t.path().join("pq2");
    let cp = t.path().join("cp");
    let o = parquet(&[s(&pq2), "--checkpoint", s(&cp), s(&store)]);
    assert_eq!(o.status.code(), Some(0));
    fs::remove_file(pq2.join("_agentlog/lock")).unwrap();
    symlink(&target, pq2.join("_agentlog/lock")).unwrap();
    grow(&store);
    let before = listing(&pq2);
    let cp_before = fs::read(&cp).unwrap();
    let o = parquet(&[s(&pq2), "--checkpoint", s(&cp), s(&store)]);
    assert_refused(&o, "incremental");
    assert!(fs::symlink_metadata(&target).is_err(), "created outside");
    assert_eq!(listing(&pq2), before, "nothing written in OUT_DIR");
    assert_eq!(fs::read(&cp).unwrap(), cp_before, "checkpoint kept");
}

#[test]
fn a_table_directory_linked_outside_is_refused_never_written_through() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let pq = t.path().join("pq");
    let cp = t.path().join("cp");
    let o = parquet(&[s(&pq), "--checkpoint", s(&cp), s(&store)]);
    assert_eq!(o.status.code(), Some(0));
    // `events` moved outside, a link to it in its place.
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::rename(pq.join("events"), outside.join("events")).unwrap();
    symlink(outside.join("events"), pq.join("events")).unwrap();
    grow(&store);
    let out_before = listing(&outside);
    let pq_before = listing(&pq);
    let cp_before = fs::read(&cp).unwrap();
    let o = parquet(&[s(&pq), "--checkpoint", s(&cp), s(&store)]);
    assert_refused(&o, "incremental");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("events"), "{err}");
    assert_eq!(listing(&outside), out_before, "nothing written outside");
    assert_eq!(listing(&pq), pq_before, "nothing written in OUT_DIR");
    assert_eq!(fs::read(&cp).unwrap(), cp_before, "checkpoint kept");
    // A new dataset directory with a table's link to a directory outside.
    let pq2 = t.path().join("pq2");
    fs::create_dir(&pq2).unwrap();
    let empty = outside.join("empty");
    fs::create_dir(&empty).unwrap();
    symlink(&empty, pq2.join("conversations")).unwrap();
    let o = parquet(&[s(&pq2), "--replace", s(&store)]);
    assert_refused(&o, "--replace");
    let o = parquet(&[s(&pq2), s(&store)]);
    assert_refused(&o, "full");
    assert!(listing(&empty).is_empty(), "nothing written outside");
}

#[test]
fn a_meta_directory_linked_outside_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    for (name, rel) in [
        ("pq", "_agentlog"),
        ("pq-runs", "_agentlog/runs"),
        ("pq-pending", "_agentlog/pending"),
    ] {
        let pq = t.path().join(name);
        let link = pq.join(rel);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(&outside, &link).unwrap();
        let o = parquet(&[s(&pq), s(&store)]);
        assert_refused(&o, rel);
        let cp = t.path().join(format!("{name}.cp"));
        let o = parquet(&[s(&pq), "--checkpoint", s(&cp), s(&store)]);
        assert_refused(&o, rel);
        assert!(listing(&outside).is_empty(), "{rel}: written outside");
        assert!(fs::symlink_metadata(&cp).is_err(), "{rel}: no checkpoint");
    }
    // A dangling `_agentlog` link: its target is not created.
    let pq = t.path().join("pq-dangling");
    fs::create_dir(&pq).unwrap();
    let fresh = outside.join("fresh");
    symlink(&fresh, pq.join("_agentlog")).unwrap();
    let o = parquet(&[s(&pq), s(&store)]);
    assert_refused(&o, "dangling _agentlog");
    assert!(fs::symlink_metadata(&fresh).is_err());
}

#[test]
fn replace_refuses_a_checkpoint_link_before_writing() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let pq = t.path().join("pq");
    let cp = t.path().join("cp");
    let o = parquet(&[s(&pq), "--checkpoint", s(&cp), s(&store)]);
    assert_eq!(o.status.code(), Some(0));
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim.cp");
    fs::copy(&cp, &victim).unwrap();
    let link = t.path().join("cp-link");
    symlink(&victim, &link).unwrap();
    let pq_before = listing(&pq);
    let out_before = listing(&outside);
    let o = parquet(&[s(&pq), "--replace", "--checkpoint", s(&link), s(&store)]);
    assert_refused(&o, "--replace --checkpoint LINK");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("symbolic link") && err.contains(s(&link)),
        "{err}"
    );
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(listing(&outside), out_before);
    assert_eq!(listing(&pq), pq_before, "the dataset not replaced");
    let beside: Vec<_> = listing(t.path())
        .into_keys()
        .filter(|p| p.to_string_lossy().contains("agentlog-new"))
        .collect();
    assert!(beside.is_empty(), "no new dataset left beside: {beside:?}");
}

#[test]
fn a_checkpoint_in_a_missing_directory_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let pq = t.path().join("pq");
    let cp = t.path().join("cp");
    let o = parquet(&[s(&pq), "--checkpoint", s(&cp), s(&store)]);
    assert_eq!(o.status.code(), Some(0));
    let missing = t.path().join("nodir/cp");
    let before = listing(t.path());
    // --replace: the dataset is not replaced by one naming a checkpoint
    // that could not be saved.
    let o = parquet(&[s(&pq), "--replace", "--checkpoint", s(&missing), s(&store)]);
    assert_refused(&o, "--replace");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(s(&missing)), "{err}");
    assert_eq!(listing(t.path()), before, "nothing written");
    // Incremental into a new directory: OUT_DIR is not created.
    let pq2 = t.path().join("pq2");
    let o = parquet(&[s(&pq2), "--checkpoint", s(&missing), s(&store)]);
    assert_refused(&o, "incremental");
    assert!(fs::symlink_metadata(&pq2).is_err(), "OUT_DIR created");
    // Into the existing dataset: nothing in it changes.
    let o = parquet(&[s(&pq), "--checkpoint", s(&missing), s(&store)]);
    assert_refused(&o, "incremental, existing");
    assert_eq!(listing(t.path()), before, "nothing written");
}

#[test]
fn a_partition_directory_linked_outside_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let store = store(t.path());
    let pq = t.path().join("pq");
    let cp = t.path().join("cp");
    let o = parquet(&[
        s(&pq),
        "--partition-by",
        "date",
        "--checkpoint",
        s(&cp),
        s(&store),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let part = fs::read_dir(pq.join("events"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("date="))
        .expect("a date partition")
        .path();
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let moved = outside.join("partition");
    fs::rename(&part, &moved).unwrap();
    symlink(&moved, &part).unwrap();
    // A copy of the conversation: its rows go to the same partition.
    let conv = fs::read_dir(&store)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    common::copy_tree(&conv, &store.join("copy"));
    let out_before = listing(&outside);
    let pq_before = listing(&pq);
    let cp_before = fs::read(&cp).unwrap();
    let o = parquet(&[
        s(&pq),
        "--partition-by",
        "date",
        "--checkpoint",
        s(&cp),
        s(&store),
    ]);
    assert_refused(&o, "incremental");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(listing(&outside), out_before, "nothing written outside");
    assert_eq!(listing(&pq), pq_before, "nothing published in OUT_DIR");
    assert_eq!(fs::read(&cp).unwrap(), cp_before, "checkpoint kept");
}
