//! `agentlog export`: events as JSON lines.

use super::*;

#[test]
fn export_jsonl_with_subagents() {
    let dir = scenario_dir("1.58.2", "subagent");
    let lines = json_lines(&ok(&["export", "--jsonl", p(&dir)]));
    assert_eq!(lines.len(), 22);
    let top = dir.file_name().unwrap().to_str().unwrap();
    let sub_dir = fs::read_dir(dir.join("subagents"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let sub = sub_dir.file_name().unwrap().to_str().unwrap();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(
            keys(l),
            ["conversation", "parent", "index", "file", "error", "event"]
        );
        assert!(l["error"].is_null());
        let (conv, parent, cdir) = if i < 11 {
            (top, Value::Null, &dir)
        } else {
            (sub, Value::from(top), &sub_dir)
        };
        assert_eq!(l["conversation"], conv);
        assert_eq!(l["parent"], parent);
        assert_eq!(l["index"], (i % 11) as u64);
        let file = cdir.join("events").join(l["file"].as_str().unwrap());
        let want: Value = json(&fs::read_to_string(file).unwrap());
        assert_eq!(l["event"], want);
    }
    // The event is the file verbatim.
    let text = ok(&["export", "--jsonl", p(&dir)]);
    let first = text.lines().next().unwrap();
    let file = dir.join("events").join(lines[0]["file"].as_str().unwrap());
    let raw = fs::read_to_string(file).unwrap();
    assert!(
        first.ends_with(&format!("\"event\":{}}}", raw.trim())),
        "{first}"
    );
}

#[test]
fn export_the_corpus_to_a_file() {
    let root = openhands_corpus();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("events.jsonl");
    let out = run(&["export", p(&root), "--jsonl", "-o", p(&file)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let written = fs::read_to_string(&file).unwrap();
    let total: u64 = oracles()
        .iter()
        .map(|o| o.conv["event_count"].as_u64().unwrap())
        .sum();
    assert_eq!(written.lines().count() as u64, total);
    assert_eq!(written, ok(&["export", "--jsonl", p(&root)]));
    // Only the file is left: no temporary file.
    let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn export_a_damaged_store() {
    let d = damaged();
    let out = run(&["export", "--jsonl", p(&d.root)]);
    assert_eq!(code(&out), 0);
    let lines = json_lines(&stdout(&out));
    let bad: Vec<&Value> = lines.iter().filter(|l| !l["error"].is_null()).collect();
    assert_eq!(bad.len(), 1);
    assert!(bad[0]["event"].is_null());
    assert_eq!(bad[0]["file"], "event-00011-aaaaaaaa-0000.json");
    // 12 of chat (the gap file is not read), 32 of coding, 11 + 11 of subagent.
    assert_eq!(lines.len(), 12 + 32 + 22);
    // An OC Chat store is not exported.
    let case = occhat_support::restore("sample_basic");
    let out = run(&["export", "--jsonl", p(&case.sessions())]);
    assert_eq!(code(&out), 2);
}

#[test]
fn export_writes_an_event_on_several_lines_on_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("0123456789abcdef0123456789abcdef");
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(
        dir.join("events/event-00000-aaaaaaaa-0000.json"),
        b"{\n  \"kind\": \"MessageEvent\",\n  \"id\": \"aaaaaaaa-0000\"\n}\n",
    )
    .unwrap();
    let text = ok(&["export", "--jsonl", p(&dir)]);
    assert_eq!(text.lines().count(), 1);
    let l = json(text.trim_end());
    assert_eq!(
        l["event"],
        serde_json::json!({"kind": "MessageEvent", "id": "aaaaaaaa-0000"})
    );
    assert_eq!(l["conversation"], "0123456789abcdef0123456789abcdef");
}

/// `export --parquet` in a build without the feature says which build has
/// it (not clap's advice to pass `--parquet` as a value). Runs in a build
/// without `parquet` (`.ci/run` runs it so).
#[cfg(not(feature = "parquet"))]
#[test]
fn parquet_without_the_feature_names_the_build_that_has_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dataset");
    let out = run(&["export", p(&openhands_corpus()), "--parquet", p(&dir)]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("--features cli,parquet"), "{err}");
    assert!(!err.contains("-- --parquet"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.exists());
}
