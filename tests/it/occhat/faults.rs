//! Fault injection for every write path that changes the store: a save of
//! a loaded session (`save_all`), a recovery (`recover_session`), an export
//! into the store (`export_markdown`, `export_html`) and the migration.
//!
//! Each operation runs once cleanly, counting its steps through the write
//! hook; then, on a fresh copy of the store each time, every step in turn
//! fails with ENOSPC, EXDEV or EACCES (as if its system call had returned
//! it) or the process "crashes" there. After each: the hash of every file
//! version in the store (archived copies included) before is still found
//! after, no record is torn, no error names a temporary file; and a rerun
//! without faults succeeds and leaves the live files the clean run left.

use crate::common::occhat_writes;

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentlog::json::OwnedValue;
use agentlog::occhat::{
    ChatSession, HookAction, RecoveryChoice, SaveError, SessionStore, TimeZone, WriteHook,
    WriteStep,
};
use occhat_writes::*;

#[derive(Clone, Copy, Debug)]
enum Fault {
    NoSpace,
    CrossDevice,
    Denied,
    Crash,
}

const FAULTS: [Fault; 4] = [
    Fault::NoSpace,
    Fault::CrossDevice,
    Fault::Denied,
    Fault::Crash,
];

fn hook(counter: Arc<AtomicUsize>, at: Option<(usize, Fault)>) -> WriteHook {
    Arc::new(move |_s: WriteStep, _p: &Path| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        match at {
            Some((k, f)) if k == n => match f {
                Fault::NoSpace => HookAction::Fail(io::Error::from_raw_os_error(28)),
                Fault::CrossDevice => HookAction::Fail(io::Error::from_raw_os_error(18)),
                Fault::Denied => HookAction::Fail(io::Error::from_raw_os_error(13)),
                Fault::Crash => HookAction::Crash,
            },
            _ => HookAction::Continue,
        }
    })
}

/// The live files (outside `archive/` and `legacy/`, scratch left out),
/// name to bytes.
fn live_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(root)
        .into_iter()
        .filter(|(p, e)| {
            matches!(e, Entry::File(_))
                && !is_scratch(p)
                && !p.starts_with("archive/")
                && !p.starts_with("legacy/")
        })
        .map(|(p, _)| {
            let b = fs::read(root.join(&p)).unwrap();
            (p, b)
        })
        .collect()
}

/// An operation: its name, the clock it runs at, and the run itself (the
/// same function is the faulted run and the rerun).
type Op = fn(&SessionStore, &mut Option<ChatSession>) -> Result<(), SaveError>;

fn at(ns: u64) -> SessionStore {
    store_at(Path::new("/nonexistent"), ns)
}

/// The session a save works on: loaded once before the first attempt and
/// kept, as an app holds it and retries the same save.
fn held(store: &SessionStore, held: &mut Option<ChatSession>) -> ChatSession {
    held.get_or_insert_with(|| {
        let mut s = store.load_session("s").unwrap();
        s.messages.push(msg("assistant", "four"));
        s
    })
    .clone()
}

const OPS: &[(&str, Op)] = &[
    ("save_all", |st, h| {
        let mut s = held(st, h);
        let r = st.save_all(&mut s).map(drop);
        *h = Some(s);
        r
    }),
    ("recover", |st, _| {
        st.recover_session("s", RecoveryChoice::Drop, false)
            .map(drop)
    }),
    ("export_markdown", |st, h| {
        st.export_markdown(&held(st, h), None).map(drop)
    }),
    #[cfg(feature = "html")]
    ("export_html", |st, h| {
        st.export_html(&held(st, h), None).map(drop)
    }),
];

fn check_no_torn_record(root: &Path, what: &str) {
    for (p, b) in live_files(root) {
        if p.ends_with(".json") {
            assert!(OwnedValue::parse(&b).is_ok(), "{what}: torn {p}");
        }
    }
}

fn check_error(e: &SaveError, what: &str) {
    let text = e.to_string();
    assert!(
        !text.contains(".occhat-tmp"),
        "{what}: the error names a temporary file: {text}"
    );
}

#[test]
fn every_fault_at_every_step_of_save_recover_export() {
    let _ = at;
    let base = tempfile::tempdir().unwrap();
    let prepared = base.path().join("prepared");
    two_saves(&prepared, "s");
    store_at(&prepared, T0 + MIN)
        .export_markdown(&store_at(&prepared, T0).load_session("s").unwrap(), None)
        .unwrap();
    let before = versions(&prepared);
    let when = T0 + 2 * MIN;
    let mut runs = 0;
    for &(what, op) in OPS {
        let clean_root = base.path().join(format!("clean-{what}"));
        crate::common::copy_tree_keeping_mtimes(&prepared, &clean_root);
        let counter = Arc::new(AtomicUsize::new(0));
        let st = store_at(&clean_root, when).with_write_hook(hook(counter.clone(), None));
        op(&st, &mut None).unwrap();
        let steps = counter.load(Ordering::SeqCst);
        assert!(steps >= 5, "{what}: {steps} steps");
        let clean = live_files(&clean_root);
        for k in 0..steps {
            for fault in FAULTS {
                let label = format!("{what}, {fault:?} at step {k}");
                let root = base.path().join("run");
                crate::common::copy_tree_keeping_mtimes(&prepared, &root);
                let counter = Arc::new(AtomicUsize::new(0));
                let st = store_at(&root, when).with_write_hook(hook(counter, Some((k, fault))));
                let mut session = None;
                match op(&st, &mut session) {
                    Ok(()) => assert!(
                        matches!(fault, Fault::CrossDevice),
                        "{label}: the fault did not stop the write"
                    ),
                    Err(e) => check_error(&e, &label),
                }
                assert_kept(&root, &before, &label);
                check_no_torn_record(&root, &label);
                // The rerun completes the work: the live files are the
                // clean run's.
                let st = store_at(&root, when);
                op(&st, &mut session).unwrap_or_else(|e| panic!("{label}: rerun: {e}"));
                assert_kept(&root, &before, &label);
                assert_eq!(
                    live_files(&root).keys().collect::<Vec<_>>(),
                    clean.keys().collect::<Vec<_>>(),
                    "{label}: after the rerun"
                );
                assert_eq!(live_files(&root), clean, "{label}: after the rerun");
                fs::remove_dir_all(&root).unwrap();
                runs += 1;
            }
        }
    }
    assert!(runs > 150, "{runs}");
}

#[test]
fn every_fault_at_every_step_of_migration() {
    let base = tempfile::tempdir().unwrap();
    let case = base.path().join("legacy-store");
    crate::common::copy_tree_keeping_mtimes(
        &crate::common::corpus_dir().join("occhat/sample_legacy/sessions"),
        &case,
    );
    // `Chat_logs/.gitkeep` is removed by design once `Chat_logs/` is empty.
    let gitkeep = fs::read(case.join("Chat_logs/.gitkeep")).ok();
    let _ = fs::remove_file(case.join("Chat_logs/.gitkeep"));
    let before = json_versions(&case);
    if let Some(g) = gitkeep {
        fs::write(case.join("Chat_logs/.gitkeep"), g).unwrap();
    }
    let counter = Arc::new(AtomicUsize::new(0));
    let clean_root = base.path().join("clean");
    crate::common::copy_tree_keeping_mtimes(&case, &clean_root);
    let migrate = |root: &Path, h: Option<WriteHook>| {
        let mut st = SessionStore::new(root).with_time_zone(TimeZone::utc());
        if let Some(h) = h {
            st = st.with_write_hook(h);
        }
        st.migrate_legacy_layout()
    };
    migrate(&clean_root, Some(hook(counter.clone(), None))).unwrap();
    let steps = counter.load(Ordering::SeqCst);
    assert!(steps > 10, "{steps}");
    let names = |root: &Path| -> Vec<String> {
        SessionStore::new(root)
            .list_sessions()
            .sessions
            .iter()
            .map(|s| s.name_str().unwrap().to_owned())
            .collect()
    };
    let clean_names = names(&clean_root);
    for k in 0..steps {
        for fault in FAULTS {
            let label = format!("migrate, {fault:?} at step {k}");
            let root = base.path().join("run");
            crate::common::copy_tree_keeping_mtimes(&case, &root);
            match migrate(
                &root,
                Some(hook(Arc::new(AtomicUsize::new(0)), Some((k, fault)))),
            ) {
                Ok(s) => {
                    for e in &s.errors {
                        assert!(!e.contains(".occhat-tmp"), "{label}: {e}");
                    }
                }
                Err(e) => check_error(&e, &label),
            }
            assert_kept_json(&root, &before, &label);
            let s = migrate(&root, None).unwrap_or_else(|e| panic!("{label}: rerun: {e}"));
            assert!(s.errors.is_empty(), "{label}: {:?}", s.errors);
            assert_kept_json(&root, &before, &label);
            assert_eq!(names(&root), clean_names, "{label}");
            assert!(!root.join("Chat_logs").exists(), "{label}");
            fs::remove_dir_all(&root).unwrap();
        }
    }
}
