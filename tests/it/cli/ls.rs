//! `agentlog ls`: conversations and their meta, as JSON and text.

use super::*;

#[test]
fn ls_json_over_the_corpus() {
    let root = openhands_corpus();
    let rows = json_lines(&ok(&["ls", "--json", p(&root)]));
    let oracles = oracles();
    let top: Vec<&Oracle> = oracles.iter().filter(|o| !o.subagent).collect();
    assert_eq!(rows.len(), top.len());
    let mut paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let sorted = {
        let mut s = paths.clone();
        s.sort();
        s
    };
    assert_eq!(paths, sorted, "sorted paths");
    paths.dedup();
    assert_eq!(paths.len(), rows.len());
    for r in &rows {
        assert_eq!(keys(r), LS_KEYS);
        assert_eq!(r["format"], "openhands");
        assert!(r["title"].is_null(), "no meta.json in the corpus");
        let dir = PathBuf::from(r["path"].as_str().unwrap());
        let o = top.iter().find(|o| o.dir == dir).expect("an oracle");
        assert_eq!(r["id"], o.conv["base_state"]["id_hex"]);
        assert_eq!(r["model"], o.conv["base_state"]["llm_model"]);
        assert_eq!(r["events"], o.conv["event_count"]);
        let first_ts = r["created"].as_str().unwrap();
        assert!(first_ts.starts_with("20"), "{first_ts}");
        assert!(r["updated"].as_str().unwrap() >= first_ts);
        let subs = oracles
            .iter()
            .filter(|s| s.subagent && s.dir.starts_with(&o.dir))
            .count();
        assert_eq!(r["subagents"], subs as u64, "{}", o.dir.display());
    }
    assert!(rows.iter().any(|r| r["subagents"] == 1));
}

#[test]
fn ls_text_and_a_conversation_given_by_a_file() {
    let dir = scenario_dir("1.58.2", "chat");
    let out = ok(&["ls", p(&dir)]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("FORMAT"));
    let id = dir.file_name().unwrap().to_str().unwrap();
    assert!(lines[1].starts_with("openhands") && lines[1].contains(&id[..8]));
    // A file of the conversation names it too.
    let rows = json_lines(&ok(&["ls", "--json", p(&dir.join("base_state.json"))]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], id);
}

#[test]
fn ls_uses_meta_json_when_present() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp
        .path()
        .join(scenario_dir("1.58.2", "chat").file_name().unwrap());
    common::copy_tree(&scenario_dir("1.58.2", "chat"), &dir);
    let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
    fs::write(
        dir.join("meta.json"),
        format!(
            r#"{{"id":"{id}","title":"Fix the build","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T04:00:00Z","forked_from_conversation_id":null}}"#
        ),
    )
    .unwrap();
    let rows = json_lines(&ok(&["ls", "--json", p(tmp.path())]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["title"], "Fix the build");
    assert_eq!(rows[0]["created"], "2026-01-02T03:04:05Z");
    assert_eq!(rows[0]["updated"], "2026-01-02T04:00:00Z");
}
