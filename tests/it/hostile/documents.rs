//! Event documents: truncated at every byte, over the size limit, deep, wide, long numbers, invalid UTF-8.

use super::*;

/// A real event, from the shared corpus (an `ActionEvent` of SDK 1.58.2).
fn real_event() -> Vec<u8> {
    let dir = crate::common::corpus_dir()
        .join("openhands/1.58.2/coding/3e806943a81f4015bf2f5d5b5e0120de/events");
    let f = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("event-00002-"))
        })
        .expect("the corpus event");
    fs::read(f).unwrap()
}

#[test]
fn event_truncated_at_every_byte() {
    let full = real_event();
    assert!(full.len() > 1000);
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    let path = dir.join("events").join(name(1, ID1));
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    let mut parser = Parser::new();
    let mut read_ok = 0;
    for n in 0..=full.len() {
        let prefix = &full[..n];
        // In memory: the event checks of the fuzz target (envelope, every
        // decoder's round trip, errors with offsets in range).
        fuzz_checks::event(prefix);
        // On disk.
        fs::write(&path, prefix).unwrap();
        reader.read_into(&dir, &mut conv).unwrap();
        assert_eq!(conv.len(), 3);
        let e = conv.event(1).unwrap();
        let valid = parser
            .parse(prefix)
            .is_ok_and(|d| d.root().json_type() == JsonType::Object);
        if valid {
            read_ok += 1;
            assert!(e.is_ok());
            assert_eq!(e.raw(), prefix);
        } else {
            let err = e.error().expect("a torn file is malformed, not dropped");
            assert_eq!(err.path(), path);
            match err {
                FileError::Source(SourceError::Empty { .. }) => assert_eq!(n, 0),
                FileError::Json { source, .. } => {
                    let o = source.offset().expect("an offset");
                    assert!(o <= n, "offset {o} past {n}");
                }
                FileError::NotAnObject { .. } => {}
                other => panic!("{other:?}"),
            }
            assert_eq!(status_of(&conv, &name(1, ID1)), FileStatus::Malformed);
        }
        assert!(conv.event(2).unwrap().is_ok(), "the next event is read");
        if n % 64 == 0 {
            let _ = view_of(&conv);
        }
    }
    // Only the whole object (give or take trailing white space) is valid.
    assert!((1..=2).contains(&read_ok), "{read_ok}");
}

// ---------------------------------------------------------------- sizes

/// The process's peak resident set in KiB (Linux), to show a file was not
/// read.
fn peak_rss_kib() -> Option<u64> {
    let s = fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn one_gib_plus_one_byte_is_refused_before_reading() {
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    let big = MAX_SIZE + 1;
    let ev = dir.join("events").join(name(1, ID1));
    fs::File::create(&ev).unwrap().set_len(big).unwrap();
    fs::File::create(dir.join("meta.json"))
        .unwrap()
        .set_len(big)
        .unwrap();
    let root = t.path().join("sessions");
    fs::create_dir_all(root.join("s")).unwrap();
    fs::File::create(root.join("s/s_2025-01-01--00-00-00_meta.json"))
        .unwrap()
        .set_len(big)
        .unwrap();
    let before = peak_rss_kib();

    let conv = read_conversation(&dir).unwrap();
    match conv.event(1).unwrap().error() {
        Some(FileError::Source(SourceError::TooLarge { path, size })) => {
            assert_eq!(path, &ev);
            assert_eq!(*size, big);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        conv.meta().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::TooLarge { .. }))
    ));
    assert!(conv.event(2).unwrap().is_ok());
    let _ = view_of(&conv);
    let store = SessionStore::new(&root);
    let list = store.list_sessions();
    assert!(matches!(
        list.skipped.first().map(|s| &s.error),
        Some(LoadError::Read(SourceError::TooLarge { .. }))
    ));
    assert!(matches!(
        store.load_session_metadata("s"),
        Err(LoadError::Read(SourceError::TooLarge { .. }))
    ));
    // Nothing of the 1 GiB was read: the peak resident set did not grow by
    // anything near it (other tests of this binary run alongside, but none
    // uses hundreds of MiB).
    if let (Some(a), Some(b)) = (before, peak_rss_kib()) {
        assert!(b.saturating_sub(a) < 512 * 1024, "peak grew {a} -> {b} KiB");
    }
}

#[test]
fn nesting_100000_deep() {
    let depth = 100_000;
    let mut arrays = Vec::with_capacity(2 * depth + 64);
    arrays.extend_from_slice(br#"{"kind":"MessageEvent","id":"x","deep":"#);
    arrays.extend(std::iter::repeat_n(b'[', depth));
    arrays.extend(std::iter::repeat_n(b']', depth));
    arrays.push(b'}');
    let mut objects = Vec::with_capacity(6 * depth + 64);
    objects.extend_from_slice(br#"{"kind":"MessageEvent","id":"x","deep":"#);
    for _ in 0..depth {
        objects.extend_from_slice(br#"{"a":"#);
    }
    objects.extend_from_slice(b"1");
    objects.extend(std::iter::repeat_n(b'}', depth + 1));
    for doc in [&arrays, &objects] {
        let e = Parser::new().parse(doc).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::TooDeep);
        assert!(e.offset().is_some_and(|o| o < doc.len()));
        assert!(OwnedValue::parse(doc).is_err());
        fuzz_checks::event(doc);
        fuzz_checks::state(doc);
        fuzz_checks::json(doc);
        let conv = openhands::parse(
            CONV,
            [
                ("base_state.json".to_owned(), doc.to_vec()),
                (format!("events/{}", name(0, ID0)), doc.to_vec()),
            ],
        );
        assert!(matches!(
            conv.event(0).unwrap().error(),
            Some(FileError::Json { source, .. }) if source.kind() == JsonErrorKind::TooDeep
        ));
        assert!(conv.state().and_then(|f| f.error()).is_some());
        let _ = view_of(&conv);
        // OC Chat.
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("s")).unwrap();
        fs::write(t.path().join("s/s_2025-01-01--00-00-00_meta.json"), doc).unwrap();
        let store = SessionStore::new(t.path());
        assert_eq!(store.list_sessions().skipped.len(), 1);
        assert!(matches!(
            store.load_session("s"),
            Err(LoadError::Json { .. })
        ));
    }
}

/// `{"kind": "MessageEvent", "id": "x", <n members>}`: distinct names, or
/// one declared name (`role` inside `llm_message`, `kind` at the top)
/// repeated.
fn many_members(n: usize, repeat: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 16 + 64);
    out.extend_from_slice(br#"{"id":"x","llm_message":{"#);
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        if repeat {
            out.extend_from_slice(br#""role":"user""#);
        } else {
            write!(out, r#""m{i}":{}"#, i % 10).unwrap();
        }
    }
    out.extend_from_slice(b"}");
    for _ in 0..if repeat { n } else { 0 } {
        out.extend_from_slice(br#","kind":"MessageEvent""#);
    }
    out.extend_from_slice(br#","kind":"MessageEvent"}"#);
    out
}

#[test]
fn a_million_tiny_members() {
    // Slow in a debug build (measured: 8 to 17 s a shape, 5 s for the OC
    // Chat meta, on 2 shared cores); hours before decoding a repeated
    // declared name stopped rescanning every member, and OC Chat's dict
    // view, its extra members and `Map` equality stopped probing linearly.
    for repeat in [false, true] {
        let doc = many_members(1_000_000, repeat);
        let started = Instant::now();
        let conv = openhands::parse(CONV, [(format!("events/{}", name(0, ID0)), &doc)]);
        let ev = conv.event(0).unwrap();
        assert!(ev.is_ok());
        assert_eq!(ev.kind_name(), Some("MessageEvent"));
        let mut parser = Parser::new();
        let d = ev.open(&mut parser).unwrap();
        let m = MessageEvent::decode(d.root()).unwrap();
        let msg = m.llm_message.as_ref().unwrap();
        assert_eq!(msg.members.len(), 1_000_000);
        if repeat {
            assert_eq!(msg.role.as_ref().map(|r| r.as_str()), Some("user"));
            assert_eq!(m.members.undeclared().count(), 1_000_000);
        }
        let encoded = m.to_json();
        let again = OwnedValue::parse(&encoded).unwrap();
        assert!(again == OwnedValue::from(d.root()), "round trip");
        let _ = view_of(&conv);
        eprintln!(
            "a million members (repeated: {repeat}): {:?}",
            started.elapsed()
        );
    }
    // OC Chat: a meta with a million members lists, loads and saves back.
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("s")).unwrap();
    let mut meta = Vec::with_capacity(16_000_000);
    meta.extend_from_slice(br#"{"session_name": "s""#);
    for i in 0..1_000_000 {
        write!(meta, r#", "x{}": {i}"#, i % 500_000).unwrap();
    }
    meta.push(b'}');
    fs::write(t.path().join("s/s_2025-01-01--00-00-00_meta.json"), &meta).unwrap();
    let started = Instant::now();
    let store = SessionStore::new(t.path());
    assert_eq!(store.list_sessions().sessions.len(), 1);
    let s = store.load_session("s").unwrap();
    assert_eq!(s.meta_extra.len(), 500_000, "duplicates collapse");
    eprintln!("OC Chat meta of a million members: {:?}", started.elapsed());
}

#[test]
fn numbers_of_10000_digits() {
    let digits: String = "1234567890".repeat(1000);
    let cases = [
        digits.clone(),
        format!("-{digits}"),
        format!("{digits}.5e-3"),
        format!("0.{digits}"),
        format!("1e{digits}"),
        format!("-1e-{digits}"),
    ];
    for n in &cases {
        let ev = format!(
            r#"{{"kind":"Condensation","id":"c","forgotten_event_ids":[],"summary":"s","summary_offset":{n},"observation":{{"metadata":{{"exit_code":{n}}}}},"usage":{{"prompt_tokens":{n}}},"n":{n}}}"#
        );
        fuzz_checks::event(ev.as_bytes());
        fuzz_checks::json(ev.as_bytes());
        let mut parser = Parser::new();
        let doc = parser.parse(ev.as_bytes()).unwrap();
        let root = doc.root();
        let v = root.get("n").unwrap();
        assert_eq!(v.raw(), n.as_bytes(), "every digit kept");
        assert_eq!(openhands::count(Some(v)), 0, "no count that large");
        let c = openhands::Condensation::decode(root).unwrap();
        // `-1e-<10,000 digits>` is -0.0: a whole number, which pydantic
        // takes for the int 0; every other value is no count.
        let want = n.starts_with("-1e-").then_some(0);
        assert_eq!(c.offset(), want, "{}", &n[..12]);
        let owned = OwnedValue::from(root);
        let written = owned.to_string_styled(Style::COMPACT);
        assert!(written.contains(n.as_str()), "written back exactly");
        // As an OC Chat count.
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("s")).unwrap();
        fs::write(
            t.path().join("s/s_2025-01-01--00-00-00_meta.json"),
            format!(
                r#"{{"session_name":"s","last_turn_max_prompt_tokens":{n},"stats":{{"total_tokens":{n}}}}}"#
            ),
        )
        .unwrap();
        let store = SessionStore::new(t.path());
        assert_eq!(store.list_sessions().sessions.len(), 1);
        let _ = store.load_session("s").unwrap();
    }
}

#[test]
fn invalid_utf8_inside_strings() {
    let docs: [&[u8]; 4] = [
        b"{\"kind\":\"MessageEvent\",\"id\":\"a\xffb\"}",
        b"{\"kind\":\"MessageEvent\",\"k\xc3\":1}",
        b"{\"kind\":\"MessageEvent\",\"id\":\"\xed\xa0\x80\"}",
        b"{\"kind\":\"MessageEvent\",\"id\":\"\xf4\x90\x80\x80\"}",
    ];
    for doc in docs {
        let bad_at = doc.iter().position(|&b| b >= 0x80).unwrap();
        let e = Parser::new().parse(doc).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::InvalidUtf8, "{doc:?}");
        assert!(
            e.offset()
                .is_some_and(|o| o <= bad_at + 1 && o + 4 >= bad_at),
            "offset {:?}, bad byte at {bad_at}",
            e.offset()
        );
        fuzz_checks::event(doc);
        fuzz_checks::state(doc);
        let conv = openhands::parse(
            CONV,
            [
                ("base_state.json".to_owned(), doc.to_vec()),
                (format!("events/{}", name(0, ID0)), doc.to_vec()),
                (
                    format!("events/{}", name(1, ID1)),
                    event("MessageEvent", ID1, None).into_bytes(),
                ),
            ],
        );
        assert!(matches!(
            conv.event(0).unwrap().error(),
            Some(FileError::Json { source, .. }) if source.kind() == JsonErrorKind::InvalidUtf8
        ));
        assert!(conv.event(1).unwrap().is_ok());
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("s")).unwrap();
        fs::write(t.path().join("s/s_2025-01-01--00-00-00_meta.json"), doc).unwrap();
        let store = SessionStore::new(t.path());
        let list = store.list_sessions();
        assert!(matches!(
            list.skipped.first().map(|s| &s.error),
            Some(LoadError::Json { .. })
        ));
    }
}

// ---------------------------------------------------------------- the tree
