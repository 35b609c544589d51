//! Adversarial shapes for the view and for OC Chat: batches, a million tool messages, files and directories swapped.

use super::*;

fn action(id: &str, tc: &str, rid: &str, thinking: bool) -> Vec<u8> {
    let tb = if thinking {
        r#"[{"type":"thinking","thinking":"t","signature":"s"}]"#
    } else {
        "[]"
    };
    format!(
        r#"{{"kind":"ActionEvent","id":"{id}","source":"agent","thinking_blocks":{tb},"tool_call_id":"{tc}","tool_name":"x","llm_response_id":"{rid}","tool_call":{{"id":"{tc}","name":"x","arguments":"{{}}","origin":"completion"}},"action":{{"kind":"X"}},"thought":[]}}"#
    )
    .into_bytes()
}

fn observation(id: &str, tc: &str) -> Vec<u8> {
    format!(
        r#"{{"kind":"ObservationEvent","id":"{id}","source":"environment","tool_call_id":"{tc}","tool_name":"x","action_id":"a","observation":{{"kind":"X","content":[{{"type":"text","text":"o"}}]}}}}"#
    )
    .into_bytes()
}

fn view_entries(events: &[(String, Vec<u8>)]) -> usize {
    let input = agentlog::openhands::view::ViewInput {
        events: events
            .iter()
            .enumerate()
            .map(|(index, (id, raw))| agentlog::openhands::view::EventInput {
                index,
                file_id: id,
                raw,
            })
            .collect(),
        base_state: None,
        sidecars: None,
    };
    let view = View::build(&input, &ViewOptions::default());
    let _ = view.wire_messages();
    view.entries().len()
}

#[test]
fn view_of_adversarial_shapes() {
    // Shapes that made the view quadratic: each took minutes at this size
    // (20,000 events) before condensations were applied to a blocked list
    // and the view's properties reached their fixed point with counters
    // (measured in release: 44 s for the condensations, 51 s for the
    // cascade at 8,000 events; now about a second at 100,000). A second or
    // two each in a debug build.
    let n = 20_000;
    let id = |i: usize| format!("{i:08x}-0000");
    // Half messages, then condensations each forgetting one and inserting
    // its summary.
    let forget: Vec<(String, Vec<u8>)> = (0..n)
        .map(|i| {
            let body = if i < n / 2 {
                format!(
                    r#"{{"kind":"MessageEvent","id":"{}","source":"user","llm_message":{{"role":"user","content":"x"}}}}"#,
                    id(i)
                )
            } else {
                format!(
                    r#"{{"kind":"Condensation","id":"{}","source":"environment","forgotten_event_ids":["{}"],"summary":"s","summary_offset":1}}"#,
                    id(i),
                    id(i - n / 2)
                )
            };
            (id(i), body.into_bytes())
        })
        .collect();
    assert_eq!(view_entries(&forget), n / 2, "only the summaries are left");
    // A cascade: each loop's last action is in the next loop's batch, and
    // the first action has no answer, so every loop falls, one at a time.
    let mut cascade = Vec::new();
    for k in 0..n / 4 {
        let a = format!("a{k}-0000000");
        cascade.push((
            a.clone(),
            action(&a, &format!("ta{k}"), &format!("r{k}"), true),
        ));
        if k > 0 {
            let o = format!("oa{k}-000000");
            cascade.push((o.clone(), observation(&o, &format!("ta{k}"))));
        }
        let c = format!("c{k}-0000000");
        cascade.push((
            c.clone(),
            action(&c, &format!("tc{k}"), &format!("r{}", k + 1), false),
        ));
        let o = format!("oc{k}-000000");
        cascade.push((o.clone(), observation(&o, &format!("tc{k}"))));
    }
    assert_eq!(view_entries(&cascade), 0, "the whole cascade falls");
}

#[test]
fn chat_log_of_a_million_tool_messages() {
    // An assistant's call followed by a million tool messages, one of them
    // answering another call: the whole log is the incomplete tail.
    // Dropping it scanned the tail once per message (10^12 steps) before
    // the tail became a set. About 10 s in a debug build (measured), most
    // of it building the million owned messages.
    let n = 1_000_000;
    let mut messages = Vec::with_capacity(n + 1);
    messages.push(
        OwnedValue::parse(
            br#"{"role":"assistant","content":"","tool_calls":[{"id":"a"},{"id":"b"}]}"#,
        )
        .unwrap(),
    );
    let tool = OwnedValue::parse(br#"{"role":"tool","tool_call_id":"a","content":"x"}"#).unwrap();
    messages.extend(std::iter::repeat_n(tool, n));
    let report = agentlog::occhat::detect_incomplete_tail(&messages).expect("a tail");
    assert_eq!(report.tail_indexes.len(), n + 1);
    let kept =
        agentlog::occhat::recovery_indexes(&messages, agentlog::occhat::RecoveryChoice::Drop);
    assert!(kept.is_empty());
    let fresh =
        agentlog::occhat::apply_tail_recovery(&messages, agentlog::occhat::RecoveryChoice::Drop);
    assert!(fresh.is_empty());
}

#[test]
fn occhat_files_and_directories_swapped() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    // A session "directory" that is a file; a meta that is a directory; a
    // chat log that is a directory beside a good meta.
    fs::write(root.join("a"), b"not a directory").unwrap();
    fs::create_dir_all(root.join("b/b_2025-01-01--00-00-00_meta.json")).unwrap();
    fs::create_dir_all(root.join("c/c_2025-01-01--00-00-00_chat_log.json")).unwrap();
    fs::write(
        root.join("c/c_2025-01-01--00-00-00_meta.json"),
        br#"{"session_name": "c"}"#,
    )
    .unwrap();
    // The archive is a file.
    fs::write(root.join("archive"), b"x").unwrap();
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    assert_eq!(list.sessions.len(), 1, "{list:?}");
    assert_eq!(list.skipped.len(), 1);
    assert!(matches!(
        list.skipped[0].error,
        LoadError::Read(SourceError::NotAFile { .. })
    ));
    assert!(!store.session_exists("a"));
    let s = store.load_session("c").unwrap();
    assert!(s.load_failed, "an unreadable chat log is not an empty one");
    // README (writes, difference 3, and what the OC Chat writer
    // guarantees): every write is atomic, nothing is lost, and a failure
    // leaves the old state or one a rerun completes. With `archive` a file
    // the save is refused before anything is written; the store is as it
    // was.
    let listing = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let old_meta = root.join("c/c_2025-01-01--00-00-00_meta.json");
    let old_bytes = fs::read(&old_meta).unwrap();
    let root_before = listing(root);
    let mut s2 = s.clone();
    // The archive step comes first, and archiving needs `archive/` to be a
    // directory, which it is not: the layout is refused, typed, before
    // anything is written.
    match store.save_all(&mut s2) {
        Err(agentlog::occhat::SaveError::UnsafeLayout {
            problem: agentlog::occhat::LayoutProblem::NotADirectory,
            ..
        }) => {}
        other => panic!("an archive that is a file is a refused layout, got {other:?}"),
    }
    assert_eq!(listing(root), root_before, "the store's top level changed");
    assert_eq!(fs::read(root.join("archive")).unwrap(), b"x");
    let files = listing(&root.join("c"));
    assert_eq!(
        files.len(),
        2,
        "nothing written: the old meta and the chat log: {files:?}"
    );
    assert_eq!(
        fs::read(&old_meta).unwrap(),
        old_bytes,
        "the old meta is kept"
    );
    assert!(root.join("c/c_2025-01-01--00-00-00_chat_log.json").is_dir());
    // With `archive/` a directory, a rerun completes: the chat log is
    // refused (it did not load), the meta saves, and every older meta is
    // archived, the first one byte for byte.
    fs::remove_file(root.join("archive")).unwrap();
    let mut s3 = s.clone();
    let r = store.save_all(&mut s3).expect("the rerun saves");
    assert!(
        matches!(r.refused, Some(agentlog::occhat::SaveError::Refused { .. })),
        "{r:?}"
    );
    assert!(r.chat_log.is_none());
    assert!(r.meta.is_file());
    assert_eq!(
        fs::read(root.join("archive/c/c_2025-01-01--00-00-00_meta.json")).unwrap(),
        old_bytes
    );
    let live: Vec<String> = listing(&root.join("c"))
        .into_iter()
        .filter(|f| f.ends_with("_meta.json"))
        .collect();
    assert_eq!(live.len(), 1, "one live meta after the rerun: {live:?}");
    assert!(root.join("c/c_2025-01-01--00-00-00_chat_log.json").is_dir());
}
