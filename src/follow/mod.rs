//! Following OpenHands stores (and OC Chat sessions stores, [`occhat`])
//! live (feature `follow`): every change as it
//! is written, from a chain of changes-since scans
//! ([`Store::changes_since`]) woken by the file system.
//!
//! A [`Follower`] holds one checkpoint per root. [`Follower::scan`] scans
//! every root from its checkpoint and hands each change to a sink;
//! [`Follower::wait`] blocks until something may have changed: a
//! file-system event under a root (inotify on Linux, through the `inotify`
//! crate, keeping a small record per watched directory; the `notify` crate
//! elsewhere; new directories are watched as they appear), or, in polling mode
//! ([`FollowOptions::poll`], for file systems without events such as
//! network mounts), the next tick. Events are gathered for a short quiet
//! time ([`FollowOptions::debounce`]) so that a burst of writes costs one
//! scan. Nothing is polled while nothing is written (in event mode).
//!
//! A wake woken by events scans only the top-level conversations the
//! events' paths lie in (their sub-agents included;
//! [`Store::changes_in`]), so its cost does not grow with the store. A
//! full scan ([`Store::changes_since`], which also finds new
//! conversations and removed ones) is made instead when an event lies
//! outside every known conversation or is the directory of one itself
//! (created, removed, renamed), when events were lost (the watch's queue
//! overflowed, the watcher failed), in polling mode, on
//! [`Follower::rescan`], and [`FollowOptions::full_every`] after the last
//! one ended, as a safety net (put off while wakes name conversations to
//! look at, for at most one more period).
//!
//! # Guarantees
//!
//! - Each event is handed out once, in index order per conversation (the
//!   changes-since scan's guarantee, scan after scan), except in a rewrite
//!   (the conversation's history changed: all of it again) or a repair (a
//!   malformed event that now reads, again under its index).
//! - An event file caught half-written is never handed out as malformed
//!   while its writer may still be at it: the settle rule
//!   ([`ScanOptions::settle`](crate::openhands::ScanOptions::settle), here
//!   [`FollowOptions::settle`]) holds it back, and the follower scans again
//!   once the settle time has passed; a file left malformed that long is
//!   handed out as malformed.
//! - The checkpoints ([`Follower::checkpoint`]) record only what was handed
//!   to the sink: saved after the sink's output is durable, a restart from
//!   them goes on where the last scan stopped.
//! - What cannot be read is said: a conversation that cannot be read, or
//!   a directory under a root that cannot be listed, is an error item of
//!   the scan (tried again by the next one), and the rest is read.
//! - When the watch cannot be set up (too many directories for the
//!   inotify limit, a file system without events), the follower polls at
//!   [`FollowOptions::fallback_poll`] and says so ([`Follower::polling`]).

#[cfg(target_os = "linux")]
mod dir_watch;
pub mod occhat;
pub mod sessions_checkpoint;
mod steps;
mod watch;

pub use sessions_checkpoint::SessionsCheckpoint;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use watch::Watch;

use crate::openhands::{Change, ChangesError, Checkpoint, ScanOptions, StoreError};
#[cfg(doc)]
use crate::openhands::{Changes, Store};

/// How a [`Follower`] follows.
#[derive(Debug, Clone, Copy)]
pub struct FollowOptions {
    /// Poll every this long instead of waiting for file-system events.
    pub poll: Option<Duration>,
    /// Hold back a malformed event file modified less than this long ago.
    pub settle: Duration,
    /// After a file-system event, wait until this long passes without
    /// another (at most ten times it) before scanning.
    pub debounce: Duration,
    /// The polling period when events cannot be had.
    pub fallback_poll: Duration,
    /// In event mode, scan every conversation (not only those events
    /// named) this long after the last such scan ended, whether or not
    /// anything was written; a wake that names conversations is scanned
    /// first, the full scan put off to the next wake for at most one more
    /// period.
    pub full_every: Duration,
    /// Take the stamp of every event file already handed out on each scan
    /// of a conversation, and hand it out again (a rewrite) when one of
    /// them changed in place ([`ScanOptions::verify_files`]).
    pub verify_files: bool,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            poll: None,
            settle: Duration::from_secs(2),
            debounce: Duration::from_millis(5),
            fallback_poll: Duration::from_secs(2),
            full_every: Duration::from_secs(60),
            verify_files: false,
        }
    }
}

/// Why following could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FollowError {
    /// A root could not be scanned, or its checkpoint is not of it.
    #[error(transparent)]
    Scan(#[from] ChangesError),
}

/// One root followed: its path and the checkpoint of what was handed out.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    checkpoint: Option<Checkpoint>,
    /// The top-level conversations (relative paths) to scan next.
    touched: BTreeSet<PathBuf>,
    /// Whether the next scan of this root must be a full one.
    full: bool,
    /// The top-level conversations with a file held back by the settle rule.
    held_in: Vec<PathBuf>,
}

/// What the watch reports.
enum Wake {
    /// Something changed at these paths.
    Paths(Vec<PathBuf>),
    /// Events were lost: everything may have changed.
    Rescan,
}

impl Root {
    /// Notes a change at `path`: the conversation it lies in is scanned
    /// next, or the whole root when `path` is in none (or is one's
    /// directory itself). A path outside the root is not its business.
    fn touch(&mut self, path: &Path) {
        if self.full {
            return;
        }
        let Some(cp) = &self.checkpoint else {
            self.full = true;
            return;
        };
        let rel = path
            .strip_prefix(&self.path)
            .or_else(|_| path.strip_prefix(&cp.canonical));
        let Ok(rel) = rel else {
            // A root that is not a directory (a conversation's file) is
            // scanned whole.
            if !self.path.is_dir() {
                self.full = true;
            }
            return;
        };
        let top = rel
            .ancestors()
            .find(|a| cp.conversations.depth(a) == Some(0));
        match top {
            Some(t) if t != rel => {
                self.touched.insert(t.to_path_buf());
            }
            _ => self.full = true,
        }
    }
}

/// Follows stores (see the [module docs](self)).
pub struct Follower {
    roots: Vec<Root>,
    sessions: Vec<occhat::Sessions>,
    opts: FollowOptions,
    watch: Option<Watch>,
    retry_at: Option<Instant>,
    last_full: Instant,
    why_polling: Option<String>,
    /// A scan taken a change at a time ([`step`](Self::step)), under way.
    pass: Option<steps::Pass>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("roots", &self.roots)
            .field("opts", &self.opts)
            .field("watching", &self.watch.is_some())
            .finish()
    }
}

impl Follower {
    /// Follows `roots`, each from its checkpoint (`None`: from nothing, so
    /// the first scan hands out everything there is).
    pub fn new(roots: Vec<(PathBuf, Option<Checkpoint>)>, opts: FollowOptions) -> Follower {
        let mut f = Follower {
            roots: roots
                .into_iter()
                .map(|(path, checkpoint)| Root {
                    path,
                    checkpoint,
                    touched: BTreeSet::new(),
                    full: true,
                    held_in: Vec::new(),
                })
                .collect(),
            sessions: Vec::new(),
            opts,
            watch: None,
            retry_at: None,
            last_full: Instant::now(),
            why_polling: None,
            pass: None,
        };
        if opts.poll.is_none() {
            f.watch();
        }
        f
    }

    /// Sets up the file-system watch of every root.
    fn watch(&mut self) {
        let mut w = match Watch::new() {
            Ok(w) => w,
            Err(e) => {
                self.why_polling = Some(format!("file-system events unavailable: {e}"));
                return;
            }
        };
        for r in &self.roots {
            if let Err(e) = w.add(&r.path) {
                self.why_polling = Some(format!("{}: cannot watch: {e}", r.path.display()));
                return;
            }
        }
        self.watch = Some(w);
    }

    /// Follows OC Chat sessions stores too ([`occhat`]; from nothing: the
    /// first scan hands out every message).
    pub fn with_occhat(self, roots: Vec<PathBuf>) -> Follower {
        let mut f = self;
        for r in roots {
            f.add_sessions(occhat::Sessions::new(r));
        }
        f
    }

    /// Follows OC Chat sessions stores too, each from its checkpoint
    /// (`None`: from nothing). Refuses a checkpoint of another sessions
    /// directory.
    pub fn with_occhat_from(
        self,
        roots: Vec<(PathBuf, Option<SessionsCheckpoint>)>,
    ) -> Result<Follower, FollowError> {
        let mut f = self;
        for (r, cp) in roots {
            let s = occhat::Sessions::resume(r, cp).map_err(ChangesError::from)?;
            f.add_sessions(s);
        }
        Ok(f)
    }

    fn add_sessions(&mut self, s: occhat::Sessions) {
        if let Some(w) = self.watch.as_mut()
            && let Err(e) = w.add(s.root())
        {
            self.why_polling = Some(format!("{}: cannot watch: {e}", s.root().display()));
            self.watch = None;
        }
        self.sessions.push(s);
    }

    /// The checkpoint of the OC Chat store at `i` (in the order given):
    /// what was handed out so far.
    pub fn occhat_checkpoint(&self, i: usize) -> Option<&SessionsCheckpoint> {
        self.sessions.get(i).map(occhat::Sessions::checkpoint)
    }

    /// Scans every OC Chat store, handing each change (with the index of
    /// its store) to `sink`.
    pub fn scan_occhat<E>(
        &mut self,
        mut sink: impl FnMut(usize, occhat::SessionChange<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for (i, s) in self.sessions.iter_mut().enumerate() {
            s.scan(|c| sink(i, c))?;
        }
        Ok(())
    }

    /// Why the follower polls although asked for events (`None` when it
    /// watches, or was asked to poll).
    pub fn polling(&self) -> Option<&str> {
        self.why_polling.as_deref()
    }

    /// The checkpoint of the root at `i` (in the order given): what was
    /// handed out so far. `None` while [`step`](Self::step) is in the
    /// middle of that root's scan, which holds it:
    /// [`checkpoint_so_far`](Self::checkpoint_so_far) gives it then.
    pub fn checkpoint(&self, i: usize) -> Option<&Checkpoint> {
        self.roots.get(i)?.checkpoint.as_ref()
    }

    /// The options of the follower's changes-since scans (its settle time,
    /// whether it verifies files): those of a catch-up scan taken another
    /// way before [`resume_from`](Self::resume_from).
    pub fn scan_options(&self) -> ScanOptions {
        ScanOptions {
            settle: Some(self.opts.settle),
            verify_files: self.opts.verify_files,
            ..ScanOptions::default()
        }
    }

    /// Sets what the root at `i` (in the order given) was read to: `cp`,
    /// the checkpoint of what was handed out another way — a
    /// changes-since scan taken a conversation at a time
    /// ([`Store::changes_since`] with [`scan_options`](Self::scan_options)),
    /// say (a follower's own scans hold none of their changes when taken
    /// with [`step`](Self::step)). The next
    /// [`scan`](Self::scan) is a full one from `cp`: what changed while the
    /// other scan ran is handed out then. `false` when there is no root
    /// `i`. A checkpoint of another root is refused by that scan, as by
    /// [`Store::changes_since`].
    pub fn resume_from(&mut self, i: usize, cp: Checkpoint) -> bool {
        self.abandon_pass();
        let Some(r) = self.roots.get_mut(i) else {
            return false;
        };
        r.checkpoint = Some(cp);
        r.full = true;
        r.touched.clear();
        r.held_in.clear();
        true
    }

    /// The OC Chat store at `i` (in the order given), for a pass over it a
    /// change at a time ([`occhat::Sessions::pass`],
    /// [`occhat::Sessions::step`]): each change a step hands out is
    /// recorded in the follower's checkpoint of that store, and its next
    /// [`scan_occhat`](Self::scan_occhat) goes on from there.
    pub fn occhat_mut(&mut self, i: usize) -> Option<&mut occhat::Sessions> {
        self.sessions.get_mut(i)
    }

    /// The roots followed.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|r| r.path.as_path())
    }

    /// Scans every root from its checkpoint, handing each change (with the
    /// index of its root) to `sink`, and advances the checkpoints. The
    /// errors among the items are the conversations that could not be read
    /// and, ahead of the changes, the directories the scan's walk could not
    /// list ([`StoreError::Read`]; such a directory is listed again by the
    /// next scan that walks the root). A sink
    /// error stops the scan; the checkpoint of that root then records only
    /// what the sink took before, and the next scan hands out again the
    /// change the sink refused (a removal as a removal, anything else as a
    /// [`Rewrite`](crate::openhands::ChangeKind::Rewrite) of the whole
    /// conversation: [`Changes::into_checkpoint_refusing_last`]).
    pub fn scan<E>(
        &mut self,
        mut sink: impl FnMut(usize, Result<Change<'_>, StoreError>) -> Result<(), E>,
    ) -> Result<Result<(), E>, FollowError> {
        self.abandon_pass();
        let mut pass = self.begin();
        for i in 0..self.roots.len() {
            let Some(mut current) = self.start_root(&mut pass, i)? else {
                continue;
            };
            let mut res = Ok(());
            while let Some(item) = current.next() {
                if let Err(e) = sink(i, item) {
                    res = Err(e);
                    break;
                }
            }
            let refused = res.is_err();
            self.finish_root(&mut pass, current, refused);
            if refused {
                // What the sink did not take is looked for again: the
                // change it refused is not recorded as handed out.
                return Ok(res);
            }
        }
        self.end(&pass);
        Ok(Ok(()))
    }

    /// Makes the next [`scan`](Self::scan) a full one: every conversation
    /// of every root looked at, new ones and removed ones found (as after
    /// lost events).
    pub fn rescan(&mut self) {
        for r in &mut self.roots {
            r.full = true;
        }
    }

    /// Takes what the watch reported into the roots' scan plans.
    fn note(&mut self, wake: Wake) {
        match wake {
            Wake::Rescan => self.rescan(),
            Wake::Paths(paths) => {
                for r in &mut self.roots {
                    for p in &paths {
                        r.touch(p);
                    }
                }
            }
        }
    }

    /// Blocks until something under a root may have changed, a file held
    /// back by the settle rule is due, the periodic full scan is due (in
    /// event mode), or `timeout` passes. Whether to scan.
    pub fn wait(&mut self, timeout: Option<Duration>) -> bool {
        let start = Instant::now();
        let mut deadline = timeout.map(|t| start + t);
        if let Some(r) = self.retry_at {
            deadline = Some(deadline.map_or(r, |d| d.min(r)));
        }
        if self.watch.is_some() && self.opts.poll.is_none() {
            // The periodic full scan is due then, events or none.
            if let Some(due) = self.last_full.checked_add(self.opts.full_every) {
                deadline = Some(deadline.map_or(due, |d| d.min(due)));
            }
        }
        let period = self.opts.poll.or(match &self.watch {
            Some(_) => None,
            None => Some(self.opts.fallback_poll),
        });
        if let Some(p) = period {
            let tick = start + p;
            let until = deadline.map_or(tick, |d| d.min(tick));
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            return true;
        }
        let Some(mut watch) = self.watch.take() else {
            return true;
        };
        let stopped = |f: &mut Follower, e: std::io::Error| {
            // Nothing says what changed any more.
            f.why_polling = Some(format!("the file-system watch stopped: {e}"));
            f.rescan();
            true
        };
        let first = match watch.next(deadline) {
            Ok(w) => w,
            Err(e) => return stopped(self, e),
        };
        if let Some(w) = first {
            self.note(w);
            // Gather the burst: until a quiet debounce time, at most ten.
            let burst_end = Instant::now() + self.opts.debounce * 10;
            loop {
                let now = Instant::now();
                if now >= burst_end {
                    break;
                }
                let quiet = now + self.opts.debounce.min(burst_end - now);
                match watch.next(Some(quiet)) {
                    Ok(Some(w)) => self.note(w),
                    Ok(None) => break,
                    Err(e) => return stopped(self, e),
                }
            }
        }
        self.watch = Some(watch);
        true
    }
}
