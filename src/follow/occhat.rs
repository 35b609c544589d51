//! Following an OC Chat sessions store: the messages each save adds.
//!
//! OC Chat saves a session by writing a new timestamped chat log (and
//! meta) and archiving the old one. A [`Sessions`] keeps, per session, the
//! meta file it last saw and a digest of every message it handed out; a
//! scan lists the sessions, skips those whose meta file is the one seen,
//! loads the others' newest chat log and hands out the messages added
//! ([`SessionChange::Added`]). A chat log that is not an extension of what
//! was handed out (a recovered tail, an edit) is a
//! [`SessionChange::Rewrite`] with all its messages; a session gone is
//! [`SessionChange::Removed`].
//!
//! Memory: a digest (32 bytes as hex, 64) per message handed out, per
//! session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::hash::sha256_hex;
use crate::json::{OwnedValue, Style};
use crate::occhat;
use crate::openhands::checkpoint::Stamp;

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

#[derive(Debug, Default)]
struct Seen {
    meta: PathBuf,
    stamp: Option<Stamp>,
    digests: Vec<String>,
}

/// An OC Chat store followed (see the [module docs](self)).
pub struct Sessions {
    store: occhat::SessionStore,
    root: PathBuf,
    seen: HashMap<String, Seen>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("root", &self.root)
            .field("sessions", &self.seen.len())
            .finish()
    }
}

fn digest(v: &OwnedValue) -> String {
    sha256_hex(v.to_string_styled(Style::COMPACT).as_bytes())
}

impl Sessions {
    /// Follows the sessions store at `root`, from nothing (the first scan
    /// hands out every message there is).
    pub fn new(root: impl Into<PathBuf>) -> Sessions {
        let root = root.into();
        Sessions {
            store: occhat::SessionStore::new(&root),
            root,
            seen: HashMap::new(),
        }
    }

    /// The store's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Scans the store, handing each change to `sink`. A session whose
    /// chat log cannot be loaded is skipped and tried again next scan.
    pub fn scan<E>(
        &mut self,
        mut sink: impl FnMut(SessionChange<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let list = self.store.list_sessions();
        let mut names: Vec<String> = Vec::new();
        for entry in &list.sessions {
            let Some(name) = entry.name_str() else {
                continue;
            };
            let name = name.to_owned();
            names.push(name.clone());
            let stamp = Stamp::stat(&entry.filepath).ok().flatten();
            if let Some(s) = self.seen.get(&name)
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
            let digests: Vec<String> = messages.iter().map(digest).collect();
            let seen = self.seen.entry(name.clone()).or_default();
            let new = seen.meta.as_os_str().is_empty();
            let extends = digests.len() >= seen.digests.len()
                && digests.iter().zip(&seen.digests).all(|(a, b)| a == b);
            let change = if extends {
                let from = seen.digests.len();
                (from < messages.len() || new).then(|| SessionChange::Added {
                    session: &name,
                    new,
                    from,
                    messages: messages.get(from..).unwrap_or(&[]),
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
            seen.meta = entry.filepath.clone();
            seen.stamp = stamp;
            seen.digests = digests;
        }
        let gone: Vec<String> = self
            .seen
            .keys()
            .filter(|k| !names.contains(k))
            .cloned()
            .collect();
        for g in gone {
            sink(SessionChange::Removed { session: &g })?;
            self.seen.remove(&g);
        }
        Ok(())
    }
}
