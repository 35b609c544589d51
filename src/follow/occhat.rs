//! Following an OC Chat sessions store: the messages each save adds.
//!
//! OC Chat saves a session by writing a new timestamped chat log (and
//! meta) and archiving the old one. A [`Sessions`] keeps, per session, the
//! meta file it last saw, how many messages it handed out and a chain
//! digest of them (a [`SessionsCheckpoint`], which can be saved and
//! resumed from); a
//! scan lists the sessions, skips those whose meta file is the one seen,
//! loads the others' newest chat log and hands out the messages added
//! ([`SessionChange::Added`]). A chat log that is not an extension of what
//! was handed out (a recovered tail, an edit) is a
//! [`SessionChange::Rewrite`] with all its messages; a session gone is
//! [`SessionChange::Removed`]. [`Sessions::scan`] hands every change of
//! one pass to a sink; [`Sessions::pass`] and [`Sessions::step`] take them
//! one at a time (an iterator's `next`), each recorded once taken.
//!
//! Memory: a [`SessionMark`] per session (the meta's path, its stamp, a
//! count and a 32-byte digest), whatever the number of messages.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::sessions_checkpoint::{SessionMark, SessionsCheckpoint, chain_next};
use crate::json::OwnedValue;
use crate::occhat;
use crate::openhands::checkpoint::{CheckpointError, Stamp};

/// What changed in one session.
#[derive(Debug)]
pub enum SessionChange<'a> {
    /// Messages added at the end: `messages` are those of indexes
    /// `from..`.
    Added {
        /// The session's name.
        session: &'a str,
        /// Whether the session is new to this follower.
        new: bool,
        /// The index of the first message added.
        from: usize,
        /// The messages added.
        messages: &'a [OwnedValue],
    },
    /// The chat log is not an extension of what was handed out: every
    /// message, to rebuild it.
    Rewrite {
        /// The session's name.
        session: &'a str,
        /// Every message.
        messages: &'a [OwnedValue],
    },
    /// The session is gone.
    Removed {
        /// The session's name.
        session: &'a str,
    },
}

/// An OC Chat store followed (see the [module docs](self)).
pub struct Sessions {
    store: occhat::SessionStore,
    root: PathBuf,
    seen: SessionsCheckpoint,
    buf: Vec<u8>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("root", &self.root)
            .field("sessions", &self.seen.len())
            .finish()
    }
}

impl Sessions {
    /// Follows the sessions store at `root`, from nothing (the first scan
    /// hands out every message there is).
    pub fn new(root: impl Into<PathBuf>) -> Sessions {
        let root = root.into();
        // A root that cannot be looked at now is refused by no checkpoint
        // (there is none to compare).
        let seen = SessionsCheckpoint::of_root(&root).unwrap_or_default();
        Sessions {
            store: occhat::SessionStore::new(&root),
            root,
            seen,
            buf: Vec::new(),
        }
    }

    /// Follows the sessions store at `root` from a checkpoint of what was
    /// handed out before (`None`: from nothing). Refuses a checkpoint of
    /// another sessions directory.
    pub fn resume(
        root: impl Into<PathBuf>,
        since: Option<SessionsCheckpoint>,
    ) -> Result<Sessions, CheckpointError> {
        let mut s = Sessions::new(root);
        if let Some(cp) = since {
            cp.check_root(&s.root)?;
            s.seen = cp;
        }
        Ok(s)
    }

    /// The store's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What was handed out so far, to save once the sink's output is
    /// durable.
    pub fn checkpoint(&self) -> &SessionsCheckpoint {
        &self.seen
    }

    /// Scans the store, handing each change to `sink`. A session whose
    /// chat log cannot be loaded is skipped and tried again next scan. A
    /// sink error stops the scan; what the sink did not take is handed out
    /// again by the next.
    pub fn scan<E>(
        &mut self,
        mut sink: impl FnMut(SessionChange<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut pass = self.pass();
        while let Some(r) = self.step(&mut pass, &mut sink) {
            r?;
        }
        Ok(())
    }

    /// Starts a scan to be taken one change at a time ([`step`](Self::step)):
    /// the store is listed now.
    pub fn pass(&self) -> Pass {
        Pass {
            entries: self.store.list_sessions().sessions.into_iter(),
            names: HashSet::new(),
            gone: None,
        }
    }

    /// The next change of `pass`, handed to `take`, and recorded as handed
    /// out when `take` returns `Ok` (what it returns is given back); `None`
    /// when the pass has no change left. A change `take` refuses is not
    /// recorded: the next pass hands it out again. [`scan`](Self::scan) is
    /// these steps until the first refusal.
    pub fn step<T, E>(
        &mut self,
        pass: &mut Pass,
        take: impl FnOnce(SessionChange<'_>) -> Result<T, E>,
    ) -> Option<Result<T, E>> {
        if let Some(f) = self.next_changed(pass) {
            let messages = f.log.messages();
            let change = if f.extends {
                SessionChange::Added {
                    session: &f.name,
                    new: f.new,
                    from: f.had,
                    messages: messages.get(f.had..).unwrap_or(&[]),
                }
            } else {
                SessionChange::Rewrite {
                    session: &f.name,
                    messages,
                }
            };
            let taken = take(change);
            if taken.is_ok() {
                self.seen.sessions.insert(f.name, f.mark);
            }
            return Some(taken);
        }
        // Past the listing: the sessions it did not name are gone, handed
        // out in name order.
        let names = &pass.names;
        let gone = pass.gone.get_or_insert_with(|| {
            let mut g: Vec<String> = (self.seen.sessions.keys())
                .filter(|k| !names.contains(*k))
                .cloned()
                .collect();
            g.reverse();
            g
        });
        let g = gone.pop()?;
        let taken = take(SessionChange::Removed { session: &g });
        if taken.is_ok() {
            self.seen.sessions.remove(&g);
        }
        Some(taken)
    }

    /// Walks `pass`'s listing to the next session with messages to hand
    /// out, recording those with none (their meta file saved again with
    /// the same messages) as they are passed.
    fn next_changed(&mut self, pass: &mut Pass) -> Option<Found> {
        for entry in pass.entries.by_ref() {
            let Some(name) = entry.name_str() else {
                continue;
            };
            let name = name.to_owned();
            pass.names.insert(name.clone());
            let stamp = Stamp::stat(&entry.filepath).ok().flatten();
            let old = self.seen.sessions.get(&name);
            if let Some(s) = old
                && s.meta == entry.filepath
                && s.stamp.is_some()
                && s.stamp == stamp
            {
                continue;
            }
            let Ok(log) = self.store.load_chat_log(&name) else {
                continue;
            };
            let messages = log.messages();
            let (had, had_chain) = old.map_or((0, [0; 32]), |m| (m.messages, m.chain));
            // The chain digest of the log's messages, and what it was after
            // the first `had` of them.
            let mut chain = [0u8; 32];
            let mut at_had = (had == 0).then_some(chain);
            for (k, m) in messages.iter().enumerate() {
                chain = chain_next(&chain, m, &mut self.buf);
                if k + 1 == had {
                    at_had = Some(chain);
                }
            }
            let new = old.is_none();
            let extends = at_had == Some(had_chain);
            let mark = SessionMark {
                meta: entry.filepath,
                stamp,
                messages: messages.len(),
                chain,
            };
            if extends && had >= messages.len() && !new {
                self.seen.sessions.insert(name, mark);
                continue;
            }
            return Some(Found {
                name,
                log,
                had,
                new,
                extends,
                mark,
            });
        }
        None
    }
}

/// A session [`Sessions::next_changed`] found with messages to hand out.
struct Found {
    name: String,
    log: occhat::LoadedChatLog,
    /// How many of its messages were handed out before.
    had: usize,
    /// Whether the session is new to the follower.
    new: bool,
    /// Whether its messages extend those handed out (else: a rewrite).
    extends: bool,
    /// What to record once its change is taken.
    mark: SessionMark,
}

/// A scan taken one change at a time ([`Sessions::pass`]): the listing it
/// started from and how far [`Sessions::step`] has walked it.
#[derive(Debug)]
pub struct Pass {
    entries: std::vec::IntoIter<occhat::SessionEntry>,
    /// The sessions the listing named so far.
    names: HashSet<String>,
    /// Once the listing is walked: the sessions recorded that it did not
    /// name, last first.
    gone: Option<Vec<String>>,
}
