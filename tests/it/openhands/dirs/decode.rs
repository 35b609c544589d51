//! Event files one by one: every status, malformed shapes, unknown kinds and members of the wrong type, what each decoder writes back, counts and timestamps.

use super::*;

#[test]
fn every_file_status() {
    let t = tempfile::tempdir().unwrap();
    let e0 = event("MessageEvent", ID0, None);
    let e0b = event("MessageEvent", ID1, None);
    let e1 = event("MessageEvent", ID2, Some(ID0));
    let e3 = event("MessageEvent", ID3, Some(ID2));
    let st = state("01234567-89ab-cdef-0123-456789abcdef");
    let n0 = name(0, ID0);
    let n0b = name(0, ID1); // sorts after n0: a duplicate
    let n1 = name(1, ID2);
    let n3 = name(3, ID3); // index 2 is missing: a gap
    let dir = make(
        t.path(),
        CONV,
        &[
            ("base_state.json", st.as_bytes()),
            (&format!("events/{n0}"), e0.as_bytes()),
            (&format!("events/{n0b}"), e0b.as_bytes()),
            (&format!("events/{n1}"), e1.as_bytes()),
            (&format!("events/{n3}"), e3.as_bytes()),
            ("events/notes.txt", b"x"),
            ("events/event-1-abcdefgh.json", b"{}"),
            ("events/.eventlog.lock", b""),
            ("events/.eventlog-len-4.marker", b""),
            ("TASKS.json", b"[]"),
        ],
    );
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.name(), CONV);
    assert_eq!(conv.len(), 2);
    assert_eq!(conv.parsed_event_count(), 2);
    let ids: Vec<_> = conv.events().map(|e| e.id().unwrap()).collect();
    assert_eq!(ids, [ID0, ID2]);
    assert_eq!(conv.event(1).unwrap().parent_id(), Some(ID0));
    assert!(conv.event(1).unwrap().has_parent());
    assert!(!conv.event(0).unwrap().has_parent());
    let statuses: Vec<_> = conv
        .files()
        .map(|f| (f.name().to_owned(), f.status()))
        .collect();
    assert_eq!(
        statuses,
        [
            (
                "event-00000-00000000-0000-4000-8000-000000000000.json".to_owned(),
                FileStatus::Event
            ),
            (n0b.clone(), FileStatus::Duplicate),
            (n1.clone(), FileStatus::Event),
            (n3.clone(), FileStatus::Gap),
            ("event-1-abcdefgh.json".to_owned(), FileStatus::BadName),
            ("notes.txt".to_owned(), FileStatus::BadName),
        ]
    );
    let by = |n: &str| conv.files().find(|f| f.name() == n).unwrap();
    match by(&n0b).reason().unwrap() {
        Reason::Duplicate { taken_by } => assert_eq!(taken_by, n0),
        r => panic!("{r}"),
    }
    match by(&n3).reason().unwrap() {
        Reason::Gap { missing } => assert_eq!(missing, 2),
        r => panic!("{r}"),
    }
    assert!(matches!(
        by("notes.txt").reason(),
        Some(Reason::BadName(NameError::Prefix))
    ));
    assert!(matches!(
        by("event-1-abcdefgh.json").reason(),
        Some(Reason::BadName(NameError::Index { five_or_more: true }))
    ));
    assert!(by(&n0).reason().is_none());
    for f in conv.files() {
        if let Some(r) = f.reason() {
            assert!(!r.to_string().is_empty());
        }
        assert_eq!(f.status().to_string(), f.status().as_str());
    }
    assert_eq!(by(&n3).index(), Some(3));
    assert_eq!(by(&n3).id(), Some(ID3));
    assert_eq!(by("notes.txt").id(), None);
    assert_eq!(conv.event_files().gap(), Some(2));
    assert_eq!(
        conv.sidecars(),
        [".eventlog-len-4.marker", ".eventlog.lock"]
    );
    assert_eq!(conv.others(), ["TASKS.json"]);
    assert_eq!(conv.dirs(), ["events"]);
    // base_state + 6 files of events/ + TASKS.json.
    assert_eq!(conv.units(), 8);
    assert_eq!(conv.event_file_count(), 5);
    // Names only: the same answers, no file opened (the events are not
    // even readable as names alone tell them).
    let ids = openhands::event_ids(&dir).unwrap();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(ID0) && ids.contains(ID2));
    let scan = openhands::EventFiles::scan(&dir.join("events"), NamePattern::default()).unwrap();
    assert_eq!(scan.len(), 2);
    assert_eq!(scan.gap(), Some(2));
    assert_eq!(scan.files().len(), 6);
    // From memory, the same.
    assert_same(&conv, &openhands::parse(CONV, files_of(&dir)), "parse");
}

#[test]
fn names_only_opens_nothing() {
    // Event files that cannot be opened at all: the names still answer.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(CONV);
    fs::create_dir_all(dir.join("events")).unwrap();
    for (i, id) in [ID0, ID1, ID2].iter().enumerate() {
        // Dangling symbolic links: opening any of them fails.
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            "/nonexistent/x",
            dir.join("events").join(name(i as u64, id)),
        )
        .unwrap();
        #[cfg(not(unix))]
        fs::write(dir.join("events").join(name(i as u64, id)), b"").unwrap();
    }
    let ids = openhands::event_ids(&dir).unwrap();
    assert_eq!(ids.len(), 3);
    let scan = openhands::EventFiles::scan(&dir.join("events"), NamePattern::default()).unwrap();
    assert!(scan.ids().eq([ID0, ID1, ID2]));
    // Reading them marks each unreadable (empty: malformed), and keeps
    // them in the sequence.
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 3);
    assert_eq!(conv.parsed_event_count(), 0);
    let want = if cfg!(unix) {
        FileStatus::Unreadable
    } else {
        FileStatus::Malformed
    };
    for e in conv.events() {
        assert!(matches!(e.error(), Some(FileError::Source(_))));
        assert_eq!(e.file().unwrap().status(), want);
    }
}

#[test]
fn malformed_shapes() {
    let t = tempfile::tempdir().unwrap();
    let ids = [
        "a0000000-0000-4000-8000-000000000000",
        "a1111111-1111-4111-8111-111111111111",
        "a2222222-2222-4222-8222-222222222222",
        "a3333333-3333-4333-8333-333333333333",
        "a4444444-4444-4444-8444-444444444444",
        "a5555555-5555-4555-8555-555555555555",
        "a6666666-6666-4666-8666-666666666666",
        "a7777777-7777-4777-8777-777777777777",
    ];
    let good = event("MessageEvent", ids[0], None);
    let contents: [&[u8]; 7] = [
        good.as_bytes(),
        b"",                              // empty
        b"{\"kind\": \"MessageEvent\", ", // not JSON (truncated)
        b"[1, 2, 3]",                     // not an object
        b"\xef\xbb\xbf{}",                // a byte-order mark
        b"{\"id\": \"\xff\"}",            // invalid UTF-8
        b"   \n ",                        // white space only
    ];
    let mut files: Vec<(String, Vec<u8>)> = contents
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("events/{}", name(i as u64, ids[i])), c.to_vec()))
        .collect();
    files.push((
        format!("events/{}", name(8, ids[7])),
        good.clone().into_bytes(),
    ));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    let dir = make(t.path(), CONV, &refs);
    // Over MAX_SIZE: a sparse file, refused from its size before reading.
    let big = dir.join("events").join(name(7, ids[7]));
    let f = fs::File::create(&big).unwrap();
    f.set_len(agentlog::MAX_SIZE + 1).unwrap();
    drop(f);

    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 9, "the sequence goes on past malformed files");
    assert_eq!(conv.parsed_event_count(), 2);
    let errs: Vec<_> = conv.events().map(|e| e.error()).collect();
    assert!(errs[0].is_none());
    assert!(matches!(
        errs[1],
        Some(FileError::Source(SourceError::Empty { .. }))
    ));
    assert!(errs[1].unwrap().is_empty_file());
    match errs[2] {
        Some(e @ FileError::Json { source, .. }) => {
            assert_eq!(source.kind(), JsonErrorKind::Syntax);
            assert!(e.offset().is_some());
            assert!(e.to_string().contains("at byte"));
        }
        e => panic!("{e:?}"),
    }
    assert!(matches!(
        errs[3],
        Some(FileError::NotAnObject {
            found: JsonType::Array,
            ..
        })
    ));
    assert!(
        matches!(errs[4], Some(FileError::Json { source, .. }) if source.kind() == JsonErrorKind::Bom)
    );
    assert!(
        matches!(errs[5], Some(FileError::Json { source, .. }) if source.kind() == JsonErrorKind::InvalidUtf8)
    );
    assert!(
        matches!(errs[6], Some(FileError::Json { source, .. }) if source.kind() == JsonErrorKind::Empty)
    );
    assert!(errs[6].unwrap().is_empty_file());
    assert!(matches!(
        errs[7],
        Some(FileError::Source(SourceError::TooLarge { .. }))
    ));
    for (i, e) in conv.events().enumerate() {
        assert_eq!(e.index(), i as u64);
        assert_eq!(e.file_id(), ids[i.min(7)]);
        if let Some(err) = e.error() {
            assert_eq!(e.file().unwrap().status(), FileStatus::Malformed);
            assert!(err.path().ends_with(e.file_name()));
            assert!(e.kind().is_none() && e.id().is_none());
            assert!(matches!(
                e.file().unwrap().reason(),
                Some(Reason::Malformed(_))
            ));
            let mut p = Parser::new();
            assert!(e.open(&mut p).is_err());
        }
    }
    let mut p = Parser::new();
    assert_eq!(
        conv.event(3).unwrap().open(&mut p).unwrap_err(),
        DecodeError::NotAnObject(JsonType::Array)
    );
    assert_eq!(
        conv.event(7).unwrap().open(&mut p).unwrap_err(),
        DecodeError::Unread
    );
    assert!(conv.event(7).unwrap().raw().is_empty());
    assert_eq!(conv.event(3).unwrap().raw(), b"[1, 2, 3]");
    // The file after the big one is still read.
    assert_eq!(conv.event(8).unwrap().id(), Some(ids[0]));

    // The same from memory (the big file as a big buffer would cost a GiB:
    // leave it out and compare the rest).
    fs::remove_file(&big).unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 7);
    assert_eq!(conv.event_files().gap(), Some(7));
    assert_same(&conv, &openhands::parse(CONV, files_of(&dir)), "parse");
}

#[test]
fn unknown_kinds_and_wrong_types() {
    let t = tempfile::tempdir().unwrap();
    let unknown = format!(
        r#"{{"kind":"FancyNewEvent","id":"{ID0}","timestamp":"2026-05-04T16:30:28","source":"robot","gizmo":[1,2,{{"a":null}}]}}"#
    );
    // Envelope members of the wrong type, and a repeated kind (the last one
    // counts, as pydantic reads it).
    let wrong = r#"{"kind":"ActionEvent","id":5,"timestamp":null,"source":["agent"],"parent_id":7,"kind":"MessageEvent"}"#;
    // Kind members of the wrong type, a bare-string content, a non-object
    // content element, escapes.
    let msg = r#"{"id":"a\u0062cdef00-0000","timestamp":"2026-05-04T16:30:28.5","source":"user","parent_id":null,"llm_message":{"role":"user","content":"bare text","tool_calls":[{"id":"c1","name":"t","arguments":"{}","origin":"completion"},42],"thinking_blocks":"nope","extra":{"x":1}},"activated_skills":[1,"a"],"extended_content":[{"type":"text","text":"t1"},"oops",{"type":"image","image_urls":["data:x"]}],"sender":false,"kind":"MessageEvent"}"#.to_owned();
    let act = r#"{"kind":"ActionEvent","id":"b0000000-0000","thought":[],"action":{"kind":"DelegateAction","command":"delegate","tasks":{"x":"do x","y":"do y"},"ids":["x"]},"tool_call":{"id":"c","name":"delegate","arguments":"{}","origin":"completion","weird":1},"llm_response_id":"r","security_risk":"LOW"}"#;
    let cond = r#"{"kind":"Condensation","id":"c0000000-0000","forgotten_event_ids":["a",1,null,"b"],"summary":"S","summary_offset":2.0,"llm_response_id":"r"}"#;
    let obs = r#"{"kind":"ObservationEvent","id":"d0000000-0000","observation":{"kind":"TerminalObservation","content":[{"type":"text","text":"out"}],"is_error":false,"exit_code":3,"metadata":{"exit_code":1.0,"pid":-1,"working_dir":"/w","prefix":"P","suffix":"S"}},"action_id":"b0000000-0000","tool_call_id":"c"}"#;
    let files: Vec<(String, String)> = vec![
        (format!("events/{}", name(0, ID0)), unknown),
        (format!("events/{}", name(1, ID1)), wrong.to_owned()),
        (format!("events/{}", name(2, "abcdef00-0000")), msg),
        (
            format!("events/{}", name(3, "b0000000-0000")),
            act.to_owned(),
        ),
        (
            format!("events/{}", name(4, "c0000000-0000")),
            cond.to_owned(),
        ),
        (
            format!("events/{}", name(5, "d0000000-0000")),
            obs.to_owned(),
        ),
    ];
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_bytes()))
        .collect();
    let dir = make(t.path(), CONV, &refs);
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 6);
    assert!(conv.state().is_none());

    let e = conv.event(0).unwrap();
    assert_eq!(e.kind_name(), Some("FancyNewEvent"));
    assert!(!e.kind().unwrap().is_known());
    assert_eq!(e.kind().unwrap().as_str(), "FancyNewEvent");
    assert_eq!(e.source(), Some("robot"));

    let e = conv.event(1).unwrap();
    assert_eq!(e.kind_name(), Some("MessageEvent"));
    assert_eq!((e.id(), e.timestamp(), e.source()), (None, None, None));
    assert!(e.has_parent(), "a parent_id of another type is still one");
    assert_eq!(e.parent_id(), None);

    let e = conv.event(2).unwrap();
    assert_eq!(e.id(), Some("abcdef00-0000"), "escapes decoded");
    assert!(!e.has_parent(), "a null parent_id is none");

    let mut p = Parser::new();
    // Every decoder on every event writes the same JSON value back, with
    // undeclared and mistyped members byte for byte.
    for e in conv.events() {
        let doc = e.open(&mut p).unwrap();
        let want = OwnedValue::parse(e.raw()).unwrap();
        // Each decoder: what it writes back, and its undeclared members.
        macro_rules! outs {
            ($($decode:ident),*) => {
                [$((
                    doc.$decode().to_json(),
                    doc.$decode()
                        .members
                        .undeclared()
                        .map(|s| s.raw.to_vec())
                        .collect::<Vec<_>>(),
                )),*]
            };
        }
        let outs = outs!(
            message,
            action,
            observation,
            agent_error,
            condensation,
            system_prompt,
            user_reject
        );
        for (out, undeclared) in outs {
            assert!(
                OwnedValue::parse(&out).unwrap() == want,
                "{}",
                e.file_name()
            );
            // Compact input: byte for byte.
            assert_eq!(out, e.raw(), "{}", String::from_utf8_lossy(&out));
            for u in undeclared {
                assert!(out.windows(u.len()).any(|w| w == u));
            }
        }
    }

    let e = conv.event(2).unwrap();
    {
        let doc = e.open(&mut p).unwrap();
        let m = doc.message();
        let msg = m.llm_message.as_ref().unwrap();
        match msg.content.as_ref().unwrap() {
            Contents::Text(s) => assert_eq!(s.as_str(), "bare text"),
            c => panic!("{c:?}"),
        }
        assert!(msg.content.as_ref().unwrap().is_text());
        assert_eq!(
            msg.content.as_ref().unwrap().texts().collect::<Vec<_>>(),
            ["bare text"]
        );
        let calls = msg.tool_calls.as_ref().unwrap();
        assert!(matches!(&calls[0], Item::Ok(c) if c.name.as_deref() == Some("t")));
        match &calls[1] {
            Item::Bad { raw, error } => {
                assert_eq!(raw.raw(), b"42");
                assert_eq!((error.expected, error.found), ("object", "number"));
            }
            i => panic!("{i:?}"),
        }
        assert!(
            msg.thinking_blocks.is_none(),
            "a string is not a list of blocks"
        );
        assert_eq!(
            msg.members.get_raw("thinking_blocks"),
            Some(&b"\"nope\""[..])
        );
        assert_eq!(msg.members.get_raw("extra"), Some(&br#"{"x":1}"#[..]));
        assert!(
            m.activated_skills.is_none(),
            "a list with a number is kept raw"
        );
        assert_eq!(
            m.members.get_raw("activated_skills"),
            Some(&br#"[1,"a"]"#[..])
        );
        assert!(m.sender.is_none());
        let ext = m.extended_content.as_ref().unwrap();
        assert_eq!(ext.items().len(), 3);
        assert!(matches!(&ext.items()[1], Item::Bad { .. }));
        assert_eq!(ext.texts().collect::<Vec<_>>(), ["t1"]);
        match &ext.items()[2] {
            Item::Ok(c) => {
                assert_eq!(c.type_.as_deref(), Some(openhands::CONTENT_IMAGE));
                assert_eq!(c.image_urls.as_ref().unwrap()[0].as_str(), "data:x");
            }
            i => panic!("{i:?}"),
        }
        assert_eq!(m.id.as_deref(), Some("abcdef00-0000"));
        assert!(m.parent_id.is_none() && m.members.contains("parent_id"));
    }
    {
        let doc = conv.event(3).unwrap().open(&mut p).unwrap();
        let a = doc.action();
        assert_eq!(a.security_risk.as_deref(), Some("LOW"));
        let act = a.action_object().unwrap();
        assert!(act.is_delegate() && !act.is_task());
        assert_eq!(act.command.as_deref(), Some("delegate"));
        let tasks = act.tasks.as_ref().unwrap();
        assert_eq!(tasks.get("y").map(|s| s.as_str()), Some("do y"));
        assert_eq!(tasks.len(), 2);
        assert_eq!(act.to_json(), a.action.unwrap().raw());
        assert_eq!(
            a.tool_call.as_ref().unwrap().members.get_raw("weird"),
            Some(&b"1"[..])
        );
    }
    {
        let doc = conv.event(4).unwrap().open(&mut p).unwrap();
        let c = doc.condensation();
        assert_eq!(c.forgotten(), (vec!["a", "b"], 2));
        assert_eq!(
            c.offset(),
            Some(2),
            "2.0 is a count, as pydantic reads an int"
        );
        assert_eq!(c.summary_id().as_deref(), Some("c0000000-0000-summary"));
    }
    {
        let doc = conv.event(5).unwrap().open(&mut p).unwrap();
        let o = doc.observation();
        let t = o.observation.as_ref().unwrap().terminal();
        assert_eq!(
            t.exit_code, 1,
            "the metadata's exit code, not the top level's"
        );
        assert_eq!((t.working_dir, t.prefix, t.suffix), (Some("/w"), "P", "S"));
        assert_eq!(t.py_interpreter_path, None);
    }

    assert_same(&conv, &openhands::parse(CONV, files_of(&dir)), "parse");
}

#[test]
fn terminal_defaults() {
    let mut p = Parser::new();
    for (obs, code) in [
        (r#"{"kind":"TerminalObservation","content":[]}"#, -1),
        (r#"{"kind":"TerminalObservation","metadata":{"pid":3}}"#, -1),
        (
            r#"{"kind":"TerminalObservation","metadata":{"exit_code":2.5}}"#,
            -1,
        ),
        (
            r#"{"kind":"TerminalObservation","metadata":{"exit_code":"1"}}"#,
            -1,
        ),
        (
            r#"{"kind":"TerminalObservation","metadata":"x","exit_code":0}"#,
            -1,
        ),
        (
            r#"{"kind":"ExecuteBashObservation","metadata":{"exit_code":127}}"#,
            127,
        ),
    ] {
        let doc = p.parse(obs.as_bytes()).unwrap();
        let o = openhands::Observation::decode(doc.root()).unwrap();
        let t = o.terminal();
        assert_eq!(t.exit_code, code, "{obs}");
        assert_eq!((t.prefix, t.suffix), ("", ""));
    }
}

#[test]
fn counts() {
    let mut p = Parser::new();
    let doc = p
        .parse(
            br#"{"a":12,"b":12.0,"c":12.5,"d":-1,"e":1e18,"f":1000000000000000001,"g":1e30,
                "h":123456789012345678901234567890,"i":"12","j":null,"k":NaN,"l":0,"m":1000000000000000000,"n":-0.0}"#,
        )
        .unwrap();
    let r = doc.root();
    let c = |k: &str| openhands::count(r.get(k));
    assert_eq!(c("a"), 12);
    assert_eq!(c("b"), 12);
    assert_eq!(c("c"), 0);
    assert_eq!(c("d"), 0);
    assert_eq!(c("e"), 1_000_000_000_000_000_000);
    assert_eq!(c("f"), 0);
    assert_eq!(c("g"), 0);
    assert_eq!(c("h"), 0);
    assert_eq!(c("i"), 0);
    assert_eq!(c("j"), 0);
    assert_eq!(c("k"), 0);
    assert_eq!(c("l"), 0);
    assert_eq!(c("m"), openhands::MAX_COUNT);
    assert_eq!(c("n"), 0);
    assert_eq!(c("absent"), 0);
    let i = openhands::int(r.get("c")).unwrap();
    assert_eq!((i.value, i.exact), (12, false));
    let i = openhands::int(r.get("b")).unwrap();
    assert_eq!((i.value, i.exact), (12, true));
    assert!(openhands::int(r.get("i")).is_none());
    assert!(openhands::int(r.get("h")).is_none());
    assert_eq!(openhands::float(r.get("c")), Some(12.5));
    assert!(openhands::float(r.get("k")).unwrap().is_nan());
    assert_eq!(openhands::float(r.get("i")), None);
    assert!(openhands::is_null(r.get("j")));
    assert!(openhands::is_null(r.get("absent")));
    assert!(!openhands::is_null(r.get("l")));
}

#[test]
fn timestamps() {
    use openhands::{UtcOffset, parse_time};
    let cet = UtcOffset::from_hm(1, 0).unwrap();
    let p = parse_time("2026-05-04T16:30:28.123456", cet).unwrap();
    assert!(p.naive);
    assert_eq!(p.time.offset(), cet);
    assert_eq!(p.time.nanosecond(), 123_456_000);
    let utc = parse_time("2026-05-04T15:30:28.123456Z", cet).unwrap();
    assert!(!utc.naive);
    assert_eq!(p.time.unix_nanos(), utc.time.unix_nanos());
    assert_eq!(utc.time.unix_seconds(), 1_777_908_628);
    assert_eq!(p.time.to_string(), "2026-05-04T16:30:28.123456+01:00");
    // No fraction when the microsecond is 0, as isoformat writes it.
    let p = parse_time("2026-05-04T16:30:28", UtcOffset::UTC).unwrap();
    assert_eq!((p.time.second(), p.time.nanosecond()), (28, 0));
    // Zones.
    for (s, off) in [
        ("2026-05-04T16:30:28+05:30", 19_800),
        ("2026-05-04T16:30:28-0800", -28_800),
        ("2026-05-04T16:30:28+05", 18_000),
        ("2026-05-04T16:30:28.5+00:00", 0),
        ("2026-05-04 16:30:28z", 0),
        ("2026-05-04T16:30:28+05:30:10", 19_810),
    ] {
        let p = parse_time(s, cet).unwrap_or_else(|| panic!("{s}"));
        assert!(!p.naive, "{s}");
        assert_eq!(p.time.offset().seconds(), off, "{s}");
    }
    assert_eq!(
        parse_time("2026-05-04T16:30:28+05:30", cet)
            .unwrap()
            .time
            .unix_seconds(),
        parse_time("2026-05-04T11:00:28Z", cet)
            .unwrap()
            .time
            .unix_seconds()
    );
    // Other accepted shapes.
    assert_eq!(parse_time("2026-05-04", cet).unwrap().time.hour(), 0);
    assert_eq!(
        parse_time("2026-05-04T16:30", cet).unwrap().time.minute(),
        30
    );
    assert_eq!(
        parse_time("2026-05-04T16:30:28,25", cet)
            .unwrap()
            .time
            .nanosecond(),
        250_000_000
    );
    assert_eq!(
        parse_time("2026-05-04T16:30:28.1234567891", cet)
            .unwrap()
            .time
            .nanosecond(),
        123_456_789
    );
    // Years 1 to 9999 only, real dates and times only.
    assert!(parse_time("0001-01-01T00:00:00", UtcOffset::UTC).is_some());
    assert_eq!(
        parse_time("0001-01-01T00:00:00", UtcOffset::UTC)
            .unwrap()
            .time
            .unix_seconds(),
        -62_135_596_800
    );
    assert!(parse_time("9999-12-31T23:59:59.999999", UtcOffset::UTC).is_some());
    for bad in [
        "0000-01-01T00:00:00",
        "10000-01-01T00:00:00",
        "2026-02-29T00:00:00",
        "2026-13-01T00:00:00",
        "2026-04-31T00:00:00",
        "2026-05-04T24:00:00",
        "2026-05-04T16:60:00",
        "2026-05-04T16:30:60",
        "2026-05-04T16:30:28.",
        "2026-05-04T16:30:28+24:00",
        "2026-05-04T16:30:28+05:61",
        "2026-05-04T16:30:28 ",
        "2026-05-04X16:30:28",
        "20260504T163028",
        "2026-5-4T16:30:28",
        "",
        "yesterday",
        "2026-05-04T16:30:28+05:30:10.5",
    ] {
        assert!(parse_time(bad, cet).is_none(), "{bad}");
    }
    assert!(parse_time("2024-02-29T00:00:00", cet).is_some());
    assert!(parse_time("2000-02-29T00:00:00", cet).is_some());
    assert!(parse_time("1900-02-29T00:00:00", cet).is_none());
    // Ordering by instant.
    let a = parse_time("2026-05-04T16:30:28", cet).unwrap().time;
    let b = parse_time("2026-05-04T16:00:28Z", cet).unwrap().time;
    assert!(a < b);
    assert!(UtcOffset::from_seconds(86_400).is_none());
    assert_eq!(UtcOffset::from_hm(-5, -30).unwrap().to_string(), "-05:30");
}
