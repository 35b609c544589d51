//! Conversation layouts: sub-agents, partial conversations, forks and `meta.json`, broken and decoded `base_state.json`.

use super::*;

#[test]
fn subagents_and_partial_conversations() {
    let t = tempfile::tempdir().unwrap();
    let sub1 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let sub2 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let e0 = event("SystemPromptEvent", ID0, None);
    let st = state("01234567-89ab-cdef-0123-456789abcdef");
    let dir = make(
        t.path(),
        CONV,
        &[
            ("base_state.json", st.as_bytes()),
            (&format!("events/{}", name(0, ID0)), e0.as_bytes()),
            // A sub-agent with a state only.
            (
                &format!("subagents/{sub1}/base_state.json"),
                state("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa").as_bytes(),
            ),
            // A sub-agent with events only.
            (
                &format!("subagents/{sub2}/events/{}", name(0, ID1)),
                event("MessageEvent", ID1, None).as_bytes(),
            ),
            // Not conversations.
            ("subagents/junk/notes.txt", b"x"),
            ("subagents/badstate/base_state.json", b"{\"hello\": 1}"),
            ("observations/terminal_output_1.txt", b"out"),
        ],
    );
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.subagents(), [sub1, sub2]);
    assert_eq!(conv.dirs(), ["events", "observations", "subagents"]);
    assert!(conv.others().is_empty());
    assert_same(&conv, &openhands::parse(CONV, files_of(&dir)), "parse");
    let subs: Vec<PathBuf> = conv.subagent_dirs().collect();
    assert_eq!(subs[0], dir.join("subagents").join(sub1));
    assert_eq!(openhands::subagent_parent(&subs[0]), Some(dir.clone()));
    assert_eq!(openhands::subagent_parent(&dir), None);

    // Only a state.
    let only_state = read_conversation(&subs[0]).unwrap();
    assert!(only_state.state().is_some() && only_state.is_empty());
    assert_eq!(only_state.units(), 1);
    assert!(only_state.dirs().is_empty());
    let mut p = Parser::new();
    {
        let st = only_state.state().map(|f| f.open(&mut p)).unwrap().unwrap();
        assert_eq!(st.state().working_dir(), Some("/w"));
    }
    assert_eq!(
        openhands::state_id(&subs[0]).as_deref(),
        Some("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")
    );
    assert!(openhands::is_conversation_dir(&subs[0]));

    // Only events.
    let only_events = read_conversation(&subs[1]).unwrap();
    assert!(only_events.state().is_none() && only_events.len() == 1);
    assert!(only_events.state().map(|f| f.open(&mut p)).is_none());
    assert_eq!(openhands::state_id(&subs[1]), None);
    assert!(openhands::is_conversation_dir(&subs[1]));

    // Not conversations: a bare state of another shape is still read when
    // asked for, but is not found.
    let bad = dir.join("subagents/badstate");
    assert!(!openhands::is_conversation_dir(&bad));
    let c = read_conversation(&bad).unwrap();
    assert!(c.state().is_some() && c.state().and_then(|f| f.error()).is_none());
    let junk = dir.join("subagents/junk");
    assert!(matches!(
        read_conversation(&junk),
        Err(ReadError::NoConversation { .. })
    ));
    let parsed = openhands::parse("junk", files_of(&junk));
    assert!(parsed.is_empty() && parsed.state().is_none());
    assert_eq!(parsed.others(), ["notes.txt"]);

    // find_sessions lists the parent only.
    assert_eq!(
        openhands::find_sessions(t.path()).unwrap(),
        vec![dir.clone()]
    );
}

#[test]
fn forks_and_meta() {
    let t = tempfile::tempdir().unwrap();
    let src = "1111111111111111111111111111111a";
    let fork = "2222222222222222222222222222222b";
    let e0 = event("SystemPromptEvent", ID0, None);
    let e1 = event("MessageEvent", ID1, Some(ID0));
    let e2 = event("MessageEvent", ID2, Some(ID1));
    let e2f = event("MessageEvent", ID3, Some(ID1));
    let meta_src = format!(
        r#"{{"id":"{src}","title":null,"metrics":null,"created_at":"2026-05-04T15:30:28.123456Z","updated_at":"2026-05-04T15:31:00Z","forked_from_conversation_id":null,"forked_from_event_id":null,"tags":{{}}}}"#
    );
    let meta_fork = format!(
        r#"{{"id":"{fork}","title":"Fork","metrics":null,"created_at":"2026-05-04T16:00:00Z","updated_at":"2026-05-04T16:00:00Z","forked_from_conversation_id":"{src}","forked_from_event_id":"{ID1}","tags":{{}}}}"#
    );
    let s = make(
        t.path(),
        src,
        &[
            (
                "base_state.json",
                state("11111111-1111-1111-1111-11111111111a").as_bytes(),
            ),
            ("meta.json", meta_src.as_bytes()),
            (&format!("events/{}", name(0, ID0)), e0.as_bytes()),
            (&format!("events/{}", name(1, ID1)), e1.as_bytes()),
            (&format!("events/{}", name(2, ID2)), e2.as_bytes()),
        ],
    );
    let f = make(
        t.path(),
        fork,
        &[
            (
                "base_state.json",
                state("22222222-2222-2222-2222-22222222222b").as_bytes(),
            ),
            ("meta.json", meta_fork.as_bytes()),
            (&format!("events/{}", name(0, ID0)), e0.as_bytes()),
            (&format!("events/{}", name(1, ID1)), e1.as_bytes()),
            (&format!("events/{}", name(2, ID3)), e2f.as_bytes()),
        ],
    );
    let a = openhands::event_ids(&s).unwrap();
    let b = openhands::event_ids(&f).unwrap();
    let mut shared: Vec<_> = a.intersection(&b).cloned().collect();
    shared.sort();
    assert_eq!(shared, [ID0, ID1]);
    let conv = read_conversation(&f).unwrap();
    assert!(conv.meta().is_some());
    assert_eq!(conv.units(), 5);
    let mut p = Parser::new();
    {
        let doc = conv.meta().map(|f| f.open(&mut p)).unwrap().unwrap();
        let m = doc.meta();
        assert_eq!(m.forked_from_conversation_id.as_deref(), Some(src));
        assert_eq!(m.forked_from_event_id.as_deref(), Some(ID1));
        assert_eq!(openhands::hex_id(m.id.as_deref().unwrap()), fork);
        assert_eq!(m.to_json(), conv.meta().map(|f| f.raw()).unwrap());
        let created =
            openhands::parse_time(m.created_at.as_deref().unwrap(), openhands::UtcOffset::UTC)
                .unwrap();
        assert!(!created.naive);
    }
    let conv_src = read_conversation(&s).unwrap();
    let doc = conv_src.meta().map(|f| f.open(&mut p)).unwrap().unwrap();
    let m = doc.meta();
    assert!(m.title.is_none() && m.members.is_null(1), "title is null");
    assert!(m.forked_from_conversation_id.is_none());
    assert_eq!(m.members.get_raw("metrics"), Some(&b"null"[..]));
    assert_eq!(m.to_json(), conv_src.meta().map(|f| f.raw()).unwrap());
    // find_sessions: both, sorted; reading through meta.json works.
    assert_eq!(
        openhands::find_sessions(t.path()).unwrap(),
        vec![s.clone(), f.clone()]
    );
    assert_eq!(
        read_conversation(f.join("meta.json")).unwrap().dir(),
        f.as_path()
    );
    assert_eq!(openhands::conversation_dir(f.join("meta.json")).unwrap(), f);
    assert!(!openhands::is_conversation_file(f.join("meta.json")));
    assert_same(&conv, &openhands::parse(fork, files_of(&f)), "parse");
}

#[test]
fn broken_state_and_meta() {
    let t = tempfile::tempdir().unwrap();
    let e0 = event("MessageEvent", ID0, None);
    let dir = make(
        t.path(),
        CONV,
        &[
            ("base_state.json", b"{\"id\": \"x\", "),
            ("meta.json", b"[\"not\", \"an object\"]"),
            (&format!("events/{}", name(0, ID0)), e0.as_bytes()),
        ],
    );
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 1);
    let se = conv.state().and_then(|f| f.error()).unwrap();
    assert!(matches!(se, FileError::Json { .. }));
    assert!(se.offset().is_some());
    assert!(se.path().ends_with("base_state.json"));
    assert_eq!(
        conv.state().map(|f| f.raw()),
        Some(&b"{\"id\": \"x\", "[..])
    );
    assert!(matches!(
        conv.meta().and_then(|f| f.error()),
        Some(FileError::NotAnObject {
            found: JsonType::Array,
            ..
        })
    ));
    let mut p = Parser::new();
    assert!(matches!(
        conv.state().map(|f| f.open(&mut p)),
        Some(Err(DecodeError::Json(_)))
    ));
    assert!(matches!(
        conv.meta().map(|f| f.open(&mut p)),
        Some(Err(DecodeError::NotAnObject(JsonType::Array)))
    ));
    assert!(openhands::read_state(&dir).is_err());
    assert_eq!(openhands::state_id(&dir), None);
    assert_same(&conv, &openhands::parse(CONV, files_of(&dir)), "parse");
    // An empty state file.
    fs::write(dir.join("base_state.json"), b"").unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::Empty { .. }))
    ));
    // A state that is a directory.
    fs::remove_file(dir.join("base_state.json")).unwrap();
    fs::create_dir(dir.join("base_state.json")).unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
}

#[test]
fn state_decoding() {
    let raw = br#"{"id":"01234567-89ab-cdef-0123-456789abcdef","agent":{"llm":{"model":"acp-managed","service_id":"legacy","reasoning_effort":"high"},"acp_model":"claude","kind":"ACPAgent"},"workspace":{"working_dir":"/home/me","kind":"LocalWorkspace"},"execution_status":"finished","leaf_event_id":"x","head_is_empty":"no","stats":{"usage_to_metrics":{"zeta":{"model_name":"m","accumulated_cost":0.5,"accumulated_token_usage":{"model":"m","prompt_tokens":10,"completion_tokens":2.5,"response_id":""},"costs":[{"model":"m","cost":0.5,"timestamp":1777912231.5},7],"response_latencies":[{"model":"m","latency":2.1,"response_id":"r"}],"token_usages":[]},"alpha":"broken","task:task_00000001":{"model_name":"default","costs":[]}}},"secret_registry":{}}"#;
    let mut p = Parser::new();
    let doc = openhands::Doc::open(&mut p, raw).unwrap();
    let st = doc.state();
    let ai = st.agent_info();
    assert!(ai.is_acp());
    assert_eq!(ai.model, Some("acp-managed"));
    assert_eq!(ai.usage_id, Some("legacy"), "the legacy alias service_id");
    assert_eq!(ai.reasoning_effort, Some("high"));
    assert_eq!(st.working_dir(), Some("/home/me"));
    assert!(
        st.head_is_empty.is_none() && st.members.get_raw("head_is_empty") == Some(&b"\"no\""[..])
    );
    let map = st
        .stats
        .as_ref()
        .unwrap()
        .usage_to_metrics
        .as_ref()
        .unwrap();
    assert_eq!(map.keys(), ["alpha", "task:task_00000001", "zeta"]);
    assert!(matches!(map.get("alpha"), Some(Item::Bad { error, .. }) if error.found == "string"));
    let Some(Item::Ok(z)) = map.get("zeta") else {
        panic!()
    };
    let acc = z.accumulated_token_usage.as_ref().unwrap();
    assert_eq!(openhands::count(acc.prompt_tokens), 10);
    assert_eq!(
        openhands::count(acc.completion_tokens),
        0,
        "a fraction is no count"
    );
    let costs = z.costs.as_ref().unwrap();
    assert_eq!(costs.len(), 2);
    assert!(matches!(&costs[1], Item::Bad { .. }));
    let Item::Ok(c0) = &costs[0] else { panic!() };
    assert_eq!(openhands::float(c0.timestamp), Some(1_777_912_231.5));
    assert_eq!(st.to_json(), raw);
    let owned = OwnedValue::parse(&st.to_json()).unwrap();
    assert!(owned == OwnedValue::parse(raw).unwrap());
}
