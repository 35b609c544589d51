//! One test (at least) for each numbered difference from the seed's code
//! (see `src/occhat/README.md`, "Differences from the seed's code"). Each
//! test states what the seed's code does with the same input.

use crate::common::occhat as occhat_support;

use std::fs;
use std::path::Path;

use agentlog::json::JsonErrorKind;
use agentlog::occhat::{ChatSession, LoadError, SessionStore, TimeZone, fs_safe_name};
use occhat_support::{put_meta, store_at};
use proptest::prelude::*;

const T0: u64 = 1_744_016_143_000_000_000; // 2025-04-07T08:55:43Z

fn saved_session(root: &Path, name: &str) -> SessionStore {
    let (store, _) = store_at(root, T0);
    let mut s = ChatSession::new(name, "deepseek-chat");
    s.messages
        .push(agentlog::json::OwnedValue::parse(br#"{"role": "user", "content": "hi"}"#).unwrap());
    store.save_all(&mut s).unwrap();
    store
}

// 1. fs_safe_name is idempotent.

#[test]
fn d1_fs_safe_name_strips_to_a_fixed_point() {
    // The seed: "a\u{a0}." -> "a\u{a0}" (one strip pass), and only a second
    // call gives "a". Here one call gives "a".
    assert_eq!(fs_safe_name("a\u{a0}."), "a");
    assert_eq!(fs_safe_name("x.\u{3000}. "), "x");
    assert_eq!(fs_safe_name("\u{2003}.\u{2003}"), "unnamed-session");
}

proptest! {
    #[test]
    fn d1_fs_safe_name_idempotent(name in "[ a-zA-Z0-9./\\\\:*?\"<>|\u{a0}\u{3000}\u{2003}\t\u{1}-]{0,12}") {
        let once = fs_safe_name(&name);
        prop_assert_eq!(fs_safe_name(&once), once.clone());
        prop_assert!(!once.is_empty());
        prop_assert!(!once.contains(['/', '\\']));
    }

    #[test]
    fn d1_fs_safe_name_identity_on_legal_names(name in "[a-zA-Z0-9][a-zA-Z0-9 ._-]{0,10}[a-zA-Z0-9_-]") {
        let stem = name.split('.').next().unwrap_or("").to_lowercase();
        prop_assume!(!["con", "prn", "aux", "nul"].contains(&stem.as_str())
            && !(stem.len() == 4 && (stem.starts_with("com") || stem.starts_with("lpt"))));
        prop_assert_eq!(fs_safe_name(&name), name);
    }
}

// 2. The listing never fails for one session.

#[test]
fn d2_listing_skips_and_reports_undecodable_and_non_object_metas() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let store = saved_session(&root, "good");
    let bad = |dir: &str, bytes: &[u8]| put_meta(&root, dir, bytes);
    // UTF-16 with a BOM, Latin-1 with a non-ASCII byte, a JSON array: each
    // raises out of the seed's list_sessions (UnicodeDecodeError,
    // AttributeError), which then lists nothing at all.
    let mut utf16 = vec![0xff, 0xfe];
    for u in "{\"session_name\": \"u16\"}".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    bad("a-utf16", &utf16);
    bad("b-latin1", b"{\"session_name\": \"caf\xe9\"}");
    bad("c-array", b"[1, 2, 3]");
    let list = store.list_sessions();
    let names: Vec<_> = list
        .sessions
        .iter()
        .map(|s| s.name_str().unwrap())
        .collect();
    assert_eq!(names, ["good"]);
    assert_eq!(list.skipped.len(), 3);
    let kinds: Vec<String> = list
        .skipped
        .iter()
        .map(|s| match &s.error {
            LoadError::Json { source, .. } => format!("json:{:?}", source.kind()),
            LoadError::NotAnObject { found, .. } => format!("not-object:{}", found.as_str()),
            other => format!("{other}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            format!("json:{:?}", JsonErrorKind::InvalidUtf8),
            format!("json:{:?}", JsonErrorKind::InvalidUtf8),
            "not-object:array".to_owned()
        ]
    );
    for s in &list.skipped {
        assert!(s.path.ends_with(s.error.path().unwrap()), "{:?}", s);
    }
    // The Latin-1 error points at the offending byte.
    if let LoadError::Json { source: error, .. } = &list.skipped[1].error {
        assert_eq!(error.offset(), Some(21));
    }
    // The crash signal, built on the listing, still works.
    assert!(store.read_crash_signal().is_some());
}

// 3. Every write is atomic: see occhat/atomic.rs for the crash at every
// step and the concurrent writers; here, the two cases the seed loses.

#[test]
fn d3_no_torn_file_when_a_write_fails_midway() {
    use agentlog::occhat::{HookAction, WriteStep};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let store = saved_session(&root, "s");
    let before = store.load_chat_log("s").unwrap();
    // Fail after half the bytes are written: the seed (open "w", write) has
    // already truncated the live file by then.
    let hook: agentlog::occhat::WriteHook = Arc::new(|step, _p: &Path| {
        if step == WriteStep::WriteTemp {
            HookAction::Fail(std::io::Error::other("disk full"))
        } else {
            HookAction::Continue
        }
    });
    let (s2, clock) = store_at(&root, T0 + 5_000_000_000);
    let failing = s2.with_write_hook(hook);
    let _ = clock;
    let mut sess = ChatSession::from_records(
        &store.load_session_metadata("s").unwrap().metadata,
        Some(&before.chat_log),
    );
    sess.messages.push(
        agentlog::json::OwnedValue::parse(br#"{"role": "assistant", "content": "x"}"#).unwrap(),
    );
    assert!(failing.save_chat_log(&mut sess).is_err());
    let after = store.load_chat_log("s").unwrap();
    assert_eq!(
        after, before,
        "the old chat log is intact and still the live one"
    );
    let leftovers: Vec<_> = fs::read_dir(root.join("s"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".occhat-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "the temporary file is cleaned up");
}

#[test]
fn d3_a_crash_at_the_archive_step_leaves_the_old_file_live() {
    use agentlog::occhat::{HookAction, WriteStep};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    saved_session(&root, "s");
    // Crash right before the first archive link. OC Chat's `persistence.py`
    // has by then moved the old file away without writing a new one (no
    // live record). Here the archive copy comes before the publish (so an
    // archive on another file system fails before anything is replaced):
    // the old file is still live and complete.
    let hook: agentlog::occhat::WriteHook = Arc::new(|step, _p: &Path| {
        if step == WriteStep::ArchiveLink {
            HookAction::Crash
        } else {
            HookAction::Continue
        }
    });
    let (s2, _) = store_at(&root, T0 + 60_000_000_000);
    let crashing = s2.with_write_hook(hook);
    let mut sess = crashing.load_session("s").unwrap();
    assert!(crashing.save_session_metadata(&mut sess).is_err());
    let list = crashing.list_sessions();
    assert_eq!(list.sessions.len(), 1);
    assert!(
        list.sessions[0]
            .filepath
            .to_string_lossy()
            .contains("08-55-43"),
        "{}",
        list.sessions[0].filepath.display()
    );
}

// 4. session_exists agrees with the loader.

#[test]
fn d4_session_exists_uses_the_loaders_lookup() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let store = saved_session(&root, "x");
    // A record in a directory whose name has a leading space (made by hand).
    let odd = root.join(" y");
    fs::create_dir_all(&odd).unwrap();
    fs::copy(
        store
            .resolve_record_path("x", agentlog::occhat::RecordKind::Meta)
            .unwrap(),
        odd.join(" y_2025-01-01--00-00-00_meta.json"),
    )
    .unwrap();
    // The seed: session_exists("x\n") is False (its sanitised candidate is
    // "x_") while load_session_metadata("x\n") loads "x".
    assert!(store.load_session_metadata("x\n").is_ok());
    assert!(store.session_exists("x\n"));
    // The seed: session_exists(" y") is True (verbatim " y" directory) while
    // the loader strips to "y" and finds nothing.
    assert!(store.load_session_metadata(" y").is_err());
    assert!(!store.session_exists(" y"));
    // Agreement on everything else.
    for q in ["x", " x ", "nope", "archive", "x/", ""] {
        assert_eq!(
            store.session_exists(q),
            store.load_session_metadata(q).is_ok(),
            "{q:?}"
        );
    }
}

// 5. Reading never creates a directory.

#[test]
fn d5_find_latest_artifact_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    // The seed's find_latest_artifact runs _session_dir(), which mkdirs
    // sessions/never-saved/.
    assert_eq!(store.find_latest_artifact("never-saved"), None);
    assert!(!root.exists());
    fs::create_dir_all(&root).unwrap();
    assert_eq!(store.find_latest_artifact("never-saved"), None);
    assert!(!root.join("never-saved").exists());
    // Nor does any other read.
    let _ = store.list_sessions();
    let _ = store.session_exists("a/b");
    let _ = store.load_chat_log("a/b");
    let _ = store.read_crash_signal();
    assert_eq!(fs::read_dir(&root).unwrap().count(), 0);
}

// 6. Legacy migration never deletes a differing orphan.

#[test]
fn d6_differing_orphan_kept_under_a_counter_name() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let chat = root.join("Chat_logs");
    let legacy = root.join("legacy");
    fs::create_dir_all(&chat).unwrap();
    fs::create_dir_all(&legacy).unwrap();
    fs::write(legacy.join("chat_log_1.json"), b"{\"v\": \"old\"}").unwrap();
    fs::write(legacy.join("chat_log_2.json"), b"{\"v\": \"same\"}").unwrap();
    fs::write(legacy.join("chat_log_3.json"), b"{\"v\": \"a\"}").unwrap();
    fs::write(legacy.join("chat_log_3__1.json"), b"{\"v\": \"b\"}").unwrap();
    fs::write(chat.join("chat_log_1.json"), b"{\"v\": \"new\"}").unwrap();
    fs::write(chat.join("chat_log_2.json"), b"{\"v\": \"same\"}").unwrap();
    fs::write(chat.join("chat_log_3.json"), b"{\"v\": \"c\"}").unwrap();
    fs::write(chat.join(".gitkeep"), b"").unwrap();
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    let summary = store.migrate_legacy_layout().unwrap();
    // The seed unlinks all three orphans (their names exist in legacy/),
    // losing "new" and "c".
    assert_eq!(summary.orphans_moved, 2);
    assert!(summary.errors.is_empty());
    assert_eq!(
        fs::read(legacy.join("chat_log_1.json")).unwrap(),
        b"{\"v\": \"old\"}"
    );
    assert_eq!(
        fs::read(legacy.join("chat_log_1__1.json")).unwrap(),
        b"{\"v\": \"new\"}"
    );
    assert!(
        !legacy.join("chat_log_2__1.json").exists(),
        "identical: removed"
    );
    assert_eq!(
        fs::read(legacy.join("chat_log_3__2.json")).unwrap(),
        b"{\"v\": \"c\"}"
    );
    assert!(!chat.exists(), "Chat_logs emptied and removed");
    // Idempotent.
    let again = store.migrate_legacy_layout().unwrap();
    assert_eq!(
        again.to_value().to_string(),
        r#"{"migrated":0,"recovered":0,"orphans_moved":0,"errors":[]}"#
    );
}

#[test]
fn d6_flat_meta_whose_migrated_name_is_taken_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    fs::create_dir_all(&root).unwrap();
    let flat = root.join("notes.json");
    fs::write(&flat, b"{\"session_name\": \"notes\", \"v\": 1}").unwrap();
    let t = occhat_support::from_ns(1_700_000_000_000_000_000);
    occhat_support::set_mtime(&flat, t);
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    assert_eq!(store.migrate_legacy_layout().unwrap().migrated, 1);
    // The same flat file comes back with other content and the same mtime.
    fs::write(&flat, b"{\"session_name\": \"notes\", \"v\": 2}").unwrap();
    occhat_support::set_mtime(&flat, t);
    let s = store.migrate_legacy_layout().unwrap();
    // The seed skips the write (name exists) and deletes the flat file.
    assert_eq!(s.migrated, 0);
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert!(flat.exists(), "kept");
    // The identical case is migrated (removed) as the seed does.
    fs::write(&flat, b"{\"session_name\": \"notes\", \"v\": 1}").unwrap();
    occhat_support::set_mtime(&flat, t);
    assert_eq!(store.migrate_legacy_layout().unwrap().migrated, 1);
    assert!(!flat.exists());
}
