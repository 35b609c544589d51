//! `--verify-files` (issue 36, reproduction 3 for an earlier event file):
//! an event file handed out before the last one, rewritten in place to
//! the same size with its modification time put back, is not seen by a
//! default rescan (its stamp is not taken), and is by one with
//! `--verify-files`, which hands the conversation out again as a rewrite.

use crate::common::openhands::event_file_names;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::incremental::{Held, Step, World, apply, edit_in_place, same_as_full, step};

use proptest::prelude::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

/// One run of `cmd --checkpoint cp [--verify-files] root` (`--jsonl` for
/// `export`).
fn run(cmd: &str, root: &Path, cp: &Path, verify: bool) -> Output {
    let mut c = bin();
    c.arg(cmd);
    if cmd == "export" {
        c.arg("--jsonl");
    }
    c.arg("--checkpoint").arg(cp);
    if verify {
        c.arg("--verify-files");
    }
    c.arg(root).output().unwrap()
}

/// `export`'s output, the run asserted successful.
fn export(root: &Path, cp: &Path, verify: bool) -> String {
    let out = run("export", root, cp, verify);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A store of one conversation of `n` events, its first export applied.
fn world(t: &Path, n: usize) -> (World, PathBuf, Held) {
    let mut w = World::create(t.join("store"));
    w.new_conversation(n);
    let cp = t.join("cp");
    let mut held = Held::new();
    apply(&mut held, &export(&w.root, &cp, false));
    (w, cp, held)
}

/// The event file of index `i` of the store's one conversation.
fn event_file(w: &World, i: usize) -> PathBuf {
    let d = w.dirs().remove(0);
    d.join("events").join(&event_file_names(&d)[i])
}

fn is_rewrite(out: &str) -> bool {
    out.lines()
        .next()
        .is_some_and(|l| l.contains("\"record\":\"rewrite\""))
}

#[test]
fn incremental_verify_files_exports_an_earlier_file_edited_in_place_again() {
    let t = tempfile::tempdir().unwrap();
    let (w, cp, mut held) = world(t.path(), 7);
    edit_in_place(&event_file(&w, 4), false);
    // Without the flag: as before, the edit is not seen.
    assert_eq!(export(&w.root, &cp, false), "");
    assert!(same_as_full(&held, &w.root).is_err(), "the edit is unseen");
    // With it: a rewrite, which applied gives the full export.
    let out = export(&w.root, &cp, true);
    assert!(is_rewrite(&out), "{out}");
    assert_eq!(out.lines().count(), 1 + 7, "{out}");
    apply(&mut held, &out);
    same_as_full(&held, &w.root).unwrap();
    // Once: the next verified run has nothing to tell.
    assert_eq!(export(&w.root, &cp, true), "");
}

#[test]
fn incremental_verify_files_check_fails_for_an_earlier_file_broken_in_place() {
    let t = tempfile::tempdir().unwrap();
    let (w, cp, _) = world(t.path(), 6);
    let ccp = t.path().join("check-cp");
    assert!(run("check", &w.root, &ccp, false).status.success());
    edit_in_place(&event_file(&w, 2), true);
    let plain = run("check", &w.root, &ccp, false);
    assert!(plain.status.success(), "unseen without --verify-files");
    let verified = run("check", &w.root, &ccp, true);
    assert!(
        !verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    // `ls` names the conversation again.
    let lcp = t.path().join("ls-cp");
    let _ = &cp;
    assert!(run("ls", &w.root, &lcp, false).status.success());
    edit_in_place(&event_file(&w, 1), false);
    assert!(run("ls", &w.root, &lcp, false).stdout.is_empty());
    let listed = run("ls", &w.root, &lcp, true);
    assert!(listed.status.success());
    assert!(!listed.stdout.is_empty(), "listed again");
}

#[test]
fn incremental_verify_files_hands_out_again_an_earlier_file_only_touched() {
    let t = tempfile::tempdir().unwrap();
    let (w, cp, mut held) = world(t.path(), 5);
    // Its times moved, its bytes kept: the stamp is what is compared (the
    // bytes are not kept), so the conversation comes again, whole.
    let p = event_file(&w, 1);
    let f = fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    assert_eq!(export(&w.root, &cp, false), "");
    let out = export(&w.root, &cp, true);
    assert!(is_rewrite(&out), "{out}");
    apply(&mut held, &out);
    same_as_full(&held, &w.root).unwrap();
    assert_eq!(export(&w.root, &cp, true), "");
}

/// The checkpoint at `cp` as a format version 2 file wrote it: no stamps'
/// digest in its marks.
fn as_version_2(cp: &Path) {
    let text = fs::read_to_string(cp).unwrap();
    let (_, body) = text.trim_end().split_once('\n').unwrap();
    let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
    for c in v["conversations"].as_array_mut().unwrap() {
        assert!(c["stamps"].is_string(), "a version 3 mark records it");
        c.as_object_mut().unwrap().remove("stamps");
    }
    let body = serde_json::to_string(&v).unwrap();
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let head = format!(r#"{{"format":"agentlog-checkpoint","version":2,"sha256":"{digest}"}}"#);
    fs::write(cp, format!("{head}\n{body}\n")).unwrap();
}

#[test]
fn incremental_verify_files_from_a_version_2_checkpoint_records_the_stamps() {
    let t = tempfile::tempdir().unwrap();
    let (w, cp, mut held) = world(t.path(), 6);
    as_version_2(&cp);
    // It loads; a default run records no stamps' digest.
    assert_eq!(export(&w.root, &cp, false), "");
    assert!(!fs::read_to_string(&cp).unwrap().contains("\"stamps\":\""));
    // An edit before the first verified run is not seen (documented): that
    // run records the stamps as they are.
    edit_in_place(&event_file(&w, 3), false);
    assert_eq!(export(&w.root, &cp, true), "");
    let saved = fs::read_to_string(&cp).unwrap();
    assert!(saved.starts_with(r#"{"format":"agentlog-checkpoint","version":3,"#));
    assert!(saved.contains("\"stamps\":\""), "recorded");
    // One after it is.
    edit_in_place(&event_file(&w, 3), false);
    let out = export(&w.root, &cp, true);
    assert!(is_rewrite(&out), "{out}");
    apply(&mut held, &out);
    same_as_full(&held, &w.root).unwrap();
}

/// Default runs keep the stamps' digest current: after any of them, a
/// verified run of the unchanged store hands nothing out (no conversation
/// rewritten for nothing), and what was applied is the full export.
fn default_runs_keep_the_digest(steps: &[Step]) -> Result<(), TestCaseError> {
    let t = tempfile::tempdir().unwrap();
    let (mut w, cp, mut held) = world(t.path(), 3);
    w.new_conversation(5);
    apply(&mut held, &export(&w.root, &cp, false));
    for (n, s) in steps.iter().enumerate() {
        if matches!(s, Step::Killed(_)) {
            continue;
        }
        w.apply(s);
        // The last file of the first conversation touched too: its times
        // move, its bytes stay (not handed out again by a default run).
        if n % 2 == 1
            && let Some(d) = w.dirs().first()
            && let Some(last) = event_file_names(d).pop()
        {
            let f = fs::File::options()
                .write(true)
                .open(d.join("events").join(last))
                .unwrap();
            f.set_modified(std::time::SystemTime::now()).unwrap();
        }
        apply(&mut held, &export(&w.root, &cp, false));
        let again = export(&w.root, &cp, true);
        prop_assert_eq!(&again, "", "after step {} {:?}", n, s);
        same_as_full(&held, &w.root)
            .map_err(|e| TestCaseError::fail(format!("after step {n} {s:?}: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn incremental_verify_files_finds_nothing_after_default_runs(
        steps in proptest::collection::vec(step(), 1..8)
    ) {
        default_runs_keep_the_digest(&steps)?;
    }
}

#[test]
fn incremental_verify_files_finds_nothing_after_malformed_files_and_growth() {
    default_runs_keep_the_digest(&[
        Step::Rewrite(0, true),
        Step::Grow(0, 2),
        Step::Rewrite(0, true),
        Step::Rewrite(1, false),
        Step::Grow(1, 1),
        Step::New(2),
        Step::Rename(1),
        Step::Copy(0),
    ])
    .unwrap();
}
