//! `--checkpoint FILE` on the listing commands: `ls` lists only the
//! conversations changed since FILE and then saves it; `stats` refuses the
//! flag (its totals are of a store as it is); a checkpoint that cannot be
//! used leaves FILE as it was.

use crate::common;
use crate::common::copy_tree;
use crate::common::openhands::{backdate, event_file_names};

use std::fs;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

/// `agentlog ARGS`: (exit code, standard output, standard error).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `ls --json ARGS`: the lines, asserting success.
fn ls(args: &[&str]) -> Vec<String> {
    let mut all = vec!["ls", "--json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    out.lines().map(str::to_owned).collect()
}

fn path_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["path"].as_str().unwrap().to_owned()
}

/// The first conversation directory (holding `events/`) under `dir`.
fn conversation_in(dir: &Path) -> std::path::PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("events").is_dir())
        .unwrap()
}

/// Writes one more event into the conversation `conv`: a copy of its last
/// event file under the next index.
fn add_event(conv: &Path) {
    let names = event_file_names(conv);
    let last = names.last().unwrap();
    let next = names.len();
    let events = conv.join("events");
    fs::copy(
        events.join(last),
        events.join(format!(
            "event-{next:05}-00000000-0000-4000-8000-00000000000a.json"
        )),
    )
    .unwrap();
}

#[test]
fn ls_with_a_checkpoint_lists_only_what_changed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    copy_tree(&common::corpus_dir().join("openhands/1.58.2"), &root);
    backdate(&root);
    let cp = t.path().join("ls.cp");
    let (r, c) = (root.to_str().unwrap(), cp.to_str().unwrap());

    // The first run lists everything, as `ls` does, and saves FILE.
    let full = ls(&[r]);
    assert!(full.len() > 5, "{full:?}");
    assert_eq!(ls(&["--checkpoint", c, r]), full);
    assert!(cp.is_file());
    // Nothing changed: nothing listed.
    assert_eq!(ls(&["--checkpoint", c, r]), Vec::<String>::new());
    // The text form prints nothing either (no header without a row).
    let (code, text, _) = run(&["ls", "--checkpoint", c, r]);
    assert_eq!((code, text.as_str()), (0, ""));

    // One new event in one conversation, one in a sub-agent, a new
    // conversation, a conversation removed.
    let grown = conversation_in(&root.join("chat"));
    add_event(&grown);
    let with_sub = conversation_in(&root.join("subagent"));
    let sub = conversation_in(&with_sub.join("subagents"));
    add_event(&sub);
    let copied = root.join("copies").join("0123456789abcdef0123456789abcdef");
    copy_tree(&conversation_in(&root.join("errors")), &copied);
    let removed = conversation_in(&root.join("pause"));
    fs::remove_dir_all(&removed).unwrap();

    let full_now = ls(&[r]);
    let listed = ls(&["--checkpoint", c, r]);
    let mut want: Vec<String> = full_now
        .iter()
        .filter(|l| {
            let p = path_of(l);
            p == grown.to_str().unwrap()
                || p == with_sub.to_str().unwrap()
                || p == copied.to_str().unwrap()
        })
        .cloned()
        .collect();
    assert_eq!(want.len(), 3, "{full_now:?}");
    // The rows are the full listing's rows of those conversations, in
    // its order (the sub-agent's change lists its top-level conversation).
    assert_eq!(listed, want);
    assert!(
        listed
            .iter()
            .all(|l| path_of(l) != removed.to_str().unwrap()),
        "a removed conversation is not listed"
    );

    // Saved after the listing: the next run (stamps made old) lists none.
    backdate(&root);
    assert_eq!(ls(&["--checkpoint", c, r]), Vec::<String>::new());

    // A torn event file: its conversation is listed (the reader counts
    // names, so the row is there whatever the file holds).
    let n = fs::read_dir(grown.join("events"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("event-"))
        .count();
    fs::write(
        grown.join("events").join(format!(
            "event-{n:05}-00000000-0000-4000-8000-00000000000b.json"
        )),
        b"{\"kind\": \"Mess",
    )
    .unwrap();
    want = ls(&[r])
        .into_iter()
        .filter(|l| path_of(l) == grown.to_str().unwrap())
        .collect();
    assert_eq!(ls(&["--checkpoint", c, r]), want);
}

#[test]
fn ls_checkpoint_refusals_leave_the_file_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    copy_tree(&common::corpus_dir().join("openhands/1.0.0"), &a);
    copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &b);
    let cp = t.path().join("ls.cp");
    let c = cp.to_str().unwrap();
    let (ra, rb) = (a.to_str().unwrap(), b.to_str().unwrap());
    ls(&["--checkpoint", c, ra]);
    let saved = fs::read(&cp).unwrap();

    // Another store's checkpoint: refused, nothing listed.
    let (code, out, err) = run(&["ls", "--json", "--checkpoint", c, rb]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(out, "");
    assert!(err.contains("another store"), "{err}");
    // Two PATHs: a checkpoint is of one store.
    let (code, out, err) = run(&["ls", "--checkpoint", c, ra, rb]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("one PATH"), "{err}");
    // An OC Chat sessions directory.
    let sessions = t.path().join("sessions");
    copy_tree(
        &common::corpus_dir().join("occhat/sample_basic/sessions"),
        &sessions,
    );
    let (code, _, err) = run(&["ls", "--checkpoint", c, sessions.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("OC Chat"), "{err}");
    assert_eq!(fs::read(&cp).unwrap(), saved, "refusals change nothing");

    // A damaged checkpoint is refused, and left for the user to look at.
    let mut bad = saved.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 1;
    fs::write(&cp, &bad).unwrap();
    let (code, out, err) = run(&["ls", "--checkpoint", c, ra]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("corrupt") || err.contains("not an agentlog"),
        "{err}"
    );
    assert_eq!(fs::read(&cp).unwrap(), bad);
}

#[test]
fn stats_takes_no_checkpoint() {
    let t = tempfile::tempdir().unwrap();
    let cp = t.path().join("stats.cp");
    let store = common::corpus_dir().join("openhands/1.0.0");
    let (code, out, err) = run(&[
        "stats",
        "--checkpoint",
        cp.to_str().unwrap(),
        store.to_str().unwrap(),
    ]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("--checkpoint"), "{err}");
    assert!(!cp.exists());
    // Its help says why, and what to use instead.
    let (code, help, _) = run(&["stats", "--help"]);
    assert_eq!(code, 0);
    assert!(help.contains("No --checkpoint"), "{help}");
    assert!(help.contains("export PATH --checkpoint FILE"), "{help}");
}

/// A rescan that finds nothing changed leaves its checkpoint file as it
/// is (the same file, not a copy renamed over it: no write, no sync),
/// for `export`, `ls` and `check`; one that finds a change saves it. The
/// store is backdated: a stamp within the racy margin of the scan that
/// recorded it is saved again once it can be trusted.
#[test]
fn an_unchanged_rescan_leaves_its_checkpoint_untouched() {
    use std::os::unix::fs::MetadataExt;
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    copy_tree(&common::corpus_dir().join("openhands/1.58.2/chat"), &root);
    backdate(&root);
    let r = root.to_str().unwrap().to_owned();
    let ino = |p: &Path| fs::symlink_metadata(p).unwrap().ino();
    for (name, cmd) in [("export", "export"), ("ls", "ls"), ("check", "check")] {
        let cp = t.path().join(format!("{name}.cp"));
        let c = cp.to_str().unwrap().to_owned();
        let args = [cmd, "--checkpoint", c.as_str(), r.as_str()];
        let (code, _, err) = run(&args);
        assert!(code == 0 || (cmd == "check" && code == 1), "{name}: {err}");
        let (first, bytes) = (ino(&cp), fs::read(&cp).unwrap());
        let (code, out, err) = run(&args);
        assert!(code == 0 || (cmd == "check" && code == 1), "{name}: {err}");
        assert!(cmd == "check" || out.is_empty(), "{name}: {out}");
        assert_eq!(ino(&cp), first, "{name}: the checkpoint was replaced");
        assert_eq!(fs::read(&cp).unwrap(), bytes, "{name}");
        // A change: the checkpoint is saved (a new file at its name).
        let conv = conversation_in(&root);
        add_event(&conv);
        backdate(&root);
        let (code, _, err) = run(&args);
        assert!(code == 0 || (cmd == "check" && code == 1), "{name}: {err}");
        assert_ne!(ino(&cp), first, "{name}: a change saves the checkpoint");
        assert_ne!(fs::read(&cp).unwrap(), bytes, "{name}");
    }
}
