//! `agentlog occhat` and OC Chat stores given to the other commands.

use super::*;

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

/// `occhat migrate --dry-run` reads what the migration reads: a flat store
/// with a meta and a chat log that do not parse is predicted as the run then
/// goes (sessions, orphans, errors, status).
#[test]
fn occhat_migrate_dry_run_predicts_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let chat = root.join("Chat_logs");
    fs::create_dir_all(&chat).unwrap();
    let log = br#"[{"role": "user", "content": "hi"}]"#;
    for name in ["a", "b", "c"] {
        fs::write(
            root.join(format!("{name}.json")),
            format!("{{\"session_name\": \"{name}\"}}"),
        )
        .unwrap();
        fs::write(chat.join(format!("{name}_log.json")), log).unwrap();
    }
    fs::write(root.join("bad.json"), b"{\"session_name\"").unwrap();
    fs::write(chat.join("bad_log.json"), log).unwrap();
    fs::write(chat.join("c_log.json"), b"[{").unwrap();
    fs::write(chat.join("chat_log_1.json"), log).unwrap();
    let dir = p(&root);
    let dry = run(&[
        "occhat",
        "--sessions-dir",
        dir,
        "migrate",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code(&dry), 1, "errors predicted: {}", stderr(&dry));
    let plan = json(&stdout(&dry));
    assert_eq!(keys(&plan), ["sessions", "orphans", "errors"]);
    let text = stdout(&run(&[
        "occhat",
        "--sessions-dir",
        dir,
        "migrate",
        "--dry-run",
    ]));
    assert!(
        text.contains("would migrate 3 sessions and move 3 orphan chat logs to legacy/, 2 errors"),
        "{text}"
    );
    let real = run(&["occhat", "--sessions-dir", dir, "migrate", "--json"]);
    assert_eq!(code(&real), 1);
    let summary = json(&stdout(&real));
    assert_eq!(
        summary["migrated"].as_u64().unwrap() as usize,
        plan["sessions"].as_array().unwrap().len()
    );
    assert_eq!(
        summary["orphans_moved"].as_u64().unwrap() as usize,
        plan["orphans"].as_array().unwrap().len()
    );
    let sorted = |v: &Value| {
        let mut e: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect();
        e.sort();
        e
    };
    assert_eq!(sorted(&summary["errors"]), sorted(&plan["errors"]));
}
