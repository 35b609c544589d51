//! Paths the command cannot use: missing, a file for a directory, unreadable.

use super::*;

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

#[test]
fn an_unreadable_directory() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    // A store whose root cannot be listed, and one holding a conversation
    // that cannot be read beside a sound one.
    let closed = tmp.path().join("closed");
    common::copy_tree(&scenario_dir("1.58.2", "chat"), &closed.join("a"));
    let store = tmp.path().join("store");
    let sound = scenario_dir("1.58.2", "chat");
    common::copy_tree(&sound, &store.join(sound.file_name().unwrap()));
    let hidden = store.join("0123456789abcdef0123456789abcdef");
    common::copy_tree(&scenario_dir("1.58.2", "coding"), &hidden);
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

/// Every command that reads the damaged store (and a damaged OC Chat store
/// and ASF file) reports each problem as human lines: no line of standard
/// error carries Rust's `Debug` form of an error, and none panics.
#[test]
fn damaged_inputs_give_human_lines_never_debug_output() {
    let d = damaged();
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    common::copy_tree(
        &common::corpus_dir().join("occhat/sample_recovery/sessions"),
        &sessions,
    );
    fs::write(
        sessions.join("all-good/all-good_2025-04-09--10-07-00_meta.json"),
        b"{\"session_name\": \"all-good\", \"model\": ",
    )
    .unwrap();
    let asf = tmp.path().join("broken.jsonl");
    fs::write(
        &asf,
        b"{\"type\":\"session\",\"format\":\"agentsession/0.10\"\n{not json\n",
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let (root, chat, coding, sub) = (p(&d.root), p(&d.chat), p(&d.coding), p(&d.subagent));
    let (s, a, o) = (p(&sessions), p(&asf), p(&out_dir));
    let cases: Vec<Vec<&str>> = vec![
        vec!["ls", root],
        vec!["stats", root],
        vec!["check", root],
        vec!["export", "--jsonl", root],
        vec!["events", chat],
        vec!["files", chat],
        vec!["view", chat],
        vec!["tree", chat],
        vec!["show", chat, "--index", "11"],
        vec!["events", coding],
        vec!["view", coding],
        vec!["html", coding],
        vec!["view", sub],
        vec!["asf", "convert", root, "-o", o],
        vec!["asf", "convert", s, "-o", o],
        vec!["asf", "check", a],
        vec!["asf", "context", a],
        vec!["ls", s],
        vec!["stats", s],
        vec!["check", s],
        vec!["occhat", "--sessions-dir", s, "list"],
    ];
    for c in cases {
        let out = run(&c);
        no_panic(&out, &c);
        let err = stderr(&out);
        for line in err.lines() {
            for debug in [
                "Some(",
                " { ",
                "kind:",
                "Err(",
                "Ok(",
                "JsonError",
                "Os {",
                "\\\"",
            ] {
                assert!(!line.contains(debug), "{c:?}: Debug output: {line}");
            }
        }
    }
}
