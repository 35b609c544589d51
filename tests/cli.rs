//! The `agentlog` command, run as a process over the shared corpus and over
//! stores made in temporary directories: every command, the JSON shapes
//! (exact key sets and order), exit codes, a closed pipe, a missing path, a
//! file where a directory is expected, an unreadable directory.
#![cfg(feature = "cli")]

// `occhat_support` includes `common` (the shared-data path helper).
mod occhat_support;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
    c.stdin(Stdio::null());
    c.env_remove("OC_CHAT_SESSIONS_DIR");
    c
}

fn run_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut c = bin();
    c.args(args);
    if let Some(d) = dir {
        c.current_dir(d);
    }
    c.env("TZ", "UTC");
    let out = c.output().expect("run agentlog");
    no_panic(&out, args);
    out
}

fn run(args: &[&str]) -> Output {
    run_in(None, args)
}

/// No Rust panic or backtrace, ever.
fn no_panic(out: &Output, args: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked")
            && !err.contains("RUST_BACKTRACE")
            && !err.contains("stack backtrace"),
        "agentlog {args:?} panicked: {err}"
    );
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(code(&out), 0, "agentlog {args:?}: {}", stderr(&out));
    stdout(&out)
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn openhands_corpus() -> PathBuf {
    // `occhat_support::corpus()` is `<shared corpus>/occhat`.
    occhat_support::corpus()
        .parent()
        .expect("the corpus directory")
        .join("openhands")
}

/// One conversation of the corpus, with what the SDK read back from it.
struct Oracle {
    dir: PathBuf,
    version: String,
    subagent: bool,
    conv: Value,
}

fn oracles() -> Vec<Oracle> {
    let mut out = Vec::new();
    let root = openhands_corpus();
    let mut versions: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    versions.sort_by_key(|e| e.file_name());
    for v in versions {
        let mut files: Vec<_> = fs::read_dir(v.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".oracle.json"))
            .collect();
        files.sort();
        for f in files {
            let o: Value = json(&fs::read_to_string(&f).unwrap());
            let scenario = f
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".oracle.json")
                .to_owned();
            for c in o["conversations"].as_array().unwrap() {
                let rel = c["path"].as_str().unwrap();
                out.push(Oracle {
                    dir: v.path().join(&scenario).join(rel),
                    version: v.file_name().to_string_lossy().into_owned(),
                    subagent: rel.contains("/subagents/"),
                    conv: c.clone(),
                });
            }
        }
    }
    assert!(out.len() > 50, "the corpus is there");
    out
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// The single conversation directory of a corpus scenario.
fn scenario_dir(version: &str, scenario: &str) -> PathBuf {
    let base = openhands_corpus().join(version).join(scenario);
    let mut dirs: Vec<PathBuf> = fs::read_dir(&base)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter().next().unwrap()
}

/// A store with damage of every kind, and one sound conversation with a
/// sub-agent:
///
/// - `chat`: events 0–10 sound, `event-00011` not JSON (malformed),
///   `event-00013` after the missing 12 (gap), a second file for index 3
///   (duplicate), `notes.txt` (bad name);
/// - `coding`: `base_state.json` an array (bad state), `meta.json` not JSON
///   (bad meta);
/// - `subagent`: as written by the SDK.
struct Damaged {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    chat: PathBuf,
    coding: PathBuf,
    subagent: PathBuf,
}

fn damaged() -> Damaged {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let chat_src = scenario_dir("1.58.2", "chat");
    let chat = root.join(chat_src.file_name().unwrap());
    copy_tree(&chat_src, &chat);
    let ev = chat.join("events");
    fs::write(ev.join("event-00011-aaaaaaaa-0000.json"), b"{not json").unwrap();
    fs::write(
        ev.join("event-00013-bbbbbbbb-0000.json"),
        br#"{"kind":"PauseEvent","id":"bbbbbbbb-0000","source":"user","timestamp":"2026-01-01T00:00:00"}"#,
    )
    .unwrap();
    fs::write(
        ev.join("event-00003-ffffffff-ffff.json"),
        br#"{"kind":"PauseEvent","id":"ffffffff-ffff","source":"user"}"#,
    )
    .unwrap();
    fs::write(ev.join("notes.txt"), b"hello").unwrap();
    let coding_src = scenario_dir("1.58.2", "coding");
    let coding = root.join(coding_src.file_name().unwrap());
    copy_tree(&coding_src, &coding);
    fs::write(coding.join("base_state.json"), b"[1, 2, 3]").unwrap();
    fs::write(coding.join("meta.json"), b"{\"id\": ").unwrap();
    let sub_src = scenario_dir("1.58.2", "subagent");
    let subagent = root.join(sub_src.file_name().unwrap());
    copy_tree(&sub_src, &subagent);
    Damaged {
        _tmp: tmp,
        root,
        chat,
        coding,
        subagent,
    }
}

// ---------------------------------------------------------------- help, usage

#[test]
fn help_for_every_command_with_an_example() {
    let commands: &[&[&str]] = &[
        &[],
        &["ls"],
        &["events"],
        &["files"],
        &["show"],
        &["stats"],
        &["check"],
        &["export"],
        &["view"],
        &["occhat"],
        &["occhat", "list"],
        &["occhat", "show"],
        &["occhat", "tail"],
        &["occhat", "recover"],
        &["occhat", "export-md"],
        &["occhat", "migrate"],
        &["occhat", "safe-name"],
    ];
    for c in commands {
        let mut args = c.to_vec();
        args.push("--help");
        let out = ok(&args);
        assert!(out.contains("Example"), "{args:?} has no example:\n{out}");
        assert!(out.contains("Usage: agentlog"), "{args:?}:\n{out}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[&[&str]] = &[
        &[],
        &["bogus"],
        &["ls"],
        &["show", "x"],
        &["show", "x", "--index", "1", "--id", "y"],
        &["export", "x"],
        &["view", "x", "--sdk-version", "one"],
        &["occhat", "recover", "x", "--choice", "maybe"],
        &["ls", "--no-such-flag", "x"],
    ];
    for c in cases {
        let out = run(c);
        assert_eq!(code(&out), 2, "{c:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{c:?}");
        assert!(!stderr(&out).is_empty(), "{c:?}");
    }
}

// ---------------------------------------------------------------- ls

const LS_KEYS: [&str; 9] = [
    "format",
    "path",
    "id",
    "title",
    "model",
    "events",
    "created",
    "updated",
    "subagents",
];

#[test]
fn ls_json_over_the_corpus() {
    let root = openhands_corpus();
    let rows = json_lines(&ok(&["ls", "--json", p(&root)]));
    let oracles = oracles();
    let top: Vec<&Oracle> = oracles.iter().filter(|o| !o.subagent).collect();
    assert_eq!(rows.len(), top.len());
    let mut paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let sorted = {
        let mut s = paths.clone();
        s.sort();
        s
    };
    assert_eq!(paths, sorted, "sorted paths");
    paths.dedup();
    assert_eq!(paths.len(), rows.len());
    for r in &rows {
        assert_eq!(keys(r), LS_KEYS);
        assert_eq!(r["format"], "openhands");
        assert!(r["title"].is_null(), "no meta.json in the corpus");
        let dir = PathBuf::from(r["path"].as_str().unwrap());
        let o = top.iter().find(|o| o.dir == dir).expect("an oracle");
        assert_eq!(r["id"], o.conv["base_state"]["id_hex"]);
        assert_eq!(r["model"], o.conv["base_state"]["llm_model"]);
        assert_eq!(r["events"], o.conv["event_count"]);
        let first_ts = r["created"].as_str().unwrap();
        assert!(first_ts.starts_with("20"), "{first_ts}");
        assert!(r["updated"].as_str().unwrap() >= first_ts);
        let subs = oracles
            .iter()
            .filter(|s| s.subagent && s.dir.starts_with(&o.dir))
            .count();
        assert_eq!(r["subagents"], subs as u64, "{}", o.dir.display());
    }
    assert!(rows.iter().any(|r| r["subagents"] == 1));
}

#[test]
fn ls_text_and_a_conversation_given_by_a_file() {
    let dir = scenario_dir("1.58.2", "chat");
    let out = ok(&["ls", p(&dir)]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("FORMAT"));
    let id = dir.file_name().unwrap().to_str().unwrap();
    assert!(lines[1].starts_with("openhands") && lines[1].contains(&id[..8]));
    // A file of the conversation names it too.
    let rows = json_lines(&ok(&["ls", "--json", p(&dir.join("base_state.json"))]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], id);
}

#[test]
fn ls_uses_meta_json_when_present() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp
        .path()
        .join(scenario_dir("1.58.2", "chat").file_name().unwrap());
    copy_tree(&scenario_dir("1.58.2", "chat"), &dir);
    let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
    fs::write(
        dir.join("meta.json"),
        format!(
            r#"{{"id":"{id}","title":"Fix the build","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T04:00:00Z","forked_from_conversation_id":null}}"#
        ),
    )
    .unwrap();
    let rows = json_lines(&ok(&["ls", "--json", p(tmp.path())]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["title"], "Fix the build");
    assert_eq!(rows[0]["created"], "2026-01-02T03:04:05Z");
    assert_eq!(rows[0]["updated"], "2026-01-02T04:00:00Z");
}

// ---------------------------------------------------------------- events, files, show

const EVENT_KEYS: [&str; 7] = [
    "index",
    "file",
    "id",
    "kind",
    "source",
    "parent_id",
    "timestamp",
];

#[test]
fn events_json_equal_what_the_sdk_reads() {
    for o in oracles() {
        let rows = json_lines(&ok(&["events", "--json", p(&o.dir)]));
        let want = o.conv["events"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{}", o.dir.display());
        for (r, w) in rows.iter().zip(want) {
            assert_eq!(keys(r), EVENT_KEYS);
            let got =
                serde_json::json!([r["index"], r["id"], r["kind"], r["source"], r["parent_id"]]);
            assert_eq!(&got, w, "{}", o.dir.display());
            let file = r["file"].as_str().unwrap();
            assert!(o.dir.join("events").join(file).is_file());
            assert!(r["timestamp"].is_string());
        }
    }
}

#[test]
fn events_text() {
    let dir = scenario_dir("1.58.2", "chat");
    let out = ok(&["events", p(&dir)]);
    assert_eq!(out.lines().count(), 12);
    assert!(out.lines().nth(1).unwrap().contains("SystemPrompt"));
}

#[test]
fn files_json_statuses() {
    let d = damaged();
    let rows = json_lines(&ok(&["files", "--json", p(&d.chat)]));
    let mut by_status: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in &rows {
        assert_eq!(keys(r), ["name", "index", "id", "status", "error"]);
        by_status
            .entry(r["status"].as_str().unwrap().to_owned())
            .or_default()
            .push(r);
    }
    let names = |s: &str| -> Vec<&str> {
        by_status
            .get(s)
            .map(|v| v.iter().map(|r| r["name"].as_str().unwrap()).collect())
            .unwrap_or_default()
    };
    assert_eq!(names("event").len(), 11);
    assert_eq!(names("malformed"), ["event-00011-aaaaaaaa-0000.json"]);
    assert_eq!(names("gap"), ["event-00013-bbbbbbbb-0000.json"]);
    assert_eq!(names("duplicate"), ["event-00003-ffffffff-ffff.json"]);
    assert_eq!(names("bad-name"), ["notes.txt"]);
    for r in &rows {
        let ev = r["status"] == "event";
        assert_eq!(r["error"].is_null(), ev, "{r}");
        if r["status"] == "bad-name" {
            assert!(r["index"].is_null() && r["id"].is_null());
        } else {
            assert!(r["index"].is_u64() && r["id"].is_string(), "{r}");
        }
    }
    let gap = by_status["gap"][0];
    assert_eq!(gap["index"], 13);
    assert_eq!(gap["id"], "bbbbbbbb-0000");
    // Every file of the corpus is an event.
    for o in oracles() {
        for r in json_lines(&ok(&["files", "--json", p(&o.dir)])) {
            assert_eq!(r["status"], "event");
        }
    }
    // Text form.
    let out = ok(&["files", p(&d.chat)]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("gap") && l.contains("comes after index 12"))
    );
}

#[test]
fn events_of_a_malformed_file_are_listed_and_reported() {
    let d = damaged();
    let out = run(&["events", "--json", p(&d.chat)]);
    assert_eq!(code(&out), 1);
    let rows = json_lines(&stdout(&out));
    assert_eq!(rows.len(), 12);
    let bad = &rows[11];
    assert_eq!(bad["index"], 11);
    assert!(bad["kind"].is_null() && bad["id"].is_null());
    assert!(stderr(&out).contains("event-00011-aaaaaaaa-0000.json"));
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn show_pretty_raw_by_index_and_by_id() {
    let dir = scenario_dir("1.58.2", "subagent");
    let rows = json_lines(&ok(&["events", "--json", p(&dir)]));
    let r = &rows[2];
    let file = dir.join("events").join(r["file"].as_str().unwrap());
    let bytes = fs::read(&file).unwrap();
    let raw = run(&["show", p(&dir), "--index", "2", "--raw"]);
    assert_eq!(code(&raw), 0);
    assert_eq!(raw.stdout, bytes, "byte for byte");
    let pretty = ok(&["show", p(&dir), "--index", "2"]);
    assert!(pretty.starts_with("{\n  \""), "indented");
    assert_eq!(json(&pretty), json(&String::from_utf8(bytes).unwrap()));
    let by_id = ok(&["show", p(&dir), "--id", r["id"].as_str().unwrap()]);
    assert_eq!(by_id, pretty);
    // The file ID names it too.
    let file_id = r["file"]
        .as_str()
        .unwrap()
        .trim_end_matches(".json")
        .splitn(3, '-')
        .nth(2)
        .unwrap()
        .to_owned();
    assert_eq!(ok(&["show", p(&dir), "--id", &file_id]), pretty);
    // Missing: status 1, one line.
    for args in [
        vec!["show", p(&dir), "--index", "999"],
        vec!["show", p(&dir), "--id", "nope"],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 1, "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1);
        assert!(out.stdout.is_empty());
    }
    // A malformed event: pretty fails (1), raw prints its bytes.
    let d = damaged();
    let out = run(&["show", p(&d.chat), "--index", "11"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("event-00011"));
    let out = run(&["show", p(&d.chat), "--index", "11", "--raw"]);
    assert_eq!(code(&out), 1);
    assert_eq!(out.stdout, b"{not json");
}

#[test]
fn a_store_of_many_is_not_one_conversation() {
    let out = run(&["events", p(&openhands_corpus())]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("conversations"), "{err}");
    // A store holding exactly one conversation is that conversation.
    let scenario = openhands_corpus().join("1.58.2").join("chat");
    // A heading, then the events.
    assert_eq!(ok(&["events", p(&scenario)]).lines().count(), 12);
}

// ---------------------------------------------------------------- stats

#[test]
fn stats_json_over_the_corpus() {
    let root = openhands_corpus();
    let s = json(&ok(&["stats", "--json", p(&root)]));
    assert_eq!(
        keys(&s),
        [
            "conversations",
            "subagents",
            "sessions",
            "unreadable",
            "events",
            "events_by_kind",
            "messages",
            "messages_by_role",
            "tool_calls",
            "errors",
            "usage",
            "files"
        ]
    );
    assert_eq!(
        keys(&s["errors"]),
        ["agent_error", "conversation_error", "tool_error"]
    );
    assert_eq!(
        keys(&s["files"]),
        ["malformed", "gap", "duplicate", "bad_name", "bad_state"]
    );
    let oracles = oracles();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut events = 0u64;
    let (mut prompt, mut completion, mut cost) = (0u64, 0u64, 0f64);
    for o in &oracles {
        for e in o.conv["events"].as_array().unwrap() {
            *kinds.entry(e[2].as_str().unwrap().to_owned()).or_default() += 1;
            events += 1;
        }
        let has_subs = oracles
            .iter()
            .any(|s| s.subagent && s.dir.starts_with(&o.dir) && s.dir != o.dir);
        for (k, m) in o.conv["base_state"]["stats"].as_object().unwrap() {
            if has_subs && (k.starts_with("task:") || k.starts_with("delegate:")) {
                continue;
            }
            prompt += m["prompt_tokens"].as_u64().unwrap();
            completion += m["completion_tokens"].as_u64().unwrap();
            cost += m["accumulated_cost"].as_f64().unwrap();
        }
    }
    assert_eq!(
        s["conversations"],
        oracles.iter().filter(|o| !o.subagent).count() as u64
    );
    assert_eq!(
        s["subagents"],
        oracles.iter().filter(|o| o.subagent).count() as u64
    );
    assert_eq!(s["sessions"], 0);
    assert_eq!(s["unreadable"], 0);
    assert_eq!(s["events"], events);
    let got_kinds: BTreeMap<String, u64> =
        serde_json::from_value(s["events_by_kind"].clone()).unwrap();
    assert_eq!(got_kinds, kinds);
    let tools: u64 = s["tool_calls"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(tools, kinds["ActionEvent"]);
    assert!(s["tool_calls"]["terminal"].as_u64().unwrap() > 0);
    assert_eq!(s["errors"]["agent_error"], kinds["AgentErrorEvent"]);
    assert!(
        s["errors"]["tool_error"].as_u64().unwrap() > 0,
        "the errors scenario"
    );
    let usage = s["usage"].as_object().unwrap();
    assert!(usage.contains_key("openai/fake-model") && usage.contains_key("openai/gpt-4o"));
    let sum = |k: &str| -> u64 { usage.values().map(|u| u[k].as_u64().unwrap()).sum() };
    assert_eq!(sum("prompt_tokens"), prompt);
    assert_eq!(sum("completion_tokens"), completion);
    let got_cost: f64 = usage.values().map(|u| u["cost"].as_f64().unwrap()).sum();
    assert!(
        (got_cost - cost).abs() < 1e-6 * cost,
        "{got_cost} vs {cost}"
    );
    for u in usage.values() {
        assert_eq!(
            keys(u),
            [
                "calls",
                "prompt_tokens",
                "completion_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "cost"
            ]
        );
    }
    for v in s["files"].as_object().unwrap().values() {
        assert_eq!(v, 0);
    }
}

#[test]
fn stats_count_a_subagent_once() {
    let dir = scenario_dir("1.58.2", "subagent");
    let s = json(&ok(&["stats", "--json", p(&dir)]));
    assert_eq!(s["conversations"], 1);
    assert_eq!(s["subagents"], 1);
    assert_eq!(s["events"], 22);
    // What the SDK recorded: each conversation's own metrics under
    // `agent`, and in the parent a `task:` copy of the sub-agent's.
    let oracle =
        json(&fs::read_to_string(openhands_corpus().join("1.58.2/subagent.oracle.json")).unwrap());
    let convs = oracle["conversations"].as_array().unwrap();
    assert_eq!(convs.len(), 2, "the parent and its sub-agent");
    let own = |k: &str| -> u64 {
        convs
            .iter()
            .map(|c| c["base_state"]["stats"]["agent"][k].as_u64().unwrap())
            .sum()
    };
    let parent = convs
        .iter()
        .find(|c| !c["path"].as_str().unwrap().contains("/subagents/"))
        .unwrap();
    let sub = convs
        .iter()
        .find(|c| c["path"].as_str().unwrap().contains("/subagents/"))
        .unwrap();
    let copies: Vec<&Value> = parent["base_state"]["stats"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("task:"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(
        copies.len(),
        1,
        "the parent holds a copy of the sub-agent's metrics"
    );
    for k in ["prompt_tokens", "completion_tokens"] {
        assert_eq!(copies[0][k], sub["base_state"]["stats"]["agent"][k]);
    }
    // The parent's own and the sub-agent's own; the parent's `task:` copy
    // is not counted again.
    let u = &s["usage"]["openai/fake-model"];
    assert_eq!(u["prompt_tokens"], own("prompt_tokens"));
    assert_eq!(u["completion_tokens"], own("completion_tokens"));
    assert_eq!(
        s["usage"].as_object().unwrap().len(),
        1,
        "no \"default\" model"
    );
}

#[test]
fn stats_of_a_damaged_store_and_text() {
    let d = damaged();
    let out = run(&["stats", "--json", p(&d.root)]);
    assert_eq!(code(&out), 0);
    let s = json(&stdout(&out));
    assert_eq!(s["conversations"], 3);
    assert_eq!(s["files"]["malformed"], 1);
    assert_eq!(s["files"]["gap"], 1);
    assert_eq!(s["files"]["duplicate"], 1);
    assert_eq!(s["files"]["bad_name"], 1);
    assert_eq!(s["files"]["bad_state"], 2);
    assert!(!stderr(&out).is_empty(), "the bad files are reported");
    let text = ok(&["stats", p(&d.root)]);
    let first: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        first,
        ["OpenHands", "conversations", "3", "(1", "sub-agent)"],
        "{text}"
    );
    assert!(
        text.contains(
            "1 malformed, 1 after a gap, 1 duplicate, 1 badly named, 2 bad state or meta"
        )
    );
}

// ---------------------------------------------------------------- check

#[test]
fn check_the_corpus_is_clean() {
    let root = openhands_corpus();
    let out = run(&["check", p(&root)]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.ends_with("no problems\n"), "{text}");
    let out = run(&["check", "--json", p(&root)]);
    assert_eq!(code(&out), 0);
    assert!(out.stdout.is_empty());
}

#[test]
fn check_lists_every_problem() {
    let d = damaged();
    let out = run(&["check", "--json", p(&d.root)]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let rows = json_lines(&stdout(&out));
    let mut found: Vec<(String, String)> = Vec::new();
    for r in &rows {
        assert_eq!(keys(r), ["path", "problem", "detail"]);
        assert!(!r["detail"].as_str().unwrap().is_empty());
        let path = PathBuf::from(r["path"].as_str().unwrap());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        found.push((r["problem"].as_str().unwrap().to_owned(), name));
    }
    found.sort();
    let want = [
        ("bad-meta", "meta.json"),
        ("bad-name", "notes.txt"),
        ("bad-state", "base_state.json"),
        ("duplicate", "event-00003-ffffffff-ffff.json"),
        ("gap", "event-00013-bbbbbbbb-0000.json"),
        ("malformed", "event-00011-aaaaaaaa-0000.json"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    assert_eq!(found, want);
    let bad_state = rows.iter().find(|r| r["problem"] == "bad-state").unwrap();
    assert!(
        bad_state["path"]
            .as_str()
            .unwrap()
            .starts_with(p(&d.coding))
    );
    // Text: one line per problem and the verdict.
    let out = run(&["check", p(&d.root)]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(
        text.ends_with("checked 3 conversations (1 sub-agent): 6 problems\n"),
        "{text}"
    );
    // The sound part alone is clean.
    assert_eq!(code(&run(&["check", p(&d.subagent)])), 0);
}

// ---------------------------------------------------------------- export

#[test]
fn export_jsonl_with_subagents() {
    let dir = scenario_dir("1.58.2", "subagent");
    let lines = json_lines(&ok(&["export", "--jsonl", p(&dir)]));
    assert_eq!(lines.len(), 22);
    let top = dir.file_name().unwrap().to_str().unwrap();
    let sub_dir = fs::read_dir(dir.join("subagents"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let sub = sub_dir.file_name().unwrap().to_str().unwrap();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(
            keys(l),
            ["conversation", "parent", "index", "file", "error", "event"]
        );
        assert!(l["error"].is_null());
        let (conv, parent, cdir) = if i < 11 {
            (top, Value::Null, &dir)
        } else {
            (sub, Value::from(top), &sub_dir)
        };
        assert_eq!(l["conversation"], conv);
        assert_eq!(l["parent"], parent);
        assert_eq!(l["index"], (i % 11) as u64);
        let file = cdir.join("events").join(l["file"].as_str().unwrap());
        let want: Value = json(&fs::read_to_string(file).unwrap());
        assert_eq!(l["event"], want);
    }
    // The event is the file verbatim.
    let text = ok(&["export", "--jsonl", p(&dir)]);
    let first = text.lines().next().unwrap();
    let file = dir.join("events").join(lines[0]["file"].as_str().unwrap());
    let raw = fs::read_to_string(file).unwrap();
    assert!(
        first.ends_with(&format!("\"event\":{}}}", raw.trim())),
        "{first}"
    );
}

#[test]
fn export_the_corpus_to_a_file() {
    let root = openhands_corpus();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("events.jsonl");
    let out = run(&["export", p(&root), "--jsonl", "-o", p(&file)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let written = fs::read_to_string(&file).unwrap();
    let total: u64 = oracles()
        .iter()
        .map(|o| o.conv["event_count"].as_u64().unwrap())
        .sum();
    assert_eq!(written.lines().count() as u64, total);
    assert_eq!(written, ok(&["export", "--jsonl", p(&root)]));
    // Only the file is left: no temporary file.
    let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn export_a_damaged_store() {
    let d = damaged();
    let out = run(&["export", "--jsonl", p(&d.root)]);
    assert_eq!(code(&out), 0);
    let lines = json_lines(&stdout(&out));
    let bad: Vec<&Value> = lines.iter().filter(|l| !l["error"].is_null()).collect();
    assert_eq!(bad.len(), 1);
    assert!(bad[0]["event"].is_null());
    assert_eq!(bad[0]["file"], "event-00011-aaaaaaaa-0000.json");
    // 12 of chat (the gap file is not read), 32 of coding, 11 + 11 of subagent.
    assert_eq!(lines.len(), 12 + 32 + 22);
    // An OC Chat store is not exported.
    let case = occhat_support::restore("sample_basic");
    let out = run(&["export", "--jsonl", p(&case.sessions())]);
    assert_eq!(code(&out), 2);
}

#[test]
fn export_writes_an_event_on_several_lines_on_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("0123456789abcdef0123456789abcdef");
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(
        dir.join("events/event-00000-aaaaaaaa-0000.json"),
        b"{\n  \"kind\": \"MessageEvent\",\n  \"id\": \"aaaaaaaa-0000\"\n}\n",
    )
    .unwrap();
    let text = ok(&["export", "--jsonl", p(&dir)]);
    assert_eq!(text.lines().count(), 1);
    let l = json(text.trim_end());
    assert_eq!(
        l["event"],
        serde_json::json!({"kind": "MessageEvent", "id": "aaaaaaaa-0000"})
    );
    assert_eq!(l["conversation"], "0123456789abcdef0123456789abcdef");
}

// ---------------------------------------------------------------- view

#[test]
fn view_equals_the_sdk_oracles() {
    for o in oracles() {
        let d = p(&o.dir);
        let wire = json(&ok(&["view", d, "--json"]));
        assert_eq!(wire, o.conv["next_messages"]["wire_messages"], "{d}");
        let sdk = json(&ok(&["view", d, "--sdk-messages"]));
        assert_eq!(sdk, o.conv["next_messages"]["messages"], "{d}");
        let ids = json(&ok(&["view", d, "--event-ids", "--json"]));
        let ids = ids.as_array().unwrap();
        let want = o.conv["view_event_ids"].as_array().unwrap();
        assert_eq!(ids.len(), want.len(), "{d}");
        // Before 1.10.0 the SDK gives a condensation summary a random ID.
        let random_summary_ids = o.version.starts_with("1.0.") || o.version.starts_with("1.7.");
        for (a, b) in ids.iter().zip(want) {
            if random_summary_ids && a.as_str().unwrap().ends_with("-summary") {
                continue;
            }
            assert_eq!(a, b, "{d}");
        }
        let plain = ok(&["view", d, "--event-ids"]);
        assert_eq!(plain.lines().count(), ids.len());
    }
}

#[test]
fn view_text_and_branches() {
    let dir = scenario_dir("1.58.2", "chat");
    let text = ok(&["view", p(&dir)]);
    assert!(text.starts_with("# "), "{text}");
    assert!(text.contains("SDK 1.58.2 (inferred)"));
    assert!(text.contains("── [0] system"));
    let ids: Vec<String> = json_lines(&ok(&["events", "--json", p(&dir)]))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    // The branch whose head is event 3: events 0 to 3.
    let got = json(&ok(&[
        "view",
        p(&dir),
        "--event-ids",
        "--json",
        "--branch",
        &ids[3],
    ]));
    assert_eq!(got, serde_json::json!(ids[..4]));
    let out = run(&["view", p(&dir), "--json", "--branch", "nope"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1);
    // A forced version.
    let text = ok(&["view", p(&dir), "--sdk-version", "1.31.2"]);
    assert!(text.contains("SDK 1.31.2 (forced)"));
}

// ---------------------------------------------------------------- OC Chat

#[test]
fn occhat_list_and_tail_equal_the_oracle() {
    let case = occhat_support::restore("sample_recovery");
    let dir = Some(case.dir.as_path());
    let out = run_in(
        dir,
        &["occhat", "--sessions-dir", "sessions", "list", "--json"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = json(&stdout(&out));
    let oracle: Value = json(&case.oracle.to_string());
    let mut want = oracle["list_sessions"].clone();
    for e in want.as_array_mut().unwrap() {
        e.as_object_mut().unwrap().remove("filepath_rel");
    }
    assert_eq!(got, want);
    for e in got.as_array().unwrap() {
        assert_eq!(
            keys(e),
            [
                "name",
                "model",
                "stats",
                "last_modified",
                "filepath",
                "chat_logs",
                "reasoning_effort",
                "chat_log_size_bytes",
                "ui"
            ]
        );
    }
    let mut tails = 0;
    let abs = case.sessions().canonicalize().unwrap();
    for q in oracle["queries"].as_array().unwrap() {
        let name = q["query"]
            .as_str()
            .unwrap()
            .replace("{SESSIONS_ABS}", p(&abs));
        let name = name.as_str();
        let Some(rel) = q["resolve_chat_log"]["path_rel"].as_str() else {
            continue;
        };
        let want = &oracle["chat_logs"][rel]["detect_incomplete_tail"];
        let out = run_in(
            dir,
            &[
                "occhat",
                "--sessions-dir",
                "sessions",
                "tail",
                name,
                "--json",
            ],
        );
        // An incomplete tail is a problem found: status 1.
        let want_code = if want.is_null() { 0 } else { 1 };
        assert_eq!(code(&out), want_code, "{name}: {}", stderr(&out));
        let got = json(&stdout(&out));
        assert_eq!(&got, want, "{name}");
        if !got.is_null() {
            assert_eq!(keys(&got), ["kind", "tail_indexes", "summary"]);
            tails += 1;
        }
    }
    assert_eq!(tails, 3);
    // The environment variable names the store too.
    let out = bin()
        .args(["occhat", "list", "--json"])
        .current_dir(&case.dir)
        .env("TZ", "UTC")
        .env("OC_CHAT_SESSIONS_DIR", "sessions")
        .output()
        .unwrap();
    assert_eq!(json(&stdout(&out)), want_without_rel(&oracle));
}

fn want_without_rel(oracle: &Value) -> Value {
    let mut want = oracle["list_sessions"].clone();
    for e in want.as_array_mut().unwrap() {
        e.as_object_mut().unwrap().remove("filepath_rel");
    }
    want
}

#[test]
fn occhat_show_recover_export_migrate() {
    let case = occhat_support::restore("sample_recovery");
    let dir = Some(case.dir.as_path());
    let oc = |args: &[&str]| -> Output {
        let mut a = vec!["occhat", "--sessions-dir", "sessions"];
        a.extend_from_slice(args);
        run_in(dir, &a)
    };
    let out = oc(&["show", "pending-tools", "--json"]);
    assert_eq!(code(&out), 0);
    let s = json(&stdout(&out));
    assert_eq!(
        keys(&s),
        [
            "filepath",
            "validated",
            "metadata",
            "messages",
            "chat_log_load_failed"
        ]
    );
    assert_eq!(s["messages"].as_array().unwrap().len(), 4);
    assert_eq!(s["metadata"]["session_name"], "pending-tools");
    let text = stdout(&oc(&["show", "pending-tools"]));
    assert!(
        text.contains("incomplete tail: orphaned_tool_calls"),
        "{text}"
    );
    // A dry run writes nothing.
    let before = occhat_support::tree(&case.sessions());
    let out = oc(&["recover", "pending-tools", "--choice", "drop", "--dry-run"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("keeps 2 of 4"));
    assert_eq!(occhat_support::tree(&case.sessions()), before);
    // Nothing to change: nothing written.
    let out = oc(&["recover", "all-good", "--choice", "drop"]);
    assert_eq!(code(&out), 0);
    assert_eq!(occhat_support::tree(&case.sessions()), before);
    // Recover: the tail goes, the old files are archived, none is lost.
    let out = oc(&["recover", "pending-tools", "--choice", "drop"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("[Chat log saved to"));
    let after = occhat_support::tree(&case.sessions());
    for (path, bytes) in &before {
        let kept = after.iter().any(|(_, b)| b == bytes);
        assert!(kept, "{path} lost");
    }
    let s = json(&stdout(&oc(&["show", "pending-tools", "--json"])));
    assert_eq!(s["messages"].as_array().unwrap().len(), 2);
    // Export.
    let md = case.dir.join("out.md");
    let out = oc(&["export-md", "all-good", "-o", p(&md)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        fs::read_to_string(&md)
            .unwrap()
            .starts_with("# Chat Export — all-good")
    );
    // Not found: one line, status 1 (what was asked for is missing).
    let out = oc(&["show", "no-such-session"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1);
    // Migrate a flat store, as the oracle says; again changes nothing.
    let legacy = occhat_support::restore("sample_legacy");
    let ldir = Some(legacy.dir.as_path());
    let out = run_in(
        ldir,
        &["occhat", "--sessions-dir", "sessions", "migrate", "--json"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let oracle = json(&legacy.oracle.to_string());
    assert_eq!(json(&stdout(&out)), oracle["migration"]["summary"]);
    let out = run_in(ldir, &["occhat", "--sessions-dir", "sessions", "migrate"]);
    assert_eq!(
        stdout(&out),
        "migrated 0 sessions, moved 0 orphan chat logs to legacy/, 0 errors\n"
    );
}

#[test]
fn occhat_safe_name_is_the_librarys() {
    let cases =
        json(&fs::read_to_string(occhat_support::corpus().join("fs_safe_name.json")).unwrap());
    let inputs: Vec<String> = cases["fs_safe_name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap().to_owned())
        .filter(|s| !s.contains('\0') && !s.is_empty() && !s.starts_with('-'))
        .collect();
    assert!(inputs.len() > 5);
    let mut args = vec!["occhat", "safe-name", "--"];
    args.extend(inputs.iter().map(String::as_str));
    let out = ok(&args);
    let got: Vec<&str> = out.split_terminator('\n').collect();
    let want: Vec<String> = inputs
        .iter()
        .map(|s| agentlog::occhat::fs_safe_name(s))
        .collect();
    assert_eq!(got, want);
    // Where the seed maps a name idempotently, the output is the seed's.
    for c in cases["fs_safe_name"].as_array().unwrap() {
        let input = c["input"].as_str().unwrap();
        if let Some(i) = inputs.iter().position(|s| s == input)
            && c["output"] == c["output_twice"]
        {
            assert_eq!(got[i], c["output"].as_str().unwrap(), "{input:?}");
        }
    }
}

#[test]
fn ls_stats_check_take_an_occhat_store() {
    let case = occhat_support::restore("sample_recovery");
    let sessions = case.sessions();
    let rows = json_lines(&ok(&["ls", "--json", p(&sessions)]));
    assert_eq!(rows.len(), 4);
    let oracle = json(&case.oracle.to_string());
    for r in &rows {
        assert_eq!(keys(r), LS_KEYS);
        assert_eq!(r["format"], "occhat");
        assert!(r["subagents"].is_null() && r["title"].is_null());
        let name = r["id"].as_str().unwrap();
        let q = oracle["queries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["query"] == name)
            .unwrap();
        let rel = q["resolve_chat_log"]["path_rel"].as_str().unwrap();
        assert_eq!(
            r["events"], oracle["chat_logs"][rel]["message_count"],
            "{name}"
        );
        assert_eq!(r["model"], "deepseek-chat");
    }
    let s = json(&ok(&["stats", "--json", p(&sessions)]));
    assert_eq!(s["sessions"], 4);
    assert_eq!(s["conversations"], 0);
    let total: u64 = rows.iter().map(|r| r["events"].as_u64().unwrap()).sum();
    assert_eq!(s["messages"], total);
    let roles: u64 = s["messages_by_role"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(roles, total);
    let out = run(&["check", "--json", p(&sessions)]);
    assert_eq!(code(&out), 1);
    let problems = json_lines(&stdout(&out));
    assert_eq!(problems.len(), 3);
    assert!(problems.iter().all(|p| p["problem"] == "incomplete-tail"));
    // Both kinds of store at once.
    let s = json(&ok(&[
        "stats",
        "--json",
        p(&sessions),
        p(&scenario_dir("1.58.2", "chat")),
    ]));
    assert_eq!(
        (s["sessions"].as_u64(), s["conversations"].as_u64()),
        (Some(4), Some(1))
    );
}

// ---------------------------------------------------------------- bad paths

#[test]
fn a_missing_path_is_one_line_and_status_2() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-store");
    let m = p(&missing);
    let cases: Vec<Vec<&str>> = vec![
        vec!["ls", m],
        vec!["events", m],
        vec!["files", m],
        vec!["show", m, "--index", "0"],
        vec!["stats", m],
        vec!["check", m],
        vec!["export", "--jsonl", m],
        vec!["view", m],
    ];
    for c in cases {
        let out = run(&c);
        assert_eq!(code(&out), 2, "{c:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{c:?}: {err}");
        assert!(err.contains(m), "{c:?}: {err}");
        assert!(out.stdout.is_empty(), "{c:?}");
    }
    // One bad PATH among good ones: the good ones are still processed.
    let good = scenario_dir("1.58.2", "chat");
    let out = run(&["ls", "--json", m, p(&good)]);
    assert_eq!(code(&out), 2);
    assert_eq!(json_lines(&stdout(&out)).len(), 1);
}

#[test]
fn a_file_instead_of_a_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    fs::write(&file, b"not a store").unwrap();
    let f = p(&file);
    for c in [
        vec!["ls", f],
        vec!["events", f],
        vec!["files", f],
        vec!["stats", f],
        vec!["check", f],
        vec!["export", "--jsonl", f],
        vec!["view", f],
    ] {
        let out = run(&c);
        assert_eq!(code(&out), 2, "{c:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{c:?}: {err}");
        assert!(err.contains(f), "{c:?}: {err}");
    }
    let out = run_in(Some(tmp.path()), &["occhat", "--sessions-dir", f, "list"]);
    assert_eq!(code(&out), 2);
}

/// How to run the command as a user who cannot read a directory of mode
/// 000: directly when this process cannot, else (as root) through
/// `setpriv` as `nobody` when that works; `None` when neither does.
fn unprivileged(probe: &Path) -> Option<Vec<String>> {
    if fs::read_dir(probe).is_err() {
        return Some(Vec::new());
    }
    let prefix: Vec<String> = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let works = Command::new(&prefix[0])
        .args(&prefix[1..])
        .arg(env!("CARGO_BIN_EXE_agentlog"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(prefix)
}

fn run_as(prefix: &[String], args: &[&str]) -> Output {
    let out = match prefix.split_first() {
        None => bin().args(args).output(),
        Some((first, rest)) => Command::new(first)
            .args(rest)
            .arg(env!("CARGO_BIN_EXE_agentlog"))
            .args(args)
            .stdin(Stdio::null())
            .output(),
    }
    .expect("run agentlog");
    no_panic(&out, args);
    out
}

#[test]
fn an_unreadable_directory() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    // A store whose root cannot be listed, and one holding a conversation
    // that cannot be read beside a sound one.
    let closed = tmp.path().join("closed");
    copy_tree(&scenario_dir("1.58.2", "chat"), &closed.join("a"));
    let store = tmp.path().join("store");
    let sound = scenario_dir("1.58.2", "chat");
    copy_tree(&sound, &store.join(sound.file_name().unwrap()));
    let hidden = store.join("0123456789abcdef0123456789abcdef");
    copy_tree(&scenario_dir("1.58.2", "coding"), &hidden);
    for d in [&closed, &hidden] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o000)).unwrap();
    }
    let Some(prefix) = unprivileged(&closed) else {
        for d in [&closed, &hidden] {
            fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
        }
        eprintln!(
            "note: this user can read a directory of mode 000 (root) and cannot run \
             the command as another user (setpriv): the unreadable-directory \
             statuses are not checked"
        );
        return;
    };
    let outs = [
        run_as(&prefix, &["ls", p(&closed)]),
        run_as(&prefix, &["stats", p(&closed)]),
        run_as(&prefix, &["events", p(&closed.join("a"))]),
        run_as(&prefix, &["check", "--json", p(&store)]),
        run_as(&prefix, &["ls", "--json", p(&store)]),
    ];
    for d in [&closed, &hidden] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let [ls, stats, events, check, ls_store] = outs;
    for o in [&ls, &stats, &events] {
        assert_eq!(code(o), 2);
        let err = stderr(o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(p(&closed)) && err.contains("ermission denied"),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
    // Inside a store: reported, the rest processed.
    assert_eq!(code(&check), 1, "{}", stderr(&check));
    let problems = json_lines(&stdout(&check));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["problem"], "unreadable");
    assert_eq!(problems[0]["path"], p(&hidden));
    assert_eq!(code(&ls_store), 0);
    assert_eq!(json_lines(&stdout(&ls_store)).len(), 1);
    assert!(stderr(&ls_store).contains(p(&hidden)));
}

// ---------------------------------------------------------------- pipes

#[test]
fn a_closed_pipe_ends_quietly() {
    let root = openhands_corpus();
    for args in [
        vec!["export", "--jsonl", p(&root)],
        vec!["events", "--json", p(&scenario_dir("1.58.2", "large"))],
        vec!["view", "--json", p(&scenario_dir("1.58.2", "large"))],
    ] {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        {
            let out = child.stdout.take().unwrap();
            let mut r = BufReader::new(out);
            r.read_line(&mut first).unwrap();
            // Dropping the reader closes the pipe.
        }
        assert!(!first.is_empty());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

// ---------------------------------------------------------------- the sample

/// The README's main command, on the sample store shipped in the
/// repository: it runs, and its totals agree with the other commands.
#[test]
fn the_readme_command_on_the_shipped_sample() {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/store");
    let dirs: Vec<PathBuf> = {
        let mut d: Vec<PathBuf> = fs::read_dir(&store)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        d.sort();
        d
    };
    assert!(!dirs.is_empty());
    let text = ok(&["stats", p(&store)]);
    let first: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(first[2], dirs.len().to_string(), "{text}");
    let s = json(&ok(&["stats", "--json", p(&store)]));
    assert_eq!(s["conversations"], dirs.len() as u64);
    for v in s["files"].as_object().unwrap().values() {
        assert_eq!(v, 0);
    }
    // The events counted are those `export` writes, sub-agents' included.
    let exported = json_lines(&ok(&["export", "--jsonl", p(&store)]));
    assert_eq!(s["events"], exported.len() as u64);
    let subs = exported
        .iter()
        .filter(|l| !l["parent"].is_null())
        .map(|l| l["conversation"].as_str().unwrap())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(s["subagents"], subs.len() as u64);
    // The sample is clean, and its meta.json titles are listed.
    assert_eq!(code(&run(&["check", p(&store)])), 0);
    let rows = json_lines(&ok(&["ls", "--json", p(&store)]));
    assert_eq!(rows.len(), dirs.len());
    for (r, d) in rows.iter().zip(&dirs) {
        assert_eq!(r["path"], p(d));
        if d.join("meta.json").is_file() {
            let meta = json(&fs::read_to_string(d.join("meta.json")).unwrap());
            assert_eq!(r["title"], meta["title"]);
            assert_eq!(r["created"], meta["created_at"]);
        }
    }
}

/// Sub-agent directories that link back to their parent are followed once:
/// every command ends, counts each conversation once and says why.
#[test]
fn subagent_link_loops_end() {
    let tmp = tempfile::tempdir().unwrap();
    let src = scenario_dir("1.58.2", "subagent");
    let dir = tmp.path().join(src.file_name().unwrap());
    copy_tree(&src, &dir);
    let subs = dir.join("subagents");
    for name in [
        "0000000000000000000000000000000a",
        "0000000000000000000000000000000b",
    ] {
        std::os::unix::fs::symlink(&dir, subs.join(name)).unwrap();
    }
    let rows = json_lines(&ok(&["ls", "--json", p(&dir)]));
    assert_eq!(rows[0]["subagents"], 1);
    let out = run(&["stats", "--json", p(&dir)]);
    assert_eq!(code(&out), 0);
    let s = json(&stdout(&out));
    assert_eq!(
        (s["conversations"].as_u64(), s["subagents"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(stderr(&out).contains("met twice"), "{}", stderr(&out));
    assert_eq!(json_lines(&ok(&["export", "--jsonl", p(&dir)])).len(), 22);
    assert_eq!(code(&run(&["check", p(&dir)])), 0);
}

// ------------------------------------------- what the reader cannot read

/// A conversation directory under a store of its own.
fn store_with(tmp: &Path, name: &str, files: &[(&str, &[u8])]) -> (PathBuf, PathBuf) {
    let store = tmp.join(format!("store-{name}"));
    let dir = store.join("0123456789abcdef0123456789abcdef");
    for (rel, bytes) in files {
        let f = dir.join(rel);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(f, bytes).unwrap();
    }
    (store, dir)
}

const STATE: &str = r#"{"id":"01234567-89ab-cdef-0123-456789abcdef","agent":{"kind":"Agent"}}"#;

/// `check` never says "no problems" when there are: each case exits 1
/// with the problem named.
#[test]
fn check_reports_what_it_cannot_read() {
    let tmp = tempfile::tempdir().unwrap();
    let torn = &STATE.as_bytes()[..STATE.len() / 2];
    let problems = |store: &Path| -> Vec<Value> {
        let out = run(&["check", "--json", p(store)]);
        assert_eq!(code(&out), 1, "{}: {}", store.display(), stderr(&out));
        let text = run(&["check", p(store)]);
        assert_eq!(code(&text), 1);
        assert!(!stdout(&text).contains("no problems"), "{}", stdout(&text));
        json_lines(&stdout(&out))
    };
    // The only file is a torn state.
    let (store, dir) = store_with(tmp.path(), "torn", &[("base_state.json", torn)]);
    let got = problems(&store);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["problem"], "bad-state");
    assert_eq!(got[0]["path"], p(&dir.join("base_state.json")));
    for args in [vec!["events", p(&dir)], vec!["ls", p(&store)]] {
        let out = run(&args);
        assert_eq!(code(&out), 1, "{args:?}");
        assert!(
            stderr(&out).contains("base_state.json"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // `events/` a regular file.
    let (store, dir) = store_with(
        tmp.path(),
        "events-file",
        &[("base_state.json", STATE.as_bytes()), ("events", b"x")],
    );
    let got = problems(&store);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["problem"], "unlistable");
    assert_eq!(got[0]["path"], p(&dir));
    assert!(
        got[0]["detail"]
            .as_str()
            .unwrap()
            .contains("not a directory")
    );
    // A sub-agent with a torn state and no events.
    let sub = "subagents/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/base_state.json";
    let (store, dir) = store_with(
        tmp.path(),
        "sub",
        &[("base_state.json", STATE.as_bytes()), (sub, torn)],
    );
    let got = problems(&store);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["problem"], "bad-state");
    assert_eq!(got[0]["path"], p(&dir.join(sub)));
    // A malformed event in a sub-agent nested 70 deep (the walk reads 64).
    let mut rel = String::new();
    let mut files: Vec<(String, Vec<u8>)> = vec![("base_state.json".into(), STATE.into())];
    for i in 1..=70 {
        rel.push_str(&format!("subagents/{i:032x}/"));
        files.push((format!("{rel}base_state.json"), STATE.into()));
    }
    files.push((
        format!("{rel}events/event-00000-abcdef12.json"),
        b"{\"kind\": ".to_vec(),
    ));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    let (store, dir) = store_with(tmp.path(), "deep", &refs);
    let got = problems(&store);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["problem"], "unreadable");
    let path = got[0]["path"].as_str().unwrap();
    assert!(
        path.starts_with(p(&dir)) && path.ends_with(&format!("{:032x}", 65)),
        "{path}"
    );
    assert!(
        got[0]["detail"]
            .as_str()
            .unwrap()
            .contains("deeper than 64"),
        "{got:?}"
    );
    let out = run(&["stats", "--json", p(&store)]);
    assert_eq!(json(&stdout(&out))["unreadable"], 1);
}

/// `view` names the file and the operating system's error of an event it
/// could not read, on one line each, never the parser's "empty input" or
/// Rust's debug text; `files` and `check` call it unreadable.
#[test]
fn an_event_that_cannot_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let ev = r#"{"kind":"MessageEvent","id":"e0","source":"user","timestamp":"2026-01-01T00:00:00","llm_message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#;
    let (store, dir) = store_with(
        tmp.path(),
        "gone",
        &[
            ("base_state.json", STATE.as_bytes()),
            ("events/event-00000-abcdef10.json", ev.as_bytes()),
        ],
    );
    let events = dir.join("events");
    // A link to nothing (a file gone since the listing reads the same), and
    // a FIFO where a file should be.
    std::os::unix::fs::symlink(
        tmp.path().join("nothing"),
        events.join("event-00001-abcdef11.json"),
    )
    .unwrap();
    let fifo = events.join("event-00002-abcdef12.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = run(&["view", p(&dir)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    for bad in ["empty input", "Malformed {", "offset: Some"] {
        assert!(!err.contains(bad), "{err}");
    }
    assert!(
        err.contains("event-00001-abcdef11.json") && err.contains("No such file"),
        "{err}"
    );
    assert!(
        err.contains("event-00002-abcdef12.json") && err.contains("not a regular file"),
        "{err}"
    );
    let rows = json_lines(&ok(&["files", "--json", p(&dir)]));
    let status: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["event", "unreadable", "malformed"]);
    assert!(rows[1]["error"].as_str().unwrap().contains("No such file"));
    let out = run(&["check", "--json", p(&store)]);
    assert_eq!(code(&out), 1);
    let problems: Vec<String> = json_lines(&stdout(&out))
        .iter()
        .map(|r| r["problem"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(problems, ["unreadable", "malformed"]);
    let s = json(&ok(&["stats", "--json", p(&store)]));
    assert_eq!(s["unreadable"], 1);
    assert_eq!(s["files"]["malformed"], 1);
}

/// As a user who cannot open them: eleven event files and a `subagents/`
/// of mode 000 are unreadable with the OS error in `files`, `check` and
/// `stats`; an OC Chat session directory that cannot be listed is reported
/// by `occhat list` and `show`.
#[test]
fn permission_denied_is_unreadable() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = vec![("base_state.json".into(), STATE.into())];
    for i in 0..11 {
        files.push((
            format!("events/event-{i:05}-abcdef{i:02}.json"),
            format!(r#"{{"kind":"MessageEvent","id":"e{i}"}}"#).into_bytes(),
        ));
    }
    files.push((
        "subagents/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/base_state.json".into(),
        STATE.into(),
    ));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    let (store, dir) = store_with(tmp.path(), "perm", &refs);
    let mut closed: Vec<PathBuf> = (0..11)
        .map(|i| dir.join(format!("events/event-{i:05}-abcdef{i:02}.json")))
        .collect();
    closed.push(dir.join("subagents"));
    // An OC Chat store with a session directory that cannot be listed.
    let case = occhat_support::restore("sample_recovery");
    let sessions = case.dir.join("sessions");
    copy_tree(&sessions, &tmp.path().join("sessions"));
    let sessions = tmp.path().join("sessions");
    for e in fs::read_dir(&sessions).unwrap().flatten() {
        fs::set_permissions(e.path(), fs::Permissions::from_mode(0o755)).unwrap();
    }
    let locked = sessions.join("pending-tools");
    closed.push(locked.clone());
    // `unprivileged` probes with a directory it cannot read.
    let probe = tmp.path().join("probe");
    fs::create_dir(&probe).unwrap();
    fs::set_permissions(&probe, fs::Permissions::from_mode(0o000)).unwrap();
    let prefix = unprivileged(&probe);
    fs::set_permissions(&probe, fs::Permissions::from_mode(0o755)).unwrap();
    let Some(prefix) = prefix else {
        eprintln!(
            "note: cannot run the command as a user without permission (setpriv): \
             permission-denied statuses are not checked"
        );
        return;
    };
    // Everything readable to `nobody` but what is closed.
    Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(tmp.path())
        .status()
        .unwrap();
    for c in &closed {
        fs::set_permissions(c, fs::Permissions::from_mode(0o000)).unwrap();
    }
    let s = p(&sessions);
    let outs = [
        run_as(&prefix, &["files", "--json", p(&dir)]),
        run_as(&prefix, &["check", "--json", p(&store)]),
        run_as(&prefix, &["stats", "--json", p(&store)]),
        run_as(&prefix, &["occhat", "--sessions-dir", s, "list", "--json"]),
        run_as(
            &prefix,
            &["occhat", "--sessions-dir", s, "show", "pending-tools"],
        ),
        run_as(
            &prefix,
            &["occhat", "--sessions-dir", s, "show", "no-such-session"],
        ),
        run_as(&prefix, &["check", "--json", s]),
    ];
    for c in &closed {
        fs::set_permissions(c, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let [files, check, stats, list, show, missing, check_oc] = outs;
    let rows = json_lines(&stdout(&files));
    assert_eq!(rows.len(), 11);
    for r in &rows {
        assert_eq!(r["status"], "unreadable", "{r}");
        assert!(
            r["error"].as_str().unwrap().contains("ermission denied"),
            "{r}"
        );
    }
    assert_eq!(code(&check), 1);
    let problems = json_lines(&stdout(&check));
    assert_eq!(problems.len(), 12, "{problems:?}");
    assert!(
        problems
            .iter()
            .all(|p| p["problem"] == "unreadable" || p["problem"] == "unlistable")
    );
    assert!(problems.iter().any(
        |p| p["problem"] == "unlistable" && p["detail"].as_str().unwrap().contains("subagents")
    ));
    let st = json(&stdout(&stats));
    assert_eq!(st["unreadable"], 12, "{st}");
    assert_eq!(st["files"]["malformed"], 0);
    assert!(stderr(&stats).contains("subagents"), "{}", stderr(&stats));
    // OC Chat.
    assert_eq!(code(&list), 0, "{}", stderr(&list));
    assert!(
        stderr(&list).contains(p(&locked)) && stderr(&list).contains("ermission denied"),
        "{}",
        stderr(&list)
    );
    assert_eq!(code(&show), 2, "{}", stderr(&show));
    let err = stderr(&show);
    assert!(
        err.contains("ermission denied") && !err.contains("no meta file"),
        "{err}"
    );
    assert_eq!(code(&missing), 1, "{}", stderr(&missing));
    assert_eq!(code(&check_oc), 1);
    assert!(
        json_lines(&stdout(&check_oc))
            .iter()
            .any(|r| r["problem"] == "occhat-unreadable" && r["path"] == p(&locked))
    );
}

/// A missing OC Chat session is what was asked for missing: status 1.
#[test]
fn a_missing_occhat_session_is_status_1() {
    let case = occhat_support::restore("sample_recovery");
    for args in [
        vec!["show", "no-such-session"],
        vec!["tail", "no-such-session"],
        vec!["export-md", "no-such-session"],
        vec!["recover", "no-such-session", "--choice", "drop"],
    ] {
        let mut a = vec!["occhat", "--sessions-dir", "sessions"];
        a.extend_from_slice(&args);
        let out = run_in(Some(&case.dir), &a);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1);
    }
}
