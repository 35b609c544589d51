//! Reading ahead on a cold page cache: I/O threads that bring the next
//! conversations' directories and files into the page cache while the
//! readers parse the ones before.
//!
//! A scan reads one file at a time on each reading thread. When the files
//! are not in the page cache (the first pass over a store, a pass after a
//! reboot, a store larger than memory) every open and every read waits for
//! the storage, and with one reading thread per core the device has one or
//! two requests in flight: it sits idle most of the time, whatever the
//! cores could parse. [`ReadAhead::run`] runs a small set of I/O threads
//! beside the scan. Each takes the next conversation directory the readers
//! have not begun, at most [`depth`](ReadAhead::depth) directories past the
//! first one not begun, opens it, lists it and its `events/` (and its
//! sub-agents' directories, recursively), and asks the kernel to read every
//! regular file named there (`posix_fadvise(POSIX_FADV_WILLNEED)`: the
//! reads are queued, nothing is copied into the process). Opening a file
//! brings its inode in; the advice queues its bytes. When a reader comes
//! to the conversation, the entries, inodes and bytes are in the page
//! cache, and the device has had up to `depth` directories' worth of
//! requests to serve meanwhile.
//!
//! # Guarantees
//!
//! - **Same results.** The read-ahead only fills the page cache; the
//!   readers read exactly as they do without it and meet every fault
//!   themselves (a file that cannot be opened, one that vanished, one too
//!   large): the read-ahead's own errors are ignored.
//! - **Touches only what a reader would.** It opens directories, and the
//!   regular files their listings name (by the listing's file type); it
//!   never follows a symbolic link (`O_NOFOLLOW`; links are left to the
//!   readers), opens without blocking (`O_NONBLOCK`), and reads no byte
//!   into the process's memory.
//! - **Bounded.** The process's memory for it is one listing buffer per I/O
//!   thread, whatever the store. The page cache it fills ahead of the
//!   readers is at most `depth` conversation directories (each file's
//!   first [`FILE_AHEAD`] bytes), sub-agents to [`SUBAGENT_DEPTH`] levels.
//! - **Cheap on a warm cache.** An I/O thread counts the blocks the kernel
//!   read for it (`getrusage(RUSAGE_THREAD)`'s `ru_inblock`). After
//!   [`WARM_AFTER`] conversations in a row that needed no block read, the
//!   I/O threads stop reading ahead and wait, taking no directory; a
//!   reader that has to read blocks itself (counted the same way when it
//!   begins a conversation: each one while the cache is cold, one in
//!   [`WARM_WAKE`] while it is warm) sets them going again. A scan starts with
//!   [`FIRST_THREADS`] I/O threads and starts one more for each
//!   conversation that needed a block read, up to the depth: a cold cache
//!   soon has `depth` requests in flight, a warm one never more than the
//!   first threads. A warm pass thus costs the first few conversations
//!   read twice from the page cache and one `getrusage` every
//!   [`WARM_WAKE`] conversations; the waiting I/O threads are not woken.
//! - **Ends with the scan.** The threads are scoped to [`ReadAhead::run`]
//!   and stop when its closure returns, early or by a panic.
//!
//! The advice and the block counts are Linux's: elsewhere no thread is
//! started and the scan reads as without read-ahead. A depth of 0 turns it
//! off.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::source::dir::{Dir, DirEntryKind, ListBuf};

/// The read-ahead depth by default: conversation directories read ahead at
/// once, each by an I/O thread of its own while the cache is cold
/// (measured: see `benches/README.md`).
pub const DEFAULT_DEPTH: usize = 64;

/// The most bytes of one file asked for ahead (1 MiB); the rest of a larger
/// file is read when a reader reads it.
pub const FILE_AHEAD: u64 = 1 << 20;

/// How deep sub-agents' directories (`subagents/<hex>/`, nested) are read
/// ahead with their parent.
pub const SUBAGENT_DEPTH: usize = 16;

/// How many conversations in a row needing no block read turn reading ahead
/// off until a block read is needed again.
pub const WARM_AFTER: usize = 8;

/// The longest an idle I/O thread sleeps before it looks again (wake-ups
/// are sent, this is only a backstop).
const IDLE: Duration = Duration::from_millis(100);

/// While the cache is warm a reader looks at its own block count once
/// every this many conversations it begins (every conversation while
/// cold).
pub const WARM_WAKE: usize = 16;

/// An I/O thread's stack: listing is done into a heap buffer, names are at
/// most 256 bytes on the stack.
const STACK: usize = 128 << 10;

/// I/O threads started with a scan; more are started, one per conversation
/// that needed a block read, up to the depth. A warm scan thus starts no
/// more than these.
pub const FIRST_THREADS: usize = 2;

/// How many conversation directories a scan reads ahead of its readers (see
/// the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReadAhead {
    depth: usize,
}

impl Default for ReadAhead {
    /// [`DEFAULT_DEPTH`].
    fn default() -> Self {
        ReadAhead {
            depth: DEFAULT_DEPTH,
        }
    }
}

impl ReadAhead {
    /// Reads `depth` conversation directories ahead, each by an I/O thread
    /// of its own; 0 turns read-ahead off.
    pub const fn new(depth: usize) -> ReadAhead {
        ReadAhead { depth }
    }

    /// No read-ahead: scans read as without it.
    pub const fn off() -> ReadAhead {
        ReadAhead { depth: 0 }
    }

    /// How many conversation directories are read ahead.
    pub const fn depth(self) -> usize {
        self.depth
    }

    /// Whether running a scan with it starts I/O threads: a depth above 0,
    /// on Linux.
    pub const fn is_on(self) -> bool {
        self.depth > 0 && cfg!(target_os = "linux")
    }

    /// Runs `f` with I/O threads reading `dirs` (conversation directories,
    /// in the order the readers take them) ahead of the readers; `f` tells
    /// where the readers are with [`Ahead::begin`]. The threads stop when
    /// `f` returns. With read-ahead off (or nothing to read) no thread is
    /// started.
    pub fn run<P, R>(self, dirs: &[P], f: impl FnOnce(&Ahead<'_>) -> R) -> R
    where
        P: AsRef<Path> + Sync,
    {
        self.run_reaching(dirs, Reach::Files, f)
    }

    /// Like [`run`](Self::run), reading ahead only the directories'
    /// listings (and their `events/`'s) and their `base_state.json`: what
    /// telling a conversation directory from another directory reads
    /// (discovery).
    pub(crate) fn run_listings<P, R>(self, dirs: &[P], f: impl FnOnce(&Ahead<'_>) -> R) -> R
    where
        P: AsRef<Path> + Sync,
    {
        self.run_reaching(dirs, Reach::Listings, f)
    }

    fn run_reaching<P, R>(self, dirs: &[P], reach: Reach, f: impl FnOnce(&Ahead<'_>) -> R) -> R
    where
        P: AsRef<Path> + Sync,
    {
        let threads = self.depth.min(dirs.len());
        if !self.is_on() || threads == 0 {
            return f(&Ahead { core: None });
        }
        let core = Core {
            depth: self.depth,
            threads,
            started: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            begun: AtomicUsize::new(0),
            warm: AtomicUsize::new(0),
            done: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        };
        std::thread::scope(|s| {
            for _ in 0..threads.min(FIRST_THREADS) {
                if !start_thread(s, &core, dirs, reach) {
                    break;
                }
            }
            // Stops the threads however `f` ends.
            let _stop = Stop(&core);
            f(&Ahead { core: Some(&core) })
        })
    }
}

/// Where the readers of a scan are, told to its read-ahead
/// ([`ReadAhead::run`]).
#[derive(Debug)]
pub struct Ahead<'a> {
    core: Option<&'a Core>,
}

impl Ahead<'_> {
    /// Tells the read-ahead that a reader begins the directory of this
    /// index (of the `dirs` given to [`ReadAhead::run`]): the I/O threads
    /// read up to `depth` directories past the first not begun. Readers on
    /// several threads may begin directories out of order; what counts is
    /// the highest index begun. Cheap: an atomic update; while the cache
    /// is cold a `getrusage` and a wake-up, while it is warm a `getrusage`
    /// every [`WARM_WAKE`] directories.
    pub fn begin(&self, index: usize) {
        let Some(core) = self.core else { return };
        let warm = core.warm.load(Ordering::Relaxed) >= WARM_AFTER;
        // A reader that had to read blocks itself since it last looked: the
        // cache is cold (again), and the I/O threads waiting out the warm
        // cache are woken. While the cache is warm a reader looks once
        // every [`WARM_WAKE`] conversations.
        if (!warm || index.is_multiple_of(WARM_WAKE))
            && reader_read_blocks()
            && core.warm.load(Ordering::Relaxed) != 0
        {
            core.warm.store(0, Ordering::Relaxed);
            if warm {
                let _g = core.lock.lock();
                core.wake.notify_all();
            }
        }
        core.begun.fetch_max(index + 1, Ordering::SeqCst);
        if !warm && core.waiting.load(Ordering::SeqCst) > 0 {
            let _g = core.lock.lock();
            core.wake.notify_one();
        }
    }

    /// Whether I/O threads are reading ahead of this scan.
    pub fn is_on(&self) -> bool {
        self.core.is_some()
    }
}

/// What an I/O thread reads of a directory ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Everything a reader of the conversation reads (see the module docs).
    Files,
    /// The listings of the directory and its `events/`, and its
    /// `base_state.json`.
    Listings,
}

/// What the I/O threads and the readers of one scan share.
#[derive(Debug)]
struct Core {
    depth: usize,
    /// The most I/O threads of the scan.
    threads: usize,
    /// I/O threads started so far.
    started: AtomicUsize,
    /// The next index an I/O thread takes.
    next: AtomicUsize,
    /// One past the highest index a reader has begun.
    begun: AtomicUsize,
    /// Conversations read ahead in a row that needed no block read.
    warm: AtomicUsize,
    done: AtomicBool,
    /// I/O threads waiting for the readers.
    waiting: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// Ends the I/O threads of a [`Core`] when dropped.
struct Stop<'a>(&'a Core);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::SeqCst);
        let _g = self.0.lock.lock();
        self.0.wake.notify_all();
    }
}

/// Starts one more I/O thread of the scan unless [`Core::threads`] are
/// running; `false` when none was started (all are, or the system would
/// not: a thread that cannot be started only reads less ahead).
fn start_thread<'scope, 'env, P: AsRef<Path> + Sync>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    core: &'env Core,
    dirs: &'env [P],
    reach: Reach,
) -> bool {
    let taken = core
        .started
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < core.threads).then_some(n + 1)
        });
    if taken.is_err() {
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("agentlog-readahead".into())
        .stack_size(STACK)
        .spawn_scoped(s, move || worker(s, core, dirs, reach));
    spawned.is_ok()
}

/// One I/O thread: takes the next directory within reach and reads it ahead
/// until the scan ends or every directory is taken. A directory that needed
/// a block read starts another thread (up to the depth): a cold cache gets
/// its many requests in flight, a warm one keeps [`FIRST_THREADS`].
fn worker<'scope, 'env, P: AsRef<Path> + Sync>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    core: &'env Core,
    dirs: &'env [P],
    reach: Reach,
) {
    let mut listing = ListBuf::default();
    loop {
        if core.done.load(Ordering::Acquire) {
            return;
        }
        if core.warm.load(Ordering::Relaxed) >= WARM_AFTER {
            idle_warm(core);
            continue;
        }
        let next = core.next.load(Ordering::Acquire);
        let begun = core.begun.load(Ordering::SeqCst);
        // The readers are past `next`: nothing to read ahead below them.
        let i = next.max(begun);
        if i >= dirs.len() {
            return;
        }
        if i >= begun.saturating_add(core.depth) {
            idle(core, i);
            continue;
        }
        if core
            .next
            .compare_exchange(next, i + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        let Some(dir) = dirs.get(i) else { return };
        let before = blocks_read();
        if let Ok(d) = Dir::open(dir.as_ref()) {
            conversation_at(&d, &mut listing, reach, 0);
        }
        if blocks_read() == before {
            core.warm.fetch_add(1, Ordering::Relaxed);
        } else {
            core.warm.store(0, Ordering::Relaxed);
            start_thread(s, core, dirs, reach);
        }
    }
}

/// Waits until the readers begin a directory that brings index `i` within
/// reach, or the scan ends.
fn idle(core: &Core, i: usize) {
    let Ok(g) = core.lock.lock() else { return };
    core.waiting.fetch_add(1, Ordering::SeqCst);
    let within = i < core.begun.load(Ordering::SeqCst).saturating_add(core.depth);
    if !within && !core.done.load(Ordering::SeqCst) {
        let _ = core.wake.wait_timeout(g, IDLE);
    }
    core.waiting.fetch_sub(1, Ordering::SeqCst);
}

/// Waits while the cache is warm (until a reader meets a block read, or
/// the scan ends): the thread takes no directory meanwhile.
fn idle_warm(core: &Core) {
    let Ok(g) = core.lock.lock() else { return };
    if core.warm.load(Ordering::Relaxed) >= WARM_AFTER && !core.done.load(Ordering::SeqCst) {
        let _ = core.wake.wait_timeout(g, IDLE);
    }
}

/// Reads a conversation directory ahead (see the module docs), its
/// sub-agents `depth` levels down.
fn conversation_at(dir: &Dir, listing: &mut ListBuf, reach: Reach, depth: usize) {
    let (mut events, mut subagents) = (false, false);
    let _ = dir.for_each(listing, |name, kind| match kind {
        DirEntryKind::File
            if reach == Reach::Files || name == crate::openhands::FILE_BASE_STATE =>
        {
            let _ = dir.advise_file(name, FILE_AHEAD);
        }
        DirEntryKind::Dir if name == crate::openhands::DIR_EVENTS => events = true,
        DirEntryKind::Dir if name == crate::openhands::DIR_SUBAGENTS => subagents = true,
        _ => {}
    });
    if events && let Ok(ev) = dir.open_dir(OsStr::new(crate::openhands::DIR_EVENTS)) {
        let _ = ev.for_each(listing, |name, kind| {
            if kind == DirEntryKind::File && reach == Reach::Files {
                let _ = ev.advise_file(name, FILE_AHEAD);
            }
        });
    }
    if subagents
        && reach == Reach::Files
        && depth < SUBAGENT_DEPTH
        && let Ok(sd) = dir.open_dir(OsStr::new(crate::openhands::DIR_SUBAGENTS))
    {
        let mut names = Vec::new();
        let _ = sd.for_each(listing, |name, kind| {
            if kind == DirEntryKind::Dir {
                names.push(name.to_os_string());
            }
        });
        for n in names {
            if let Ok(sub) = sd.open_dir(&n) {
                conversation_at(&sub, listing, reach, depth + 1);
            }
        }
    }
}

/// Blocks the kernel has read for this thread so far (512-byte units).
#[cfg(target_os = "linux")]
fn blocks_read() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct,
    // which `getrusage` fills.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is writable; RUSAGE_THREAD asks about this thread.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return 0;
    }
    u64::try_from(ru.ru_inblock).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
fn blocks_read() -> u64 {
    0
}

std::thread_local! {
    /// [`blocks_read`] when this thread last began a directory.
    static LAST_BLOCKS: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Whether this (reading) thread had blocks read for it since it last
/// asked; `false` the first time.
fn reader_read_blocks() -> bool {
    let now = blocks_read();
    LAST_BLOCKS
        .with(|c| c.replace(Some(now)))
        .is_some_and(|b| now > b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_starts_nothing_and_runs_the_closure() {
        let dirs: Vec<std::path::PathBuf> = Vec::new();
        assert!(!ReadAhead::off().run(&dirs, |a| a.is_on()));
        assert!(!ReadAhead::new(4).run(&dirs, |a| a.is_on()));
        assert!(!ReadAhead::off().is_on());
        assert_eq!(ReadAhead::default().depth(), DEFAULT_DEPTH);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn threads_stop_when_the_closure_returns_early_or_panics() {
        let t = tempfile::tempdir().unwrap();
        let dirs: Vec<std::path::PathBuf> =
            (0..100).map(|i| t.path().join(format!("{i}"))).collect();
        // Nothing begun past 0: the threads wait for the readers, and must
        // still end.
        assert!(ReadAhead::new(3).run(&dirs, |a| a.is_on()));
        let r = std::panic::catch_unwind(|| {
            ReadAhead::new(3).run(&dirs, |a| {
                a.begin(5);
                panic!("reader failed")
            })
        });
        assert!(r.is_err());
    }
}
