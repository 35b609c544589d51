//! What the reader cannot read, as the commands report it.

use super::*;

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
    let ev = r#"{"kind":"MessageEvent","id":"abcdef10","source":"user","timestamp":"2026-01-01T00:00:00","llm_message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#;
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
    common::copy_tree(&sessions, &tmp.path().join("sessions"));
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
