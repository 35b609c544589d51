//! A follower's scan taken a change at a time ([`Follower::step`]): the
//! changes [`Follower::scan`] hands to its sink, one per call, so that a
//! consumer that hands them on one at a time (an iterator) holds none of
//! them, and each is recorded in the root's checkpoint once handed out
//! ([`Follower::checkpoint_so_far`]).
//!
//! [`Follower::scan`] is a loop of the same parts: [`Follower::begin`]
//! decides what the scan looks at, [`Follower::start_root`] starts a root's
//! changes-since scan, [`Follower::finish_root`] gives the root its
//! checkpoint back, and [`Follower::end`] times the next scans.

use std::collections::VecDeque;
use std::time::Instant;

use super::{FollowError, Follower};
use crate::openhands::{Change, Changes, Checkpoint, ReadError, Store, StoreError};

/// A scan under way: what it looks at and how far it is.
pub(super) struct Pass {
    /// Whether it looks at every conversation of every root.
    all: bool,
    /// Whether the files held back by the settle rule are due again.
    retry_due: bool,
    /// Whether a root holds a file back for a later scan.
    held: bool,
    /// The next root to start.
    next: usize,
    /// The root being scanned: its index and its changes.
    current: Option<Current>,
}

/// The root a scan is in.
pub(super) struct Current {
    i: usize,
    /// Whether it is a full scan of the root.
    full: bool,
    /// The directories its walk could not list, handed out first.
    unlisted: VecDeque<ReadError>,
    /// The root's changes-since scan.
    changes: Box<Changes>,
}

impl Current {
    /// The next item of the root's scan: a directory its walk could not
    /// list (as [`StoreError::Read`]), then each change.
    pub(super) fn next(&mut self) -> Option<Result<Change<'_>, StoreError>> {
        if let Some(e) = self.unlisted.pop_front() {
            return Some(Err(StoreError::Read(e)));
        }
        self.changes.next()
    }
}

impl Follower {
    /// Starts a scan: whether it looks at everything, and whether the
    /// held-back files are due.
    pub(super) fn begin(&self) -> Pass {
        let events = self.watch.is_some() && self.opts.poll.is_none();
        // The periodic full scan gives way to conversations a wake named
        // (they are scanned first, their events not held up behind a walk
        // of the whole store), for at most one more period.
        let since_full = self.last_full.elapsed();
        let named = self.roots.iter().any(|r| !r.touched.is_empty());
        let all = !events
            || (since_full >= self.opts.full_every
                && (!named || since_full >= self.opts.full_every.saturating_mul(2)));
        Pass {
            all,
            retry_due: self.retry_at.is_some_and(|t| Instant::now() >= t),
            held: false,
            next: 0,
            current: None,
        }
    }

    /// Starts the changes-since scan of the root at `i`; `None` when this
    /// pass has nothing to look at there. The scan takes the root's
    /// checkpoint (no copy of it is made) and gives it back when it cannot
    /// start.
    pub(super) fn start_root(
        &mut self,
        pass: &mut Pass,
        i: usize,
    ) -> Result<Option<Current>, FollowError> {
        let scan_opts = self.scan_options();
        let Some(r) = self.roots.get_mut(i) else {
            return Ok(None);
        };
        if pass.retry_due {
            for t in std::mem::take(&mut r.held_in) {
                r.touched.insert(t);
            }
        }
        let full = pass.all || r.full || r.checkpoint.is_none();
        if !full && r.touched.is_empty() {
            pass.held |= !r.held_in.is_empty();
            return Ok(None);
        }
        let started = match r.checkpoint.take() {
            Some(cp) if !full => {
                let only = std::mem::take(&mut r.touched);
                Store::changes_in_owned(&r.path, cp, scan_opts, only)
            }
            cp => Store::changes_since_owned(&r.path, cp, scan_opts),
        };
        let mut changes = match started {
            Ok(ch) => ch,
            Err((e, cp)) => {
                r.checkpoint = cp;
                return Err(e.into());
            }
        };
        r.full = false;
        r.touched.clear();
        Ok(Some(Current {
            i,
            full,
            unlisted: changes.take_unreadable().into(),
            changes: Box::new(changes),
        }))
    }

    /// Gives the root `current` scanned its checkpoint: of everything its
    /// scan handed out, or, when the consumer `refused` the last change,
    /// without it (handed out again by the next scan, which is then a full
    /// one).
    pub(super) fn finish_root(&mut self, pass: &mut Pass, current: Current, refused: bool) {
        let Current {
            i, full, changes, ..
        } = current;
        let Some(r) = self.roots.get_mut(i) else {
            return;
        };
        // A held-back file is scanned again when due, with what was held
        // before and not scanned now.
        if full {
            r.held_in = changes.held_in().to_vec();
        } else {
            for t in changes.held_in() {
                if !r.held_in.contains(t) {
                    r.held_in.push(t.clone());
                }
            }
        }
        pass.held |= !r.held_in.is_empty();
        if refused {
            r.checkpoint = Some(changes.into_checkpoint_refusing_last());
            r.full = true;
        } else {
            r.checkpoint = Some(changes.into_checkpoint());
        }
    }

    /// Ends a scan that went through every root: when the next full scan
    /// and the next look at held-back files are due.
    pub(super) fn end(&mut self, pass: &Pass) {
        if pass.all {
            // The period runs from the end of a full scan: a long one (a
            // first scan printing a large store) is not followed by
            // another soon after.
            self.last_full = Instant::now();
        }
        if !pass.held {
            self.retry_at = None;
        } else if pass.retry_due || self.retry_at.is_none() {
            self.retry_at = Some(Instant::now() + self.opts.settle);
        }
    }

    /// Hands the next change of the follower's scan to `take`, with the
    /// index of its root, and returns what `take` returns; `None` once the
    /// scan has handed out everything it found (the next call starts
    /// another: [`wait`](Self::wait) first). A scan made this way looks at
    /// what [`scan`](Self::scan) would and hands out the same changes; each
    /// is recorded in the root's checkpoint as it is handed out
    /// ([`checkpoint_so_far`](Self::checkpoint_so_far)), and nothing is
    /// held but the change being handed out. A root whose scan cannot
    /// start is an error, as in `scan`; the next call starts a new scan.
    pub fn step<T>(
        &mut self,
        take: impl FnOnce(usize, Result<Change<'_>, StoreError>) -> T,
    ) -> Result<Option<T>, FollowError> {
        let mut pass = match self.pass.take() {
            Some(p) => p,
            None => self.begin(),
        };
        loop {
            if let Some(mut current) = pass.current.take() {
                let i = current.i;
                if let Some(item) = current.next() {
                    let got = take(i, item);
                    pass.current = Some(current);
                    self.pass = Some(pass);
                    return Ok(Some(got));
                }
                self.finish_root(&mut pass, current, false);
                continue;
            }
            if pass.next >= self.roots.len() {
                self.end(&pass);
                return Ok(None);
            }
            let i = pass.next;
            pass.next += 1;
            pass.current = self.start_root(&mut pass, i)?;
        }
    }

    /// Puts a scan under way aside: the root it is in keeps the
    /// checkpoint of what was handed out, and its next scan is a full one.
    pub(super) fn abandon_pass(&mut self) {
        let Some(mut pass) = self.pass.take() else {
            return;
        };
        if let Some(current) = pass.current.take() {
            let i = current.i;
            self.finish_root(&mut pass, current, false);
            if let Some(r) = self.roots.get_mut(i) {
                r.full = true;
            }
        }
    }

    /// The checkpoint of the root at `i` (in the order given): what was
    /// handed out so far, the changes [`step`](Self::step) handed out from
    /// a scan under way included. `None` when there is no root `i` or it
    /// has no checkpoint yet.
    pub fn checkpoint_so_far(&self, i: usize) -> Option<Checkpoint> {
        if let Some(c) = self.pass.as_ref().and_then(|p| p.current.as_ref())
            && c.i == i
        {
            return Some(c.changes.checkpoint());
        }
        self.checkpoint(i).cloned()
    }
}
