//! Reading a conversation again into the same `Conversation` with the same
//! `Reader` costs no heap allocation per event beyond the standard
//! library's directory listing (a name per entry); decoding the envelope
//! and reading the bytes cost none.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentlog::openhands::{Conversation, Reader, find_sessions};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn second_read_allocates_per_entry_only_in_the_listing() {
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
    let before = ALLOCS.load(Ordering::Relaxed);
    reader.read_into(&dir, &mut conv).unwrap();
    let n = ALLOCS.load(Ordering::Relaxed) - before;
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
    let before = ALLOCS.load(Ordering::Relaxed);
    let kinds = conv
        .events()
        .filter(|e| e.kind().is_some() && e.id().is_some())
        .count();
    assert_eq!(kinds, events);
    assert_eq!(ALLOCS.load(Ordering::Relaxed) - before, 0);
}
