//! `plan_legacy_migration` (the `occhat migrate --dry-run`) predicts what
//! `migrate_legacy_layout` then does: it reads what the migration reads, so
//! a file that does not parse is an error of the plan, not a session it
//! would move, and a chat log left behind is an orphan it would move.

use std::fs;
use std::path::Path;

use agentlog::occhat::{SessionStore, TimeZone};

/// A flat store with good and broken metas and chat logs, a taken name and
/// an orphan already archived byte for byte.
fn legacy_store(root: &Path) {
    let chat = root.join("Chat_logs");
    let legacy = root.join("legacy");
    fs::create_dir_all(&chat).unwrap();
    fs::create_dir_all(&legacy).unwrap();
    let meta = |name: &str| format!("{{\"session_name\": \"{name}\", \"model\": \"m\"}}");
    let log = br#"[{"role": "user", "content": "hi"}]"#;
    // Migrates with its log.
    fs::write(root.join("alpha.json"), meta("alpha")).unwrap();
    fs::write(chat.join("alpha_log.json"), log).unwrap();
    // The meta does not parse: kept, its log stays and goes to legacy/.
    fs::write(root.join("broken.json"), b"{\"session_name\": ").unwrap();
    fs::write(chat.join("broken_log.json"), log).unwrap();
    // The meta migrates, its log does not parse (and goes to legacy/).
    fs::write(root.join("gamma.json"), meta("gamma")).unwrap();
    fs::write(chat.join("gamma_log.json"), b"[{\"role\"").unwrap();
    // A meta without a log.
    fs::write(root.join("delta.json"), meta("delta")).unwrap();
    // Orphans: one new, one already in legacy/ byte for byte.
    fs::write(chat.join("chat_log_1.json"), log).unwrap();
    fs::write(chat.join("chat_log_2.json"), b"[]").unwrap();
    fs::write(legacy.join("chat_log_2.json"), b"[]").unwrap();
    fs::write(chat.join(".gitkeep"), b"").unwrap();
}

#[test]
fn the_plan_predicts_the_migration() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    legacy_store(&root);
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    let plan = store.plan_legacy_migration();
    let migrated: Vec<String> = plan
        .sessions
        .iter()
        .map(|(from, _)| from.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(migrated, ["alpha.json", "delta.json", "gamma.json"]);
    let orphans: Vec<String> = plan
        .orphans
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        orphans,
        ["broken_log.json", "chat_log_1.json", "gamma_log.json"]
    );
    assert_eq!(plan.errors.len(), 2, "{:?}", plan.errors);
    let summary = store.migrate_legacy_layout().unwrap();
    assert_eq!(summary.migrated, plan.sessions.len() as u64);
    assert_eq!(summary.orphans_moved, plan.orphans.len() as u64);
    let mut run_errors = summary.errors.clone();
    run_errors.sort();
    let mut plan_errors = plan.errors.clone();
    plan_errors.sort();
    assert_eq!(run_errors, plan_errors);
    // Nothing left to plan, as nothing is left to migrate.
    let again = store.plan_legacy_migration();
    assert!(again.sessions.is_empty() && again.orphans.is_empty());
    assert!(
        again.errors.len() == 1,
        "the broken meta stays: {:?}",
        again.errors
    );
}

#[test]
fn the_plan_keeps_a_meta_whose_migrated_name_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    fs::create_dir_all(&root).unwrap();
    let flat = root.join("notes.json");
    fs::write(&flat, b"{\"session_name\": \"notes\", \"v\": 1}").unwrap();
    let t = crate::common::occhat::from_ns(1_700_000_000_000_000_000);
    crate::common::occhat::set_mtime(&flat, t);
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    assert_eq!(store.migrate_legacy_layout().unwrap().migrated, 1);
    fs::write(&flat, b"{\"session_name\": \"notes\", \"v\": 2}").unwrap();
    crate::common::occhat::set_mtime(&flat, t);
    let plan = store.plan_legacy_migration();
    assert!(plan.sessions.is_empty(), "{:?}", plan.sessions);
    let summary = store.migrate_legacy_layout().unwrap();
    assert_eq!(summary.migrated, 0);
    assert_eq!(plan.errors, summary.errors);
}
