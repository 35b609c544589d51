//! `agentlog follow` of an OC Chat sessions directory: without a
//! checkpoint (file-system events and polling), each save prints the
//! messages it added, a chat log that is not an extension a `rewrite`
//! record, a session gone a `removed` record; with `--checkpoint FILE`, a
//! restart prints only what changed while it was stopped, and a checkpoint
//! of another kind or of another directory is refused.

use std::fs;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use agentlog::occhat::SessionStore;

use crate::common::occhat::{empty_sessions, message, save_texts, session_dir};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

/// The output's lines once it holds `n` (bounded wait), parsed.
fn lines_when(out: &Path, n: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = fs::read_to_string(out).unwrap_or_default();
        if (text.lines().count() >= n && text.ends_with('\n')) || Instant::now() > deadline {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn follow(args: &[&Path], extra: &[&str], out: &Path) -> Child {
    bin()
        .arg("follow")
        .args(args)
        .args(extra)
        .stdout(fs::File::create(out).unwrap())
        .spawn()
        .unwrap()
}

/// Stops a follower once it has had time to save its checkpoint after the
/// last batch.
fn stop(mut child: Child) {
    std::thread::sleep(Duration::from_millis(500));
    let _ = child.kill();
    let _ = child.wait();
}

/// (session, record or index, content) of each line, for comparing.
fn brief(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let s = l["session"].as_str().unwrap();
            match l.get("record") {
                Some(r) => format!("{s} {}", r.as_str().unwrap()),
                None => format!(
                    "{s} {} {}",
                    l["index"],
                    l["message"]["content"].as_str().unwrap()
                ),
            }
        })
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn a_restart_from_the_checkpoint_prints_what_changed_while_stopped() {
    let (t, root, store) = empty_sessions();
    let mut demo = save_texts(&store, "demo", &["one", "two"]);
    let mut other = save_texts(&store, "other", &["a", "b", "c"]);
    let cp = t.path().join("follow.cp");
    let cps = cp.to_str().unwrap();

    let out1 = t.path().join("1");
    let child = follow(&[&root], &["--checkpoint", cps], &out1);
    let l = lines_when(&out1, 7);
    stop(child);
    assert_eq!(
        sorted(brief(&l)),
        sorted(
            [
                "demo new",
                "demo 0 one",
                "demo 1 two",
                "other new",
                "other 0 a",
                "other 1 b",
                "other 2 c"
            ]
            .map(String::from)
            .to_vec()
        )
    );
    assert!(cp.is_file());

    // While stopped: two messages added to one session, another rewritten
    // (as long as before: only the messages tell), a third one new.
    demo.messages.push(message("user", "three"));
    demo.messages.push(message("assistant", "four"));
    store.save_all(&mut demo).unwrap();
    other.messages.truncate(1);
    other.messages.push(message("assistant", "B"));
    other.messages.push(message("user", "C"));
    store.save_all(&mut other).unwrap();
    save_texts(&store, "third", &["x"]);

    let out2 = t.path().join("2");
    let child = follow(&[&root], &["--checkpoint", cps], &out2);
    lines_when(&out2, 8);
    stop(child);
    // Read after the stop: nothing more was printed.
    let b = brief(&lines_when(&out2, 0));
    // Per session, in order.
    let of = |s: &str| -> Vec<String> {
        b.iter()
            .filter(|l| l.starts_with(&format!("{s} ")))
            .cloned()
            .collect()
    };
    assert_eq!(of("demo"), ["demo 2 three", "demo 3 four"], "{b:?}");
    assert_eq!(
        of("other"),
        ["other rewrite", "other 0 a", "other 1 B", "other 2 C"],
        "{b:?}"
    );
    assert_eq!(of("third"), ["third new", "third 0 x"], "{b:?}");
    assert_eq!(b.len(), 8, "{b:?}");

    // A session removed while stopped.
    fs::remove_dir_all(session_dir(&root, "third")).unwrap();
    let out3 = t.path().join("3");
    let child = follow(&[&root], &["--checkpoint", cps], &out3);
    lines_when(&out3, 1);
    stop(child);
    assert_eq!(brief(&lines_when(&out3, 0)), ["third removed"]);

    // Nothing changed: a restart prints nothing.
    let out4 = t.path().join("4");
    let child = follow(&[&root], &["--checkpoint", cps], &out4);
    std::thread::sleep(Duration::from_millis(1500));
    stop(child);
    assert_eq!(fs::read_to_string(&out4).unwrap(), "");

    // Without the checkpoint everything is printed again.
    let out5 = t.path().join("5");
    let child = follow(&[&root], &[], &out5);
    lines_when(&out5, 9);
    stop(child);
    let l = lines_when(&out5, 0);
    assert_eq!(
        brief(&l).iter().filter(|s| s.ends_with(" new")).count(),
        2,
        "{l:?}"
    );
    assert_eq!(l.len(), 9);
}

#[test]
fn follow_by_polling_prints_added_messages_rewrites_and_removals() {
    let (t, root, store) = empty_sessions();
    let mut s = save_texts(&store, "demo", &["one"]);
    save_texts(&store, "gone", &["bye"]);
    let out = t.path().join("out");
    let child = follow(&[&root], &["--poll", "0.2"], &out);
    lines_when(&out, 4);
    s.messages.push(message("assistant", "two"));
    store.save_all(&mut s).unwrap();
    lines_when(&out, 5);
    s.messages[0] = message("user", "ONE");
    store.save_all(&mut s).unwrap();
    lines_when(&out, 8);
    fs::remove_dir_all(session_dir(&root, "gone")).unwrap();
    lines_when(&out, 9);
    stop(child);
    let b = brief(&lines_when(&out, 0));
    assert_eq!(
        b[4..],
        [
            "demo 1 two",
            "demo rewrite",
            "demo 0 ONE",
            "demo 1 two",
            "gone removed"
        ],
        "{b:?}"
    );
}

#[test]
fn checkpoints_of_another_kind_or_directory_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    for r in [&a, &b] {
        fs::create_dir_all(r).unwrap();
        save_texts(&SessionStore::new(r), "demo", &["one"]);
    }
    let cp = t.path().join("a.cp");
    let out = t.path().join("out");
    let child = follow(&[&a], &["--checkpoint", cp.to_str().unwrap()], &out);
    lines_when(&out, 2);
    stop(child);
    let saved = fs::read(&cp).unwrap();
    let run = |root: &Path, cp: &Path| {
        let o = bin()
            .arg("follow")
            .arg(root)
            .arg("--checkpoint")
            .arg(cp)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (code, stdout, err) = run(&b, &cp);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{err}");
    assert!(err.contains("another store"), "{err}");
    assert_eq!(fs::read(&cp).unwrap(), saved);

    // An OpenHands store's checkpoint for a sessions directory, and the
    // reverse: each told for what it is.
    // (A store with a conversation: a first run on an empty one is refused.)
    let oh = t.path().join("store");
    crate::common::copy_tree(
        &crate::common::corpus_dir().join("openhands/1.58.2/chat"),
        &oh,
    );
    let oh_cp = t.path().join("oh.cp");
    let o = bin()
        .args(["export", "--jsonl", "--checkpoint"])
        .arg(&oh_cp)
        .arg(&oh)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, _, err) = run(&a, &oh_cp);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a checkpoint of an OpenHands store"), "{err}");
    let (code, _, err) = run(&oh, &cp);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a checkpoint of an OC Chat sessions directory"),
        "{err}"
    );
}

#[test]
fn follow_with_file_system_events_prints_added_messages_and_rewrites() {
    let (t, root, store) = empty_sessions();
    let mut s = save_texts(&store, "demo", &["one", "two"]);
    let out = t.path().join("out");
    let child = follow(&[&root], &[], &out);
    let l = lines_when(&out, 3);
    assert_eq!(l[0]["record"], "new");
    assert_eq!(
        (l[1]["index"].as_u64(), l[2]["index"].as_u64()),
        (Some(0), Some(1))
    );
    // A save adds two messages: only those are printed.
    s.messages.push(message("user", "three"));
    s.messages.push(message("assistant", "four"));
    store.save_all(&mut s).unwrap();
    let l = lines_when(&out, 5);
    assert_eq!(l.len(), 5, "{l:?}");
    assert_eq!(l[3]["message"]["content"], "three");
    assert_eq!(l[4]["index"], 3);
    // A chat log that is not an extension: a rewrite, all its messages
    // (longer than before, so that only the messages tell).
    s.messages.truncate(1);
    for k in 0..4 {
        s.messages.push(message("assistant", &format!("other {k}")));
    }
    store.save_all(&mut s).unwrap();
    let l = lines_when(&out, 11);
    stop(child);
    assert_eq!(l[5]["record"], "rewrite", "{l:?}");
    assert_eq!(l[6]["index"], 0);
    assert_eq!(l[10]["message"]["content"], "other 3");
    assert_eq!(l.len(), 11);
}
