//! Parent chains with a cycle, an `events/` directory of 100,000 files.

use super::*;

#[test]
fn parent_chain_with_a_cycle() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(CONV);
    fs::create_dir_all(dir.join("events")).unwrap();
    // 0 <- 1 <- 2 <- 0: a cycle through every event, and the head in it;
    // 3 is its own parent.
    let ids = [ID0, ID1, ID2, "33333333-3333-4333-8333-333333333333"];
    let parents = [ID2, ID0, ID1, ids[3]];
    for (i, (id, p)) in ids.iter().zip(parents).enumerate() {
        fs::write(
            dir.join("events").join(name(i as u64, id)),
            event("MessageEvent", id, Some(p)),
        )
        .unwrap();
    }
    fs::write(
        dir.join("base_state.json"),
        STATE.replace(
            r#""execution_status""#,
            &format!(r#""leaf_event_id":"{ID2}","execution_status""#),
        ),
    )
    .unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.parsed_event_count(), 4);
    let view = View::build(&view_input(&conv), &ViewOptions::default());
    let cycles: Vec<&Vec<usize>> = view
        .issues()
        .iter()
        .filter_map(|i| match i {
            ViewIssue::Cycle(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(cycles, [&vec![0, 2, 1], &vec![3]], "{:?}", view.issues());
    assert!(
        view.issues()
            .iter()
            .any(|i| matches!(i, ViewIssue::BrokenBranch(_)))
    );
    let branch = &view.tree().active_branch().events;
    assert_eq!(branch.len(), 3, "the walk stops where it would repeat");
    assert!(view.tree().branches().iter().all(|b| b.events.len() <= 4));
    let _ = (view.sdk_messages(), view.wire_messages());
    // Every head, forced.
    for id in ids {
        let v = View::build(
            &view_input(&conv),
            &ViewOptions {
                head: Some(id.to_owned()),
                ..ViewOptions::default()
            },
        );
        assert!(v.tree().active_branch().events.len() <= 4);
    }
}

// ---------------------------------------------------------------- many files

#[test]
fn events_directory_of_100000_files() {
    // 100,000 event files of about 90 bytes. Slow in a debug build
    // (measured on 2 shared cores: 8 s to create them, 2 s to list, 4 s to
    // read, 2 s for the view); kept at full size, since the size is the
    // point.
    let n = 100_000u64;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(CONV);
    let events = dir.join("events");
    fs::create_dir_all(&events).unwrap();
    fs::write(dir.join("base_state.json"), STATE).unwrap();
    let started = Instant::now();
    for i in 0..n {
        let id = format!("{i:08x}-0000-4000-8000-000000000000");
        let body = if i % 1000 == 999 {
            String::new()
        } else {
            format!(r#"{{"kind":"PauseEvent","id":"{id}","source":"user"}}"#)
        };
        fs::write(events.join(name(i, &id)), body).unwrap();
    }
    eprintln!("created {n} files in {:?}", started.elapsed());
    let started = Instant::now();
    let scan = openhands::EventFiles::scan(&events, Default::default()).unwrap();
    assert_eq!(scan.len(), n as usize);
    assert_eq!(openhands::event_ids(&dir).unwrap().len(), n as usize);
    eprintln!("listed them in {:?}", started.elapsed());
    let started = Instant::now();
    let conv = read_conversation(&dir).unwrap();
    eprintln!("read them in {:?}", started.elapsed());
    assert_eq!(conv.len(), n as usize);
    assert_eq!(
        conv.parsed_event_count(),
        n as usize - 100,
        "empty files are malformed"
    );
    assert_eq!(
        conv.files()
            .filter(|f| f.status() == FileStatus::Malformed)
            .count(),
        100
    );
    let started = Instant::now();
    let issues = view_of(&conv);
    assert_eq!(
        issues
            .iter()
            .filter(|i| matches!(i, ViewIssue::Event { .. }))
            .count(),
        100
    );
    eprintln!("built the view in {:?}", started.elapsed());
    assert_eq!(
        openhands::find_sessions(t.path()).unwrap(),
        vec![dir.clone()]
    );
}

// ---------------------------------------------------------------- view shapes
