//! A count of the files and directories this thread opened through the
//! crate's readers, for tests that prove a scan opened nothing (an
//! unchanged conversation of a checkpointed rescan opens no file); and of
//! the entries the changes-since scan looked up by name (`stat`), for tests
//! of what a changed conversation costs.
//!
//! The counts are per thread, so a test reading on its own thread sees only
//! its own opens whatever else runs; the parallel scans open on rayon's
//! threads and are not counted on the caller's.

use std::cell::Cell;

thread_local! {
    static FILES: Cell<u64> = const { Cell::new(0) };
    static DIRS: Cell<u64> = const { Cell::new(0) };
    static STATS: Cell<u64> = const { Cell::new(0) };
}

/// Counts one entry looked up by name (`stat`, `fstatat`).
pub(crate) fn stat() {
    STATS.with(|c| c.set(c.get().wrapping_add(1)));
}

/// How many entries this thread has looked up by name (`stat`,
/// `fstatat`) through the changes-since scan so far. For tests.
#[doc(hidden)]
pub fn stats() -> u64 {
    STATS.with(Cell::get)
}

/// Counts one file opened for reading.
pub(crate) fn file() {
    FILES.with(|c| c.set(c.get().wrapping_add(1)));
}

/// Counts one directory opened for listing or for opening files in it.
pub(crate) fn dir() {
    DIRS.with(|c| c.set(c.get().wrapping_add(1)));
}

/// How many files and directories this thread has opened through the
/// crate's readers so far: `(files, directories)`. For tests.
#[doc(hidden)]
pub fn counts() -> (u64, u64) {
    (FILES.with(Cell::get), DIRS.with(Cell::get))
}
