//! The `agentlog` command, run as a process over the shared corpus and over
//! stores made in temporary directories: every command, the JSON shapes
//! (exact key sets and order), exit codes, a closed pipe, a missing path, a
//! file where a directory is expected, an unreadable directory.

mod asf;
mod asf_writes;
mod bad_paths;
mod check;
mod checkpoint;
mod checkpoint_cmds;
mod events;
mod export;
mod finding;
mod follow;
mod follow_occhat;
mod habits;
#[cfg(feature = "gen")]
mod html;
mod html_browser;
mod incremental;
#[cfg(all(feature = "parquet", feature = "gen"))]
mod incremental_parquet;
mod incremental_verify;
mod ls;
mod occhat;
mod owned_paths;
#[cfg(feature = "parquet")]
mod owned_paths_parquet;
#[cfg(all(feature = "parquet", feature = "gen"))]
mod parquet;
#[cfg(all(feature = "parquet", feature = "gen"))]
mod parquet_engines;
#[cfg(all(feature = "parquet", feature = "gen"))]
mod parquet_runs;
#[cfg(feature = "gen")]
mod people;
mod pipes;
mod sample;
mod search;
mod stats;
mod unreadable;
mod usage;
mod view;

use crate::common;
use crate::common::occhat as occhat_support;

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
    // No store of the user's is read when a test gives no PATH.
    c.env_remove("AGENTLOG_STORE");
    c.env_remove("OPENHANDS_CONVERSATIONS_DIR");
    c.env_remove("OPENHANDS_PERSISTENCE_DIR");
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
    for f in common::openhands::oracle_files() {
        let v = f.parent().unwrap();
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
                dir: v.join(&scenario).join(rel),
                version: v.file_name().unwrap().to_string_lossy().into_owned(),
                subagent: rel.contains("/subagents/"),
                conv: c.clone(),
            });
        }
    }
    assert!(out.len() > 50, "the corpus is there");
    out
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
    common::copy_tree(&chat_src, &chat);
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
    common::copy_tree(&coding_src, &coding);
    fs::write(coding.join("base_state.json"), b"[1, 2, 3]").unwrap();
    fs::write(coding.join("meta.json"), b"{\"id\": ").unwrap();
    let sub_src = scenario_dir("1.58.2", "subagent");
    let subagent = root.join(sub_src.file_name().unwrap());
    common::copy_tree(&sub_src, &subagent);
    Damaged {
        _tmp: tmp,
        root,
        chat,
        coding,
        subagent,
    }
}

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
