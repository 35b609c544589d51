//! `agentlog events`, `files` and `show`: one conversation's events and files.

use super::*;

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
