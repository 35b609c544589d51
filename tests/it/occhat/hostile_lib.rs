//! Issue 12, items 1, 2, 4 and 6, through the library: the typed errors and
//! notes the command's messages come from.

use crate::common::occhat_writes;

use std::fs;
use std::os::unix::fs::symlink;

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, LayoutProblem, RecoveryChoice, SaveError, SaveNote};
use occhat_writes::*;

fn problem(r: Result<impl std::fmt::Debug, SaveError>) -> LayoutProblem {
    match r {
        Err(SaveError::UnsafeLayout { problem, .. }) => problem,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn reserved_directories_are_never_a_session() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    for name in ["archive", "legacy"] {
        let before = snapshot(&root);
        let store = store_at(&root, T0 + 2 * MIN);
        let mut s = ChatSession::new(name, "m");
        assert_eq!(problem(store.save_all(&mut s)), LayoutProblem::Reserved);
        assert_eq!(
            problem(store.export_markdown(&s, None)),
            LayoutProblem::Reserved
        );
        assert_eq!(
            problem(store.save_tool_artifact(name, "t", "x")),
            LayoutProblem::Reserved
        );
        assert_eq!(snapshot(&root), before, "{name}");
    }
}

#[test]
fn archive_symlinks_are_refused_with_a_typed_error() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    fs::remove_dir_all(root.join("archive/s")).unwrap();
    symlink("../s", root.join("archive/s")).unwrap();
    let store = store_at(&root, T0 + 2 * MIN);
    let before = snapshot(&root);
    assert_eq!(
        problem(store.recover_session("s", RecoveryChoice::Drop, false)),
        LayoutProblem::Symlink
    );
    let mut s = store.load_session("s").unwrap();
    assert_eq!(problem(store.save_all(&mut s)), LayoutProblem::Symlink);
    assert_eq!(
        problem(store.mark_record_superseded("s", "t")),
        LayoutProblem::Symlink
    );
    assert_eq!(snapshot(&root), before);
}

#[test]
fn a_meta_outside_the_store_is_not_a_write_target() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let elsewhere = tmp.path().join("elsewhere");
    two_saves(&elsewhere, "s");
    fs::create_dir_all(&root).unwrap();
    let meta = live(&elsewhere.join("s"), "_meta.json").pop().unwrap();
    let store = store_at(&root, T0 + 2 * MIN);
    let before = snapshot(&elsewhere);
    let arg = meta.to_str().unwrap();
    assert!(matches!(
        problem(store.recover_session(arg, RecoveryChoice::Drop, false)),
        LayoutProblem::OutsideStore { .. }
    ));
    assert!(matches!(
        problem(store.mark_record_superseded(arg, "t")),
        LayoutProblem::OutsideStore { .. }
    ));
    assert_eq!(snapshot(&elsewhere), before);
}

#[test]
fn a_name_mismatch_is_a_note_and_the_resolved_directory_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "a");
    two_saves(&root, "b");
    let b_before = snapshot(&root.join("b"));
    let store = store_at(&root, T0 + 2 * MIN);
    let mut s = store.load_session("a").unwrap();
    s.name = "b".into();
    let saved = store.save_all(&mut s).unwrap();
    assert!(saved.chat_log.unwrap().starts_with(root.join("a")));
    assert!(
        saved
            .notes
            .iter()
            .any(|n| matches!(n, SaveNote::NameMismatch { dir, .. } if dir.ends_with("a"))),
        "{:?}",
        saved.notes
    );
    assert_eq!(s.name, "a");
    assert_eq!(snapshot(&root.join("b")), b_before);
    let meta = json(&saved.meta);
    assert_eq!(meta.get("session_name"), Some(&OwnedValue::from("a")));
    // A session made in memory (no origin) still goes by its name.
    let mut fresh = ChatSession::new("c", "m");
    store.save_all(&mut fresh).unwrap();
    assert!(root.join("c").is_dir());
}

#[test]
fn migrate_and_artifacts_refuse_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(&root).unwrap();
    fs::write(outside.join("x_log.json"), "{}").unwrap();
    symlink(&outside, root.join("Chat_logs")).unwrap();
    let store = store_at(&root, T0);
    assert_eq!(
        problem(store.migrate_legacy_layout()),
        LayoutProblem::Symlink
    );
    two_saves(&root, "s");
    symlink(&outside, root.join("s/artifacts")).unwrap();
    assert_eq!(
        problem(store.save_tool_artifact("s", "t", "x")),
        LayoutProblem::Symlink
    );
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}
