//! `agentlog index` and `agentlog search` as processes: the JSON contracts
//! (exact keys, in order), exit statuses, and `index` killed (SIGKILL) at
//! several moments: the index stays readable as the last commit left it,
//! and the next run completes it to what a fresh index holds.

use std::fs;
use std::path::Path;
use std::time::Duration;

use agentlog::search::SearchIndex;

use super::{bin, run};
use crate::common;

/// A store of `copies` copies of the SDK 1.58.2 corpus under `to`.
fn store(to: &Path, copies: usize) -> std::path::PathBuf {
    let s = to.join("store");
    for i in 0..copies {
        common::copy_tree(
            &common::corpus_dir().join("openhands/1.58.2"),
            &s.join(format!("copy-{i}")),
        );
    }
    s
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn index_then_search_json_contracts_and_statuses() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), 1);
    let ix = tmp.path().join("ix");
    let (s, ix) = (s.to_str().unwrap(), ix.to_str().unwrap());
    let out = run(&["index", s, "--index", ix, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        keys(&v),
        [
            "indexed",
            "removed",
            "documents",
            "unreadable_events",
            "rebuilt_stores",
            "total_documents"
        ]
    );
    assert!(v["documents"].as_u64().unwrap() > 100);
    let out = run(&["search", ix, "unittest", "--json", "--limit", "3"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<serde_json::Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        keys(&lines[0]),
        [
            "score",
            "store",
            "conversation",
            "parent",
            "path",
            "event",
            "kind",
            "event_kind",
            "role",
            "tool",
            "timestamp",
            "model",
            "active",
            "in_context",
            "snippet",
            "highlights"
        ]
    );
    // The hit opens with `agentlog show PATH --index N`.
    let h = &lines[0];
    let show = run(&[
        "show",
        h["path"].as_str().unwrap(),
        "--index",
        &h["event"].to_string(),
    ]);
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    // Nothing matches: status 1; no index: status 2; a bad --since: 2.
    assert_eq!(
        run(&["search", ix, "zqxnothinglikeit"]).status.code(),
        Some(1)
    );
    let none = tmp.path().join("none");
    assert_eq!(
        run(&["search", none.to_str().unwrap(), "x"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["search", ix, "x", "--since", "soon"]).status.code(),
        Some(2)
    );
    // An empty store: nothing found, status 1.
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let ix2 = tmp.path().join("ix2");
    let out = run(&[
        "index",
        empty.to_str().unwrap(),
        "--index",
        ix2.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn killed_index_runs_leave_a_readable_index_the_next_run_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), 4);
    let want = {
        let dir = tmp.path().join("fresh");
        let out = run(&[
            "index",
            s.to_str().unwrap(),
            "--index",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        SearchIndex::open(&dir).unwrap().documents().unwrap()
    };
    let ix = tmp.path().join("ix");
    let mut committed = 0;
    for (round, ms) in [0u64, 5, 30, 80, 150, 300, 600, 1000]
        .into_iter()
        .enumerate()
    {
        // Every other round changes the store first: an update is killed.
        if round % 2 == 1 {
            let victim = s.join(format!("copy-{}", round % 4)).join("chat");
            if victim.exists() {
                fs::remove_dir_all(&victim).unwrap();
            } else {
                common::copy_tree(&common::corpus_dir().join("openhands/1.58.2/chat"), &victim);
            }
        }
        let mut child = bin()
            .args([
                "index",
                s.to_str().unwrap(),
                "--index",
                ix.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            committed += 1;
        }
        // Readable, as some commit left it (or no index yet).
        if ix.join("meta.json").exists() {
            let opened = SearchIndex::open(&ix).unwrap();
            opened.documents().unwrap();
        }
    }
    // Put the store back as the fresh index saw it, and complete the index.
    for i in 0..4 {
        let chat = s.join(format!("copy-{i}")).join("chat");
        if !chat.exists() {
            common::copy_tree(&common::corpus_dir().join("openhands/1.58.2/chat"), &chat);
        }
    }
    let out = run(&[
        "index",
        s.to_str().unwrap(),
        "--index",
        ix.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let got = SearchIndex::open(&ix).unwrap().documents().unwrap();
    // Paths differ from the fresh index by nothing: same store.
    super::super::search::incremental::assert_same(&got, &want);
    // No temporary or stale checkpoint file is left beside the index.
    let stray: Vec<String> = fs::read_dir(&ix)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("store-"))
        .collect();
    assert_eq!(stray.len(), 1, "{stray:?} (killed {committed} runs late)");
}
