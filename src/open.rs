//! [`open`]: a path's store, whatever its format, told by what it holds,
//! as the `agentlog` command tells its PATHs apart.

use std::path::{Path, PathBuf};

use crate::occhat::{SessionStore, is_sessions_dir};
use crate::openhands::{ReadError, Store, is_conversation_dir};

/// What [`open`] found at a path.
#[derive(Debug)]
#[non_exhaustive]
pub enum Opened {
    /// OpenHands SDK conversations: a store, a directory above stores, a
    /// conversation directory or a file of one.
    OpenHands(Store),
    /// An OC Chat sessions directory.
    OcChat(SessionStore),
    /// Agent Session Format files: the file given, or a directory's own
    /// `*.jsonl` files ([`crate::asf::session_files`]), sorted.
    Asf(Vec<PathBuf>),
}

/// Why [`open`] found nothing to read at a path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The path could not be examined, or the directory listed (or another
    /// reason of the OpenHands discovery).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The path holds neither OpenHands conversations, an OC Chat sessions
    /// directory nor ASF session files.
    #[error(
        "{}: no OpenHands conversation, OC Chat sessions directory or ASF session file here",
        path.display()
    )]
    NothingFound {
        /// The path.
        path: PathBuf,
    },
}

/// Opens the store at `path`, its format told by what it holds: ASF session
/// files first (a file whose first line is an ASF header, or a directory of
/// them), then an OC Chat sessions directory
/// ([`occhat::is_sessions_dir`](crate::occhat::is_sessions_dir), and not an
/// OpenHands conversation directory), then OpenHands conversations found
/// under it ([`Store::open`]). Nothing found is an error
/// ([`OpenError::NothingFound`]), not an empty store.
///
/// ```no_run
/// match agentlog::open("~/.openhands/conversations")? {
///     agentlog::Opened::OpenHands(store) => println!("{} conversations", store.len()),
///     agentlog::Opened::OcChat(store) => println!("{} sessions", store.list_sessions().sessions.len()),
///     agentlog::Opened::Asf(files) => println!("{} ASF files", files.len()),
///     _ => {}
/// }
/// # Ok::<(), agentlog::OpenError>(())
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<Opened, OpenError> {
    let path = path.as_ref();
    std::fs::metadata(path).map_err(|e| ReadError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    if let Some(files) = crate::asf::session_files(path) {
        return Ok(Opened::Asf(files));
    }
    if path.is_dir() && !is_conversation_dir(path) && is_sessions_dir(path) {
        return Ok(Opened::OcChat(SessionStore::new(path)));
    }
    let store = Store::open(path)?;
    if store.is_empty() {
        return Err(OpenError::NothingFound {
            path: path.to_path_buf(),
        });
    }
    Ok(Opened::OpenHands(store))
}
