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
