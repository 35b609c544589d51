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
//! [`SessionChange::Removed`].
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
        let list = self.store.list_sessions();
        let mut names: HashSet<String> = HashSet::new();
        for entry in &list.sessions {
            let Some(name) = entry.name_str() else {
                continue;
            };
            let name = name.to_owned();
            names.insert(name.clone());
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
            let change = if at_had == Some(had_chain) {
                (had < messages.len() || new).then(|| SessionChange::Added {
                    session: &name,
                    new,
                    from: had,
                    messages: messages.get(had..).unwrap_or(&[]),
                })
            } else {
                Some(SessionChange::Rewrite {
                    session: &name,
                    messages,
                })
            };
            if let Some(c) = change {
                sink(c)?;
            }
            self.seen.sessions.insert(
                name,
                SessionMark {
                    meta: entry.filepath.clone(),
                    stamp,
                    messages: messages.len(),
                    chain,
                },
            );
        }
        let gone: Vec<String> = self
            .seen
            .sessions
            .keys()
            .filter(|k| !names.contains(*k))
            .cloned()
            .collect();
        for g in gone {
            sink(SessionChange::Removed { session: &g })?;
            self.seen.sessions.remove(&g);
        }
        Ok(())
    }
}
