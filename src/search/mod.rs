//! Full-text search over conversation stores: a [tantivy] index of every
//! message, tool call, tool output and error of OpenHands conversations
//! (sub-agents included) and OC Chat sessions, kept up to date through the
//! changes-since scan ([`Store::changes_since`](crate::openhands::Store::changes_since))
//! and OC Chat's sessions follower ([`Sessions`](crate::follow::occhat::Sessions)).
//!
//! # Documents
//!
//! One document per event and [`DocKind`] (an OC Chat assistant message
//! with tool calls gives a `message` and an `action`):
//!
//! - `message`: a `MessageEvent`'s text (its content and extended content);
//! - `action`: an `ActionEvent`'s tool name, arguments (the call's JSON
//!   text, or the action object), thought, reasoning and summary;
//! - `observation`: an `ObservationEvent`'s output (its content), a
//!   `UserRejectObservation`'s reason;
//! - `error`: an `AgentErrorEvent`'s error, a `ConversationErrorEvent`'s or
//!   `ServerErrorEvent`'s string members;
//! - `summary`: a condensation's summary.
//!
//! Each knows its conversation (the ID `export` prints, its parent for a
//! sub-agent, the directory `agentlog show` takes), its event index, its
//! kind and the event's class, the role, the tool, the timestamp as
//! written, the conversation's model, and two flags the view computes
//! ([`View`](crate::openhands::view::View)): whether the event is on the
//! active branch ([`View::conversation`](crate::openhands::view::View::conversation))
//! and whether it is in the model's context
//! ([`View::context`](crate::openhands::view::View::context): not condensed
//! away, not on an abandoned branch). OC Chat sessions are linear and
//! uncondensed: their messages are on the branch and in the context.
//!
//! # Incremental updates
//!
//! [`SearchIndex::update`] scans each store from the checkpoint the index
//! keeps for it. A conversation that changed in any way (new events, a new
//! state or meta, a rewrite) is read whole and replaces its documents —
//! new events can move earlier ones out of the context (a condensation) or
//! off the active branch (a fork), so its flags are computed again over
//! the whole conversation; a removed conversation's documents are deleted;
//! an unchanged one costs what the changes-since scan costs, no read.
//!
//! # On disk, and what a killed run leaves
//!
//! The index directory holds tantivy's files and one checkpoint file per
//! store (`store-<SHA-256>.cp`, named by the SHA-256 of its bytes, written
//! atomically through [`output`](crate::output)). Tantivy's commit is
//! atomic (its `meta.json` renamed over the old one); its payload names the
//! checkpoint files of that commit, which are written before it and
//! removed only once a later commit no longer names them. So a run killed
//! at any point leaves the last commit and its checkpoints: the index
//! stays searchable as it was, and the next run scans from there and
//! completes it (replacing a conversation is idempotent). A checkpoint
//! file that is missing or whose bytes do not match its name makes that
//! store indexed again from nothing, its old documents deleted first.
//!
//! Nothing is written outside the index directory: a directory that
//! holds a symbolic link is refused ([`SearchError::Link`]), and so is a
//! non-empty directory that is not an index ([`SearchError::NotAnIndex`]).
//! One writer at a time: tantivy's lock file refuses a second.

mod extract;
mod query;
mod state;
mod update;

use std::fs;
use std::path::{Path, PathBuf};

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, directory::MmapDirectory};

pub use extract::{DocKind, wall_seconds};
pub use query::{Branch, DocEntry, Hit, Query};
pub use update::{StoreKind, UpdateReport};

/// The file names in an index directory that are ours (the checkpoint
/// files start with it).
pub(crate) const CHECKPOINT_PREFIX: &str = "store-";

/// Why indexing or searching failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The index directory (or a store) could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The index directory holds a symbolic link: nothing is written
    /// through one.
    #[error("{}: a symbolic link in the index directory (an index holds none; nothing written)", path.display())]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// The directory is not empty and holds no index.
    #[error("{}: not an agentlog index and not empty (nothing written)", path.display())]
    NotAnIndex {
        /// The directory.
        path: PathBuf,
    },
    /// No index at the path (searching).
    #[error("{}: no index here (make one with `agentlog index`)", path.display())]
    NoIndex {
        /// The directory.
        path: PathBuf,
    },
    /// The index was made by another schema or format version.
    #[error("{}: {what}", path.display())]
    Format {
        /// The directory.
        path: PathBuf,
        /// What does not match.
        what: String,
    },
    /// A store could not be scanned.
    #[error("{}: {message}", path.display())]
    Store {
        /// The store's path.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The query does not parse.
    #[error("query: {0}")]
    Query(String),
    /// Tantivy failed.
    #[error("{}: index: {source}", path.display())]
    Tantivy {
        /// The index directory.
        path: PathBuf,
        /// The error.
        source: tantivy::TantivyError,
    },
}

impl SearchError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> SearchError {
        SearchError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The fields of the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// The conversation's key: store kind, canonical root, conversation
    /// (deleting by it replaces a conversation).
    pub key: Field,
    /// The canonical root of the store (deleting by it drops a store).
    pub root: Field,
    /// `openhands` or `occhat`.
    pub store: Field,
    /// The conversation ID (OC Chat: the session's name).
    pub conversation: Field,
    /// The parent conversation's ID (sub-agents).
    pub parent: Field,
    /// The conversation's directory (OC Chat: the sessions directory).
    pub path: Field,
    /// The event index (OC Chat: the message's).
    pub event: Field,
    /// The [`DocKind`].
    pub kind: Field,
    /// The event's class (`ActionEvent`…; OC Chat: the role).
    pub event_kind: Field,
    /// The role.
    pub role: Field,
    /// The tool.
    pub tool: Field,
    /// The timestamp as written.
    pub timestamp: Field,
    /// The timestamp as seconds of the recorded wall clock (for ranges).
    pub time: Field,
    /// The model.
    pub model: Field,
    /// On the active branch (1/0).
    pub active: Field,
    /// In the model's context (1/0).
    pub in_context: Field,
    /// The text searched.
    pub body: Field,
}

/// The schema's version, in the commit payload: an index of another is
/// refused.
pub(crate) const SCHEMA_VERSION: u64 = 1;

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("default")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        key: b.add_text_field("key", STRING),
        root: b.add_text_field("root", STRING),
        store: b.add_text_field("store", STRING | STORED),
        conversation: b.add_text_field("conversation", STRING | STORED),
        parent: b.add_text_field("parent", STORED),
        path: b.add_text_field("path", STORED),
        event: b.add_u64_field("event", STORED | FAST),
        kind: b.add_text_field("kind", STRING | STORED),
        event_kind: b.add_text_field("event_kind", STORED),
        role: b.add_text_field("role", STRING | STORED),
        tool: b.add_text_field("tool", STRING | STORED),
        timestamp: b.add_text_field("timestamp", STORED),
        time: b.add_i64_field("time", INDEXED | FAST),
        model: b.add_text_field("model", STRING | STORED),
        active: b.add_u64_field("active", INDEXED | STORED),
        in_context: b.add_u64_field("in_context", INDEXED | STORED),
        body: b.add_text_field("body", text),
    };
    (b.build(), fields)
}

/// A search index on disk (see the [module docs](self)).
pub struct SearchIndex {
    dir: PathBuf,
    index: Index,
    fields: Fields,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("dir", &self.dir)
            .finish()
    }
}

/// Refuses a directory that holds a symbolic link; otherwise whether it
/// holds anything but what a killed first run can leave before the
/// index's first `meta.json` (the temporary file tantivy writes it
/// through, `.tmp…`, a regular file), so that such a run is completed by
/// the next one rather than its directory refused as not an index.
/// Whether `name` is a file tantivy makes in a new index's directory before
/// its first `meta.json` is in place: the temporary file it writes
/// `meta.json` through (`.tmp…`), its list of the files it manages
/// (`.managed.json`, written when that temporary file is registered) and
/// its lock files (`.tantivy-….lock`). A first run killed before
/// `meta.json` leaves only such files, and the next run makes the index
/// there.
fn is_first_run_leftover(name: &str) -> bool {
    name.starts_with(".tmp")
        || name == ".managed.json"
        || (name.starts_with(".tantivy-") && name.ends_with(".lock"))
}

fn refuse_links(dir: &Path) -> Result<bool, SearchError> {
    let mut any = false;
    for e in fs::read_dir(dir).map_err(|e| SearchError::io(dir, e))? {
        let e = e.map_err(|e| SearchError::io(dir, e))?;
        let t = e.file_type().map_err(|x| SearchError::io(&e.path(), x))?;
        if t.is_symlink() {
            return Err(SearchError::Link { path: e.path() });
        }
        let leftover = t.is_file() && is_first_run_leftover(&e.file_name().to_string_lossy());
        any |= !leftover;
    }
    Ok(any)
}

impl SearchIndex {
    /// Opens the index at `dir` to update it, creating the directory (its
    /// parent must exist) and an empty index when there is none. Refuses
    /// a directory that is a symbolic link or holds one, and a non-empty
    /// directory that holds no index.
    pub fn open_or_create(dir: impl AsRef<Path>) -> Result<SearchIndex, SearchError> {
        let dir = dir.as_ref();
        match fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(SearchError::Link {
                    path: dir.to_path_buf(),
                });
            }
            Ok(m) if !m.is_dir() => {
                return Err(SearchError::NotAnIndex {
                    path: dir.to_path_buf(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                fs::create_dir(dir).map_err(|e| SearchError::io(dir, e))?;
            }
            Err(e) => return Err(SearchError::io(dir, e)),
        }
        let nonempty = refuse_links(dir)?;
        let has_meta = dir.join("meta.json").is_file();
        if nonempty && !has_meta {
            return Err(SearchError::NotAnIndex {
                path: dir.to_path_buf(),
            });
        }
        Self::open_dir(dir, true)
    }

    /// Opens the index at `dir` to search it.
    pub fn open(dir: impl AsRef<Path>) -> Result<SearchIndex, SearchError> {
        let dir = dir.as_ref();
        if !dir.join("meta.json").is_file() {
            return Err(SearchError::NoIndex {
                path: dir.to_path_buf(),
            });
        }
        Self::open_dir(dir, false)
    }

    fn open_dir(dir: &Path, create: bool) -> Result<SearchIndex, SearchError> {
        let tv = |source| SearchError::Tantivy {
            path: dir.to_path_buf(),
            source,
        };
        let (schema, fields) = schema();
        let mmap = MmapDirectory::open(dir).map_err(|e| SearchError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let index = if create {
            Index::open_or_create(mmap, schema.clone()).map_err(tv)?
        } else {
            Index::open(mmap).map_err(tv)?
        };
        if index.schema() != schema {
            return Err(SearchError::Format {
                path: dir.to_path_buf(),
                what: "an index of another schema (made by another agentlog version)".into(),
            });
        }
        let s = SearchIndex {
            dir: dir.to_path_buf(),
            index,
            fields,
        };
        // The payload's own checks (format, version).
        s.payload()?;
        Ok(s)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many documents the last commit holds.
    pub fn num_docs(&self) -> Result<u64, SearchError> {
        let reader = self.index.reader().map_err(|e| self.tv(e))?;
        Ok(reader.searcher().num_docs())
    }

    pub(crate) fn tv(&self, source: tantivy::TantivyError) -> SearchError {
        SearchError::Tantivy {
            path: self.dir.clone(),
            source,
        }
    }
}
