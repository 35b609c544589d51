//! `agentlog export --checkpoint FILE`: two runs together print what one
//! full export prints; a run killed (`kill -9`) at any moment never leaves
//! the checkpoint ahead of what it wrote out, nor damaged.

use crate::common;
use crate::common::openhands::{backdate, event_file_names};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

fn export(args: &[&str]) -> String {
    let out = bin()
        .arg("export")
        .arg("--jsonl")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The lines by conversation, in order; record lines apart.
fn group(text: &str) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut records = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v.get("record").is_some() {
            records.push(l.to_owned());
            continue;
        }
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["conversation", "parent", "index", "file", "error", "event"],
            "the export shape"
        );
        m.entry(v["conversation"].as_str().unwrap().to_owned())
            .or_default()
            .push(l.to_owned());
    }
    (m, records)
}

fn merge(into: &mut BTreeMap<String, Vec<String>>, from: BTreeMap<String, Vec<String>>) {
    for (k, v) in from {
        into.entry(k).or_default().extend(v);
    }
}

/// Moves away the last half of every top-level conversation's event files;
/// returns (held, restore-to) pairs.
fn hold_back(root: &Path, held: &Path) -> Vec<(PathBuf, PathBuf)> {
    fs::create_dir_all(held).unwrap();
    let mut moved = Vec::new();
    let mut k = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if !e.file_type().unwrap().is_dir() {
                continue;
            }
            let p = e.path();
            if e.file_name() == "subagents" {
                continue;
            }
            if e.file_name() != "events" {
                stack.push(p);
                continue;
            }
            let names = event_file_names(&d);
            for n in names.iter().skip(names.len() / 2) {
                k += 1;
                let dst = held.join(k.to_string());
                fs::rename(p.join(n), &dst).unwrap();
                moved.push((dst, p.join(n)));
            }
        }
    }
    moved
}

#[test]
fn two_runs_equal_one_full_export() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &root);
    let moved = hold_back(&root, &t.path().join("held"));
    let cp = t.path().join("cp");
    let (r, c) = (root.to_str().unwrap(), cp.to_str().unwrap());
    let first = export(&[r, "--checkpoint", c]);
    assert!(cp.is_file());
    for (from, to) in &moved {
        fs::rename(from, to).unwrap();
    }
    let second = export(&[r, "--checkpoint", c]);
    let third = export(&[r, "--checkpoint", c]);
    assert_eq!(third, "", "nothing changed since");
    let (mut got, rec1) = group(&first);
    let (g2, rec2) = group(&second);
    assert!(rec1.is_empty() && rec2.is_empty(), "{rec1:?} {rec2:?}");
    assert!(!g2.is_empty());
    merge(&mut got, g2);
    let (want, _) = group(&export(&[r]));
    assert_eq!(got, want);
    // Into a file with -o, the same.
    let out = t.path().join("out.jsonl");
    fs::remove_file(&cp).unwrap();
    export(&[r, "--checkpoint", c, "-o", out.to_str().unwrap()]);
    assert_eq!(group(&fs::read_to_string(&out).unwrap()).0, want);
    // Removed and rewritten conversations are records.
    let victim = want.keys().next().unwrap().clone();
    let dir = find_dir(&root, &victim).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    let (g, recs) = group(&export(&[r, "--checkpoint", c]));
    assert!(g.is_empty());
    assert_eq!(recs.len(), 1, "{recs:?}");
    let v: serde_json::Value = serde_json::from_str(&recs[0]).unwrap();
    assert_eq!(v["record"], "removed");
    assert_eq!(v["conversation"], victim.as_str());
    // Usage: one PATH; a corrupt checkpoint is refused, exit 2, untouched.
    let o = bin()
        .args(["export", "--jsonl", r, r, "--checkpoint", c])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    fs::write(
        &cp,
        b"{\"format\":\"agentlog-checkpoint\",\"version\":1,\"sha256\":\"00\"}\n{}\n",
    )
    .unwrap();
    let o = bin()
        .args(["export", "--jsonl", r, "--checkpoint", c])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("corrupt checkpoint"));
}

/// The directory of the conversation `id` (by its state's ID or its name).
fn find_dir(root: &Path, id: &str) -> Option<PathBuf> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).ok()?.flatten() {
            if e.file_type().ok()?.is_dir() {
                let p = e.path();
                if e.file_name().to_string_lossy() == id {
                    return Some(p);
                }
                stack.push(p);
            }
        }
    }
    None
}

#[test]
fn kill_9_never_leaves_the_checkpoint_ahead_of_the_output() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.58.2"), &root);
    let moved = hold_back(&root, &t.path().join("held"));
    let cp = t.path().join("cp");
    let (r, c) = (root.to_str().unwrap(), cp.to_str().unwrap());
    let started = std::time::Instant::now();
    let (mut committed, _) = group(&export(&[r, "--checkpoint", c]));
    // Kill moments spread over about a first run's length, so that some
    // runs end and some do not.
    let span = (started.elapsed().as_micros() as u64).max(1000);
    // Each round restores a twelfth of the held-back files: every run has
    // work to do.
    let mut batches: Vec<Vec<(PathBuf, PathBuf)>> = vec![Vec::new(); 12];
    for (i, m) in moved.into_iter().enumerate() {
        batches[i % 12].push(m);
    }
    let mut seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut kills = 0;
    for (round, batch) in batches.iter().enumerate() {
        for (from, to) in batch {
            fs::rename(from, to).unwrap();
        }
        let before = fs::read(&cp).unwrap();
        let out_path = t.path().join(format!("out-{round}"));
        let out = fs::File::create(&out_path).unwrap();
        let mut child = bin()
            .args(["export", "--jsonl", r, "--checkpoint", c])
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rand(span)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        kills += usize::from(!status.success());
        let after = fs::read(&cp).unwrap();
        // Never damaged: the old checkpoint or a whole new one.
        agentlog::openhands::Checkpoint::from_bytes(&after, &cp).unwrap();
        let text = fs::read_to_string(&out_path).unwrap();
        if after != before {
            // The run saved: its whole output is there, and it counts.
            let (g, _) = group(&text);
            merge(&mut committed, g);
        }
    }
    println!("{kills} of 12 runs killed before the end (span {span} µs)");
    let (g, _) = group(&export(&[r, "--checkpoint", c]));
    merge(&mut committed, g);
    let (want, _) = group(&export(&[r]));
    let counts = |m: &BTreeMap<String, Vec<String>>| -> Vec<(String, usize)> {
        m.iter().map(|(k, v)| (k.clone(), v.len())).collect()
    };
    assert_eq!(counts(&committed), counts(&want), "events by conversation");
    assert!(
        committed == want,
        "every event exactly once over the committed runs"
    );
}

/// `check ARGS`: (exit code, standard output).
fn check(args: &[&str]) -> (i32, String) {
    let out = bin().arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn check_with_a_checkpoint_checks_only_what_changed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.58.2"), &root);
    backdate(&root);
    let cp = t.path().join("check.cp");
    let (r, s) = (root.to_str().unwrap(), cp.to_str().unwrap());

    // The first run is the full check, and saves the checkpoint.
    let full = check(&["--json", r]);
    let first = check(&["--json", "--checkpoint", s, r]);
    assert_eq!(first, full);
    assert!(cp.is_file());
    let (code, text) = check(&["--checkpoint", s, r]);
    assert_eq!(code, full.0);
    assert!(
        text.starts_with("checked 0 conversations (0 sub-agents): no problems"),
        "an unchanged store: {text}"
    );

    // A torn event file in one conversation: that one is checked, alone.
    let conv = fs::read_dir(root.join("chat"))
        .unwrap()
        .flatten()
        .find(|e| e.path().join("events").is_dir())
        .unwrap()
        .path();
    let n = fs::read_dir(conv.join("events"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("event-"))
        .count();
    let torn = conv.join("events").join(format!(
        "event-{n:05}-00000000-0000-4000-8000-000000000001.json"
    ));
    fs::write(&torn, b"{\"kind\": \"Mess").unwrap();
    let (code, text) = check(&["--checkpoint", s, r]);
    assert_eq!(code, 1, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("malformed"), "{text}");
    assert!(lines[0].contains(torn.file_name().unwrap().to_str().unwrap()));
    assert_eq!(lines[1], "checked 1 conversation (0 sub-agents): 1 problem");
}
