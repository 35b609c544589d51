//! Discovery that keeps its `events/` listings, and reads primed with them.

use super::*;

use agentlog::ReadAhead;
use agentlog::openhands::{EventsListing, discover_listed};

/// A store with the shapes discovery tells apart: event files, a state
/// alone, names that are not events (a sidecar, a directory, a name that
/// is not UTF-8), and a directory whose `events/` holds no event file,
/// walked into to a conversation under it.
fn odd_store(root: &Path) {
    let st = state(ID0);
    let e0 = event("MessageEvent", ID1, None);
    let e1 = event("MessageEvent", ID2, Some(ID1));
    make(
        root,
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        &[
            ("base_state.json", st.as_bytes()),
            (&format!("events/{}", name(0, ID1)), e0.as_bytes()),
            (&format!("events/{}", name(1, ID2)), e1.as_bytes()),
            ("events/.eventlog.lock", b""),
            ("events/notes.txt", b"x"),
        ],
    );
    fs::create_dir_all(root.join("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/events/sub")).unwrap();
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"event-00002-\xff.json");
        fs::write(
            root.join("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/events")
                .join(odd),
            b"{}",
        )
        .unwrap();
    }
    make(
        root,
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        &[("base_state.json", st.as_bytes())],
    );
    make(root, "holder", &[("events/readme.md", b"not an event")]);
    make(
        root,
        "holder/cccccccccccccccccccccccccccccccc",
        &[(&format!("events/{}", name(0, ID3)), e0.as_bytes())],
    );
}

/// What a read gives, as text (every part of the conversation).
fn read_text(reader: &mut Reader, dir: &Path) -> String {
    let mut conv = openhands::Conversation::default();
    let r = reader.read_into(dir, &mut conv);
    format!("{r:?} {conv:?}")
}

/// `discover_listed` finds what `discover_with` finds, in order, and a read
/// primed with its listing gives exactly what a read that lists gives: on
/// hand-made odd directories and on every corpus conversation.
#[test]
fn listed_discovery_finds_and_reads_the_same() {
    let t = tempfile::tempdir().unwrap();
    odd_store(t.path());
    let corpus = crate::common::corpus_dir().join("openhands");
    for root in [t.path().to_path_buf(), corpus] {
        let plain = openhands::discover_with(&root, ReadAhead::off()).unwrap();
        let listed = discover_listed(&root, ReadAhead::off()).unwrap();
        assert_eq!(listed.discovery.conversations, plain.conversations);
        assert_eq!(listed.events.len(), plain.conversations.len());
        assert!(!plain.conversations.is_empty(), "{}", root.display());
        let mut kept = 0;
        for (dir, events) in plain.conversations.iter().zip(listed.events) {
            let mut reader = Reader::new();
            let want = read_text(&mut reader, dir);
            if let Some(events) = events {
                kept += 1;
                reader.prime_events(dir, events);
            }
            assert_eq!(read_text(&mut reader, dir), want, "{}", dir.display());
        }
        assert!(kept > 0, "no listing kept under {}", root.display());
    }
    // The state-only conversation has no `events/`: nothing kept for it.
    let listed = discover_listed(t.path(), ReadAhead::off()).unwrap();
    let names: Vec<String> = listed
        .discovery
        .conversations
        .iter()
        .map(|d| d.strip_prefix(t.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "holder/cccccccccccccccccccccccccccccccc"
        ]
    );
    assert!(listed.events[1].is_none());
    let a = listed.events[0].as_ref().unwrap();
    assert_eq!(a.len(), 6, "{:?}", a.names().collect::<Vec<_>>());
}

/// A primed listing is for its own directory: the read of another path
/// drops it (that read, and a later read of the first directory, list
/// their directories). What a primed read sees is the listing: an event
/// written after discovery is not in that read (the snapshot the docs
/// state), and the next unprimed read has it.
#[test]
fn a_primed_listing_is_its_directory_s_snapshot() {
    let t = tempfile::tempdir().unwrap();
    odd_store(t.path());
    let listed = discover_listed(t.path(), ReadAhead::off()).unwrap();
    let a = listed.discovery.conversations[0].clone();
    let b = listed.discovery.conversations[1].clone();
    let events = listed.events[0].clone().unwrap();
    let mut reader = Reader::new();
    let count = |reader: &mut Reader, dir: &Path| reader.read(dir).unwrap().events().len();
    assert_eq!(count(&mut reader, &a), 2);

    // An event written after discovery.
    let late = event("MessageEvent", ID3, Some(ID2));
    fs::write(a.join("events").join(name(2, ID3)), late).unwrap();

    // Primed for `a`, the read of `b` drops the listing: `a` is then listed.
    reader.prime_events(&a, events.clone());
    assert_eq!(count(&mut reader, &b), 0);
    assert_eq!(count(&mut reader, &a), 3);

    // Primed and read: the listing, without the late event.
    reader.prime_events(&a, events);
    assert_eq!(count(&mut reader, &a), 2);
    assert_eq!(count(&mut reader, &a), 3);

    // A file of the listing removed before the read: reported as a file
    // that could not be read, not passed over.
    let later = discover_listed(t.path(), ReadAhead::off()).unwrap();
    let with_late = later.events[0].clone().unwrap();
    fs::remove_file(a.join("events").join(name(2, ID3))).unwrap();
    reader.prime_events(&a, with_late);
    let c = reader.read(&a).unwrap();
    let gone: Vec<_> = c
        .files()
        .filter(|f| f.name() == name(2, ID3))
        .map(|f| f.error().map(|e| e.to_string()))
        .collect();
    assert!(
        matches!(gone.as_slice(), [Some(e)] if e.contains(&name(2, ID3))),
        "{gone:?}"
    );
    assert_eq!(count(&mut reader, &a), 2);

    // An empty listing primed: the directory as listed empty (its files
    // are not looked for), where the state still makes a conversation.
    reader.prime_events(&a, EventsListing::default());
    let c = reader.read(&a).unwrap();
    assert_eq!(c.events().len(), 0);
    assert_eq!(c.files().len(), 0);
}
