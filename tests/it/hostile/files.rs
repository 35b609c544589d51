//! The store's files and directories: shapes swapped, links, permissions, names that are not UTF-8.

use super::*;

#[test]
fn events_is_a_file() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(CONV);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("base_state.json"), STATE).unwrap();
    fs::write(dir.join("events"), b"not a directory").unwrap();
    fs::write(dir.join("subagents"), b"nor this").unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert!(conv.state().and_then(|f| f.error()).is_none());
    assert_eq!(conv.len(), 0);
    assert_eq!(
        conv.others(),
        ["events", "subagents"],
        "the files are accounted for"
    );
    // Reported, not passed over: `events` and `subagents` that are files
    // are errors of the conversation.
    assert!(conv.subagents().is_empty());
    let e = conv
        .subagents_error()
        .expect("subagents/ a file is an error");
    assert!(e.to_string().contains("not a directory"), "{e}");
    let e = conv.events_error().expect("events/ a file is an error");
    assert!(e.to_string().contains("not a directory"), "{e}");
    assert!(view_of(&conv).is_empty());
    // Without a state there is nothing of a conversation left.
    fs::remove_file(dir.join("base_state.json")).unwrap();
    assert!(matches!(
        read_conversation(&dir),
        Err(ReadError::NoConversation { .. })
    ));
}

#[test]
fn event_file_is_a_directory() {
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    let ev = dir.join("events").join(name(1, ID1));
    fs::remove_file(&ev).unwrap();
    fs::create_dir_all(ev.join("inside")).unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert_eq!(
        conv.len(),
        3,
        "the directory keeps its place in the sequence"
    );
    let e = conv.event(1).unwrap();
    assert!(!e.is_ok());
    assert!(e.raw().is_empty());
    assert!(matches!(
        e.error(),
        Some(FileError::Source(SourceError::NotAFile { path })) if path == &ev
    ));
    assert_eq!(status_of(&conv, &name(1, ID1)), FileStatus::Malformed);
    assert!(conv.event(2).unwrap().is_ok(), "the rest is read");
    let issues = view_of(&conv);
    assert!(
        issues
            .iter()
            .any(|i| matches!(i, ViewIssue::Event { index: 1, .. })),
        "{issues:?}"
    );
    // `parse` sees the same from the paths alone.
    let parsed = openhands::parse(
        CONV,
        [
            ("base_state.json".to_owned(), STATE.as_bytes().to_vec()),
            (
                format!("events/{}", name(0, ID0)),
                event("MessageEvent", ID0, None).into_bytes(),
            ),
            (format!("events/{}/inside/x", name(1, ID1)), b"{}".to_vec()),
        ],
    );
    assert!(matches!(
        parsed.event(1).unwrap().error(),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
}

#[test]
fn state_and_meta_are_directories() {
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    fs::remove_file(dir.join("base_state.json")).unwrap();
    fs::create_dir_all(dir.join("base_state.json/x")).unwrap();
    fs::create_dir_all(dir.join("meta.json")).unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert!(conv.state().is_some() && conv.meta().is_some());
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert!(matches!(
        conv.meta().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert_eq!(conv.parsed_event_count(), 3, "the events are read");
    assert!(
        conv.dirs().iter().all(|d| d != "base_state.json"),
        "{:?}",
        conv.dirs()
    );
    let mut parser = Parser::new();
    assert!(conv.state().map(|f| f.open(&mut parser)).unwrap().is_err());
    let _ = view_of(&conv);
    // `parse`, given `base_state.json` only as a directory, agrees.
    let parsed = openhands::parse(
        CONV,
        [
            ("base_state.json/x/y", b"{}".as_slice()),
            ("meta.json/z", b"{}".as_slice()),
        ],
    );
    assert!(parsed.state().is_some() && parsed.meta().is_some());
    assert!(matches!(
        parsed.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert!(parsed.dirs().is_empty(), "{:?}", parsed.dirs());
    assert!(!openhands::is_conversation_dir(&dir) || conv.parsed_event_count() > 0);
    assert_eq!(openhands::state_id(&dir), None);
}

// ---------------------------------------------------------------- links

#[test]
fn symlink_loops() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let dir = conversation(&store);
    // An event file that is a link to itself, one that is a link to a link
    // loop, and a directory link looping back to the store.
    let ev = dir.join("events").join(name(1, ID1));
    fs::remove_file(&ev).unwrap();
    symlink(&ev, &ev).unwrap();
    symlink(dir.join("b"), dir.join("a")).unwrap();
    symlink(dir.join("a"), dir.join("b")).unwrap();
    symlink(&store, store.join("loop")).unwrap();
    symlink(&store, dir.join("loop")).unwrap();
    // A sub-agent that is the conversation itself, and one above it.
    fs::create_dir_all(dir.join("subagents")).unwrap();
    symlink(&dir, dir.join("subagents/ffffffffffffffffffffffffffffffff")).unwrap();
    symlink(
        &store,
        dir.join("subagents/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"),
    )
    .unwrap();

    let conv = read_conversation(&dir).unwrap();
    let e = conv.event(1).unwrap();
    match e.error() {
        Some(FileError::Source(SourceError::Io { path, source })) => {
            assert_eq!(path, &ev);
            assert_eq!(source.raw_os_error(), Some(40), "ELOOP: {source}");
        }
        other => panic!("{other:?}"),
    }
    assert!(conv.event(2).unwrap().is_ok());
    // The looping links are other files (they are no directories).
    assert!(conv.others().iter().any(|o| o == "a"));
    assert!(
        conv.subagents().is_empty(),
        "a link back up is no sub-agent: {:?}",
        conv.subagents()
    );
    assert_eq!(
        conv.subagent_loops(),
        [
            "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
            "ffffffffffffffffffffffffffffffff"
        ],
        "but it is recorded"
    );
    // Discovery ends, and finds the one conversation once.
    let found = openhands::find_sessions(&store).unwrap();
    assert_eq!(found, vec![dir.clone()]);
}

#[test]
fn symlinks_out_of_the_store() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let dir = conversation(&store);
    let outside = t.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    // An event file that is a link to a file outside the store: followed,
    // as the SDK follows it, and read like any event file.
    fs::write(outside.join("ev.json"), event("MessageEvent", ID1, None)).unwrap();
    let ev1 = dir.join("events").join(name(1, ID1));
    fs::remove_file(&ev1).unwrap();
    symlink(outside.join("ev.json"), &ev1).unwrap();
    // Links to devices: never read (`/dev/zero` would never end).
    let ev2 = dir.join("events").join(name(2, ID2));
    fs::remove_file(&ev2).unwrap();
    symlink("/dev/zero", &ev2).unwrap();
    fs::remove_file(dir.join("base_state.json")).unwrap();
    symlink("/dev/null", dir.join("base_state.json")).unwrap();
    // A directory link to the root of the file system, and one to a
    // directory outside holding a conversation.
    symlink("/", store.join("escape")).unwrap();
    let other = conversation(&outside.join("elsewhere"));
    symlink(&other, store.join("linked")).unwrap();

    let conv = read_conversation(&dir).unwrap();
    assert!(conv.event(1).unwrap().is_ok());
    assert_eq!(conv.event(1).unwrap().id(), Some(ID1));
    assert!(matches!(
        conv.event(2).unwrap().error(),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    let _ = view_of(&conv);
    // Discovery lists the linked conversation, and does not walk the whole
    // file system through `escape` (which would find the shared corpus and
    // anything else on the machine).
    let found = openhands::find_sessions(&store).unwrap();
    assert_eq!(found, vec![dir.clone(), store.join("linked")]);
}

#[test]
fn fifo_is_not_opened() {
    // Opening a FIFO for reading waits for a writer: a hang, unless the
    // reader looks first.
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    let ev = dir.join("events").join(name(1, ID1));
    fs::remove_file(&ev).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&ev)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        crate::common::skip_unless_ci("FIFOs as event and state files", "no mkfifo here");
        return;
    }
    fs::remove_file(dir.join("base_state.json")).unwrap();
    std::process::Command::new("mkfifo")
        .arg(dir.join("base_state.json"))
        .status()
        .unwrap();
    let conv = read_conversation(&dir).unwrap();
    assert!(matches!(
        conv.event(1).unwrap().error(),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::NotAFile { .. }))
    ));
    assert!(conv.event(2).unwrap().is_ok());
    // OC Chat's records too.
    let root = t.path().join("sessions");
    fs::create_dir_all(root.join("s")).unwrap();
    std::process::Command::new("mkfifo")
        .arg(root.join("s/s_2025-01-01--00-00-00_meta.json"))
        .status()
        .unwrap();
    let list = SessionStore::new(&root).list_sessions();
    assert_eq!(list.sessions.len() + list.skipped.len(), 1);
    assert!(matches!(
        SessionStore::new(&root).load_session_metadata("s"),
        Err(LoadError::Read(SourceError::NotAFile { .. }))
    ));
}

// ---------------------------------------------------------------- permissions

/// Files and directories this user cannot read: each is recorded with its
/// typed error and the rest is read. Run as a user permissions apply to
/// (as root, in a child as `nobody`; see `unprivileged`).
#[test]
fn unreadable_files_and_directories() {
    if !unprivileged::checks_run_here(module_path!(), "unreadable_files_and_directories") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = conversation(t.path());
    fs::create_dir_all(dir.join("subagents/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/events")).unwrap();
    fs::write(
        dir.join("subagents/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/base_state.json"),
        STATE,
    )
    .unwrap();
    let lock = |p: &Path| fs::set_permissions(p, fs::Permissions::from_mode(0o000)).unwrap();
    let unlock = |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    // Before anything is locked: discovery finds the conversation.
    assert_eq!(
        openhands::find_sessions(t.path()).unwrap(),
        vec![dir.clone()]
    );
    let ev1 = dir.join("events").join(name(1, ID1));
    lock(&ev1);
    lock(&dir.join("base_state.json"));
    lock(&dir.join("subagents"));

    let conv = read_conversation(&dir).unwrap();
    match conv.event(1).unwrap().error() {
        Some(FileError::Source(SourceError::Io { path, source })) => {
            assert_eq!(path, &ev1);
            assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        conv.state().and_then(|f| f.error()),
        Some(FileError::Source(SourceError::Io { .. }))
    ));
    assert!(matches!(conv.subagents_error(), Some(ReadError::Io { .. })));
    assert!(conv.subagents().is_empty());
    assert!(conv.event(0).unwrap().is_ok() && conv.event(2).unwrap().is_ok());
    let _ = view_of(&conv);

    // `events/` that cannot be listed: recorded, the rest read.
    lock(&dir.join("events"));
    let conv = read_conversation(&dir).unwrap();
    assert!(matches!(conv.events_error(), Some(ReadError::Io { .. })));
    assert_eq!(conv.len(), 0);
    assert!(openhands::event_ids(&dir).is_err());
    // The conversation directory itself.
    let mode = fs::metadata(&dir).unwrap().permissions().mode();
    lock(&dir);
    let r = read_conversation(&dir);
    assert!(matches!(r, Err(ReadError::Io { .. })), "{r:?}");
    // Discovery skips what it cannot list, without failing.
    let found = openhands::find_sessions(t.path()).unwrap();
    assert!(found.is_empty(), "{found:?}");
    unlock(&dir, mode);
    unlock(&dir.join("events"), 0o755);
    unlock(&dir.join("subagents"), 0o755);
    unlock(&dir.join("base_state.json"), 0o644);
    unlock(&ev1, 0o644);
}

// ---------------------------------------------------------------- names

#[test]
fn non_utf8_names() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let dir = conversation(&store);
    let bad = |b: &[u8]| PathBuf::from(OsStr::from_bytes(b));
    fs::write(
        dir.join("events")
            .join(bad(b"event-00003-\xff\xfe0000000.json")),
        event("MessageEvent", ID0, None),
    )
    .unwrap();
    fs::write(dir.join(bad(b"notes-\xff.txt")), b"x").unwrap();
    let sub = dir.join("subagents").join(bad(b"sub-\xff"));
    fs::create_dir_all(sub.join("events")).unwrap();
    fs::write(sub.join("base_state.json"), STATE).unwrap();
    // A conversation whose own directory name is not UTF-8.
    let odd = store.join(bad(b"conv-\xfe"));
    fs::create_dir_all(&odd).unwrap();
    fs::write(odd.join("base_state.json"), STATE).unwrap();

    let conv = read_conversation(&dir).unwrap();
    assert_eq!(conv.len(), 3);
    let f = conv
        .files()
        .find(|f| f.name().starts_with("event-00003"))
        .expect("listed");
    assert_eq!(f.status(), FileStatus::BadName);
    assert!(matches!(
        f.reason(),
        Some(Reason::BadName(NameError::NotUtf8))
    ));
    assert_eq!(conv.others().len(), 1);
    assert_eq!(conv.subagents().len(), 1);
    let subdir = conv.subagent_dirs().next().unwrap();
    assert_eq!(subdir, sub, "the sub-agent is reachable by its real name");
    assert!(read_conversation(&subdir).is_ok());
    let conv = read_conversation(&odd).unwrap();
    assert_eq!(conv.dir(), odd);
    assert_eq!(conv.name(), "conv-\u{fffd}");
    let found = openhands::find_sessions(&store).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");

    // OC Chat: a session directory and a record with such names.
    let root = t.path().join("sessions");
    let s = root.join(bad(b"s\xff"));
    fs::create_dir_all(&s).unwrap();
    fs::write(
        s.join(bad(b"s\xff_2025-01-01--00-00-00_meta.json")),
        br#"{"session_name": "x"}"#,
    )
    .unwrap();
    let list = SessionStore::new(&root).list_sessions();
    assert_eq!(list.sessions.len(), 1, "{list:?}");
}

// ---------------------------------------------------------------- truncation
