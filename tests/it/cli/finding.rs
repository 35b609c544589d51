//! Finding things without their whole path (issue 35): a conversation by
//! its ID or an ID prefix under `--store`, the default store
//! (`$AGENTLOG_STORE`, the OpenHands CLI's `~/.openhands/conversations`),
//! ambiguous prefixes listed, `show` on an event file, `ls --sort --since
//! --model`, OC Chat stores found in a folder of them.

use super::*;

/// A store of three copies of the corpus `chat` conversation, two of them
/// with IDs sharing the prefix `abcdef0`.
struct Three {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

const A: &str = "abcdef01000000000000000000000000";
const B: &str = "abcdef02000000000000000000000000";
const C: &str = "3e806943000000000000000000000000";

fn three() -> Three {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let src = scenario_dir("1.58.2", "chat");
    for id in [A, B, C] {
        common::copy_tree(&src, &root.join(id));
        set_state(&root.join(id), id, None);
    }
    Three { _tmp: tmp, root }
}

/// Gives the conversation in `dir` the ID `id` (and the model, when given)
/// in its `base_state.json`.
fn set_state(dir: &Path, id: &str, model: Option<&str>) {
    let state = dir.join("base_state.json");
    let mut v: Value = json(&fs::read_to_string(&state).unwrap());
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &id[..8],
        &id[8..12],
        &id[12..16],
        &id[16..20],
        &id[20..]
    );
    v["id"] = Value::String(uuid);
    if let Some(m) = model {
        v["agent"]["llm"]["model"] = Value::String(m.into());
    }
    fs::write(&state, v.to_string()).unwrap();
}

/// The command with no store variables of the user's.
fn clean() -> Command {
    let mut c = bin();
    for v in [
        "AGENTLOG_STORE",
        "OPENHANDS_CONVERSATIONS_DIR",
        "OPENHANDS_PERSISTENCE_DIR",
    ] {
        c.env_remove(v);
    }
    c.env("TZ", "UTC");
    c
}

fn out_of(mut c: Command, args: &[&str]) -> Output {
    let out = c.args(args).output().unwrap();
    no_panic(&out, args);
    out
}

#[test]
fn a_conversation_by_id_or_prefix_under_store() {
    let s = three();
    let store = p(&s.root);
    let whole = stdout(&run(&["events", p(&s.root.join(C)), "--json"]));
    assert!(!whole.is_empty());
    // A prefix, the whole ID, the ID as a UUID, in capitals: the same.
    for given in [
        "3e806943",
        C,
        "3E806943-0000-0000-0000-000000000000",
        "3e8069",
    ] {
        let out = run(&["events", given, "--store", store, "--json"]);
        assert_eq!(code(&out), 0, "{given}: {}", stderr(&out));
        assert_eq!(stdout(&out), whole, "{given}");
    }
    // Every one-conversation command takes it.
    for cmd in [
        vec!["files", "3e80"],
        vec!["show", "3e80", "--index", "0"],
        vec!["view", "3e80"],
        vec!["tree", "3e80"],
        vec!["html", "3e80"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--store", store]);
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    // An ambiguous prefix is an error listing the candidates (1).
    let out = run(&["events", "abcdef0", "--store", store]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains(A) && err.contains(B), "{err}");
    assert!(err.contains("names 2 conversations"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // No such ID (1), a store that is not there (2).
    let out = run(&["events", "ffff", "--store", store]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no conversation with ID ffff"));
    let out = run(&["events", "3e80", "--store", "/nonexistent/store"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("/nonexistent/store"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_default_store_when_no_path_is_given() {
    let s = three();
    let want = stdout(&run(&["ls", "--json", p(&s.root)]));
    assert_eq!(json_lines(&want).len(), 3);
    // $AGENTLOG_STORE.
    let mut c = clean();
    c.env("AGENTLOG_STORE", &s.root);
    let out = out_of(c, &["ls", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), want);
    let mut c = clean();
    c.env("AGENTLOG_STORE", &s.root);
    let out = out_of(c, &["events", "3e80", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The OpenHands CLI's store: ~/.openhands/conversations.
    let home = tempfile::tempdir().unwrap();
    let conv = home.path().join(".openhands/conversations");
    common::copy_tree(&s.root, &conv);
    let mut c = clean();
    c.env("HOME", home.path());
    let out = out_of(c, &["stats", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&stdout(&out))["conversations"], 3);
    let mut c = clean();
    c.env("HOME", home.path());
    let out = out_of(c, &["show", "abcdef02", "--index", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // $OPENHANDS_CONVERSATIONS_DIR, as the OpenHands CLI reads it.
    let mut c = clean();
    c.env("HOME", "/nonexistent")
        .env("OPENHANDS_CONVERSATIONS_DIR", &s.root);
    let out = out_of(c, &["check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // None there: status 2, saying where it looked and what to set.
    let mut c = clean();
    c.env("HOME", "/nonexistent");
    let out = out_of(c, &["ls"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("/nonexistent/.openhands/conversations") && err.contains("AGENTLOG_STORE"),
        "{err}"
    );
}

#[test]
fn show_an_event_file_without_index() {
    let dir = scenario_dir("1.58.2", "chat");
    let events = dir.join("events");
    let mut names: Vec<String> = fs::read_dir(&events)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("event-"))
        .collect();
    names.sort();
    let third = &names[3];
    let want = ok(&["show", p(&dir), "--index", "3"]);
    assert_eq!(ok(&["show", p(&events.join(third))]), want);
    let raw = ok(&["show", p(&events.join(third)), "--raw"]);
    assert_eq!(raw.as_bytes(), fs::read(events.join(third)).unwrap());
    // A directory or another file without --index: a usage error naming them.
    for path in [dir.clone(), dir.join("base_state.json")] {
        let out = run(&["show", p(&path)]);
        assert_eq!(code(&out), 2);
        assert!(stderr(&out).contains("--index"), "{}", stderr(&out));
    }
}

#[test]
fn ls_sorts_and_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let src = scenario_dir("1.58.2", "chat");
    let metas = [
        (A, "gpt-5", "2026-01-03T00:00:00Z", "b title"),
        (B, "claude-sonnet", "2026-01-01T00:00:00Z", "c title"),
        (C, "Claude-Opus", "2026-01-02T00:00:00Z", "a title"),
    ];
    for (id, model, updated, title) in metas {
        let dir = root.join(id);
        common::copy_tree(&src, &dir);
        fs::write(
            dir.join("meta.json"),
            format!(r#"{{"id":"{id}","title":"{title}","created_at":"2025-12-31T00:00:00Z","updated_at":"{updated}"}}"#),
        )
        .unwrap();
        set_state(&dir, id, Some(model));
    }
    let ids = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["ls", "--json", p(&root)];
        a.extend(args);
        json_lines(&ok(&a))
            .iter()
            .map(|r| r["id"].as_str().unwrap()[..8].to_owned())
            .collect()
    };
    assert_eq!(ids(&[]), ["3e806943", "abcdef01", "abcdef02"], "path order");
    assert_eq!(
        ids(&["--sort", "updated"]),
        ["abcdef02", "3e806943", "abcdef01"]
    );
    assert_eq!(
        ids(&["--sort", "updated", "-r"]),
        ["abcdef01", "3e806943", "abcdef02"]
    );
    assert_eq!(
        ids(&["--sort", "title"]),
        ["3e806943", "abcdef01", "abcdef02"]
    );
    assert_eq!(ids(&["--since", "2026-01-02"]), ["3e806943", "abcdef01"]);
    assert_eq!(ids(&["--model", "claude"]), ["3e806943", "abcdef02"]);
    assert_eq!(
        ids(&["--model", "CLAUDE", "--since", "2026-01-01T12:00:00Z"]),
        ["3e806943"]
    );
    // The table too, with the same rows.
    let text = ok(&["ls", p(&root), "--sort", "updated", "--model", "claude"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].contains("abcdef02") && lines[2].contains("3e806943"),
        "{text}"
    );
    // A --since that is no time: a usage error.
    let out = run(&["ls", p(&root), "--since", "yesterday"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--since yesterday"));
    let out = run(&["ls", p(&root), "--sort", "colour"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn a_folder_of_oc_chat_stores_is_read_as_a_folder_of_openhands_stores() {
    let tmp = tempfile::tempdir().unwrap();
    let all = tmp.path().join("all");
    let basic = all.join("team-a/sessions");
    let recovery = all.join("deep/er/team-b/sessions");
    let corpus = occhat_support::corpus();
    common::copy_tree(&corpus.join("sample_basic/sessions"), &basic);
    common::copy_tree(&corpus.join("sample_recovery/sessions"), &recovery);
    let oh = all.join("openhands");
    common::copy_tree(
        &scenario_dir("1.58.2", "chat"),
        &oh.join(scenario_dir("1.58.2", "chat").file_name().unwrap()),
    );
    let each = |p: &Path| json(&ok(&["stats", "--json", super::p(p)]));
    let (a, b, o) = (each(&basic), each(&recovery), each(&oh));
    let got = json(&ok(&["stats", "--json", p(&all)]));
    let sum = |k: &str| a[k].as_u64().unwrap() + b[k].as_u64().unwrap() + o[k].as_u64().unwrap();
    for k in ["conversations", "sessions", "messages", "events"] {
        assert_eq!(got[k].as_u64().unwrap(), sum(k), "{k}");
    }
    assert!(a["sessions"].as_u64().unwrap() > 0 && b["sessions"].as_u64().unwrap() > 0);
    // ls lists the sessions of both, and only OC Chat stores: no OpenHands
    // "nothing found".
    let rows = json_lines(&ok(&["ls", "--json", p(&all)]));
    let occhat = rows.iter().filter(|r| r["format"] == "occhat").count() as u64;
    assert_eq!(
        occhat,
        a["sessions"].as_u64().unwrap() + b["sessions"].as_u64().unwrap()
    );
    fs::remove_dir_all(&oh).unwrap();
    let out = run(&["stats", p(&all)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("OpenHands"), "{}", stdout(&out));
}
