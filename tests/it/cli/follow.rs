//! `agentlog follow` against a live writer: a thread replays real corpus
//! conversations event by event into a store — torn writes (half a file, a
//! pause, the rest), writes through a temporary file and a rename,
//! `base_state.json` rewritten in place after each event, new
//! conversations appearing, a fork (a whole directory renamed in), a
//! sub-agent starting in the middle of its parent — while `follow` runs.
//! Every event is printed exactly once, in index order per conversation,
//! none malformed, and the stream equals what `export` prints once the
//! writer stops. Event-driven and polling modes both.

use crate::common;
use crate::common::openhands::event_file_names;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

fn corpus(rel: &str) -> PathBuf {
    common::corpus_dir().join("openhands/1.58.2").join(rel)
}

/// Writes one event file the way `k` says: torn (half, a pause, the rest),
/// through a temporary file and a rename, or at once.
fn write_event(src: &Path, dst_events: &Path, name: &str, k: usize) {
    let bytes = fs::read(src.join("events").join(name)).unwrap();
    let dst = dst_events.join(name);
    match k % 3 {
        0 => {
            let mut f = fs::File::create(&dst).unwrap();
            let half = bytes.len() / 2;
            f.write_all(&bytes[..half]).unwrap();
            f.flush().unwrap();
            std::thread::sleep(Duration::from_millis(40));
            f.write_all(&bytes[half..]).unwrap();
        }
        1 => {
            let tmp = dst_events.join(format!(".tmp-{name}"));
            fs::write(&tmp, &bytes).unwrap();
            fs::rename(&tmp, &dst).unwrap();
        }
        _ => fs::write(&dst, &bytes).unwrap(),
    }
}

/// Replays the conversation `src` into `dst` event by event, its state
/// rewritten in place after each; `interleave` (a sub-agent) is started
/// halfway and replayed alongside.
fn replay(src: &Path, dst: &Path, interleave: Option<(&Path, &Path)>) {
    fs::create_dir_all(dst.join("events")).unwrap();
    let state = fs::read(src.join("base_state.json")).unwrap();
    fs::write(dst.join("base_state.json"), &state).unwrap();
    let names = event_file_names(src);
    let sub_names = interleave
        .map(|(s, _)| event_file_names(s))
        .unwrap_or_default();
    let mut sub_next = 0;
    for (k, name) in names.iter().enumerate() {
        write_event(src, &dst.join("events"), name, k);
        // The state rewritten in place (truncated, then written).
        let status = if k % 2 == 0 { "running" } else { "idle" };
        let s = String::from_utf8_lossy(&state).replacen(
            "\"execution_status\"",
            &format!("\"execution_status_was\": \"{status}\", \"execution_status\""),
            1,
        );
        fs::write(dst.join("base_state.json"), s.as_bytes()).unwrap();
        if let Some((ssrc, sdst)) = interleave
            && k >= names.len() / 2
        {
            if sub_next == 0 {
                // The sub-agent's directory appears before its files.
                fs::create_dir_all(sdst).unwrap();
                std::thread::sleep(Duration::from_millis(30));
                fs::create_dir_all(sdst.join("events")).unwrap();
                fs::copy(ssrc.join("base_state.json"), sdst.join("base_state.json")).unwrap();
            }
            for _ in 0..2 {
                if let Some(n) = sub_names.get(sub_next) {
                    write_event(ssrc, &sdst.join("events"), n, sub_next);
                    sub_next += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if let Some((ssrc, sdst)) = interleave {
        if sub_next == 0 {
            fs::create_dir_all(sdst.join("events")).unwrap();
            fs::copy(ssrc.join("base_state.json"), sdst.join("base_state.json")).unwrap();
        }
        while let Some(n) = sub_names.get(sub_next) {
            write_event(ssrc, &sdst.join("events"), n, sub_next);
            sub_next += 1;
        }
    }
    fs::write(dst.join("base_state.json"), &state).unwrap();
}

fn writer(store: &Path, scratch: &Path) {
    for s in ["chat", "coding", "pause"] {
        for e in fs::read_dir(corpus(s)).unwrap().flatten() {
            replay(&e.path(), &store.join(s).join(e.file_name()), None);
        }
    }
    // A sub-agent starting halfway through its parent.
    let parent = fs::read_dir(corpus("subagent"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let sub = fs::read_dir(parent.join("subagents"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let dst = store.join("subagent").join(parent.file_name().unwrap());
    let sub_dst = dst.join("subagents").join(sub.file_name().unwrap());
    replay(&parent, &dst, Some((&sub, &sub_dst)));
    // A fork: the source replayed, then the forks renamed in whole.
    let mut forks: Vec<PathBuf> = fs::read_dir(corpus("fork"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    forks.sort();
    replay(
        &forks[0],
        &store.join("fork").join(forks[0].file_name().unwrap()),
        None,
    );
    for f in &forks[1..] {
        let tmp = scratch.join(f.file_name().unwrap());
        common::copy_tree(f, &tmp);
        fs::rename(&tmp, store.join("fork").join(f.file_name().unwrap())).unwrap();
    }
}

/// Event lines by conversation, in order; records apart.
fn group(
    text: &str,
) -> (
    BTreeMap<String, Vec<serde_json::Value>>,
    Vec<serde_json::Value>,
) {
    let mut m: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    let mut records = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v.get("record").is_some() {
            records.push(v);
            continue;
        }
        m.entry(v["conversation"].as_str().unwrap().to_owned())
            .or_default()
            .push(v);
    }
    (m, records)
}

fn follow_live(extra: &[&str]) {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let scratch = t.path().join("scratch");
    for d in ["chat", "coding", "pause", "subagent", "fork"] {
        fs::create_dir_all(store.join(d)).unwrap();
    }
    fs::create_dir_all(&scratch).unwrap();
    let out_path = t.path().join("follow.out");
    let mut child = bin()
        .arg("follow")
        .arg(&store)
        .args(["--settle", "1"])
        .args(extra)
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    writer(&store, &scratch);
    let want = bin()
        .args(["export", "--jsonl"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(want.status.success());
    let (want, _) = group(&String::from_utf8(want.stdout).unwrap());
    let total: usize = want.values().map(Vec::len).sum();
    assert!(total > 80, "{total} events");
    // Wait (bounded) until follow has printed as many event lines.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut text;
    loop {
        text = fs::read_to_string(&out_path).unwrap();
        let complete = text.ends_with('\n') || text.is_empty();
        let n = text.lines().filter(|l| !l.contains("\"record\":")).count();
        if complete && n >= total || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // A moment more: anything printed twice would show.
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let _ = child.wait();
    text = fs::read_to_string(&out_path).unwrap();
    let (got, records) = group(&text);
    for (conv, events) in &got {
        for e in events {
            assert!(e["error"].is_null(), "{conv}: printed as malformed: {e}");
        }
        let idx: Vec<u64> = events
            .iter()
            .map(|e| e["index"].as_u64().unwrap())
            .collect();
        let want_idx: Vec<u64> = (0..idx.len() as u64).collect();
        assert_eq!(idx, want_idx, "{conv}: every index once, in order");
    }
    assert!(
        records
            .iter()
            .all(|r| r["record"] != "rewrite" && r["record"] != "removed"),
        "{records:?}"
    );
    let news = records.iter().filter(|r| r["record"] == "new").count();
    assert_eq!(news, want.len(), "one new record per conversation");
    assert!(records.iter().any(|r| r["record"] == "state"));
    assert!(
        got.values().flatten().any(|e| !e["parent"].is_null()),
        "the sub-agent's events name their parent"
    );
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the stream equals the export");
}

#[test]
fn follow_with_file_system_events() {
    follow_live(&[]);
}

#[test]
fn follow_by_polling() {
    follow_live(&["--poll", "0.2"]);
}

/// Runs `follow` until its output holds `n` event lines (bounded), then
/// stops it; the output.
fn follow_until(store: &Path, cp: &Path, out: &Path, n: usize) -> String {
    let mut child = bin()
        .arg("follow")
        .arg(store)
        .arg("--checkpoint")
        .arg(cp)
        .stdout(fs::File::create(out).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = fs::read_to_string(out).unwrap();
        let k = text.lines().filter(|l| !l.contains("\"record\":")).count();
        if (k >= n && text.ends_with('\n')) || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Until the checkpoint is saved after the last batch.
    std::thread::sleep(Duration::from_millis(500));
    let _ = child.kill();
    let _ = child.wait();
    fs::read_to_string(out).unwrap()
}

#[test]
fn follow_resumes_from_its_checkpoint() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let src = corpus("chat");
    let conv = fs::read_dir(&src).unwrap().flatten().next().unwrap().path();
    let dst = store.join(conv.file_name().unwrap());
    common::copy_tree(&conv, &dst);
    let names = event_file_names(&dst);
    let last = names.last().unwrap().clone();
    fs::remove_file(dst.join("events").join(&last)).unwrap();
    let cp = t.path().join("cp");
    let first = follow_until(&store, &cp, &t.path().join("1"), names.len() - 1);
    let (g1, _) = group(&first);
    assert_eq!(g1.values().map(Vec::len).sum::<usize>(), names.len() - 1);
    assert!(cp.is_file());
    fs::copy(
        conv.join("events").join(&last),
        dst.join("events").join(&last),
    )
    .unwrap();
    let second = follow_until(&store, &cp, &t.path().join("2"), 1);
    let (g2, recs) = group(&second);
    let lines: Vec<&serde_json::Value> = g2.values().flatten().collect();
    assert_eq!(lines.len(), 1, "{second}");
    assert_eq!(lines[0]["file"], last.as_str());
    assert!(recs.iter().all(|r| r["record"] != "new"), "{recs:?}");
}

/// A conversation that cannot be read (sub-agents nested one level deeper
/// than the reader follows) is tried again at every scan; `follow` warns
/// about it once and prints the rest.
#[test]
fn follow_warns_once_about_a_conversation_it_cannot_read() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let conv = fs::read_dir(corpus("chat"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut at = store.join("d0000000000000000000000000000000");
    let mut deepest = at.clone();
    for depth in 0..=agentlog::openhands::store::MAX_SUBAGENT_DEPTH + 1 {
        fs::create_dir_all(&at).unwrap();
        fs::copy(conv.join("base_state.json"), at.join("base_state.json")).unwrap();
        common::copy_tree(&conv.join("events"), &at.join("events"));
        deepest = at.clone();
        at = at.join("subagents").join(format!("d{:031x}", depth + 1));
    }
    let out = t.path().join("out");
    let err = t.path().join("err");
    let mut child = bin()
        .arg("follow")
        .arg(&store)
        .args(["--poll", "0.05"])
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    // Until every readable conversation is printed (bounded), then many
    // more scans: polling every 50 ms for a second.
    let want = (agentlog::openhands::store::MAX_SUBAGENT_DEPTH + 1) * event_file_names(&conv).len();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let text = fs::read_to_string(&out).unwrap();
        let k = text.lines().filter(|l| !l.contains("\"record\":")).count();
        if k >= want && text.ends_with('\n') {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let _ = child.kill();
    let _ = child.wait();
    let err = fs::read_to_string(&err).unwrap();
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("nested")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains(&*deepest.to_string_lossy()), "{err}");
    let (events, records) = group(&fs::read_to_string(&out).unwrap());
    let new = records.iter().filter(|r| r["record"] == "new").count();
    assert_eq!(new, agentlog::openhands::store::MAX_SUBAGENT_DEPTH + 1);
    let lines: usize = events.values().map(Vec::len).sum();
    assert_eq!(lines, want);
}
