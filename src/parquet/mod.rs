//! Parquet datasets of conversation stores, for the engines people already
//! run (DuckDB, DataFusion, Spark, Polars, Trino): `OUT_DIR/<table>/…/*.parquet`
//! for the tables [`Table::ALL`] names. `docs/parquet.md` is the schema page,
//! with example queries.
//!
//! - Every part file embeds its Arrow schema, and holds the schema version
//!   ([`SCHEMA_VERSION`]) in its key-value metadata and its Arrow schema's
//!   metadata under [`SCHEMA_VERSION_KEY`]. Column names, types and order
//!   are stable; columns are only added, at the end, with a new version.
//! - Streaming, in bounded memory, bounded by bytes and not by rows: one
//!   conversation is read at a time; rows go to the Parquet writer in
//!   batches bounded by rows and by bytes (the verbatim JSON column
//!   included); a table's row group is written out when the writer's
//!   bytes in memory for it (encoded pages and encoders' buffers) reach
//!   [`DatasetOptions::row_group_bytes`]; and after every row, when the
//!   rows gathered and the row groups in progress of all tables (and
//!   partitions) together exceed [`DatasetOptions::memory_budget`], the
//!   parts holding the most are written out until they hold half of it.
//!   What the export holds beyond the budget is the conversation being
//!   exported (its files and its view), one row, and fixed buffers (one
//!   write buffer and one compressor per open part), whatever the store's
//!   size.
//! - Append-only: part files are new files, `part-<snapshot>-<uuid>-<n>.parquet`
//!   (unique across runs and machines: [`RunId`]), written under a hidden
//!   temporary name in their directory and published together with their
//!   run's manifest ([`run`]); a final name is never replaced, a file is
//!   never rewritten. A run stopped at any moment leaves no part a reader
//!   sees (hidden `.*.tmp` files, which `*.parquet` globs do not match,
//!   removed by the next run).
//! - Times: `Time` columns are Arrow `Timestamp(µs)` without a zone. A time
//!   written with a zone (`meta.json`'s `created_at`) is stored as its UTC
//!   time; a naive time (OpenHands events: `datetime.now().isoformat()`,
//!   the writing machine's local time, whose zone is not recorded; OC
//!   Chat's `YYYYMMDD_HHMMSS` stamps) is stored as the wall-clock time as
//!   written. `events.event_time_naive` and `conversations.times_naive` say
//!   which; `events.event_time_text` keeps the text. `snapshot_at` is
//!   `Timestamp(µs, "UTC")`: when the export that wrote the row ran.
//! - Incremental exports (`--checkpoint`): `events` rows are written once,
//!   when the event is new (every event again for a conversation whose
//!   history was rewritten); the other tables describe a whole
//!   conversation, and a conversation that changed gets all its rows in
//!   them again, with a later `snapshot_at`: the current rows of a
//!   conversation in `conversations`, `messages`, `tool_calls` and
//!   `llm_calls` are those of its latest `snapshot_at`.

mod batch;
mod dataset;
mod details;
mod occhat;
mod openhands;
mod part;
pub mod run;
mod schema;

use std::io;
use std::path::{Path, PathBuf};

pub use dataset::{Dataset, DatasetOptions, Partitioning, Written};
pub use details::EventDetails;
pub use occhat::{add_occhat, text_of};
pub use openhands::{
    EventSelection, OpenHandsInput, add_openhands, add_openhands_with, add_removed,
};
pub use part::StagedPart;
pub use run::{
    DatasetDir, Pending, RunId, RunMode, RunRecord, Superseded, checkpoint_digest, replace_dir,
};
pub use schema::{ColumnType, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_KEY, Table};

/// Why a dataset could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A file or directory could not be created, written, synced or renamed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The Parquet writer failed (its writes to the file included).
    #[error("{}: {source}", path.display())]
    Parquet {
        /// The part file's temporary path.
        path: PathBuf,
        /// The writer's error.
        source: ::parquet::errors::ParquetError,
    },
    /// A directory or file of the dataset could not be made inside
    /// OUT_DIR: a symbolic link, or something not a directory, where one
    /// of its directories or files would be (see [`run`]); nothing was
    /// written through it.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// Rows did not fit their schema (a bug of this module).
    #[error("rows that do not fit their table: {0}")]
    Arrow(arrow_schema::ArrowError),
}

impl DatasetError {
    pub(crate) fn io(path: &Path, source: io::Error) -> DatasetError {
        DatasetError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn parquet(path: &Path, source: ::parquet::errors::ParquetError) -> DatasetError {
        DatasetError::Parquet {
            path: path.to_path_buf(),
            source,
        }
    }
}
