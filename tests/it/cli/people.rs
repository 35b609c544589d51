//! The `agentlog` command as a person at a terminal and a script use it:
//! the exit-status table (every case), what is said when nothing is found
//! (an empty directory, a directory of neither format, an OC Chat store in
//! the flat layout), IDs by unique prefix and ambiguous prefixes, `tree`,
//! `export` without `--jsonl` and `-o -`, overlapping PATHs, and golden
//! files of each command's human output at 100 columns, on the shared
//! corpus and on a generated store of thousands of conversations.
//!
//! Goldens live in `tests/data/golden/cli/`; `AGENTLOG_BLESS=1` rewrites
//! them after a reviewed change. Paths in them are written `<corpus>` (the
//! shared corpus) and `<tmp>` (a temporary directory).
#![cfg(all(feature = "cli", feature = "gen"))]

use crate::common;
use crate::common::copy_tree;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use agentlog::synth::{GenConfig, SdkStyle, write_store};
use serde_json::Value;

fn run_with(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
    c.stdin(Stdio::null())
        .env_remove("OC_CHAT_SESSIONS_DIR")
        .env("TZ", "UTC")
        .env("COLUMNS", "100")
        .args(args);
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let out = c.output().expect("run agentlog");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked"),
        "agentlog {args:?} panicked: {err}"
    );
    out
}

fn run(args: &[&str]) -> Output {
    run_with(None, args)
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("UTF-8 errors")
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn corpus() -> PathBuf {
    common::corpus_dir()
}

fn scenario(version: &str, name: &str) -> PathBuf {
    let dir = corpus().join("openhands").join(version).join(name);
    let mut convs: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("scenario")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    convs.sort();
    convs.into_iter().next().expect("a conversation")
}

/// A copy of the 1.58.2 `chat` conversation whose event 3 is malformed.
fn damaged() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = scenario("1.58.2", "chat");
    let conv = tmp.path().join(src.file_name().unwrap());
    copy_tree(&src, &conv);
    let ev = fs::read_dir(conv.join("events"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("event-00003-"))
        .unwrap();
    fs::write(ev, b"{not json").unwrap();
    (tmp, conv)
}

/// One line on standard error, starting as clap's errors start.
fn one_error(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

// ------------------------------------------------------- nothing found

/// The commands that take PATHs, with the flags they need.
const PATH_COMMANDS: &[&[&str]] = &[
    &["ls"],
    &["ls", "--json"],
    &["stats"],
    &["stats", "--json"],
    &["check"],
    &["check", "--json"],
    &["export"],
    &["events"],
    &["files"],
    &["show", "--index", "0"],
    &["view"],
    &["tree"],
];

#[test]
fn nothing_found_is_status_1_and_one_line_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    // A directory of neither format: files that are not conversations.
    let other = tmp.path().join("etc-like");
    fs::create_dir_all(other.join("sub")).unwrap();
    fs::write(other.join("hosts"), b"127.0.0.1 localhost\n").unwrap();
    fs::write(other.join("sub").join("x.json"), b"{\"a\": 1}").unwrap();
    for dir in [&empty, &other] {
        for cmd in PATH_COMMANDS {
            let mut args: Vec<&str> = cmd.to_vec();
            args.insert(1, p(dir));
            let out = run(&args);
            assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
            let err = one_error(&out);
            assert!(err.contains(p(dir)), "{args:?}: {err}");
            assert!(err.contains("no OpenHands conversation"), "{args:?}: {err}");
            if !args.contains(&"--json") {
                assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
            }
        }
        let out = run(&["occhat", "--sessions-dir", p(dir), "list"]);
        assert_eq!(code(&out), 1);
        assert!(one_error(&out).contains("no OC Chat sessions"));
    }
    // With a PATH that has something, the empty one still makes it 1.
    let chat = scenario("1.58.2", "chat");
    let out = run(&["ls", p(&empty), p(&chat)]);
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out).lines().count(), 2);
}

#[test]
fn a_flat_layout_oc_chat_store_points_at_migrate() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("sessions");
    copy_tree(&corpus().join("occhat/sample_legacy/sessions"), &store);
    let before = listing(&store);
    for args in [
        vec!["ls", p(&store)],
        vec!["check", p(&store)],
        vec!["stats", p(&store)],
        vec!["occhat", "--sessions-dir", p(&store), "list"],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 1, "{args:?}");
        let err = one_error(&out);
        assert!(
            err.contains("flat layout") && err.contains("migrate"),
            "{err}"
        );
    }
    // Flat metas alone (no Chat_logs/) are recognised too.
    fs::remove_dir_all(store.join("Chat_logs")).unwrap();
    let out = run(&["ls", p(&store)]);
    assert!(one_error(&out).contains("2 flat metas"));
    copy_tree(
        &corpus().join("occhat/sample_legacy/sessions/Chat_logs"),
        &store.join("Chat_logs"),
    );
    // The dry run says what would move and moves nothing.
    let out = run(&[
        "occhat",
        "migrate",
        "--sessions-dir",
        p(&store),
        "--dry-run",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.ends_with(
            "would migrate 2 sessions and move 1 orphan chat log to legacy/ \
             (dry run: nothing written)\n"
        ),
        "{text}"
    );
    assert_eq!(listing(&store), before);
    let json: Value = serde_json::from_slice(
        &run(&[
            "occhat",
            "--sessions-dir",
            p(&store),
            "migrate",
            "--dry-run",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(json["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(json["orphans"].as_array().unwrap().len(), 1);
    assert_eq!(listing(&store), before);
    // Migrated, it lists.
    let out = run(&["occhat", "--sessions-dir", p(&store), "migrate"]);
    assert_eq!(code(&out), 0);
    assert_eq!(code(&run(&["ls", p(&store)])), 0);
}

/// Every path under `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
            out.push(e.path());
        }
    }
    out.sort();
    out
}

#[test]
fn occhat_list_of_an_openhands_store_says_what_it_is() {
    let store = corpus().join("openhands/1.58.2/chat");
    let out = run(&["occhat", "--sessions-dir", p(&store), "list"]);
    assert_eq!(code(&out), 1);
    assert!(one_error(&out).contains("an OpenHands store (1 conversation)"));
}

// ------------------------------------------------------- exit statuses

#[test]
fn exit_status_table_in_every_help() {
    let top = stdout(&run(&["--help"]));
    let table = &top[top.find("Exit status (every command):").expect("table")..];
    let subs = [
        vec!["ls"],
        vec!["events"],
        vec!["files"],
        vec!["show"],
        vec!["stats"],
        vec!["check"],
        vec!["export"],
        vec!["follow"],
        vec!["view"],
        vec!["tree"],
        vec!["occhat"],
        vec!["occhat", "list"],
        vec!["occhat", "show"],
        vec!["occhat", "tail"],
        vec!["occhat", "recover"],
        vec!["occhat", "export-md"],
        vec!["occhat", "migrate"],
        vec!["occhat", "safe-name"],
        vec!["asf"],
        vec!["asf", "check"],
    ];
    for s in subs {
        let mut args = s.clone();
        args.push("--help");
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}");
        assert!(stdout(&out).ends_with(table), "{args:?}: {}", stdout(&out));
    }
}

#[test]
fn exit_statuses_follow_the_table() {
    let chat = scenario("1.58.2", "chat");
    let fork = scenario("1.58.2", "fork");
    let (_tmp, bad) = damaged();
    let recovery = corpus().join("occhat/sample_recovery/sessions");
    // 0: success.
    for args in [
        vec!["ls", p(&chat)],
        vec!["check", p(&chat)],
        vec!["show", p(&chat), "--index", "0"],
        vec!["tree", p(&fork)],
        vec!["occhat", "--sessions-dir", p(&recovery), "tail", "all-good"],
        vec!["occhat", "safe-name", "a/b"],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    // 1: problems found, or what was asked for is not there.
    for args in [
        vec!["check", p(&bad)],
        vec!["events", p(&bad)],
        vec!["show", p(&bad), "--index", "3"],
        vec!["show", p(&bad), "--index", "3", "--raw"],
        vec!["show", p(&chat), "--index", "999"],
        vec!["show", p(&chat), "--id", "nosuch"],
        vec!["view", p(&chat), "--branch", "nosuch"],
        vec!["occhat", "--sessions-dir", p(&recovery), "show", "nosuch"],
        vec![
            "occhat",
            "--sessions-dir",
            p(&recovery),
            "tail",
            "orphan-user",
        ],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        // The problem is said once.
        let err = stderr(&out);
        assert!(err.lines().count() <= 1, "{args:?}: {err}");
    }
    // 2: usage errors and paths that cannot be read.
    let missing = chat.join("no-such-file");
    for args in [
        vec!["ls", "--no-such-flag", p(&chat)],
        vec!["ls", p(&missing)],
        vec!["view", p(&chat), "--sdk-version", "1.99.0"],
        vec!["view", p(&chat), "--sdk-version", "banana"],
        vec!["occhat", "--sessions-dir", p(&recovery), "safe-name", "x"],
        vec!["occhat", "safe-name", "--sessions-dir", p(&recovery), "x"],
        vec!["events", p(&corpus().join("openhands"))],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: "),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let err = stderr(&run(&["view", p(&chat), "--sdk-version", "1.99.0"]));
    assert!(
        err.contains("not a release") && err.contains("1.58.2"),
        "{err}"
    );
}

#[test]
fn check_says_the_path_once() {
    let (_tmp, bad) = damaged();
    let out = run(&["check", p(&bad)]);
    for line in stdout(&out).lines().filter(|l| l.contains(": malformed: ")) {
        let (path, detail) = line.split_once(": malformed: ").unwrap();
        assert!(!detail.contains(path), "{line}");
    }
    let text = stdout(&out);
    assert!(
        text.ends_with("checked 1 conversation (0 sub-agents): 1 problem\n"),
        "{text}"
    );
}

// ------------------------------------------------------------- prefixes

/// The events' IDs of a conversation, from `events --json`.
fn event_ids(conv: &Path) -> Vec<String> {
    stdout(&run(&["events", "--json", p(conv)]))
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn ids_by_unique_prefix_and_ambiguous_prefixes_listed() {
    let conv = scenario("1.58.2", "coding");
    let ids = event_ids(&conv);
    let full = &ids[5];
    let whole = run(&["show", p(&conv), "--id", full]);
    assert_eq!(code(&whole), 0);
    let short = run(&["show", p(&conv), "--id", &full[..8]]);
    assert_eq!(code(&short), 0);
    assert_eq!(whole.stdout, short.stdout);
    let upper = run(&["show", p(&conv), "--id", &full[..8].to_uppercase()]);
    assert_eq!(upper.stdout, whole.stdout);
    // A one-character prefix shared by several IDs.
    let first = ids
        .iter()
        .map(|i| &i[..1])
        .find(|c| ids.iter().filter(|i| i.starts_with(c)).count() > 1)
        .unwrap();
    let out = run(&["show", p(&conv), "--id", first]);
    assert_eq!(code(&out), 1);
    let err = one_error(&out);
    let named: Vec<&String> = ids.iter().filter(|i| i.starts_with(first)).collect();
    assert!(err.contains(&format!("names {}", named.len())), "{err}");
    for id in named.iter().take(10) {
        assert!(err.contains(id.as_str()), "{err}");
    }
    // view --branch by prefix is view --branch by the whole ID.
    let fork = scenario("1.58.2", "fork");
    let tree: Value = serde_json::from_slice(&run(&["tree", "--json", p(&fork)]).stdout).unwrap();
    let other = tree["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["active"] == false)
        .expect("an inactive branch");
    let tip = other["tip_id"].as_str().unwrap();
    let a = run(&["view", p(&fork), "--branch", tip, "--event-ids"]);
    let b = run(&["view", p(&fork), "--branch", &tip[..8], "--event-ids"]);
    assert_eq!(code(&a), 0);
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, run(&["view", p(&fork), "--event-ids"]).stdout);
}

// ----------------------------------------------------------------- tree

#[test]
fn tree_shows_branches_head_forks_and_subagents() {
    let fork = scenario("1.58.2", "fork");
    let out = run(&["tree", "--json", p(&fork)]);
    assert_eq!(code(&out), 0);
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "path",
            "events",
            "leaf_event_id",
            "head",
            "branches",
            "forks",
            "subagents"
        ]
    );
    let branches = t["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 2);
    let active: Vec<&Value> = branches.iter().filter(|b| b["active"] == true).collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["tip_id"], t["leaf_event_id"]);
    assert_eq!(t["head"]["id"], t["leaf_event_id"]);
    assert_eq!(t["head"]["state"], "event");
    // The active branch is the view's.
    let view = stdout(&run(&["view", "--event-ids", p(&fork)]));
    assert_eq!(view.lines().last(), t["leaf_event_id"].as_str());
    let forks = t["forks"].as_array().unwrap();
    assert_eq!(forks.len(), 1);
    assert_eq!(forks[0]["children"].as_array().unwrap().len(), 2);
    assert_eq!(active[0]["fork_index"], forks[0]["index"]);
    // Events in a branch: the fork's index + 1 shared, the rest its own.
    let sum: u64 = branches.iter().map(|b| b["events"].as_u64().unwrap()).sum();
    let shared = forks[0]["index"].as_u64().unwrap() + 1;
    assert_eq!(sum - shared, t["events"].as_u64().unwrap());

    let sub = scenario("1.58.2", "subagent");
    let t: Value = serde_json::from_slice(&run(&["tree", "--json", p(&sub)]).stdout).unwrap();
    let subs = t["subagents"].as_array().unwrap();
    assert_eq!(subs.len(), 1);
    assert!(subs[0]["path"].as_str().unwrap().starts_with(p(&sub)));
    assert_eq!(t["branches"].as_array().unwrap().len(), 1);
}

// ---------------------------------------------------- export, -o -, overlaps

#[test]
fn export_writes_json_lines_without_the_flag_and_dash_is_stdout() {
    let store = corpus().join("openhands/1.58.2/fork");
    let with = run(&["export", "--jsonl", p(&store)]);
    let without = run(&["export", p(&store)]);
    assert_eq!(code(&without), 0);
    assert_eq!(with.stdout, without.stdout);
    let dash = run(&["export", p(&store), "-o", "-"]);
    assert_eq!(dash.stdout, without.stdout);
    // export-md -o - is standard output too, and writes no file named `-`.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(
        &corpus().join("occhat/sample_basic/sessions"),
        &tmp.path().join("s"),
    );
    let out = run_with(
        Some(tmp.path()),
        &[
            "occhat",
            "--sessions-dir",
            "s",
            "export-md",
            "weekly-report",
            "-o",
            "-",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).starts_with('#'), "{}", stdout(&out));
    assert!(!tmp.path().join("-").exists());
}

#[test]
fn a_store_and_a_conversation_inside_it_count_once() {
    let store = corpus().join("openhands/1.58.2");
    let conv = scenario("1.58.2", "subagent");
    let sub = fs::read_dir(conv.join("subagents"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let alone = run(&["stats", "--json", p(&store)]);
    for extra in [&conv, &sub] {
        let both = run(&["stats", "--json", p(&store), p(extra)]);
        assert_eq!(alone.stdout, both.stdout, "{}", extra.display());
        let both = run(&["stats", "--json", p(extra), p(&store)]);
        assert_eq!(alone.stdout, both.stdout, "{}", extra.display());
    }
    let ls_alone = stdout(&run(&["ls", p(&store)]));
    let ls_both = stdout(&run(&["ls", p(&store), p(&conv), p(&store)]));
    assert_eq!(ls_alone.lines().count(), ls_both.lines().count());
}

// -------------------------------------------------------------- goldens

/// Compares `text` with the golden file `name` (rewritten when
/// `AGENTLOG_BLESS` is set), paths made portable first.
fn golden(name: &str, text: &str, tmp: Option<&Path>) {
    let mut text = text.replace(p(&corpus()), "<corpus>");
    if let Some(t) = tmp {
        text = text.replace(p(t), "<tmp>");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/cli")
        .join(name);
    if std::env::var_os("AGENTLOG_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &text).unwrap();
    }
    let want = fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{}: missing (AGENTLOG_BLESS=1 writes it)", path.display()));
    assert!(
        want == text,
        "{name}: the human output changed; review it, then AGENTLOG_BLESS=1\n--- got\n{text}"
    );
}

/// Human output that must fit 100 columns.
fn fits(name: &str, text: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{name}: {} columns: {l}",
            l.chars().count()
        );
    }
}

#[test]
fn goldens_of_the_human_output_on_the_corpus() {
    let oh = corpus().join("openhands");
    let coding = scenario("1.58.2", "coding");
    let fork = scenario("1.58.2", "fork");
    let sub = scenario("1.58.2", "subagent");
    let recovery = corpus().join("occhat/sample_recovery/sessions");
    let cases: Vec<(&str, Vec<&str>, bool)> = vec![
        ("ls.txt", vec!["ls", p(&oh)], true),
        ("stats.txt", vec!["stats", p(&oh)], true),
        ("check.txt", vec!["check", p(&oh)], true),
        ("events_coding.txt", vec!["events", p(&coding)], true),
        ("events_fork.txt", vec!["events", p(&fork)], true),
        ("files_fork.txt", vec!["files", p(&fork)], true),
        ("tree_fork.txt", vec!["tree", p(&fork)], true),
        ("tree_subagent.txt", vec!["tree", p(&sub)], false),
        ("view_coding.txt", vec!["view", p(&coding)], false),
        (
            "show_fork.txt",
            vec!["show", p(&fork), "--index", "4"],
            false,
        ),
        (
            "occhat_show.txt",
            vec![
                "occhat",
                "--sessions-dir",
                p(&recovery),
                "show",
                "pending-tools",
            ],
            false,
        ),
        ("stats_occhat.txt", vec!["stats", p(&recovery)], true),
    ];
    for (name, args, must_fit) in cases {
        let out = run(&args);
        assert!(code(&out) <= 1, "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        if must_fit {
            fits(name, &text);
        }
        golden(name, &text, None);
    }
    // view collapses the system prompt; --full does not.
    let short = stdout(&run(&["view", p(&coding)]));
    let full = stdout(&run(&["view", "--full", p(&coding)]));
    assert!(short.contains("--full shows them"));
    assert!(!full.contains("--full shows them"));
    assert!(full.lines().count() > short.lines().count() + 100);
}

#[test]
fn goldens_on_a_generated_store_of_thousands() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    fs::create_dir(&store).unwrap();
    write_store(
        &store,
        &GenConfig {
            conversations: 2000,
            events_per_conversation: 12,
            seed: 13,
            style: SdkStyle::Mixed,
            content_scale: 0.05,
            length_spread: 0.5,
            threads: 2,
            ..GenConfig::default()
        },
    )
    .unwrap();
    let ls = stdout(&run(&["ls", p(&store)]));
    assert_eq!(ls.lines().count(), 2001);
    fits("ls", &ls);
    // IDs shortened, still unique.
    let ids: std::collections::BTreeSet<&str> = ls
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(ids.len(), 2000);
    let head: Vec<&str> = ls.lines().take(20).collect();
    let tail: Vec<&str> = ls.lines().skip(1990).collect();
    golden(
        "gen_ls_head_tail.txt",
        &format!("{}\n…\n{}\n", head.join("\n"), tail.join("\n")),
        Some(tmp.path()),
    );
    for (name, args) in [
        ("gen_stats.txt", vec!["stats", p(&store)]),
        ("gen_check.txt", vec!["check", p(&store)]),
    ] {
        let out = run(&args);
        let text = stdout(&out);
        fits(name, &text);
        golden(name, &text, Some(tmp.path()));
    }
    // A conversation of it, by a path and by events: the PATH column
    // (FORMAT ID EVENTS SUB date time MODEL PATH, then TITLE).
    let first = ls
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(7)
        .unwrap();
    let conv = store.join(
        fs::read_dir(&store)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(first))
            .unwrap(),
    );
    let events = stdout(&run(&["events", p(&conv)]));
    fits("gen events", &events);
    golden("gen_events.txt", &events, Some(tmp.path()));
}

/// Sets the modification time of every file and directory under `dir`.
fn set_mtimes(dir: &Path, t: std::time::SystemTime) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            set_mtimes(&e.path(), t);
        } else {
            let f = fs::File::options().write(true).open(e.path()).unwrap();
            f.set_modified(t).unwrap();
        }
    }
}

#[test]
fn occhat_list_is_a_table_that_fits() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("sessions");
    copy_tree(&corpus().join("occhat/sample_recovery/sessions"), &store);
    // `list` shows each chat log's modification time: fixed, so the
    // output is known (2025-04-09 10:00:00 UTC).
    set_mtimes(
        &store,
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_744_192_800),
    );
    let out = run(&["occhat", "--sessions-dir", p(&store), "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    fits("occhat_list.txt", &text);
    golden("occhat_list.txt", &text, Some(tmp.path()));
    // The JSON form is OC Chat's, whole.
    let out = run(&["occhat", "--sessions-dir", p(&store), "list", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v.as_array().unwrap()[0];
    assert!(first["filepath"].as_str().unwrap().starts_with(p(&store)));
}

/// Nothing found with `--checkpoint`, by `asf convert` and by `follow`:
/// on a first run (no checkpoint yet) an empty PATH is a problem and no
/// checkpoint is written; once a store has a checkpoint, its emptying is
/// reported as removals (status 0); `follow` warns and goes on following
/// (a directory may fill), except for a flat-layout OC Chat store, which
/// never fills until it is migrated.
#[test]
fn nothing_found_with_a_checkpoint_in_asf_convert_and_follow() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let cp = tmp.path().join("cp");
    for cmd in ["ls", "check", "export"] {
        let out = run(&[cmd, "--checkpoint", p(&cp), p(&empty)]);
        assert_eq!(code(&out), 1, "{cmd}: {}", stderr(&out));
        assert!(one_error(&out).contains("no OpenHands conversation"));
        assert!(!cp.exists(), "{cmd}: no checkpoint of nothing");
    }
    let asf_out = tmp.path().join("asf");
    let out = run(&["asf", "convert", p(&empty), "-o", p(&asf_out)]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(one_error(&out).contains(p(&empty)));
    // A store that had a conversation and lost it.
    let store = tmp.path().join("store");
    let chat = scenario("1.58.2", "chat");
    let conv = store.join(chat.file_name().unwrap());
    copy_tree(&chat, &conv);
    let out = run(&["export", "--checkpoint", p(&cp), p(&store)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    fs::remove_dir_all(&conv).unwrap();
    let out = run(&["export", "--checkpoint", p(&cp), p(&store)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\"record\":\"removed\""), "{text}");
    // follow: a warning naming the path, then it follows.
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args(["follow", "--poll", "0.1", p(&empty)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr_pipe = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut line = String::new();
        let _ = std::io::BufReader::new(stderr_pipe).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(60));
    let still_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    let line = line.expect("a warning within a minute");
    assert!(
        line.starts_with("warning: ") && line.contains(p(&empty)) && line.contains("following"),
        "{line}"
    );
    assert!(still_running, "follow goes on after the warning");
    // A flat-layout OC Chat store: status 1 at once, with or without
    // --checkpoint (with it the PATH resolves as a sessions directory;
    // following it would wait forever).
    let legacy = tmp.path().join("legacy");
    copy_tree(&corpus().join("occhat/sample_legacy/sessions"), &legacy);
    let legacy_cp = tmp.path().join("legacy-cp");
    for args in [
        vec!["follow", "--poll", "0.1", p(&legacy)],
        vec![
            "follow",
            "--poll",
            "0.1",
            "--checkpoint",
            p(&legacy_cp),
            p(&legacy),
        ],
    ] {
        let (status, err) = exits_within_a_minute(&args);
        assert_eq!(status, Some(1), "{args:?}: {err}");
        assert!(err.contains("migrate"), "{err}");
        assert!(!legacy_cp.exists(), "no checkpoint of nothing");
    }
}

/// Runs the command; its exit status (`None` when it was still running
/// after a minute, then killed) and its standard error.
fn exits_within_a_minute(args: &[&str]) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = pipe.read_to_string(&mut err);
        err
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (status, reader.join().unwrap())
}
