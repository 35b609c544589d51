//! Where a write may go: the session directory a write acts on, its
//! archive, and the layouts that are refused before anything is changed.
//!
//! Every directory a write creates a file in is a real directory (not a
//! symlink) whose parent is the store's root (a session directory,
//! `archive/`, `legacy/`) or `archive/` (a session's archive), checked by
//! `lstat` and by identity (device and inode) before the first change and
//! again before each publish. The root itself may be a symlink: it is what
//! the caller chose.

use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::fsops::{self, DevIno};
use super::save::SaveError;
use super::{ARCHIVE_DIR_NAME, LEGACY_DIR_NAME, SessionStore, fs_safe_name, py};

/// Why a layout is refused for writing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutProblem {
    /// The path is a symbolic link; no write follows one.
    Symlink,
    /// The path exists and is not a directory.
    NotADirectory,
    /// The name is one of the store's reserved directories (`archive`,
    /// `legacy`), which are never a session.
    Reserved,
    /// The path is not directly under the store's root.
    OutsideStore {
        /// The store's root.
        root: PathBuf,
    },
    /// The path is the same directory as `other` (a bind mount, or an
    /// archive that leads back to the session it archives).
    LeadsBack {
        /// The other path.
        other: PathBuf,
    },
    /// The name is not valid UTF-8 (a session name is text).
    NotUtf8,
}

impl fmt::Display for LayoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutProblem::Symlink => f.write_str("is a symbolic link"),
            LayoutProblem::NotADirectory => f.write_str("is not a directory"),
            LayoutProblem::Reserved => {
                f.write_str("is a reserved directory of the store, never a session")
            }
            LayoutProblem::OutsideStore { root } => {
                write!(
                    f,
                    "is not a session directory of the store {}",
                    root.display()
                )
            }
            LayoutProblem::LeadsBack { other } => {
                write!(f, "is the same file or directory as {}", other.display())
            }
            LayoutProblem::NotUtf8 => f.write_str("is not a UTF-8 name"),
        }
    }
}

/// A checked session directory: where a save, an export or a recovery of
/// one session writes.
#[derive(Debug, Clone)]
pub(crate) struct SessionTarget {
    /// The session directory.
    pub(crate) dir: PathBuf,
    /// Its name (what the stamped file names start with).
    pub(crate) name: String,
    /// `archive/{name}`.
    pub(crate) archive: PathBuf,
}

fn refuse(path: &Path, problem: LayoutProblem) -> SaveError {
    SaveError::UnsafeLayout {
        path: path.to_path_buf(),
        problem,
    }
}

/// `path` is missing or a real directory (not a symlink). Its identity
/// when it exists.
pub(crate) fn real_dir_or_missing(path: &Path) -> Result<Option<DevIno>, SaveError> {
    match fs::symlink_metadata(path) {
        Err(_) => Ok(None),
        Ok(m) if m.file_type().is_symlink() => Err(refuse(path, LayoutProblem::Symlink)),
        Ok(m) if !m.is_dir() => Err(refuse(path, LayoutProblem::NotADirectory)),
        Ok(_) => Ok(fsops::lstat_id(path)),
    }
}

/// Whether `name` is one of the reserved directory names.
pub(crate) fn is_reserved(name: &OsStr) -> bool {
    name.as_bytes() == ARCHIVE_DIR_NAME.as_bytes() || name.as_bytes() == LEGACY_DIR_NAME.as_bytes()
}

impl SessionStore {
    /// The root's identity (links followed: the root is the caller's
    /// choice), or `None` when it does not exist yet.
    fn root_id(&self) -> Result<Option<DevIno>, SaveError> {
        match fs::metadata(&self.dir) {
            Err(_) => Ok(None),
            Ok(m) if !m.is_dir() => Err(refuse(&self.dir, LayoutProblem::NotADirectory)),
            Ok(_) => Ok(fsops::stat_id(&self.dir)),
        }
    }

    /// A store directory `{root}/{name}` that a write may create files in:
    /// not reserved unless `reserved_ok`, missing or a real directory.
    pub(crate) fn checked_child(
        &self,
        name: &OsStr,
        reserved_ok: bool,
    ) -> Result<PathBuf, SaveError> {
        let path = py::join(&self.dir, name);
        if name.is_empty() || name == "." || name == ".." || name.as_bytes().contains(&b'/') {
            return Err(refuse(
                &path,
                LayoutProblem::OutsideStore {
                    root: self.dir.clone(),
                },
            ));
        }
        if !reserved_ok && is_reserved(name) {
            return Err(refuse(&path, LayoutProblem::Reserved));
        }
        let root = self.root_id()?;
        let id = real_dir_or_missing(&path)?;
        if id.is_some() && id == root {
            return Err(refuse(
                &path,
                LayoutProblem::LeadsBack {
                    other: self.dir.clone(),
                },
            ));
        }
        Ok(path)
    }

    fn target(&self, name: &str) -> Result<SessionTarget, SaveError> {
        let dir = self.checked_child(OsStr::new(name), false)?;
        let archive_root = self.checked_child(OsStr::new(ARCHIVE_DIR_NAME), true)?;
        let archive = py::join(&archive_root, name);
        let archive_id = real_dir_or_missing(&archive)?;
        let dir_id = fsops::lstat_id(&dir);
        let archive_root_id = fsops::lstat_id(&archive_root);
        if archive_id.is_some() && (archive_id == dir_id || archive_id == archive_root_id) {
            return Err(refuse(&archive, LayoutProblem::LeadsBack { other: dir }));
        }
        if dir_id.is_some() && dir_id == archive_root_id {
            return Err(refuse(
                &dir,
                LayoutProblem::LeadsBack {
                    other: archive_root,
                },
            ));
        }
        Ok(SessionTarget {
            dir,
            name: name.to_owned(),
            archive,
        })
    }

    /// The target for a session by name: `{root}/{fs_safe_name(name)}`.
    pub(crate) fn target_for_name(&self, name: &str) -> Result<SessionTarget, SaveError> {
        self.target(&fs_safe_name(name))
    }

    /// The target for a directory that was resolved (a loaded session's):
    /// it must be a directory directly under the root (by identity), not
    /// reserved, not a symlink.
    pub(crate) fn target_for_dir(&self, dir: &Path) -> Result<SessionTarget, SaveError> {
        let outside = || {
            refuse(
                dir,
                LayoutProblem::OutsideStore {
                    root: self.dir.clone(),
                },
            )
        };
        let name = dir.file_name().ok_or_else(outside)?;
        let parent = fsops::parent_of(dir);
        let root = self.root_id()?;
        if root.is_none() || fsops::stat_id(&parent) != root {
            return Err(outside());
        }
        let Some(name) = name.to_str() else {
            return Err(refuse(dir, LayoutProblem::NotUtf8));
        };
        self.target(name)
    }

    /// Checks `t` again (before a publish): a directory swapped for a
    /// symlink since is refused.
    pub(crate) fn recheck(&self, t: &SessionTarget) -> Result<(), SaveError> {
        self.target(&t.name).map(drop)
    }
}
