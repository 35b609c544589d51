//! Issue 12, item 3: OC Chat saves while we recover (it takes no lock).
//!
//! - Deterministic: the app writes a newer chat log from another thread at
//!   a point between our load and our publish (a write-hook handshake);
//!   the save must stop with an error and change nothing.
//! - Racing: the app saves in a loop (as OC Chat's `persistence.py` saves:
//!   move the old chat logs into the archive, write the new one in place)
//!   while `agentlog occhat recover` runs again and again; whatever the
//!   timing, no version the app wrote is lost, and every recover either
//!   succeeds or says the session changed.
//! - The window we cannot close (an app writing between our last check and
//!   our rename) is measured and printed.

use crate::common::occhat_writes;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agentlog::occhat::{HookAction, RecoveryChoice, WriteHook, WriteStep, apply_tail_recovery};
use occhat_writes::*;

/// One save of a chat log as OC Chat's `persistence.py` makes it: every
/// `*_chat_log.*` of the session moves into `archive/s/` (renamed; a free
/// `__N` name when taken), then the new file is written in place.
fn app_save(root: &Path, marker: &str, n: usize) -> PathBuf {
    let sdir = root.join("s");
    let archive = root.join("archive/s");
    fs::create_dir_all(&archive).unwrap();
    for old in live(&sdir, "_chat_log.json") {
        let name = old.file_name().unwrap().to_string_lossy().into_owned();
        let mut target = archive.join(&name);
        let mut i = 1;
        while target.exists() {
            let stem = name.trim_end_matches(".json");
            target = archive.join(format!("{stem}__{i}.json"));
            i += 1;
        }
        let _ = fs::rename(&old, &target);
    }
    // A stamp of its own (one a second in the real app; here unique).
    let path = sdir.join(format!("s_2030-01-01--00-00-{n:02}_{marker}_chat_log.json"));
    let body = format!(
        "{{\"session_name\": \"s\", \"messages\": [{{\"role\": \"user\", \"content\": \"{marker}\"}}]}}"
    );
    fs::write(&path, body).unwrap();
    path
}

#[test]
fn an_app_save_between_load_and_publish_stops_the_save() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    let fired = Arc::new(AtomicBool::new(false));
    let app_file = Arc::new(Mutex::new(None));
    let hook: WriteHook = {
        let (root, fired, app_file) = (root.clone(), fired.clone(), app_file.clone());
        Arc::new(move |step: WriteStep, _p: &Path| {
            // The first temporary file of the save: after the load, before
            // any publish. The app's save runs on its own thread; the
            // handshake is waiting for it to finish.
            if step == WriteStep::CreateTemp && !fired.swap(true, Ordering::SeqCst) {
                let root = root.clone();
                let p = std::thread::spawn(move || app_save(&root, "from-the-app", 1))
                    .join()
                    .unwrap();
                *app_file.lock().unwrap() = Some(p);
            }
            HookAction::Continue
        })
    };
    let store = store_at(&root, T0 + 2 * MIN).with_write_hook(hook);
    let mut session = store.load_session("s").unwrap();
    session.messages = apply_tail_recovery(&session.messages, RecoveryChoice::Drop);
    let r = store.save_all(&mut session);
    assert!(fired.load(Ordering::SeqCst));
    let before = snapshot(&root);
    assert!(r.is_err(), "published over the app's newer chat log: {r:?}");
    let msg = r.unwrap_err().to_string();
    assert!(msg.contains("changed since"), "{msg}");
    // The app's file is the live, newest chat log; nothing of ours is live.
    let app = app_file.lock().unwrap().clone().unwrap();
    assert_eq!(
        live(&root.join("s"), "_chat_log.json"),
        std::slice::from_ref(&app)
    );
    let loaded = store_at(&root, T0).load_chat_log("s").unwrap();
    assert_eq!(loaded.path, app);
    assert_eq!(snapshot(&root), before);
    let scratch = snapshot(&root).keys().any(|p| is_scratch(p));
    assert!(!scratch, "{:#?}", snapshot(&root));
}

#[test]
fn an_app_rewriting_the_loaded_file_in_place_stops_the_save() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    let store = store_at(&root, T0 + 2 * MIN);
    let mut session = store.load_session("s").unwrap();
    // Same name, same size, same modification time: only the bytes differ.
    let log = live(&root.join("s"), "_chat_log.json").pop().unwrap();
    let mut bytes = fs::read(&log).unwrap();
    let mtime = fs::metadata(&log).unwrap().modified().unwrap();
    let at = bytes.iter().rposition(|&b| b == b'e').unwrap();
    bytes[at] = b'E';
    fs::write(&log, &bytes).unwrap();
    fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let before = snapshot(&root);
    session.messages = apply_tail_recovery(&session.messages, RecoveryChoice::Drop);
    let r = store.save_all(&mut session);
    assert!(r.is_err(), "{r:?}");
    assert_eq!(snapshot(&root), before);
}

// Runs the command.
#[cfg(feature = "cli")]
#[test]
fn recover_racing_a_live_app_loses_nothing() {
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let app = {
        let (root, stop, written) = (root.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) && n < 60 {
                app_save(&root, &format!("app-{n}"), n);
                n += 1;
                written.store(n, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(3));
            }
        })
    };
    let (mut ok, mut changed) = (0, 0);
    for _ in 0..15 {
        let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => ok += 1,
            _ if err.contains("changed since") => changed += 1,
            // The app moved the file we resolved before we read it, or we
            // read its chat log half written (it writes in place): a read
            // error or a refused recovery, nothing written.
            _ if err.contains("No such file")
                || err.contains("no meta")
                || err.contains("cannot be read") => {}
            _ => panic!("{}", describe(&out)),
        }
    }
    stop.store(true, Ordering::SeqCst);
    app.join().unwrap();
    println!("racing: {ok} recovered, {changed} stopped by a change");
    // Whatever the timing: every chat log the app wrote is still there.
    let all = snapshot(&root);
    for n in 0..written.load(Ordering::SeqCst) {
        let marker = format!("\"app-{n}\"");
        let found = all.keys().any(|p| {
            p.ends_with(".json")
                && fs::read_to_string(root.join(p)).is_ok_and(|t| t.contains(&marker))
        });
        assert!(found, "the app's version {n} is lost: {all:#?}");
    }
}

#[test]
fn measure_the_window_between_the_last_check_and_the_rename() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    let marks: Arc<Mutex<Vec<(WriteStep, Instant)>>> = Arc::default();
    let hook: WriteHook = {
        let marks = marks.clone();
        Arc::new(move |step: WriteStep, _p: &Path| {
            marks.lock().unwrap().push((step, Instant::now()));
            HookAction::Continue
        })
    };
    let (mut windows, mut checks) = (Vec::new(), Vec::new());
    for i in 0..200u64 {
        let store = store_at(&root, T0 + (2 + i) * MIN).with_write_hook(hook.clone());
        let mut session = store.load_session("s").unwrap();
        session.messages.push(msg("user", &format!("m{i}")));
        marks.lock().unwrap().clear();
        store.save_chat_log(&mut session).unwrap();
        let m = marks.lock().unwrap();
        // The last check starts at the last Verify step before the
        // Publish step; the Publish step is announced right after the check
        // (one `lstat` later) and the step after it comes once the link or
        // rename has returned.
        let publish = m
            .iter()
            .position(|(s, _)| *s == WriteStep::Publish)
            .unwrap();
        let check = m[..publish]
            .iter()
            .rposition(|(s, _)| *s == WriteStep::Verify)
            .unwrap();
        checks.push(m[publish].1 - m[check].1);
        windows.push(m[publish + 1].1 - m[publish].1);
    }
    checks.sort();
    println!(
        "the last check itself, {} saves: median {:?}, max {:?}",
        checks.len(),
        checks[checks.len() / 2],
        checks[checks.len() - 1]
    );
    windows.sort();
    println!(
        "window (end of the last check to the rename done), {} saves: median {:?}, 90th percentile {:?}, max {:?}",
        windows.len(),
        windows[windows.len() / 2],
        windows[windows.len() * 9 / 10],
        windows[windows.len() - 1]
    );
}
