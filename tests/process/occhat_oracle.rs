//! The corpus's OC Chat sample stores against the reference's own outputs
//! (`tests/data/corpus/occhat/*/oracle.json`): listing, crash signal,
//! resolution, loading, tail detection and recovery, latest artifact,
//! migration and `fs_safe_name`. No numbered difference applies to any of
//! these cases (the differences are tested in `tests/it/occhat/differences.rs`).
//! Here because the oracle was recorded with the case folder as the working
//! directory, which the tests change.

use crate::common::occhat as occhat_support;

use std::path::{Path, PathBuf};

use agentlog::json::OwnedValue;
use agentlog::occhat::{
    RecordKind, RecoveryChoice, SessionStore, TimeZone, canonical_record_locator,
    detect_incomplete_tail, fs_safe_name, recovery_indexes,
};
use occhat_support::{Case, arr, at, read_json, restore, s};

/// Every OC Chat case of the corpus: each folder of `corpus/occhat/` (a
/// folder without an `oracle.json` fails), so a new case cannot be left out.
fn cases() -> Vec<String> {
    let root = occhat_support::corpus();
    let mut out: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .map(|p| {
            assert!(
                p.join("oracle.json").is_file(),
                "{}: an OC Chat case without an oracle.json",
                p.display()
            );
            p.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 3,
        "{}: the OC Chat cases are missing ({out:?})",
        root.display()
    );
    out
}

fn store() -> SessionStore {
    SessionStore::new("sessions").with_time_zone(TimeZone::utc())
}

/// Runs `f` with the working directory at the case's folder (the oracle's
/// convention: cwd = the case folder, sessions_dir = "sessions").
fn in_case<R>(case: &Case, f: impl FnOnce() -> R) -> R {
    let old = std::env::current_dir().unwrap();
    std::env::set_current_dir(&case.dir).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::env::set_current_dir(old).unwrap();
    match r {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e),
    }
}

fn without(v: &OwnedValue, keys: &[&str]) -> OwnedValue {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        for k in keys {
            m.remove(k);
        }
    }
    v
}

fn rel_to_sessions(p: &Path, sessions_abs: &Path) -> String {
    let p = if p.is_absolute() {
        p.strip_prefix(sessions_abs).unwrap().to_path_buf()
    } else {
        p.strip_prefix("sessions").unwrap().to_path_buf()
    };
    p.to_string_lossy().into_owned()
}

#[test]
fn listing_equals_oracle() {
    let _g = crate::process_lock();
    for name in cases() {
        let case = restore(&name);
        in_case(&case, || {
            let list = store().list_sessions();
            assert!(list.skipped.is_empty(), "{name}: {:?}", list.skipped);
            let want = arr(at(&case.oracle, "list_sessions"));
            assert_eq!(list.sessions.len(), want.len(), "{name}");
            for (got, want) in list.sessions.iter().zip(want) {
                let got = got.to_value();
                assert_eq!(got, without(want, &["filepath_rel"]), "{name}");
                // Same keys, same order, as the seed's dict.
                let keys: Vec<&str> = got.as_object().unwrap().iter().map(|(k, _)| k).collect();
                let wkeys: Vec<&str> = want
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, _)| k)
                    .filter(|k| *k != "filepath_rel")
                    .collect();
                assert_eq!(keys, wkeys);
            }
        });
    }
}

#[test]
fn crash_signal_equals_oracle() {
    let _g = crate::process_lock();
    for name in cases() {
        let case = restore(&name);
        in_case(&case, || {
            let got = store()
                .read_crash_signal()
                .map_or(OwnedValue::Null, |c| c.to_value());
            let want = at(at(&case.oracle, "read_crash_signal"), "result");
            assert_eq!(&got, want, "{name}");
        });
    }
}

#[test]
fn queries_equal_oracle() {
    let _g = crate::process_lock();
    for name in cases() {
        let case = restore(&name);
        let sessions_abs = case.sessions().canonicalize().unwrap();
        let abs_folded = agentlog::occhat::canonical_record_locator(&sessions_abs.join("x"));
        in_case(&case, || {
            let st = store();
            for q in arr(at(&case.oracle, "queries")) {
                let query =
                    s(at(q, "query")).replace("{SESSIONS_ABS}", &sessions_abs.to_string_lossy());
                let ctx = format!("{name}: {query}");
                assert_eq!(
                    st.session_exists(&query),
                    at(q, "session_exists").as_bool().unwrap(),
                    "{ctx}: session_exists"
                );
                for (key, kind) in [
                    ("resolve_meta", RecordKind::Meta),
                    ("resolve_chat_log", RecordKind::ChatLog),
                ] {
                    let want = at(q, key);
                    match st.resolve_record_path(&query, kind) {
                        Ok(p) => {
                            let want_path = s(at(want, "path"))
                                .replace("{SESSIONS_ABS}", &sessions_abs.to_string_lossy());
                            assert_eq!(p, PathBuf::from(&want_path), "{ctx}: {key}");
                            assert_eq!(
                                rel_to_sessions(&p, &sessions_abs),
                                s(at(want, "path_rel")),
                                "{ctx}"
                            );
                        }
                        Err(e) => {
                            assert!(e.is_not_found(), "{ctx}: {e}");
                            assert_eq!(
                                s(at(want, "error_class")),
                                "not_found",
                                "{ctx}: {key}: {e}"
                            );
                        }
                    }
                }
                let want = at(q, "load_session_metadata");
                match st.load_session_metadata(&query) {
                    Ok(m) => {
                        assert_eq!(
                            m.validated,
                            at(want, "validated").as_bool().unwrap(),
                            "{ctx}"
                        );
                        assert_eq!(&m.metadata, at(want, "metadata"), "{ctx}");
                        // Key order too: the validated dump's order.
                        assert_eq!(
                            m.metadata.to_json(),
                            at(want, "metadata").to_json(),
                            "{ctx}: member order"
                        );
                        let loc = m.canonical_record_locator.clone();
                        let base = abs_folded.clone();
                        let rel = if loc == base {
                            ".".to_owned()
                        } else {
                            loc.strip_prefix(&format!("{base}/"))
                                .unwrap_or(&loc)
                                .to_owned()
                        };
                        assert_eq!(rel, s(at(want, "locator_rel")), "{ctx}: locator");
                    }
                    Err(e) => {
                        assert!(e.is_not_found(), "{ctx}: {e}");
                        assert_eq!(s(at(want, "error_class")), "not_found", "{ctx}");
                    }
                }
                let want = at(q, "load_chat_log");
                match st.load_chat_log(&query) {
                    Ok(l) => {
                        assert_eq!(
                            l.validated,
                            at(want, "validated").as_bool().unwrap(),
                            "{ctx}"
                        );
                        assert_eq!(
                            l.chat_log.to_json(),
                            at(want, "chat_log").to_json(),
                            "{ctx}"
                        );
                    }
                    Err(e) => {
                        assert!(e.is_not_found(), "{ctx}: {e}");
                        assert_eq!(s(at(want, "error_class")), "not_found", "{ctx}");
                    }
                }
            }
        });
    }
}

fn indexes(v: &OwnedValue) -> Vec<usize> {
    arr(v)
        .iter()
        .map(|n| n.as_number().unwrap().as_i64().unwrap() as usize)
        .collect()
}

#[test]
fn tails_equal_oracle() {
    let _g = crate::process_lock();
    let mut seen = 0;
    for name in cases() {
        let case = restore(&name);
        in_case(&case, || {
            let st = store();
            let logs = at(&case.oracle, "chat_logs").as_object().unwrap();
            for (rel, want) in logs.iter() {
                let log = st.load_chat_log(&format!("sessions/{rel}")).unwrap();
                assert_eq!(
                    log.validated,
                    at(want, "validated").as_bool().unwrap(),
                    "{rel}"
                );
                let msgs = log.messages();
                assert_eq!(
                    msgs.len() as i64,
                    at(want, "message_count")
                        .as_number()
                        .unwrap()
                        .as_i64()
                        .unwrap()
                );
                let report =
                    detect_incomplete_tail(msgs).map_or(OwnedValue::Null, |r| r.to_value());
                assert_eq!(&report, at(want, "detect_incomplete_tail"), "{rel}");
                assert_eq!(
                    report.to_json(),
                    at(want, "detect_incomplete_tail").to_json()
                );
                for (key, choice) in [
                    ("apply_drop", RecoveryChoice::Drop),
                    ("apply_keep", RecoveryChoice::Keep),
                    ("apply_fresh", RecoveryChoice::Fresh),
                ] {
                    assert_eq!(
                        recovery_indexes(msgs, choice),
                        indexes(at(want, key)),
                        "{rel}: {key}"
                    );
                }
                seen += 1;
            }
        });
    }
    assert_eq!(seen, 16, "every chat log of the corpus");
}

#[test]
fn latest_artifact_equals_oracle() {
    let _g = crate::process_lock();
    let case = restore("sample_basic");
    in_case(&case, || {
        let st = store();
        let want = at(&case.oracle, "find_latest_artifact")
            .as_object()
            .unwrap();
        assert!(!want.is_empty());
        for (session, path) in want.iter() {
            let got = st.find_latest_artifact(session).unwrap();
            assert_eq!(got, Path::new("sessions").join(s(path)));
        }
        assert_eq!(st.find_latest_artifact("weekly-report"), None);
    });
}

#[test]
fn migration_equals_oracle() {
    let _g = crate::process_lock();
    let case = restore("sample_legacy");
    let input_files: Vec<(String, Vec<u8>)> = occhat_support::tree(&case.sessions());
    let mig = at(&case.oracle, "migration");
    in_case(&case, || {
        let st = store();
        let first = st.migrate_legacy_layout().unwrap();
        assert_eq!(first.to_value(), *at(mig, "summary"));
        let second = st.migrate_legacy_layout().unwrap();
        assert_eq!(second.to_value(), *at(mig, "summary_second_run"));

        // Directories after.
        let mut dirs = vec![".".to_owned()];
        for e in std::fs::read_dir("sessions").unwrap().flatten() {
            if e.path().is_dir() {
                dirs.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        dirs.sort();
        let want_dirs: Vec<&str> = arr(at(mig, "dirs_after")).iter().map(s).collect();
        assert_eq!(dirs, want_dirs);

        // Files after: kept files keep their mtime, new ones hold the JSON
        // and the very bytes the reference wrote (its sha256 is the input
        // file's, which the reference re-serialised identically).
        let after = occhat_support::tree(Path::new("sessions"));
        let want_files = arr(at(mig, "files_after"));
        assert_eq!(
            after.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            want_files
                .iter()
                .map(|f| s(at(f, "path")))
                .collect::<Vec<_>>()
        );
        let store_files = arr(at(at(&case.oracle, "store"), "files"));
        for ((path, bytes), want) in after.iter().zip(want_files) {
            assert_eq!(
                bytes.len() as i64,
                at(want, "size").as_number().unwrap().as_i64().unwrap(),
                "{path}"
            );
            let sha = s(at(want, "sha256"));
            let src = store_files
                .iter()
                .find(|f| s(at(f, "sha256")) == sha)
                .unwrap();
            let (_, src_bytes) = input_files
                .iter()
                .find(|(p, _)| p == s(at(src, "path")))
                .unwrap();
            assert_eq!(bytes, src_bytes, "{path}: byte for byte");
            if at(want, "kept_input_mtime").as_bool().unwrap() {
                let m = std::fs::metadata(Path::new("sessions").join(path))
                    .unwrap()
                    .modified()
                    .unwrap();
                assert_eq!(
                    m,
                    occhat_support::from_ns(
                        at(want, "mtime_ns")
                            .as_number()
                            .unwrap()
                            .as_str()
                            .parse()
                            .unwrap()
                    )
                );
            } else {
                assert_eq!(
                    OwnedValue::parse(bytes).unwrap(),
                    *at(want, "json"),
                    "{path}"
                );
            }
        }

        let list = st.list_sessions();
        let want = arr(at(mig, "list_sessions_after"));
        assert_eq!(list.sessions.len(), want.len());
        for (got, want) in list.sessions.iter().zip(want) {
            assert_eq!(
                without(&got.to_value(), &["last_modified"]),
                without(want, &["filepath_rel"])
            );
        }
    });
}

#[test]
fn fs_safe_name_equals_oracle() {
    let _g = crate::process_lock();
    let v = read_json(&occhat_support::corpus().join("fs_safe_name.json"));
    let cases = arr(at(&v, "fs_safe_name"));
    assert!(cases.len() >= 10);
    for c in cases {
        let input = s(at(c, "input"));
        let out = fs_safe_name(input);
        assert_eq!(out, s(at(c, "output")), "{input:?}");
        assert_eq!(fs_safe_name(&out), s(at(c, "output_twice")), "{input:?}");
        assert_eq!(
            out == input,
            at(c, "identity").as_bool().unwrap(),
            "{input:?}"
        );
    }
}

#[test]
fn locator_is_the_session_directory() {
    let _g = crate::process_lock();
    let case = restore("sample_basic");
    let meta = case
        .sessions()
        .join("sql-tuning/sql-tuning_2025-04-08--14-12-30_meta.json");
    let dir_loc = canonical_record_locator(&case.sessions().join("sql-tuning"));
    assert_eq!(canonical_record_locator(&meta), dir_loc);
    assert!(dir_loc.ends_with("/sql-tuning"));
    assert_eq!(dir_loc, dir_loc.to_lowercase());
}
