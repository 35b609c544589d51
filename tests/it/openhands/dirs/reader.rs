//! The reader: predicates and ids, the Python dialect, options and reuse, threads, damaged and unreadable conversations, the event budget.

use super::*;

#[test]
fn predicates_and_ids() {
    use openhands::*;
    assert_eq!(KNOWN_KINDS.len(), 20);
    for (k, name) in Kind::KNOWN.iter().zip(KNOWN_KINDS) {
        assert!(k.is_known());
        assert_eq!(Kind::parse(name), *k);
    }
    let kind = |name| Kind::parse(name);
    assert!(kind(KIND_CONDENSATION_SUMMARY).in_context() && kind(KIND_AGENT_ERROR).in_context());
    assert!(!kind(KIND_CONDENSATION).in_context() && !kind(KIND_PAUSE).in_context());
    assert!(Kind::UserReject.is_observation_like() && !Kind::Action.is_observation_like());
    // The reference's artifacts; the SDK makes a ConversationErrorEvent the
    // head on append all the same (SDK 1.31+ `ConversationState.append_event`).
    assert!(Kind::StateUpdate.is_artifact() && Kind::ConversationError.is_artifact());
    assert!(!Kind::Message.is_artifact());
    assert!(!Kind::StateUpdate.becomes_head() && Kind::ConversationError.becomes_head());
    assert_eq!(summary_id("abc"), "abc-summary");
    assert_eq!(
        hex_id("EEC4C5AE-3A67-49FD-9AF2-84BAD45AE07E"),
        "eec4c5ae3a6749fd9af284bad45ae07e"
    );
    assert_eq!(
        hex_id("{eec4c5ae-3a67-49fd-9af2-84bad45ae07e}"),
        "eec4c5ae3a6749fd9af284bad45ae07e"
    );
    assert_eq!(
        hex_id("urn:uuid:eec4c5ae-3a67-49fd-9af2-84bad45ae07e"),
        "eec4c5ae3a6749fd9af284bad45ae07e"
    );
    assert!(is_hex_id("eec4c5ae3a6749fd9af284bad45ae07e"));
    assert!(!is_hex_id("EEC4C5AE3A6749FD9AF284BAD45AE07E"));
    assert_eq!(ROOT_PARENT, "__root__");
    assert!(INTERRUPTED_PREFIX.starts_with("Tool call interrupted"));
    assert_eq!(MAX_SIZE, 1 << 30);
    let mut p = Parser::new();
    let text = format!(
        r#"{{"kind":"AgentErrorEvent","error":"{INTERRUPTED_PREFIX} The conversation was paused."}}"#
    );
    {
        let doc = p.parse(text.as_bytes()).unwrap();
        assert!(
            AgentErrorEvent::decode(doc.root())
                .unwrap()
                .is_interrupted()
        );
    }
    let doc = p.parse(br#"{"kind":"UserRejectObservation"}"#).unwrap();
    assert_eq!(
        UserRejectObservation::decode(doc.root()).unwrap().reason(),
        DEFAULT_REJECTION_REASON
    );
}

#[test]
fn python_dialect_and_duplicates() {
    let t = tempfile::tempdir().unwrap();
    // 1.0–1.7.3 write NaN for a non-finite float; spaced separators.
    let e = format!(
        r#"{{"kind": "Condensation", "id": "{ID0}", "timestamp": "2025-11-07T10:00:01", "source": "environment", "forgotten_event_ids": [], "summary_offset": NaN, "llm_response_id": "r", "id": "{ID1}"}}"#
    );
    let dir = make(
        t.path(),
        CONV,
        &[(&format!("events/{}", name(0, ID0)), e.as_bytes())],
    );
    let conv = read_conversation(&dir).unwrap();
    let ev = conv.event(0).unwrap();
    assert!(ev.is_ok());
    assert_eq!(ev.id(), Some(ID1), "the last id wins, as pydantic reads it");
    assert_eq!(ev.file_id(), ID0);
    let mut p = Parser::new();
    let doc = ev.open(&mut p).unwrap();
    let c = doc.condensation();
    assert_eq!(c.offset(), None);
    assert_eq!(c.id.as_deref(), Some(ID1));
    let out = c.to_json();
    assert!(OwnedValue::parse(&out).unwrap() == OwnedValue::parse(ev.raw()).unwrap());
    assert!(
        out.windows(ID0.len()).any(|w| w == ID0.as_bytes()),
        "the earlier id is kept"
    );
}

#[test]
fn reader_options_and_reuse() {
    let t = tempfile::tempdir().unwrap();
    let e = event("MessageEvent", ID0, None);
    let mut files: Vec<(String, Vec<u8>)> = (0..3)
        .map(|i| (format!("events/{}", name(i, ID0)), e.clone().into_bytes()))
        .collect();
    files.push((
        format!("events/event-100000-{ID0}.json"),
        e.clone().into_bytes(),
    ));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    let dir = make(t.path(), CONV, &refs);
    let mut r = Reader::with_pattern(NamePattern::FiveDigits);
    assert_eq!(r.pattern(), NamePattern::FiveDigits);
    let c = r.read(&dir).unwrap();
    assert_eq!(
        c.files()
            .filter(|f| f.status() == FileStatus::BadName)
            .count(),
        1
    );
    r.set_pattern(NamePattern::FiveOrMoreDigits);
    let c2 = r.read(&dir).unwrap();
    assert_eq!(
        c2.files().filter(|f| f.status() == FileStatus::Gap).count(),
        1
    );
    // The same id at every index: all are events (lookups by ID use the
    // first).
    assert_eq!(c2.len(), 3);
    assert!(c2.events().all(|e| e.file_id() == ID0));
    let mut conv = openhands::Conversation::new();
    r.read_into(&dir, &mut conv).unwrap();
    assert_same(&conv, &c2, "reuse");
    assert!(r.read_into(t.path().join("none"), &mut conv).is_err());
    assert!(conv.is_empty());
    let _ = r.parser();
}

#[test]
fn thread_safety() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<openhands::Conversation>();
    send_sync::<openhands::EventFiles>();
    send_sync::<openhands::FileError>();
    send_sync::<openhands::ReadError>();
    send::<openhands::Reader>();
}

/// A conversation that can only be seen damaged is a conversation, found
/// and read with its fault recorded, never passed over: a torn
/// `base_state.json` alone, `events` or `subagents` that is a file, a
/// sub-agent with a torn state and no events.
#[test]
fn damaged_conversations_are_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let torn = state(ID0);
    let torn = &torn.as_bytes()[..torn.len() / 2];
    // The only file: a torn state.
    let only = make(tmp.path(), CONV, &[("base_state.json", torn)]);
    assert!(openhands::is_conversation_dir(&only));
    assert_eq!(
        openhands::find_sessions(tmp.path()).unwrap(),
        std::slice::from_ref(&only)
    );
    let c = read_conversation(&only).unwrap();
    assert!(
        matches!(
            c.state().and_then(|f| f.error()),
            Some(FileError::Json { .. })
        ),
        "{:?}",
        c.state().and_then(|f| f.error())
    );
    // An empty one (a crash between create and write) too; JSON that is not
    // OpenHands' state is someone else's file.
    fs::write(only.join("base_state.json"), b"").unwrap();
    assert!(openhands::is_conversation_dir(&only));
    fs::write(only.join("base_state.json"), b"{\"x\": 1}").unwrap();
    assert!(!openhands::is_conversation_dir(&only));

    // `events` and `subagents` that are files.
    let st = state(ID1);
    let files = make(
        tmp.path(),
        "files",
        &[
            ("base_state.json", st.as_bytes()),
            ("events", b"not a directory"),
            ("subagents", b"not a directory"),
        ],
    );
    let c = read_conversation(&files).unwrap();
    let e = c.events_error().expect("events/ a file is an error");
    assert!(e.to_string().contains("not a directory"), "{e}");
    assert!(matches!(e, ReadError::Io { path, .. } if path.ends_with("events")));
    let e = c.subagents_error().expect("subagents/ a file is an error");
    assert!(matches!(e, ReadError::Io { path, .. } if path.ends_with("subagents")));
    // A file named `events` alone makes no conversation.
    let lone = make(tmp.path(), "lone", &[("events", b"x")]);
    assert!(matches!(
        read_conversation(&lone),
        Err(ReadError::NoConversation { .. })
    ));

    // A sub-agent with a torn state and no events.
    let sub = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let parent = make(
        tmp.path(),
        "parent",
        &[
            ("base_state.json", st.as_bytes()),
            (&format!("subagents/{sub}/base_state.json"), torn),
        ],
    );
    let c = read_conversation(&parent).unwrap();
    assert_eq!(c.subagents(), [sub]);
    let s = read_conversation(c.subagent_dirs().next().unwrap()).unwrap();
    assert!(s.state().and_then(|f| f.error()).is_some());
    // The same through `parse`.
    let c = openhands::parse(
        "parent",
        [
            ("base_state.json", st.as_bytes()),
            (&format!("subagents/{sub}/base_state.json") as &str, torn),
        ],
    );
    assert_eq!(c.subagents(), [sub]);
}

/// An event file whose bytes cannot be had is unreadable, with the
/// operating system's error; one that does not parse is malformed.
#[test]
fn unreadable_event_files() {
    let tmp = tempfile::tempdir().unwrap();
    let st = state(ID0);
    let e0 = event("MessageEvent", ID0, None);
    let dir = make(
        tmp.path(),
        CONV,
        &[
            ("base_state.json", st.as_bytes()),
            (&format!("events/{}", name(0, ID0)), e0.as_bytes()),
            (&format!("events/{}", name(2, ID2)), b"{\"kind\": "),
        ],
    );
    // A link to nothing: opening it fails with ENOENT.
    std::os::unix::fs::symlink(
        tmp.path().join("gone"),
        dir.join("events").join(name(1, ID1)),
    )
    .unwrap();
    let c = read_conversation(&dir).unwrap();
    let st: Vec<FileStatus> = c.files().map(|f| f.status()).collect();
    assert_eq!(
        st,
        [
            FileStatus::Event,
            FileStatus::Unreadable,
            FileStatus::Malformed
        ]
    );
    let f = c.files().nth(1).unwrap();
    assert_eq!(f.status().as_str(), "unreadable");
    let err = f.error().unwrap();
    assert!(err.is_unreadable());
    assert!(err.to_string().contains("No such file"), "{err}");
    assert!(matches!(f.reason(), Some(Reason::Unreadable(_))));
    assert!(!c.files().nth(2).unwrap().error().unwrap().is_unreadable());
    assert!(c.event(1).unwrap().error().is_some());
}

/// What one conversation can make the reader hold is bounded by its
/// budget: event files past it are not read, and are unreadable with a
/// typed error; the events before it read as ever; the next conversation
/// has a budget of its own.
#[test]
fn the_event_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let st = state(ID0);
    let e0 = event("MessageEvent", ID0, None);
    let e1 = event("MessageEvent", ID1, Some(ID0));
    let e2 = event("MessageEvent", ID2, Some(ID1));
    let e3 = event("MessageEvent", ID3, Some(ID2));
    let files: Vec<(String, Vec<u8>)> = vec![
        ("base_state.json".into(), st.clone().into_bytes()),
        (format!("events/{}", name(0, ID0)), e0.clone().into_bytes()),
        (format!("events/{}", name(1, ID1)), e1.clone().into_bytes()),
        (format!("events/{}", name(2, ID2)), e2.clone().into_bytes()),
        (format!("events/{}", name(3, ID3)), e3.clone().into_bytes()),
    ];
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    let dir = make(tmp.path(), CONV, &refs);
    let mut r = Reader::new();
    assert_eq!(r.event_budget(), openhands::EVENT_BUDGET);
    assert_eq!(openhands::EVENT_BUDGET, agentlog::MAX_SIZE);
    // Room for two events and part of a third.
    let budget = (e0.len() + e1.len() + e2.len() / 2) as u64;
    r.set_event_budget(budget);
    let check = |c: &openhands::Conversation| {
        let st: Vec<FileStatus> = c.files().map(|f| f.status()).collect();
        assert_eq!(
            st,
            [
                FileStatus::Event,
                FileStatus::Event,
                FileStatus::Unreadable,
                FileStatus::Unreadable
            ]
        );
        assert!(c.event_bytes().len() as u64 <= budget);
        assert_eq!(c.parsed_event_count(), 2);
        let err = c.files().nth(2).unwrap().error().unwrap();
        match err {
            FileError::Source(SourceError::OverBudget { size, left, .. }) => {
                assert_eq!(*size, e2.len() as u64);
                assert_eq!(*left, budget - (e0.len() + e1.len()) as u64);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.is_unreadable());
        assert!(err.to_string().contains("budget"), "{err}");
    };
    check(&r.read(&dir).unwrap());
    check(&r.parse(CONV, &refs));
    // Each conversation has its own budget.
    check(&r.read(&dir).unwrap());
    r.set_event_budget(u64::MAX);
    assert!(
        r.read(&dir)
            .unwrap()
            .files()
            .all(|f| f.status() == FileStatus::Event)
    );
}
