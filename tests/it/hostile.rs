//! Hostile stores: what crashing agents, half-synced laptops and other
//! people leave behind. Every case must read without a panic, a hang or
//! unbounded memory, record each problem with a typed error where it
//! happened, and read everything else.
//!
//! Unix only (symbolic links, permissions, byte file names).

use crate::common::unprivileged;
use crate::fuzz_checks;

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentlog::json::{JsonErrorKind, JsonType, OwnedValue, Parser};
use agentlog::occhat::{LoadError, Store};
use agentlog::openhands::view::{View, ViewIssue, ViewOptions};
use agentlog::openhands::{
    self, Conversation, FileError, FileStatus, MessageEvent, NameError, ReadError, Reader, Reason,
    read_conversation,
};
use agentlog::source::SourceError;
use agentlog::{MAX_SIZE, json::Style};
use fuzz_checks::view_input;

const CONV: &str = "0123456789abcdef0123456789abcdef";
const ID0: &str = "00000000-0000-4000-8000-000000000000";
const ID1: &str = "11111111-1111-4111-8111-111111111111";
const ID2: &str = "22222222-2222-4222-8222-222222222222";

fn name(i: u64, id: &str) -> String {
    format!("event-{i:05}-{id}.json")
}

fn event(kind: &str, id: &str, parent: Option<&str>) -> String {
    let p = parent.map_or(String::new(), |p| format!(r#","parent_id":"{p}""#));
    format!(
        r#"{{"id":"{id}","timestamp":"2026-05-04T16:30:28.123456","source":"user"{p},"llm_message":{{"role":"user","content":[{{"type":"text","text":"hi"}}]}},"kind":"{kind}"}}"#
    )
}

const STATE: &str = r#"{"id":"01234567-89ab-cdef-0123-456789abcdef","agent":{"kind":"Agent","llm":{"model":"m"}},"execution_status":"idle"}"#;

/// A conversation directory: a good state and three good events.
fn conversation(root: &Path) -> PathBuf {
    let dir = root.join(CONV);
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(dir.join("base_state.json"), STATE).unwrap();
    for (i, id) in [ID0, ID1, ID2].iter().enumerate() {
        fs::write(
            dir.join("events").join(name(i as u64, id)),
            event("MessageEvent", id, None),
        )
        .unwrap();
    }
    dir
}

fn status_of(conv: &Conversation, file: &str) -> FileStatus {
    conv.files()
        .find(|f| f.name() == file)
        .unwrap_or_else(|| panic!("{file} is not listed"))
        .status()
}

fn view_of(conv: &Conversation) -> Vec<ViewIssue> {
    let view = View::build(&view_input(conv), &ViewOptions::default());
    let _ = (view.sdk_messages(), view.wire_messages());
    view.issues().to_vec()
}

// ---------------------------------------------------------------- shapes

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
        eprintln!("no mkfifo here: skipped");
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
    let list = Store::new(&root).list_sessions();
    assert_eq!(list.sessions.len() + list.skipped.len(), 1);
    assert!(matches!(
        Store::new(&root).load_session_metadata("s"),
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
    let list = Store::new(&root).list_sessions();
    assert_eq!(list.sessions.len(), 1, "{list:?}");
}

// ---------------------------------------------------------------- truncation

/// A real event, from the shared corpus (an `ActionEvent` of SDK 1.58.2).
fn real_event() -> Vec<u8> {
    let dir = fuzz_checks_corpus()
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

fn fuzz_checks_corpus() -> PathBuf {
    let beside = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    assert!(
        beside.is_dir(),
        "{}: the shared corpus is missing; check the shared data folder out \
         beside the repository as `../shared`",
        beside.display()
    );
    beside
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
    let store = Store::new(&root);
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
        let store = Store::new(t.path());
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
    let store = Store::new(t.path());
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
        let store = Store::new(t.path());
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
        let store = Store::new(t.path());
        let list = store.list_sessions();
        assert!(matches!(
            list.skipped.first().map(|s| &s.error),
            Some(LoadError::Json { .. })
        ));
    }
}

// ---------------------------------------------------------------- the tree

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
    let store = Store::new(root);
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
