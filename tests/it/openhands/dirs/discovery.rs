//! Finding conversations: directories that cannot be listed, name patterns and odd names.

use super::*;

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
    // A state that is JSON but not OpenHands' (looked at first), with an
    // event file beside it: the events make the conversation.
    let c = make(
        root,
        "store/conversations/ffffffffffffffffffffffffffffffff",
        &[
            ("base_state.json", b"{\"not\": \"state\"}"),
            (&format!("events/{}", name(0, ID0)), ev.as_bytes()),
        ],
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
    assert_eq!(found.len(), 3, "{found:?}");
    let canon: Vec<PathBuf> = found.iter().map(|p| fs::canonicalize(p).unwrap()).collect();
    assert!(canon.contains(&fs::canonicalize(&a).unwrap()));
    assert!(canon.contains(&fs::canonicalize(&b).unwrap()));
    assert!(canon.contains(&fs::canonicalize(&c).unwrap()));
    assert!(openhands::is_conversation_dir(&c));
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
