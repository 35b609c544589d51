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
//! `{"format":"agentlog-occhat-checkpoint","version":1,"sha256":"…"}` and
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

use crate::hash::{sha256, sha256_hex};
use crate::json::{Map, Number, OwnedValue, Style};
use crate::openhands::checkpoint::{CheckpointError, Stamp, write_atomic};

/// The `format` member of the file's header.
pub(crate) const FORMAT: &str = "agentlog-occhat-checkpoint";

/// The format version this crate writes and reads.
const VERSION: u64 = 1;

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

fn uint(v: u64) -> OwnedValue {
    OwnedValue::Number(Number::from(v))
}

fn as_u64(v: &OwnedValue) -> Option<u64> {
    v.as_number()?.as_str().parse().ok()
}

fn obj(members: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.entries_mut().push((k.to_owned(), v));
    }
    OwnedValue::Object(m)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
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
                let stamp = m.stamp.as_ref().map_or(OwnedValue::Null, |s| {
                    OwnedValue::Array(vec![
                        uint(s.dev),
                        uint(s.ino),
                        uint(s.size),
                        OwnedValue::int(s.mtime),
                        uint(u64::from(s.mtime_nsec)),
                    ])
                });
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
        let mut b = Vec::new();
        body.write_to(&mut b, Style::COMPACT);
        let header = obj(vec![
            ("format", OwnedValue::string(FORMAT)),
            ("version", uint(VERSION)),
            ("sha256", OwnedValue::string(sha256_hex(&b))),
        ]);
        let mut out = Vec::with_capacity(b.len() + 128);
        header.write_to(&mut out, Style::COMPACT);
        out.push(b'\n');
        out.extend_from_slice(&b);
        out.push(b'\n');
        out
    }

    /// Reads a checkpoint from the bytes [`to_bytes`](Self::to_bytes)
    /// gives; `path` is only reported in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SessionsCheckpoint, CheckpointError> {
        let p = || path.to_path_buf();
        let not = || CheckpointError::NotACheckpoint { path: p() };
        let corrupt = |reason: &str| CheckpointError::Corrupt {
            path: p(),
            reason: reason.to_owned(),
        };
        let nl = bytes.iter().position(|&b| b == b'\n').ok_or_else(not)?;
        let (head, rest) = bytes.split_at(nl);
        let header = OwnedValue::parse(head).map_err(|_| not())?;
        match header.get("format").and_then(OwnedValue::as_str) {
            Some(FORMAT) => {}
            Some(crate::openhands::checkpoint::FORMAT) => {
                return Err(CheckpointError::OtherKind {
                    path: p(),
                    found: "an OpenHands store",
                    wanted: "an OC Chat sessions directory",
                });
            }
            _ => return Err(not()),
        }
        let version = header
            .get("version")
            .and_then(as_u64)
            .ok_or_else(|| corrupt("the header has no version"))?;
        if version > VERSION {
            return Err(CheckpointError::Version {
                path: p(),
                found: version,
            });
        }
        if version != VERSION {
            return Err(corrupt("unknown format version"));
        }
        let body = rest.get(1..).unwrap_or(&[]);
        let body = body.strip_suffix(b"\n").unwrap_or(body);
        let digest = header
            .get("sha256")
            .and_then(OwnedValue::as_str)
            .ok_or_else(|| corrupt("the header has no digest"))?;
        if sha256_hex(body) != digest {
            return Err(corrupt("the body does not match its digest"));
        }
        let v = OwnedValue::parse(body).map_err(|e| corrupt(&format!("body: {e}")))?;
        Self::from_value(&v).ok_or_else(|| corrupt("the body is not a sessions checkpoint"))
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
                a => match a.as_array()?.as_slice() {
                    [dev, ino, size, mtime, nsec] => Some(Stamp {
                        dev: as_u64(dev)?,
                        ino: as_u64(ino)?,
                        size: as_u64(size)?,
                        mtime: mtime.as_number()?.as_str().parse().ok()?,
                        mtime_nsec: u32::try_from(as_u64(nsec)?).ok()?,
                    }),
                    _ => return None,
                },
            };
            let messages = usize::try_from(as_u64(s.get("messages")?)?).ok()?;
            let chain = unhex32(s.get("chain")?.as_str()?)?;
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
        let meta = fs::metadata(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() {
            return Err(CheckpointError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let bytes = fs::read(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SessionsCheckpoint::from_bytes(&bytes, path)
    }

    /// Loads the checkpoint at `path`, or `None` when there is no file
    /// there (a first run; a dangling link is saved through).
    pub fn load_or_none(
        path: impl AsRef<Path>,
    ) -> Result<Option<SessionsCheckpoint>, CheckpointError> {
        let path = path.as_ref();
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Ok(m) if m.file_type().is_symlink() && fs::metadata(path).is_err() => Ok(None),
            _ => SessionsCheckpoint::load(path).map(Some),
        }
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
            .replace("\"version\":1", "\"version\":2");
        assert!(matches!(
            SessionsCheckpoint::from_bytes(newer.as_bytes(), &f),
            Err(CheckpointError::Version { found: 2, .. })
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
