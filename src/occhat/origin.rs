//! Where a loaded session came from, and the check that it is still the
//! newest before a save publishes over it (OC Chat takes no lock, so the
//! app may save between our load and our publish).

use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use crate::json::OwnedValue;

use super::fsops::{self, EntryStamp};
use super::save::SaveError;
use super::store::RecordKind;

/// Files up to this size are hashed when loaded and hashed again before a
/// publish; larger ones are compared by identity, size and time only.
const HASH_UP_TO: u64 = 16 << 20;

/// One record file as it was when a session was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileStamp {
    /// The file.
    pub path: PathBuf,
    /// Device and inode.
    pub id: (u64, u64),
    /// Size in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i128,
    /// A hash of the bytes (files up to 16 MiB that could be read), for an
    /// in-place rewrite that keeps size and time.
    pub hash: Option<u64>,
}

impl FileStamp {
    /// The stamp of `path` now (links not followed for identity).
    pub(crate) fn of(path: &Path) -> Option<FileStamp> {
        let EntryStamp { id, len, mtime_ns } = fsops::entry_stamp(path)?;
        // An entry that cannot be read (a directory where a record should
        // be, a file without permission) is still stamped by identity, size
        // and time, so a session whose chat log failed to load can be saved
        // again while that entry stays as it was.
        let hash = if len <= HASH_UP_TO {
            fs::read(path).ok().map(|b| hash_bytes(&b))
        } else {
            None
        };
        Some(FileStamp {
            path: path.to_path_buf(),
            id,
            len,
            mtime_ns,
            hash,
        })
    }
}

/// A hash of `b`: `DefaultHasher::new()` has fixed keys, so the same bytes
/// hash the same in every process of one build, which is all a change check
/// and the journal need (it is no defence against a crafted collision;
/// identity and time are checked too).
pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(b);
    h.finish()
}

/// Where a session was loaded from: the session directory the load
/// resolved (the saves write there, whatever the meta's `session_name`
/// says) and the record files read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Origin {
    /// The session directory.
    pub dir: PathBuf,
    /// The meta file read.
    pub meta: Option<FileStamp>,
    /// The chat log read (`None`: the directory had none).
    pub chat_log: Option<FileStamp>,
    /// The meta's `session_name` as recorded (any JSON value; `None` when
    /// the member is missing).
    pub recorded_name: Option<OwnedValue>,
}

impl Origin {
    /// An origin for `dir` with no files read yet.
    pub(crate) fn new(dir: PathBuf) -> Self {
        Origin {
            dir,
            meta: None,
            chat_log: None,
            recorded_name: None,
        }
    }

    pub(crate) fn stamp_mut(&mut self, kind: RecordKind) -> &mut Option<FileStamp> {
        match kind {
            RecordKind::Meta => &mut self.meta,
            RecordKind::ChatLog => &mut self.chat_log,
        }
    }

    /// Checks that the newest meta and chat log in the directory are the
    /// files this origin records, unchanged. A meta that was not recorded
    /// is not checked (the origin knows nothing of it).
    pub(crate) fn verify(&self) -> Result<(), SaveError> {
        for kind in [RecordKind::Meta, RecordKind::ChatLog] {
            let want = match kind {
                RecordKind::Meta => &self.meta,
                RecordKind::ChatLog => &self.chat_log,
            };
            if kind == RecordKind::Meta && want.is_none() {
                continue;
            }
            let newest = fsops::latest(&self.dir, kind.file_suffix());
            let ok = match (&newest, want) {
                (None, None) => true,
                (Some(found), Some(want)) => {
                    found.path == want.path
                        && FileStamp::of(&found.path).is_some_and(|now| {
                            now.id == want.id
                                && now.len == want.len
                                && now.mtime_ns == want.mtime_ns
                                && (want.hash.is_none() || now.hash == want.hash)
                        })
                }
                _ => false,
            };
            if !ok {
                return Err(SaveError::Changed {
                    path: newest
                        .map(|f| f.path)
                        .or_else(|| want.as_ref().map(|w| w.path.clone()))
                        .unwrap_or_else(|| self.dir.clone()),
                });
            }
        }
        Ok(())
    }
}
