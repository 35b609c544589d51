//! Reading a conversation again into the same `Conversation` with the same
//! `Reader` costs no heap allocation per event beyond the standard
//! library's directory listing (a name per entry); decoding the envelope
//! and reading the bytes cost none.

use crate::{allocations_all_threads, common};

use agentlog::openhands::{Conversation, Reader, find_sessions};

#[test]
fn second_read_allocates_per_entry_only_in_the_listing() {
    let _g = crate::measure_lock();
    let root = common::corpus_dir()
        .join("openhands")
        .join("1.58.2")
        .join("large");
    let dir = find_sessions(&root).unwrap().remove(0);
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    reader.read_into(&dir, &mut conv).unwrap();
    let events = conv.len();
    assert!(events > 2000);
    let (n, ()) = allocations_all_threads(|| reader.read_into(&dir, &mut conv).unwrap());
    assert_eq!(conv.len(), events);
    // `std::fs::read_dir` allocates each entry's name; everything else is
    // reused. Allow those and a few dozen fixed allocations.
    let entries = std::fs::read_dir(dir.join("events")).unwrap().count()
        + std::fs::read_dir(&dir).unwrap().count();
    assert!(
        n <= 2 * entries + 64,
        "{n} allocations for {events} events ({entries} directory entries)"
    );
    // And the envelope answers without allocating.
    let (n, kinds) = allocations_all_threads(|| {
        conv.events()
            .filter(|e| e.kind().is_some() && e.id().is_some())
            .count()
    });
    assert_eq!(kinds, events);
    assert_eq!(n, 0);
}
