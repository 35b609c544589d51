//! One part file: written under a hidden temporary name in its final
//! directory (`.<name>.tmp`: no `*.parquet` glob matches it, and Spark and
//! PyArrow skip names starting with `.`), completed and synced there, and
//! renamed to its final name only when its run is published (see
//! [`super::run`]). A part that is dropped unfinished (an error stopped the
//! export) removes its temporary file; a crash leaves at most hidden
//! `.*.tmp` files, which the next run into the directory removes. A final
//! name is never reused: a part whose final name exists is an error, not a
//! replacement.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::DatasetError;
use super::schema::{SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_KEY, Table};

/// The most bytes of distinct values a long text column's dictionary holds
/// in a row group: past it the writer falls back to plain values for the
/// rest of the row group (what the dictionary cost is its hashing of the
/// values it took). Texts that repeat (a store of copied conversations,
/// the same tool output again) are written once per row group; texts that
/// do not are written plain after the first few MiB.
const LONG_TEXT_DICTIONARY_BYTES: usize = 4 << 20;

/// A part file being written.
pub(crate) struct Part {
    writer: Option<ArrowWriter<BufWriter<File>>>,
    tmp: PathBuf,
    dest: PathBuf,
    rows: u64,
}

/// The writer's properties for `table`: zstd, row groups of at most
/// `row_group_rows` rows, the schema version in the key-value metadata, no
/// statistics and a dictionary bounded by [`LONG_TEXT_DICTIONARY_BYTES`]
/// for long texts, no dictionary for IDs, times and the conversation's ID
/// ([`Table::plain_columns`]).
/// zstd at its fastest level (1): higher levels trade CPU time for size
/// (measured in `benches/README.md`).
fn properties(table: Table, row_group_rows: usize) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .set_statistics_truncate_length(Some(64))
        .set_created_by(format!("agentlog {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            KeyValue::new(SCHEMA_VERSION_KEY.to_owned(), SCHEMA_VERSION.to_owned()),
            KeyValue::new(TABLE_KEY.to_owned(), table.name().to_owned()),
        ]));
    for c in table.long_text_columns() {
        let path = ColumnPath::from(*c);
        b = b
            .set_column_dictionary_page_size_limit(path.clone(), LONG_TEXT_DICTIONARY_BYTES)
            .set_column_statistics_enabled(path, EnabledStatistics::None);
    }
    for c in table.plain_columns() {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*c), false);
    }
    b.build()
}

impl Part {
    /// Creates the temporary file of the part whose final path is `dest`,
    /// in its directory, which exists (made by the caller inside the
    /// dataset: [`create_dir_inside`](crate::output::create_dir_inside)).
    /// The temporary file is a new file (`O_EXCL`: a link at its name is
    /// an error, never followed).
    pub(crate) fn create(
        table: Table,
        dest: PathBuf,
        row_group_rows: usize,
    ) -> Result<Part, DatasetError> {
        let dir = dest.parent().unwrap_or(Path::new("."));
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(tmp_name(&name));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| DatasetError::io(&tmp, e))?;
        let mut part = Part {
            writer: None,
            tmp,
            dest,
            rows: 0,
        };
        let writer = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            table.schema(),
            Some(properties(table, row_group_rows)),
        )
        .map_err(|e| DatasetError::parquet(&part.tmp, e))?;
        part.writer = Some(writer);
        Ok(part)
    }

    /// Writes a batch; its rows join the row group in progress.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), DatasetError> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        self.rows += batch.num_rows() as u64;
        w.write(batch)
            .map_err(|e| DatasetError::parquet(&self.tmp, e))
    }

    /// The bytes the writer holds in memory for the row group in progress:
    /// its encoded pages and its encoders' buffers.
    pub(crate) fn memory(&self) -> usize {
        self.writer.as_ref().map_or(0, |w| w.memory_size())
    }

    /// Ends the row group in progress (writes it to the file).
    pub(crate) fn flush(&mut self) -> Result<(), DatasetError> {
        match self.writer.as_mut() {
            Some(w) => w.flush().map_err(|e| DatasetError::parquet(&self.tmp, e)),
            None => Ok(()),
        }
    }

    /// Completes the part: the footer written and the file synced, still
    /// under its temporary name. It takes its final name when its run is
    /// published ([`StagedPart::publish`]).
    pub(crate) fn finish(mut self, table: Table) -> Result<StagedPart, DatasetError> {
        let Some(w) = self.writer.take() else {
            return Err(DatasetError::io(
                &self.tmp,
                io::Error::other("the part was already completed"),
            ));
        };
        let buf = w
            .into_inner()
            .map_err(|e| DatasetError::parquet(&self.tmp, e))?;
        let file = buf
            .into_inner()
            .map_err(|e| DatasetError::io(&self.tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| DatasetError::io(&self.tmp, e))?;
        drop(file);
        let staged = StagedPart {
            table,
            tmp: std::mem::take(&mut self.tmp),
            dest: std::mem::take(&mut self.dest),
            rows: self.rows,
        };
        Ok(staged)
    }
}

/// A complete part file under its temporary name (hidden from readers:
/// `.<name>.tmp`), waiting for its run to be published
/// ([`Pending::publish`](super::Pending::publish)).
#[derive(Debug, Clone)]
pub struct StagedPart {
    /// Its table.
    pub table: Table,
    /// Its temporary path.
    pub tmp: PathBuf,
    /// Its final path.
    pub dest: PathBuf,
    /// The rows it holds.
    pub rows: u64,
}

/// Renames `tmp` to `dest` unless `dest` exists already and `tmp` does not
/// (done before); `dest` is never replaced.
pub(crate) fn publish(tmp: &Path, dest: &Path) -> Result<(), DatasetError> {
    let tmp_there = fs::symlink_metadata(tmp).is_ok();
    if fs::symlink_metadata(dest).is_ok() {
        if !tmp_there {
            return Ok(());
        }
        return Err(DatasetError::io(
            dest,
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a part file of this name exists; it is never replaced",
            ),
        ));
    }
    fs::rename(tmp, dest).map_err(|e| DatasetError::io(dest, e))
}

/// Syncs a directory (makes the renames in it durable); a file system that
/// cannot sync a directory has nothing more to do.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The temporary name of the part file whose final name is `name`.
pub(crate) fn tmp_name(name: &str) -> String {
    format!(".{name}.tmp")
}

impl Drop for Part {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            // Unfinished: the temporary file goes; nothing took a final name.
            self.writer = None;
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
