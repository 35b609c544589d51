//! Why reading a conversation, one of its files, or a decoding failed: one
//! error per concern, each naming the path (and the byte offset where
//! known).

use std::io;
use std::path::{Path, PathBuf};

use crate::json::{JsonError, JsonType};
use crate::source::SourceError;

/// Why a file of a conversation did not read as a JSON object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read: an I/O error, over
    /// [`MAX_SIZE`](crate::MAX_SIZE), empty, or not a regular file.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The file is not JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error, with its byte offset.
        source: JsonError,
    },
    /// The file is JSON but not an object.
    #[error("{}: a JSON {} where an object was expected", path.display(), found.as_str())]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// What it holds instead.
        found: JsonType,
    },
}

impl FileError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FileError::Source(e) => e.path(),
            FileError::Json { path, .. } | FileError::NotAnObject { path, .. } => path,
        }
    }

    /// The byte offset of the fault in the file, when known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            FileError::Json { source, .. } => source.offset(),
            _ => None,
        }
    }

    /// Whether the file's bytes could not be had: the operating system
    /// refused to open or read it, or it is over what was left of the
    /// reader's budget ([`Reader::set_event_budget`](super::Reader::set_event_budget)). Such a file is not
    /// known to be malformed.
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            FileError::Source(SourceError::Io { .. } | SourceError::OverBudget { .. })
        )
    }

    /// Whether the file was empty (which the SDK's iteration skips
    /// silently).
    pub fn is_empty_file(&self) -> bool {
        matches!(self, FileError::Source(SourceError::Empty { .. }))
            || matches!(self, FileError::Json { source, .. } if source.kind() == crate::json::JsonErrorKind::Empty)
    }
}

/// Why a conversation could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The path could not be examined, or the directory listed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The directory holds no conversation.
    #[error("{}: no conversation here (no base_state.json, meta.json or event file)", path.display())]
    NoConversation {
        /// The directory.
        path: PathBuf,
    },
    /// The path is a file that is not one a conversation directory is
    /// found by (`base_state.json`, `meta.json`, an event file).
    #[error("{}: not a file of a conversation directory", path.display())]
    NotAConversationFile {
        /// The file.
        path: PathBuf,
    },
    /// The directory is an OC Chat sessions directory, not an OpenHands
    /// store ([`Store::open`](super::Store::open) refuses it rather than
    /// find no conversation in it).
    #[error(
        "{}: an OC Chat sessions directory, not an OpenHands store (read it with \
         agentlog::occhat::SessionStore, or agentlog::open)",
        path.display()
    )]
    OcChatStore {
        /// The directory.
        path: PathBuf,
    },
}

impl ReadError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        ReadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Why a file could not be opened for decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The file could not be read (see its [`FileError`]).
    #[error("the file could not be read")]
    Unread,
    /// The bytes are not JSON.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// The JSON is not an object.
    #[error("a JSON {} where an object was expected", .0.as_str())]
    NotAnObject(JsonType),
}

impl DecodeError {
    pub(crate) fn from_file_error(e: &FileError) -> Self {
        match e {
            FileError::Source(_) => DecodeError::Unread,
            FileError::Json { source, .. } => DecodeError::Json(source.clone()),
            FileError::NotAnObject { found, .. } => DecodeError::NotAnObject(*found),
        }
    }
}
