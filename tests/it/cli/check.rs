//! `agentlog check`: every problem a store has.

use super::*;

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

/// A copy of the corpus's `chat` conversation with `events/` as `edit`
/// leaves it; the conversation directory.
fn chat_copy(tmp: &Path, edit: impl FnOnce(&Path, &[PathBuf])) -> PathBuf {
    let src = scenario_dir("1.58.2", "chat");
    let conv = tmp.join(src.file_name().unwrap());
    common::copy_tree(&src, &conv);
    let ev = conv.join("events");
    let mut files: Vec<PathBuf> = fs::read_dir(&ev)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("event-")
        })
        .collect();
    files.sort();
    edit(&ev, &files);
    conv
}

/// One missing event file: `check` reports the gap once, `ls` warns and
/// exits 1, `view` gives the view up to the gap, naming it, status 1.
#[test]
fn one_missing_event_file_is_one_gap_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let conv = chat_copy(tmp.path(), |_, files| {
        assert!(files.len() > 6);
        fs::remove_file(&files[4]).unwrap();
    });
    let out = run(&["check", p(&conv)]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains(": gap: no event file has index 4"),
        "{text}"
    );
    assert!(lines[1].ends_with(": 1 problem"), "{text}");
    let rows = json_lines(&stdout(&run(&["check", "--json", p(&conv)])));
    assert_eq!(rows.len(), 1);
    assert!(rows[0]["path"].as_str().unwrap().contains("event-00005-"));

    let out = run(&["ls", p(&conv)]);
    assert_eq!(code(&out), 1, "ls does not pass over a gap");
    let err = stderr(&out);
    assert!(err.contains("no event file has index 4"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = run(&["view", "--event-ids", p(&conv)]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(
        err.contains("no event file has index 4") && err.contains("up to event 3"),
        "{err}"
    );
    let ids = stdout(&out);
    assert!(!ids.is_empty(), "the view up to the gap, not an empty one");
    let full = stdout(&run(&[
        "view",
        "--event-ids",
        p(&scenario_dir("1.58.2", "chat")),
    ]));
    assert!(full.starts_with(&ids), "{ids} is not the start of {full}");
}

/// An event whose file name holds another ID than its content, repeating
/// the previous event's ID: two problems, each naming the file.
#[test]
fn check_flags_an_event_id_that_is_not_its_file_name_and_repeats_another() {
    let tmp = tempfile::tempdir().unwrap();
    let conv = chat_copy(tmp.path(), |_, files| {
        let prev: Value = json(&fs::read_to_string(&files[3]).unwrap());
        let mut ev: Value = json(&fs::read_to_string(&files[4]).unwrap());
        ev["id"] = prev["id"].clone();
        fs::write(&files[4], serde_json::to_vec(&ev).unwrap()).unwrap();
    });
    let out = run(&["check", "--json", p(&conv)]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let rows = json_lines(&stdout(&out));
    let problems: Vec<&str> = rows
        .iter()
        .map(|r| r["problem"].as_str().unwrap())
        .collect();
    assert!(problems.contains(&"id-mismatch"), "{problems:?}");
    assert!(problems.contains(&"duplicate-id"), "{problems:?}");
    for r in rows.iter().filter(|r| r["problem"] != "round-trip") {
        assert!(r["path"].as_str().unwrap().contains("event-00004-"), "{r}");
    }
}
