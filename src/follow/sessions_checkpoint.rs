//! What a follower of an OC Chat sessions store has handed out, per
//! session, kept small and saved as a file so that a restart goes on where
//! the last run stopped ([`SessionsCheckpoint`]).
//!
//! Per session: the meta file last seen (its path and [`Stamp`]), how many
//! messages were handed out, and a chain digest of them (`c₀` = 32 zero
//! bytes, `cᵢ₊₁` = SHA-256 of `cᵢ` followed by message `i`'s compact JSON).
//! A chat log extends what was handed out when its first `messages`
//! messages chain to the same digest; so the state is a few dozen bytes
//! per session whatever the number of messages.
//!
//! # The file
//!
//! Two lines, as [`Checkpoint`](crate::openhands::Checkpoint)'s: a header
//! `{"format":"agentlog-occhat-checkpoint","version":3,"sha256":"…"}` and
//! the body whose SHA-256 the header holds; written atomically (a
//! temporary file in the same directory, synced, renamed over the old one).
//! Loading refuses, with a typed [`CheckpointError`], a file that is not
//! one (an OpenHands store's checkpoint is told as such), a newer format
//! version and a damaged body; following refuses a checkpoint of another
//! sessions directory.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::hash::sha256;
use crate::json::{OwnedValue, Style};
use crate::openhands::checkpoint::{
    CheckpointError, FileKind, Stamp, as_u64, hex, no_file_yet, obj, parse_file_bytes, read_file,
    stamp_value, to_file_bytes, uint, unhex, value_stamp, write_atomic,
};

/// What was handed out of one session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionMark {
    /// The session's meta file when last looked at.
    pub meta: PathBuf,
    /// Its identity then (`None`: look again next scan).
    pub stamp: Option<Stamp>,
    /// How many messages were handed out.
    pub messages: usize,
    /// The chain digest of those messages (see the [module docs](self)).
    pub chain: [u8; 32],
}

/// The chain digest after one more message: SHA-256 of `prev` followed by
/// the message's compact JSON (`buf` is scratch space).
pub(crate) fn chain_next(prev: &[u8; 32], message: &OwnedValue, buf: &mut Vec<u8>) -> [u8; 32] {
    buf.clear();
    buf.extend_from_slice(prev);
    message.write_to(buf, Style::COMPACT);
    sha256(buf)
}

/// What a follower of one OC Chat sessions store has handed out (see the
/// [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionsCheckpoint {
    /// The sessions directory made absolute with links resolved.
    pub(crate) canonical: PathBuf,
    /// Its device and inode.
    pub(crate) root_id: (u64, u64),
    /// The sessions, by name.
    pub(crate) sessions: BTreeMap<String, SessionMark>,
}

#[cfg(unix)]
fn root_identity(root: &Path) -> io::Result<(PathBuf, (u64, u64))> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(root)?;
    Ok((fs::canonicalize(root)?, (m.dev(), m.ino())))
}

#[cfg(not(unix))]
fn root_identity(root: &Path) -> io::Result<(PathBuf, (u64, u64))> {
    fs::metadata(root)?;
    Ok((fs::canonicalize(root)?, (0, 0)))
}

impl SessionsCheckpoint {
    /// An empty checkpoint of the sessions directory `root` (nothing
    /// handed out yet).
    pub fn of_root(root: &Path) -> io::Result<SessionsCheckpoint> {
        let (canonical, root_id) = root_identity(root)?;
        Ok(SessionsCheckpoint {
            canonical,
            root_id,
            sessions: BTreeMap::new(),
        })
    }

    /// Refuses a checkpoint of another sessions directory than `root`.
    pub fn check_root(&self, root: &Path) -> Result<(), CheckpointError> {
        let (canonical, id) = root_identity(root).map_err(|source| CheckpointError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let what = if canonical != self.canonical {
            "path"
        } else if id != self.root_id {
            "directory"
        } else {
            return Ok(());
        };
        Err(CheckpointError::OtherStore {
            taken: self.canonical.clone(),
            taken_what: what,
            here: canonical,
            here_what: what,
        })
    }

    /// The sessions directory it is of (made absolute, links resolved).
    pub fn root(&self) -> &Path {
        &self.canonical
    }

    /// The sessions recorded, by name.
    pub fn sessions(&self) -> impl Iterator<Item = (&str, &SessionMark)> {
        self.sessions.iter().map(|(k, m)| (k.as_str(), m))
    }

    /// How many sessions are recorded.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is recorded.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// The checkpoint as the bytes [`save`](Self::save) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sessions = self
            .sessions
            .iter()
            .map(|(name, m)| {
                let stamp = m.stamp.as_ref().map_or(OwnedValue::Null, stamp_value);
                obj(vec![
                    ("name", OwnedValue::string(name)),
                    // A meta path that is not UTF-8 is not kept: the
                    // session is looked at again (its chain still tells
                    // what was handed out).
                    (
                        "meta",
                        m.meta.to_str().map_or(OwnedValue::Null, OwnedValue::string),
                    ),
                    (
                        "stamp",
                        if m.meta.to_str().is_some() {
                            stamp
                        } else {
                            OwnedValue::Null
                        },
                    ),
                    ("messages", uint(m.messages as u64)),
                    ("chain", OwnedValue::string(hex(&m.chain))),
                ])
            })
            .collect();
        let body = obj(vec![
            (
                "canonical",
                self.canonical
                    .to_str()
                    .map_or(OwnedValue::Null, OwnedValue::string),
            ),
            (
                "root_id",
                OwnedValue::Array(vec![uint(self.root_id.0), uint(self.root_id.1)]),
            ),
            ("sessions", OwnedValue::Array(sessions)),
        ]);
        to_file_bytes(
            FileKind::OcChatSessions,
            &body,
            256 + self.sessions.len() * 192,
        )
    }

    /// Reads a checkpoint from the bytes [`to_bytes`](Self::to_bytes)
    /// gives; `path` is only reported in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SessionsCheckpoint, CheckpointError> {
        let v = parse_file_bytes(bytes, path, FileKind::OcChatSessions)?;
        Self::from_value(&v)
            .ok_or_else(|| CheckpointError::corrupt(path, "the body is not a sessions checkpoint"))
    }

    fn from_value(v: &OwnedValue) -> Option<SessionsCheckpoint> {
        let canonical = PathBuf::from(v.get("canonical")?.as_str()?);
        let id = v.get("root_id")?.as_array()?;
        let root_id = match id.as_slice() {
            [a, b] => (as_u64(a)?, as_u64(b)?),
            _ => return None,
        };
        let mut sessions = BTreeMap::new();
        for s in v.get("sessions")?.as_array()? {
            let name = s.get("name")?.as_str()?.to_owned();
            let meta = match s.get("meta")? {
                OwnedValue::Null => PathBuf::new(),
                m => PathBuf::from(m.as_str()?),
            };
            let stamp = match s.get("stamp")? {
                OwnedValue::Null => None,
                a => Some(value_stamp(a)?),
            };
            let messages = usize::try_from(as_u64(s.get("messages")?)?).ok()?;
            let chain = <[u8; 32]>::try_from(unhex(s.get("chain")?.as_str()?)?).ok()?;
            if messages == 0 && chain != [0; 32] {
                return None;
            }
            let mark = SessionMark {
                meta,
                stamp,
                messages,
                chain,
            };
            if sessions.insert(name, mark).is_some() {
                return None;
            }
        }
        Some(SessionsCheckpoint {
            canonical,
            root_id,
            sessions,
        })
    }

    /// Loads the checkpoint saved at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<SessionsCheckpoint, CheckpointError> {
        let path = path.as_ref();
        SessionsCheckpoint::from_bytes(&read_file(path)?, path)
    }

    /// Loads the checkpoint at `path`, or `None` when there is no file
    /// there yet (a first run; see `Checkpoint::load_or_none`).
    pub fn load_or_none(
        path: impl AsRef<Path>,
    ) -> Result<Option<SessionsCheckpoint>, CheckpointError> {
        let path = path.as_ref();
        if no_file_yet(path) {
            return Ok(None);
        }
        SessionsCheckpoint::load(path).map(Some)
    }

    /// Saves the checkpoint at `path` atomically: a reader sees the old
    /// file or the new one; a failure leaves the old file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        write_atomic(path.as_ref(), &self.to_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(root: &Path) -> SessionsCheckpoint {
        let mut cp = SessionsCheckpoint::of_root(root).unwrap();
        let mut buf = Vec::new();
        let m = OwnedValue::parse(br#"{"role":"user","content":"hi"}"#).unwrap();
        cp.sessions.insert(
            "demo".into(),
            SessionMark {
                meta: root.join("demo/demo_20250101-000000_meta.json"),
                stamp: Some(Stamp {
                    dev: 1,
                    ino: 2,
                    size: 3,
                    mtime: -4,
                    mtime_nsec: 5,
                    ctime: Some((-3, 6)),
                }),
                messages: 1,
                chain: chain_next(&[0; 32], &m, &mut buf),
            },
        );
        cp.sessions.insert("empty".into(), SessionMark::default());
        cp
    }

    #[test]
    fn round_trip_and_refusals() {
        let t = tempfile::tempdir().unwrap();
        let cp = sample(t.path());
        let f = t.path().join("cp");
        cp.save(&f).unwrap();
        assert_eq!(SessionsCheckpoint::load(&f).unwrap(), cp);
        cp.check_root(t.path()).unwrap();
        let other = t.path().join("other");
        fs::create_dir(&other).unwrap();
        assert!(matches!(
            cp.check_root(&other),
            Err(CheckpointError::OtherStore { .. })
        ));
        // A flipped byte in the body: corrupt.
        let mut bytes = fs::read(&f).unwrap();
        let k = bytes.len() - 10;
        bytes[k] ^= 1;
        assert!(matches!(
            SessionsCheckpoint::from_bytes(&bytes, &f),
            Err(CheckpointError::Corrupt { .. })
        ));
        // A newer version.
        let newer = String::from_utf8(fs::read(&f).unwrap())
            .unwrap()
            .replace("\"version\":3", "\"version\":4");
        assert!(matches!(
            SessionsCheckpoint::from_bytes(newer.as_bytes(), &f),
            Err(CheckpointError::Version { found: 4, .. })
        ));
        // Not a checkpoint; an empty file.
        for junk in [&b"hello\n"[..], b"", b"{}\n{}\n"] {
            assert!(matches!(
                SessionsCheckpoint::from_bytes(junk, &f),
                Err(CheckpointError::NotACheckpoint { .. })
            ));
        }
        // An OpenHands store's checkpoint, told as such (and the reverse).
        let store = t.path().join("store");
        fs::create_dir(&store).unwrap();
        let oh = crate::openhands::Store::changes_since(&store, None, Default::default())
            .unwrap()
            .into_checkpoint();
        assert!(matches!(
            SessionsCheckpoint::from_bytes(&oh.to_bytes(), &f),
            Err(CheckpointError::OtherKind { .. })
        ));
        assert!(matches!(
            crate::openhands::Checkpoint::from_bytes(&cp.to_bytes(), &f),
            Err(CheckpointError::OtherKind { .. })
        ));
        // A directory is never read as one.
        assert!(matches!(
            SessionsCheckpoint::load(t.path()),
            Err(CheckpointError::NotAFile { .. })
        ));
        assert_eq!(
            SessionsCheckpoint::load_or_none(t.path().join("none")).unwrap(),
            None
        );
    }
}
