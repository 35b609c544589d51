//! Reading ahead of the parallel scans (`agentlog::readahead`): the same
//! results as without it on the corpus and on hostile stores (unreadable
//! files, files vanishing mid-scan, links, FIFOs, files over the size
//! limit), never a hang or a panic, and never more than its depth ahead of
//! the readers.

use crate::common;
use crate::common::unprivileged;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use agentlog::ReadAhead;
use agentlog::openhands::{Store, StoreError, StoreItem};
use agentlog::parallel::{for_each_ordered, for_each_ordered_ahead};

/// Everything an item of a scan says, as text: the conversation's place,
/// files, events (bytes, envelope, errors) and faults, or the error.
fn summary(item: Result<StoreItem<'_>, StoreError>) -> String {
    let it = match item {
        Ok(it) => it,
        Err(e) => return format!("error {e}"),
    };
    let c = it.conversation;
    let mut s = format!(
        "{} depth {} parent {:?} state {:?} meta {:?} events_error {:?} subagents {:?} {:?} loops {:?} others {:?}\n",
        c.dir().display(),
        it.depth,
        it.parent,
        c.state()
            .map(|f| (f.raw().len(), f.error().map(|e| e.to_string()))),
        c.meta()
            .map(|f| (f.raw().len(), f.error().map(|e| e.to_string()))),
        c.events_error().map(|e| e.to_string()),
        c.subagents(),
        c.subagents_error().map(|e| e.to_string()),
        c.subagent_loops(),
        c.others(),
    );
    for e in c.events() {
        s.push_str(&format!(
            "  {} {} {:?} {:?} {} {:?}\n",
            e.index(),
            e.file_name(),
            e.kind_name(),
            e.id(),
            e.raw().len(),
            e.error().map(|e| e.to_string()),
        ));
    }
    s
}

fn scan(store: &Store, ahead: ReadAhead) -> Vec<String> {
    store.clone().with_read_ahead(ahead).par_map(summary)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        let dst = to.join(e.file_name());
        if t.is_dir() {
            copy_dir(&e.path(), &dst);
        } else if t.is_symlink() {
            symlink(fs::read_link(e.path()).unwrap(), &dst).unwrap();
        } else {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// The corpus's conversations (sub-agents included), copied `copies` times
/// under fresh names.
fn corpus_copies(root: &Path, copies: usize) -> usize {
    let corpus = common::corpus_dir().join("openhands");
    let dirs = Store::open(&corpus).unwrap().dirs().to_vec();
    let mut n = 0;
    for k in 0..copies {
        for d in &dirs {
            copy_dir(d, &root.join(format!("{k:04}{n:028x}")));
            n += 1;
        }
    }
    n
}

#[test]
fn same_results_as_without_read_ahead_on_the_corpus() {
    let corpus = common::corpus_dir().join("openhands");
    let store = Store::open(&corpus).unwrap();
    assert!(store.len() > 50);
    let plain = scan(&store, ReadAhead::off());
    let sequential: Vec<String> = {
        let mut v = Vec::new();
        store.for_each(|item| v.push(summary(item)));
        v
    };
    assert_eq!(plain, sequential);
    for depth in [1, 2, 7, 32, 200] {
        assert_eq!(scan(&store, ReadAhead::new(depth)), plain, "depth {depth}");
    }
    assert_eq!(store.read_ahead(), ReadAhead::default());
    assert_eq!(scan(&store, ReadAhead::default()), plain);
}

#[test]
fn same_results_in_windows_and_stopping_early() {
    let t = tempfile::tempdir().unwrap();
    let n = corpus_copies(t.path(), 3);
    let store = Store::open(t.path()).unwrap();
    assert_eq!(store.len(), n);
    let plain = scan(&store, ReadAhead::off());
    for window in [1, 5, 64] {
        let mut got = Vec::new();
        store
            .clone()
            .with_read_ahead(ReadAhead::new(3))
            .par_for_each(window, summary, |s| got.push(s));
        assert_eq!(got, plain, "window {window}");
    }
    // The scan primitive itself: results in order, a sink's error stops
    // it (and the I/O threads) with that error.
    let dirs = store.dirs();
    let mut seen = Vec::new();
    let r = for_each_ordered_ahead(
        dirs,
        7,
        ReadAhead::new(4),
        || 0usize,
        |jobs, d| {
            *jobs += 1;
            d.clone()
        },
        |d| {
            seen.push(d);
            if seen.len() == 40 {
                Err("stop")
            } else {
                Ok(())
            }
        },
    );
    assert_eq!(r, Err("stop"));
    assert_eq!(seen.as_slice(), &dirs[..40]);
    let mut all = Vec::new();
    let r: Result<(), ()> = for_each_ordered(
        dirs,
        7,
        || (),
        |_, d| d.clone(),
        |d| {
            all.push(d);
            Ok(())
        },
    );
    assert!(r.is_ok());
    assert_eq!(all.as_slice(), dirs);
}

/// One event file's bytes.
fn event(i: usize) -> String {
    format!(
        r#"{{"kind":"MessageEvent","id":"e{i}","timestamp":"2025-01-01T00:00:{:02}","source":"user","llm_message":{{"role":"user","content":[{{"type":"text","text":"hello {i}"}}]}}}}"#,
        i % 60
    )
}

/// The file name of event `i`.
fn name(i: usize) -> String {
    format!("event-{i:05}-{i:032x}.json")
}

/// A conversation directory with `events` event files.
fn conversation(dir: &Path, events: usize) {
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(
        dir.join("base_state.json"),
        format!(
            r#"{{"id":"{}","agent":{{}}}}"#,
            dir.file_name().unwrap().to_string_lossy()
        ),
    )
    .unwrap();
    for i in 0..events {
        fs::write(dir.join("events").join(name(i)), event(i)).unwrap();
    }
}

/// A store of conversations with every kind of trouble in it.
fn hostile_store(root: &Path) {
    for i in 0..24 {
        conversation(&root.join(format!("{i:032x}")), 12);
    }
    let c = |i: usize| root.join(format!("{i:032x}"));
    // An event file that is a link: to a file out of the store, to another
    // event, dangling.
    let outside = root.parent().unwrap().join("outside.json");
    fs::write(&outside, event(99)).unwrap();
    fs::remove_file(c(1).join(format!("events/{}", name(3)))).unwrap();
    symlink(&outside, c(1).join(format!("events/{}", name(3)))).unwrap();
    symlink(
        c(2).join(format!("events/{}", name(0))),
        c(1).join(format!("events/{}", name(12))),
    )
    .unwrap();
    symlink(
        root.join("nowhere"),
        c(1).join(format!("events/{}", name(13))),
    )
    .unwrap();
    // A FIFO and a directory where event files should be.
    let fifo = c(3).join(format!("events/{}", name(12)));
    // Without `mkfifo` here the store simply has no FIFO.
    let _ = std::process::Command::new("mkfifo").arg(&fifo).status();
    fs::create_dir(c(3).join(format!("events/{}", name(13)))).unwrap();
    // A file over the size limit (sparse: no block is written), empty
    // files, a malformed one.
    let big = fs::File::create(c(4).join(format!("events/{}", name(12)))).unwrap();
    big.set_len(agentlog::MAX_SIZE + 1).unwrap();
    fs::write(c(4).join(format!("events/{}", name(13))), b"").unwrap();
    fs::write(c(5).join(format!("events/{}", name(2))), b"{\"kind\": ").unwrap();
    fs::write(c(5).join("base_state.json"), b"").unwrap();
    // A linked conversation, sub-agents, a sub-agent link loop.
    symlink(c(6), root.join(format!("{:032x}", 1000))).unwrap();
    conversation(&c(7).join("subagents").join("aa"), 3);
    conversation(&c(7).join("subagents").join("aa/subagents/bb"), 2);
    fs::create_dir_all(c(8).join("subagents")).unwrap();
    symlink(c(8), c(8).join("subagents").join("loop")).unwrap();
    // `events` as a file.
    fs::remove_dir_all(c(9).join("events")).unwrap();
    fs::write(c(9).join("events"), b"not a directory").unwrap();
}

#[test]
fn same_results_on_a_hostile_store() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    hostile_store(&root);
    let store = Store::open(&root).unwrap();
    let plain = scan(&store, ReadAhead::off());
    for depth in [1, 4, 64] {
        assert_eq!(scan(&store, ReadAhead::new(depth)), plain, "depth {depth}");
    }
    let all = plain.join("");
    // The faults are there, typed, and the rest was read.
    assert!(all.contains("over the"), "{all}");
    assert!(all.contains("not a regular file"), "{all}");
    assert!(all.contains("empty file"), "{all}");
    assert!(all.contains("\"e11\""), "{all}");
}

#[test]
fn unreadable_files_and_directories() {
    if !unprivileged::checks_run_here(module_path!(), "unreadable_files_and_directories") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    for i in 0..12 {
        conversation(&root.join(format!("{i:032x}")), 6);
    }
    let c = |i: usize| root.join(format!("{i:032x}"));
    let mode = |p: PathBuf, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    mode(c(1).join(format!("events/{}", name(2))), 0o000);
    mode(c(2).join("events"), 0o000);
    mode(c(3).join("base_state.json"), 0o000);
    let store = Store::open(&root).unwrap();
    let plain = scan(&store, ReadAhead::off());
    assert!(plain.join("").contains("ermission denied"), "{plain:?}");
    for depth in [1, 8] {
        assert_eq!(scan(&store, ReadAhead::new(depth)), plain, "depth {depth}");
    }
    mode(c(2).join("events"), 0o755);
}

#[test]
fn files_vanishing_mid_scan_never_hang_or_panic() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    for i in 0..300 {
        conversation(&root.join(format!("{i:032x}")), 20);
    }
    let store = Store::open(&root).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Removes files and whole conversations, from the far end, while
        // the scan runs.
        s.spawn(|| {
            let mut i = 299;
            while !stop.load(Ordering::Relaxed) && i > 0 {
                let d = root.join(format!("{i:032x}"));
                if i % 2 == 0 {
                    let _ = fs::remove_dir_all(&d);
                } else {
                    for k in (0..20).step_by(3) {
                        let _ = fs::remove_file(d.join("events").join(name(k)));
                    }
                }
                i -= 1;
            }
        });
        for _ in 0..3 {
            let got = store
                .clone()
                .with_read_ahead(ReadAhead::new(16))
                .par_map(|item| {
                    item.map(|it| it.conversation.len())
                        .map_err(|e| e.to_string())
                });
            assert_eq!(got.len(), 300);
            for g in got {
                // A conversation gone is a typed error naming its directory.
                if let Err(e) = g {
                    assert!(e.contains(&root.display().to_string()), "{e}");
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// Whether directory `p` has been listed since its access time was set to
/// the epoch (the file system updates it on the first listing after a
/// change, with `relatime`).
fn listed(p: &Path) -> bool {
    fs::metadata(p)
        .and_then(|m| m.accessed())
        .is_ok_and(|a| a > SystemTime::UNIX_EPOCH + Duration::from_secs(1))
}

#[test]
fn never_more_than_its_depth_ahead_of_the_readers() {
    let t = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..40)
        .map(|i| t.path().join(format!("{i:032x}")))
        .collect();
    for d in &dirs {
        conversation(d, 3);
    }
    let events: Vec<PathBuf> = dirs.iter().map(|d| d.join("events")).collect();
    for d in dirs.iter().chain(&events) {
        let f = fs::File::open(d).unwrap();
        f.set_times(fs::FileTimes::new().set_accessed(SystemTime::UNIX_EPOCH))
            .unwrap();
        assert!(!listed(d));
    }
    let depth = 2;
    ReadAhead::new(depth).run(&dirs, |ahead| {
        assert!(ahead.is_on());
        // The readers begin the first 5 and stay there a while: the I/O
        // threads may read up to index 4 + depth, and no further.
        for i in 0..5 {
            ahead.begin(i);
        }
        std::thread::sleep(Duration::from_millis(400));
    });
    let read: Vec<bool> = events.iter().map(|d| listed(d)).collect();
    if !read[5] {
        eprintln!(
            "note: the file system here does not update access times (noatime?): \
             how far the read-ahead went cannot be seen"
        );
        return;
    }
    assert!(read[5..5 + depth].iter().all(|&r| r), "{read:?}");
    assert!(read[5 + depth..].iter().all(|&r| !r), "{read:?}");
}
