//! The OpenHands reader on hand-made directories: every file status, every
//! malformed shape, unknown kinds, members of the wrong type, sub-agents,
//! forks, partial conversations, discovery.

use crate::common::unprivileged;

use std::fs;
use std::path::{Path, PathBuf};

use crate::fuzz_checks::same::assert_same;
use agentlog::json::{Item, JsonErrorKind, JsonType, OwnedValue, Parser};
use agentlog::openhands::{
    self, Contents, DecodeError, FileError, FileStatus, NameError, NamePattern, ReadError, Reader,
    Reason, read_conversation,
};
use agentlog::source::SourceError;

const ID0: &str = "00000000-0000-4000-8000-000000000000";
const ID1: &str = "11111111-1111-4111-8111-111111111111";
const ID2: &str = "22222222-2222-4222-8222-222222222222";
const ID3: &str = "33333333-3333-4333-8333-333333333333";
const CONV: &str = "0123456789abcdef0123456789abcdef";

fn event(kind: &str, id: &str, parent: Option<&str>) -> String {
    let p = parent.map_or(String::new(), |p| format!(r#","parent_id":"{p}""#));
    format!(
        r#"{{"id":"{id}","timestamp":"2026-05-04T16:30:28.123456","source":"user"{p},"llm_message":{{"role":"user","content":[{{"cache_prompt":false,"type":"text","text":"hi"}}],"thinking_blocks":[]}},"activated_skills":[],"extended_content":[],"kind":"{kind}"}}"#
    )
}

fn state(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","agent":{{"llm":{{"model":"m","usage_id":"agent"}},"kind":"Agent"}},"workspace":{{"working_dir":"/w","kind":"LocalWorkspace"}},"execution_status":"idle","head_is_empty":false,"stats":{{"usage_to_metrics":{{}}}}}}"#
    )
}

fn name(i: u64, id: &str) -> String {
    format!("event-{i:05}-{id}.json")
}

/// A conversation directory under `root` with `files` (relative path,
/// contents).
fn make(root: &Path, dir: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let d = root.join(dir);
    fs::create_dir_all(&d).unwrap();
    for (p, b) in files {
        let p = d.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, b).unwrap();
    }
    d
}

/// Every file under `dir` by relative path.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(rel) = p.strip_prefix(dir).unwrap().to_str() {
                let bytes = fs::read(&p).unwrap_or_default();
                out.push((rel.to_owned(), bytes));
            }
        }
    }
    out
}

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

/// Discovery skips a directory it cannot list, reports it, and finds the
/// rest. Run as a user permissions apply to (as root, in a child as
/// `nobody`; see `unprivileged`).
#[test]
fn discovery_skips_what_it_cannot_list() {
    use std::os::unix::fs::PermissionsExt;
    if !unprivileged::checks_run_here(module_path!(), "discovery_skips_what_it_cannot_list") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let st = state("01234567-89ab-cdef-0123-456789abcdef");
    let a = make(
        root,
        "store/conversations/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        &[("base_state.json", st.as_bytes())],
    );
    let locked = make(
        root,
        "store/locked/ffffffffffffffffffffffffffffffff",
        &[("base_state.json", st.as_bytes())],
    );
    let mut both = vec![a.clone(), locked.clone()];
    both.sort();
    assert_eq!(openhands::find_sessions(root.join("store")).unwrap(), both);
    let parent = locked.parent().unwrap();
    fs::set_permissions(parent, fs::Permissions::from_mode(0o000)).unwrap();
    let found = openhands::find_sessions(root.join("store"));
    let discovery = openhands::discover(root.join("store"));
    fs::set_permissions(parent, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(found.unwrap(), vec![a.clone()]);
    let discovery = discovery.unwrap();
    assert_eq!(discovery.conversations, vec![a]);
    assert_eq!(discovery.unreadable.len(), 1, "{:?}", discovery.unreadable);
    assert!(matches!(&discovery.unreadable[0], ReadError::Io { .. }));
}

#[test]
fn discovery() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let st = state("01234567-89ab-cdef-0123-456789abcdef");
    let ev = event("MessageEvent", ID0, None);
    let a = make(
        root,
        "store/conversations/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        &[("base_state.json", st.as_bytes())],
    );
    let b = make(
        root,
        "store/agent-canvas/conversations/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        &[(&format!("events/{}", name(0, ID0)), ev.as_bytes())],
    );
    // Not walked: version control, a conversation's own directories.
    make(
        root,
        "store/.git/cccccccccccccccccccccccccccccccc",
        &[("base_state.json", st.as_bytes())],
    );
    make(
        root,
        "store/observations/dddddddddddddddddddddddddddddddd",
        &[("base_state.json", st.as_bytes())],
    );
    make(
        root,
        "store/npm-cache/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
        &[("base_state.json", st.as_bytes())],
    );
    // Not conversations.
    make(root, "store/conversations/empty", &[]);
    make(
        root,
        "store/conversations/other",
        &[("base_state.json", b"[]"), ("events/x.json", b"{}")],
    );
    // A symbolic link loop and a second link to a conversation.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("store"), root.join("store/conversations/loop"))
            .unwrap();
        std::os::unix::fs::symlink(&a, root.join("store/again")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", root.join("store/dangling")).unwrap();
    }
    let found = openhands::find_sessions(root.join("store")).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    let canon: Vec<PathBuf> = found.iter().map(|p| fs::canonicalize(p).unwrap()).collect();
    assert!(canon.contains(&fs::canonicalize(&a).unwrap()));
    assert!(canon.contains(&fs::canonicalize(&b).unwrap()));
    assert_eq!(openhands::find_sessions(&a).unwrap(), vec![a.clone()]);
    let evf = b.join("events").join(name(0, ID0));
    assert_eq!(openhands::find_sessions(&evf).unwrap(), vec![b.clone()]);
    assert!(matches!(
        openhands::find_sessions(root.join("missing")),
        Err(ReadError::Io { .. })
    ));
    assert!(matches!(
        openhands::find_sessions(root.join("store/conversations/other/events/x.json")),
        Err(ReadError::NotAConversationFile { .. })
    ));
    assert!(matches!(
        read_conversation(root.join("store/conversations/empty")),
        Err(ReadError::NoConversation { .. })
    ));
    assert!(matches!(
        read_conversation(root.join("nope")),
        Err(ReadError::Io { .. })
    ));
    assert!(!openhands::is_conversation_dir(
        root.join("store/conversations/other")
    ));
    assert!(!openhands::is_conversation_file(
        root.join("store/conversations/other/events/x.json")
    ));
    assert!(!openhands::is_conversation_file(root.join("store")));
    assert_eq!(
        openhands::conversation_dir(Path::new("base_state.json")).ok(),
        None,
        "a path that does not exist"
    );
}

#[test]
fn name_patterns_and_odd_names() {
    // By version: six-digit indexes are bad names to SDK 1.0–1.29.
    let mut names: Vec<String> = (0..3).map(|i| name(i, ID0)).collect();
    names.push(format!("event-100000-{ID1}.json"));
    names.push(format!("event-000003-{ID2}.json"));
    let cur = openhands::EventFiles::from_names(&names, NamePattern::FiveOrMoreDigits);
    assert_eq!(cur.len(), 4, "000003 is index 3 from SDK 1.30");
    assert_eq!(cur.gap(), Some(4));
    let old = openhands::EventFiles::from_names(&names, NamePattern::FiveDigits);
    assert_eq!(old.len(), 3);
    assert_eq!(old.gap(), None);
    assert_eq!(
        old.files()
            .filter(|f| f.status() == FileStatus::BadName)
            .count(),
        2
    );
    assert_eq!(NamePattern::of_sdk(1, 29), NamePattern::FiveDigits);
    assert_eq!(NamePattern::of_sdk(1, 30), NamePattern::FiveOrMoreDigits);
    // An index beyond u64 is a gap; a repeated huge one is not a duplicate.
    let huge = openhands::EventFiles::from_names(
        [
            name(0, ID0),
            format!("event-99999999999999999999999-{ID1}.json"),
        ],
        NamePattern::default(),
    );
    assert_eq!(huge.len(), 1);
    assert_eq!(huge.gap(), Some(1));
    let f = huge.files().nth(1).unwrap();
    assert_eq!(
        (f.status(), f.index(), f.id()),
        (FileStatus::Gap, None, Some(ID1))
    );

    // On disk: Unicode digits, a final newline, a non-UTF-8 name, a
    // directory named like an event file.
    let t = tempfile::tempdir().unwrap();
    let e = event("MessageEvent", ID0, None);
    let dir = make(
        t.path(),
        CONV,
        &[
            (&format!("events/event-٠٠٠٠٠-{ID0}.json"), e.as_bytes()),
            (&format!("events/event-00001-{ID1}.json\n"), e.as_bytes()),
        ],
    );
    fs::create_dir(dir.join("events").join(name(2, ID2))).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let n = std::ffi::OsStr::from_bytes(b"event-00003-\xff.json");
        fs::write(dir.join("events").join(n), e.as_bytes()).unwrap();
    }
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 3);
    assert_eq!(conv.event(0).unwrap().file_id(), ID0);
    assert_eq!(conv.event(1).unwrap().file_id(), ID1);
    assert!(conv.event(1).unwrap().is_ok(), "read by its listed name");
    let d = conv.event(2).unwrap();
    assert!(matches!(
        d.error(),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    #[cfg(unix)]
    {
        let bad = conv
            .files()
            .find(|f| f.status() == FileStatus::BadName)
            .unwrap();
        assert!(matches!(
            bad.reason(),
            Some(Reason::BadName(NameError::NotUtf8))
        ));
    }
    assert!(conv.dirs().is_empty() || conv.dirs() == ["events"]);
}

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
