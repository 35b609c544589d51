//! `agentlog asf check` and `agentlog asf context` as processes, over the
//! reference fixtures: problems and exit codes, the JSON shapes, the chat
//! rendering.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use agentlog::json::OwnedValue;

fn fixture(name: &str) -> String {
    common::data_dir()
        .join("asf/sessions")
        .join(format!("{name}.jsonl"))
        .display()
        .to_string()
}

/// One JSON value per line of a command's output.
fn json_rows(stdout: &[u8]) -> Vec<OwnedValue> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|l| OwnedValue::parse(l.as_bytes()).unwrap())
        .collect()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("runs")
}

/// `agentlog asf convert PATH... -o OUT`.
fn convert_to(paths: &[&std::path::Path], out: &std::path::Path) -> Output {
    let mut args = vec!["asf", "convert"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    run(&args)
}

#[test]
fn check_reports_problems_with_codes_and_exit_status() {
    let ok = run(&[
        "asf",
        "check",
        &fixture("basic"),
        &fixture("branch"),
        &fixture("fork"),
    ]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout),
        "checked 3 ASF session files: no problems\n",
        "what was checked, said on success"
    );

    let bad = run(&[
        "asf",
        "check",
        "--json",
        &fixture("basic"),
        &fixture("duplicate-id"),
        &fixture("truncated"),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let rows = json_rows(&bad.stdout);
    assert_eq!(rows.len(), 2);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["path", "line", "problem", "detail"]);
    assert_eq!(
        rows[0].get("problem").unwrap().as_str(),
        Some("duplicate-id")
    );
    assert_eq!(
        rows[0].get("line").unwrap().as_number().unwrap().as_i64(),
        Some(11)
    );
    assert_eq!(
        rows[1].get("problem").unwrap().as_str(),
        Some("truncated-last-line")
    );

    let dir = tempfile::tempdir().unwrap();
    let refused = dir.path().join("newer.jsonl");
    let text = std::fs::read_to_string(fixture("basic"))
        .unwrap()
        .replace("agentsession/0.10", "agentsession/1.0");
    std::fs::write(&refused, text).unwrap();
    let out = run(&["asf", "check", refused.to_str().unwrap()]);
    // A file the reader cannot read at all: exit 2, the refusal reported.
    assert_eq!(out.status.code(), Some(2));
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.contains(":1: refused: unsupported format \"agentsession/1.0\""),
        "{line}"
    );

    let missing: PathBuf = dir.path().join("absent.jsonl");
    let out = run(&["asf", "check", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// A file that breaks a rule: exit 1, the line and the rule's code; the
/// file is left as it was, byte for byte and in its modification time.
#[test]
fn check_names_the_line_and_rule_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad-records.jsonl");
    std::fs::copy(fixture("bad-records"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let out = run(&["asf", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            ":6: records: records promises dispatch, and call call_1 has an output and no dispatch"
        ),
        "{text}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let good = run(&[
        "asf",
        "check",
        &fixture("runs"),
        &fixture("replay"),
        &fixture("resume"),
    ]);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stdout)
    );

    // Refused beside broken: the worse status wins.
    let not_asf = dir.path().join("not.jsonl");
    std::fs::write(&not_asf, "{\"type\":\"x\"}\n").unwrap();
    let out = run(&[
        "asf",
        "check",
        file.to_str().unwrap(),
        not_asf.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(":1: refused:"), "{text}");
    assert!(text.contains(":6: records:"), "{text}");
}

#[test]
fn context_json_and_chat() {
    let out = run(&["asf", "context", "--json", &fixture("compaction")]);
    assert_eq!(out.status.code(), Some(0));
    let v = OwnedValue::parse(&out.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "leaf",
            "request_hash",
            "settings",
            "items",
            "entries",
            "item_entries"
        ]
    );
    assert_eq!(
        v.get("settings").unwrap().get("model").unwrap().as_str(),
        Some("gpt-5-nano")
    );

    let branch = fixture("branch");
    let at = "sha256:0b9d4d6fb06c6ad39d8ebf31be35bde8f499a5fe45d976c556625edb12f7bf9c";
    let out = run(&["asf", "context", "--chat", "--leaf", at, &branch]);
    assert_eq!(out.status.code(), Some(0));
    let msgs = OwnedValue::parse(&out.stdout).unwrap();
    let want = OwnedValue::parse(
        br#"[{"content":[{"type":"text","text":"Be brief."}],"role":"system"},
             {"content":[{"type":"text","text":"Q"}],"role":"user"},
             {"content":[{"type":"text","text":"A1"}],"role":"assistant"},
             {"content":[{"type":"text","text":"follow-up A"}],"role":"user"},
             {"content":[{"type":"text","text":"A2"}],"role":"assistant"}]"#,
    )
    .unwrap();
    assert_eq!(msgs, want);

    let out = run(&["asf", "context", "--leaf", "sha256:none", &branch]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["asf", "context", "--json", "--chat", &branch]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn convert_writes_verifying_files_and_reports_every_event() {
    let store = common::corpus_dir().join("openhands/1.58.2/subagent");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&[
        "asf",
        "convert",
        store.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--verbose",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let summary = files.pop().unwrap();
    assert_eq!(
        summary,
        format!(
            "converted {n} conversations: {n} session files in {}",
            out_dir.display(),
            n = files.len()
        )
    );
    assert!(
        files.len() >= 2,
        "a conversation and its sub-agent: {files:?}"
    );
    let mut args = vec!["asf", "check"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(run(&args).status.code(), Some(0));
    // The sub-agent names its parent.
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.lines().next().unwrap().contains("\"parent_session\":"))
    );
    // The parent links each sub-agent's session.
    let child = texts
        .iter()
        .find(|t| t.lines().next().unwrap().contains("\"parent_session\":"))
        .unwrap();
    let child_header = OwnedValue::parse(child.lines().next().unwrap().as_bytes()).unwrap();
    let child_id = child_header.get("id").unwrap().as_str().unwrap();
    let parent_id = child_header
        .get("parent_session")
        .unwrap()
        .as_str()
        .unwrap();
    let parent = texts
        .iter()
        .find(|t| {
            t.lines()
                .next()
                .unwrap()
                .contains(&format!("\"id\":\"{parent_id}\""))
        })
        .expect("the parent's file");
    assert!(
        parent.contains(&format!(
            "\"rel\":\"subsession\",\"session\":\"{child_id}\""
        )),
        "no link to {child_id}"
    );

    let out = run(&[
        "asf",
        "convert",
        "--report",
        store.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let rows = json_rows(&out.stdout);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["session", "event", "kind", "outcome", "detail"]);
    for r in &rows {
        let code = r.get("outcome").unwrap().as_str().unwrap();
        assert!(
            ["mapped", "kept-extension", "dropped"].contains(&code),
            "{code}"
        );
    }
    // Re-converting gives the same bytes.
    let again: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert_eq!(again, texts);
    // A missing PATH is a usage-level failure.
    let out = run(&[
        "asf",
        "convert",
        dir.path().join("absent").to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `ls`, `stats` and `check` take ASF session files (one, or a directory
/// of them) as a third format: `ls` lists each with `format: "asf"`,
/// `stats` counts its entries, `check` reports its verify problems (exit 1).
#[test]
fn ls_stats_and_check_recognise_asf_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["basic", "branch"] {
        std::fs::copy(fixture(name), dir.path().join(format!("{name}.jsonl"))).unwrap();
    }
    let d = dir.path().display().to_string();
    let ls = run(&["ls", "--json", &d]);
    assert_eq!(ls.status.code(), Some(0));
    let rows = json_rows(&ls.stdout);
    assert_eq!(rows.len(), 2);
    let basic = std::fs::read(fixture("basic")).unwrap();
    let s = agentlog::asf::Session::read(&basic).unwrap();
    let r = &rows[0];
    assert_eq!(r.get("format").and_then(OwnedValue::as_str), Some("asf"));
    assert_eq!(
        r.get("id").and_then(OwnedValue::as_str),
        Some(s.header().id.as_str())
    );
    assert_eq!(
        r.get("events")
            .and_then(OwnedValue::as_number)
            .and_then(|n| n.as_i64()),
        Some(s.entries().len() as i64)
    );
    let keys: Vec<&str> = match r {
        OwnedValue::Object(m) => m.iter().map(|(k, _)| k).collect(),
        _ => panic!("an object"),
    };
    assert_eq!(keys, super::LS_KEYS);

    let stats = run(&["stats", "--json", &fixture("basic")]);
    assert_eq!(stats.status.code(), Some(0));
    let t = OwnedValue::parse(&stats.stdout).unwrap();
    let n = |k: &str| {
        t.get(k)
            .and_then(OwnedValue::as_number)
            .and_then(|n| n.as_i64())
    };
    assert_eq!(n("sessions"), Some(1));
    assert_eq!(n("events"), Some(s.entries().len() as i64));

    let ok = run(&["check", &d]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    // A broken copy: its problems as `check` lines, exit 1.
    std::fs::copy(fixture("duplicate-id"), dir.path().join("dup.jsonl")).unwrap();
    let bad = run(&["check", "--json", &d]);
    assert_eq!(bad.status.code(), Some(1));
    let rows = json_rows(&bad.stdout);
    assert!(!rows.is_empty());
    for r in &rows {
        assert!(
            r.get("path")
                .and_then(OwnedValue::as_str)
                .is_some_and(|p| p.ends_with("dup.jsonl")),
            "{r:?}"
        );
        assert!(
            r.get("detail")
                .and_then(OwnedValue::as_str)
                .is_some_and(|d| d.starts_with("line ")),
            "{r:?}"
        );
    }
}

#[test]
fn check_without_request_hashes_leaves_out_only_that_comparison() {
    let other = agentlog::asf::hash::sha256_ref(b"a request that was never sent");
    let (text, last) = common::asf::fork_with_request_hash(&other);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fork.jsonl");
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();

    let full = run(&["asf", "check", "--json", file]);
    assert_eq!(full.status.code(), Some(1));
    let rows = json_rows(&full.stdout);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].get("problem").unwrap().as_str(),
        Some("request-hash")
    );
    assert_eq!(
        rows[0].get("line").unwrap().as_number().unwrap().as_i64(),
        Some(last as i64)
    );

    let entries = run(&["asf", "check", "--no-request-hashes", file]);
    assert_eq!(
        entries.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&entries.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&entries.stdout),
        "checked 1 ASF session file: no problems (request hashes not compared)\n"
    );
    // Everything else is still checked.
    let broken = run(&[
        "asf",
        "check",
        "--no-request-hashes",
        &fixture("duplicate-id"),
    ]);
    assert_eq!(broken.status.code(), Some(1));
}

/// `asf convert` prints one summary line (the paths with `--verbose`, JSON
/// objects with `--json`); `--report` prints the report instead of writing
/// the files, and needs no `-o`.
#[test]
fn convert_summarises_and_report_writes_nothing() {
    let store = common::corpus_dir().join("openhands/1.58.2/subagent");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let (s, o) = (store.to_str().unwrap(), out_dir.to_str().unwrap());
    let out = run(&["asf", "convert", "--report", s, "-o", o]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!json_rows(&out.stdout).is_empty());
    assert!(!out_dir.exists(), "--report writes no files, nor OUT_DIR");
    let out = run(&["asf", "convert", "--report", s]);
    assert_eq!(out.status.code(), Some(0), "no -o needed with --report");
    let out = run(&["asf", "convert", s, "-o", o]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let written = std::fs::read_dir(&out_dir).unwrap().count();
    assert_eq!(
        text,
        format!("converted {written} conversations: {written} session files in {o}\n")
    );
    let out = run(&["asf", "convert", s, "-o", o, "--json"]);
    let rows = json_rows(&out.stdout);
    assert_eq!(rows.len(), written);
    for r in &rows {
        let keys: Vec<&str> = r.as_object().unwrap().iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["session", "path"]);
    }
}

/// An OC Chat store with a meta that does not parse: `asf convert` says
/// which file, what is wrong and what to do, on one line (never Rust's
/// `Debug` form), and converts the other sessions.
#[test]
fn convert_of_a_damaged_occhat_store_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    common::copy_tree(
        &common::corpus_dir().join("occhat/sample_recovery/sessions"),
        &sessions,
    );
    let meta = sessions.join("all-good/all-good_2025-04-09--10-07-00_meta.json");
    std::fs::write(&meta, b"{\"session_name\": \"all-good\", \"model\": ").unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&[
        "asf",
        "convert",
        sessions.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(
        line.starts_with("error: ") && line.contains(meta.to_str().unwrap()),
        "{line}"
    );
    for debug in ["Skipped {", "Json {", "JsonError", "kind:", "Some("] {
        assert!(!line.contains(debug), "Debug output: {line}");
    }
    assert!(line.contains("agentlog check"), "what to do: {line}");
    assert!(
        std::fs::read_dir(&out_dir).unwrap().count() > 0,
        "the others converted"
    );
}

/// `asf check DIR` checks the directory's own ASF session files; a
/// directory without one is nothing found (status 1, one line).
#[test]
fn check_takes_a_directory_of_session_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["basic", "branch"] {
        std::fs::copy(fixture(name), dir.path().join(format!("{name}.jsonl"))).unwrap();
    }
    let out = run(&["asf", "check", dir.path().to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "checked 2 ASF session files: no problems\n"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = run(&["asf", "check", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no ASF session file here"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// `asf context --leaf` takes the 12-digit prefixes its listing prints.
#[test]
fn context_leaf_takes_the_prefixes_it_prints() {
    let listing = run(&["asf", "context", &fixture("branch")]);
    assert_eq!(listing.status.code(), Some(0));
    let text = String::from_utf8(listing.stdout).unwrap();
    let short = text
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .next()
        .expect("an item line");
    assert_eq!(short.len(), 12, "{short}");
    for given in [short.clone(), format!("sha256:{short}")] {
        let out = run(&[
            "asf",
            "context",
            &fixture("branch"),
            "--leaf",
            &given,
            "--json",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{given}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = &json_rows(&out.stdout)[0];
        let leaf = v.get("leaf").unwrap().as_str().unwrap();
        assert!(leaf.starts_with(&format!("sha256:{short}")), "{leaf}");
    }
    let out = run(&[
        "asf",
        "context",
        &fixture("branch"),
        "--leaf",
        "ffffffffffff",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

/// Two PATHs holding the same conversation (a copy, here edited): `asf
/// convert` converts the first and names the second on standard error,
/// exit status 1; the file is the first one's, never replaced by the
/// second's without a word. Its sub-agents, the same ids again, likewise.
#[test]
fn convert_keeps_one_file_per_session_id_and_names_the_repeats() {
    let store = common::corpus_dir().join("openhands/1.58.2/subagent");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    common::copy_tree(&store, &a);
    common::copy_tree(&store, &b);
    // The copy differs: its conversations' last events are gone.
    let convs: Vec<PathBuf> = walkdir(&b);
    assert!(
        convs.len() >= 2,
        "a conversation and a sub-agent: {convs:?}"
    );
    for c in &convs {
        let events = c.join("events");
        let mut names: Vec<_> = std::fs::read_dir(&events)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        std::fs::remove_file(names.last().unwrap()).unwrap();
    }
    let only_a = dir.path().join("only-a");
    let o = convert_to(&[&a], &only_a);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out_dir = dir.path().join("out");
    let o = convert_to(&[&a, &b], &out_dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let stderr = String::from_utf8(o.stderr).unwrap();
    for c in &convs {
        assert!(
            stderr.contains(&format!("{}: not converted: its session id", c.display())),
            "{} named: {stderr}",
            c.display()
        );
    }
    let n = convs.len();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!(
            "converted {n} conversations: {n} session files in {}; {n} not converted again \
             (a session id converted earlier in this run)\n",
            out_dir.display()
        )
    );
    let files = |d: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        files(&out_dir),
        files(&only_a),
        "the first PATH's files, whole"
    );
}

/// Every conversation directory under `store` (sub-agents included).
fn walkdir(store: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![store.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.join("base_state.json").is_file() {
            out.push(d.clone());
        }
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "events") {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The same OC Chat sessions directory under two PATHs: each session is
/// converted once, from the first; the second's are named and counted, and
/// the files are those of the first PATH alone.
#[test]
fn convert_names_an_occhat_session_met_again() {
    let sessions = common::corpus_dir().join("occhat/sample_basic/sessions");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    common::copy_tree(&sessions, &a);
    common::copy_tree(&sessions, &b);
    let (only_a, out_dir) = (dir.path().join("only-a"), dir.path().join("out"));
    let o = convert_to(&[&a], &only_a);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let n = std::fs::read_dir(&only_a).unwrap().count();
    assert!(n >= 2, "the sample holds sessions");
    let o = convert_to(&[&a, &b], &out_dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        stderr.matches("not converted: its session id").count(),
        n,
        "{stderr}"
    );
    assert!(stderr.contains(&b.display().to_string()), "{stderr}");
    assert!(String::from_utf8(o.stdout).unwrap().ends_with(&format!(
        "; {n} not converted again (a session id converted earlier in this run)\n"
    )));
    for e in std::fs::read_dir(&only_a).unwrap() {
        let e = e.unwrap();
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            std::fs::read(out_dir.join(e.file_name())).unwrap()
        );
    }
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), n);
}
