//! A run stopped at each step of its publication (`agentlog::parquet::run`):
//! the next [`DatasetDir::open`] publishes a run whose manifest (and, when
//! incremental, checkpoint) was written, and removes any other.

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::parquet::{
    Dataset, DatasetDir, DatasetOptions, RunId, RunMode, Superseded, Written, add_removed,
};

/// A run's rows staged in `root`: one `conversations` row (and empty parts
/// of the other tables).
fn staged(root: &Path, run: &RunId) -> Written {
    let dir_root = root.to_path_buf();
    let mut ds = Dataset::create(&dir_root, run, DatasetOptions::default()).unwrap();
    add_removed(&mut ds, "c0ffee", None, 0).unwrap();
    ds.finish(true).unwrap()
}

/// Every file under `root`, relative, sorted.
fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let p: PathBuf = e.path().strip_prefix(root).unwrap().to_path_buf();
                out.push(p.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

fn visible(root: &Path) -> usize {
    files(root)
        .iter()
        .filter(|f| f.ends_with(".parquet") && !f.starts_with("_agentlog"))
        .count()
}

#[test]
fn parts_without_a_manifest_are_removed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    let dir = DatasetDir::open(&root, None).unwrap();
    let written = staged(&root, &RunId::new(1));
    assert_eq!(written.parts.len(), 5);
    assert!(
        written
            .parts
            .iter()
            .all(|p| p.tmp.exists() && !p.dest.exists())
    );
    assert_eq!(visible(&root), 0, "staged parts are hidden");
    drop(dir);
    // Killed before its manifest: the next run removes its parts.
    let dir = DatasetDir::open(&root, None).unwrap();
    assert!(dir.is_empty());
    assert_eq!(files(&root), ["_agentlog/lock"]);
}

#[test]
fn a_full_run_with_its_manifest_is_published() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    let dir = DatasetDir::open(&root, None).unwrap();
    let run = RunId::new(2);
    let written = staged(&root, &run);
    let pending = dir.stage(&run, written, RunMode::Full, None, &[]).unwrap();
    let parts: Vec<PathBuf> = pending.parts().map(Path::to_path_buf).collect();
    drop(pending);
    drop(dir);
    assert_eq!(visible(&root), 0);
    let dir = DatasetDir::open(&root, None).unwrap();
    assert!(parts.iter().all(|p| p.exists()), "published");
    assert_eq!(visible(&root), 5);
    assert!(!dir.is_empty());
    assert_eq!(dir.latest_run().unwrap().name, run.name());
}

#[test]
fn an_incremental_run_is_published_only_with_its_checkpoint() {
    let t = tempfile::tempdir().unwrap();
    for saved in [false, true] {
        let root = t.path().join(format!("ds-{saved}"));
        let dir = DatasetDir::open(&root, Some("before")).unwrap();
        let run = RunId::new(3);
        let written = staged(&root, &run);
        let sup = [Superseded {
            conversation_id: "c0ffee".into(),
            change: "removed",
        }];
        let pending = dir
            .stage(&run, written, RunMode::Incremental, Some("after"), &sup)
            .unwrap();
        drop(pending);
        drop(dir);
        // The checkpoint file holds `after` once saved, `before` if not.
        let now = if saved { "after" } else { "before" };
        let dir = DatasetDir::open(&root, Some(now)).unwrap();
        if saved {
            assert_eq!(visible(&root), 5);
            let last = dir.latest_run().unwrap();
            assert_eq!(last.checkpoint_after.as_deref(), Some("after"));
            let m = fs::read_to_string(
                root.join("_agentlog/runs")
                    .join(format!("{}.json", run.name())),
            )
            .unwrap();
            let v: serde_json::Value = serde_json::from_str(&m).unwrap();
            assert_eq!(v["parts"].as_array().unwrap().len(), 5);
            assert_eq!(v["supersedes"][0]["change"], "removed");
            assert_eq!(v["supersedes"][0]["tables"].as_array().unwrap().len(), 5);
        } else {
            assert!(dir.is_empty());
            assert_eq!(files(&root), ["_agentlog/lock"]);
        }
    }
}

/// A lock held for a moment by someone else (a process forked by another
/// thread holds the lock's descriptor until it runs its program) is waited
/// for; one held on is refused as another export.
#[test]
fn a_lock_held_a_moment_is_waited_for() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    drop(DatasetDir::open(&root, None).unwrap());
    let lock_path = root.join("_agentlog/lock");
    let held = fs::File::open(&lock_path).unwrap();
    held.lock().unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(60));
        drop(held);
    });
    let dir = DatasetDir::open(&root, None);
    release.join().unwrap();
    assert!(dir.is_ok(), "{:?}", dir.err().map(|e| e.to_string()));
    drop(dir);
    let held = fs::File::open(&lock_path).unwrap();
    held.lock().unwrap();
    let e = DatasetDir::open(&root, None).unwrap_err();
    assert!(e.to_string().contains("another export"), "{e}");
}

#[test]
fn a_second_writer_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    let _first = DatasetDir::open(&root, None).unwrap();
    let e = DatasetDir::open(&root, None).unwrap_err();
    assert!(e.to_string().contains("another export"), "{e}");
}

/// A run killed while its manifest was being written leaves the manifest's
/// temporary file (the write is atomic: the name never holds a part of
/// it); the next run removes it with the rest of what the killed run left,
/// and a file of another name is left alone.
#[test]
fn a_manifest_half_written_by_a_killed_run_is_removed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    let dir = DatasetDir::open(&root, None).unwrap();
    let written = staged(&root, &RunId::new(1));
    drop(written);
    drop(dir);
    let meta = root.join("_agentlog");
    let half = meta
        .join("pending")
        .join(".1-00000000000000000000000000000000.json.agentlog-tmp-4242-0");
    fs::write(&half, b"{\"format\":\"agentlog-parquet-run\",\"parts\":[").unwrap();
    let half_run = meta.join("runs").join(".2-0.json.agentlog-tmp-4242-1");
    fs::write(&half_run, b"{").unwrap();
    let keep = meta.join("pending").join("notes.txt");
    fs::write(&keep, b"not ours").unwrap();
    let dir = DatasetDir::open(&root, None).unwrap();
    assert!(dir.is_empty());
    assert_eq!(
        files(&root),
        ["_agentlog/lock", "_agentlog/pending/notes.txt"]
    );
}

/// A run that looks and refuses gives the directory up as it found it: a
/// folder `open` made is removed whole, an existing folder keeps only what
/// it held.
#[test]
fn a_run_given_up_leaves_the_directory_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("ds");
    DatasetDir::open(&root, None).unwrap().give_up();
    assert!(!root.exists());
    let other = t.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("notes.txt"), b"keep me").unwrap();
    let dir = DatasetDir::open(&other, None).unwrap();
    assert_eq!(dir.foreign_entries(), ["notes.txt"]);
    dir.give_up();
    assert_eq!(files(&other), ["notes.txt"]);
    // A dataset that was there keeps its own folder.
    let dir = DatasetDir::open(&root, None).unwrap();
    drop(dir);
    DatasetDir::open(&root, None).unwrap().give_up();
    assert_eq!(files(&root), ["_agentlog/lock"]);
}
