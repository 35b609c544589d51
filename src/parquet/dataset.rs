//! A dataset being written: for each table (and partition), one open part
//! file and the rows gathered for it; rows handed to the Parquet writer a
//! batch at a time, row groups written out as they fill, and everything in
//! memory bounded by bytes ([`DatasetOptions::memory_budget`]), whatever
//! the number of rows: after every row added, the rows gathered and the
//! row groups in progress of every open part hold at most the budget (and
//! the row just added).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use super::DatasetError;
use super::batch::{Batch, Row};
use super::part::{Part, StagedPart};
use super::run::RunId;
use super::schema::Table;

/// How rows are laid out in directories under each table's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partitioning {
    /// Every part file directly in the table's directory.
    #[default]
    None,
    /// Hive-style `date=YYYY-MM-DD/` directories by the conversation's
    /// creation date (every row of a conversation, in every table, under
    /// the same date); `date=__HIVE_DEFAULT_PARTITION__` when it has none.
    Date,
}

/// What a [`Dataset`] writes and how much memory it may hold.
#[derive(Debug, Clone)]
pub struct DatasetOptions {
    /// Whether `events.json` holds each event file's text (else null).
    pub json: bool,
    /// The directory layout under each table.
    pub partitioning: Partitioning,
    /// The most rows a row group holds.
    pub row_group_rows: usize,
    /// Rows are handed to the Parquet writer once those gathered for a
    /// part hold this many bytes (or [`batch_rows`](Self::batch_rows)
    /// rows): this bounds the verbatim JSON column in memory.
    pub batch_bytes: usize,
    /// Rows are handed to the Parquet writer at this many rows.
    pub batch_rows: usize,
    /// A part's row group in progress is written out once the Parquet
    /// writer holds this many bytes for it in memory (its encoded pages
    /// and its encoders' buffers: `ArrowWriter::memory_size`).
    pub row_group_bytes: usize,
    /// The bytes every open part may hold together (the rows gathered
    /// and the row groups in progress): when a row takes them past it,
    /// the parts holding the most are written out (rows to the writer,
    /// row groups to the file) until they hold at most half of it. Checked
    /// after every row, so that it holds whatever the store's size, its
    /// number of rows or the size of its conversations.
    pub memory_budget: usize,
    /// The most part files open at once per table (partitioned datasets):
    /// opening one more completes the one used least recently.
    pub max_open_parts: usize,
}

impl Default for DatasetOptions {
    fn default() -> Self {
        DatasetOptions {
            json: true,
            partitioning: Partitioning::None,
            row_group_rows: 128 * 1024,
            batch_bytes: 4 << 20,
            batch_rows: 8192,
            row_group_bytes: 24 << 20,
            memory_budget: 64 << 20,
            max_open_parts: 16,
        }
    }
}

/// One part file being written (none in memory, [`Dataset::in_memory`])
/// and the rows gathered for it.
struct Open {
    part: Option<Part>,
    /// In memory: the batches made and not yet taken.
    ready: Vec<RecordBatch>,
    batch: Batch,
    used: u64,
    /// The Parquet writer's bytes in memory for this part, as last
    /// measured (after its last batch or flush).
    writer_bytes: usize,
}

impl Open {
    /// The bytes this part holds: its rows gathered and its row group in
    /// progress.
    fn held(&self) -> usize {
        self.batch.held() + self.writer_bytes
    }
}

/// What an export wrote: its part files, complete and synced under their
/// temporary names, waiting for the run to be published
/// ([`DatasetDir::stage`](super::DatasetDir::stage)).
#[derive(Debug, Default, Clone)]
pub struct Written {
    /// The part files completed, in the order they were.
    pub parts: Vec<StagedPart>,
    /// Rows written per table, in [`Table::ALL`]'s order.
    pub rows: [u64; 5],
}

/// A dataset being written to a directory: `OUT_DIR/<table>/…/*.parquet`.
/// Part files are new files, written under a temporary name; they take
/// their final names only when the run is published
/// ([`DatasetDir::stage`](super::DatasetDir::stage), then
/// [`Pending::publish`](super::Pending::publish)). A dataset dropped
/// unfinished removes its temporary files.
///
/// Or, made by [`in_memory`](Self::in_memory), one table's rows as Arrow
/// record batches, the same columns built by the same code, no file
/// written.
pub struct Dataset {
    /// In memory: the one table whose rows are kept.
    only: Option<Table>,
    root: PathBuf,
    options: DatasetOptions,
    snapshot: i64,
    stem: String,
    seq: u64,
    tick: u64,
    /// The open parts of each table (by [`slot`]), by partition: looked up
    /// by the partition's `&str`, nothing allocated for a row.
    open: [BTreeMap<String, Open>; Table::ALL.len()],
    /// The sum of [`Open::held`] over `open`.
    held: usize,
    written: Written,
}

impl Dataset {
    /// A dataset under `root` (created when missing), written by the run
    /// `run`: its snapshot, in microseconds since the Unix epoch, is the
    /// `snapshot_at` column of every row, and its name names the part files
    /// (`part-<run>-<n>.parquet`, unique across runs and machines).
    pub fn create(
        root: &Path,
        run: &RunId,
        options: DatasetOptions,
    ) -> Result<Dataset, DatasetError> {
        fs::create_dir_all(root).map_err(|e| DatasetError::io(root, e))?;
        let snapshot = run.snapshot();
        Ok(Dataset {
            only: None,
            root: root.to_path_buf(),
            stem: format!("part-{}", run.name()),
            options,
            snapshot,
            seq: 0,
            tick: 0,
            open: Default::default(),
            held: 0,
            written: Written::default(),
        })
    }

    /// A dataset that writes no file and keeps the rows of `table` only, as
    /// Arrow record batches of [`Table::schema`] (taken with
    /// [`take_batches`](Self::take_batches)); the rows of the other tables
    /// are dropped as they are added. The same `add_*` functions fill it,
    /// so its columns are the Parquet files' columns, value for value.
    /// `options.partitioning` is ignored.
    pub fn in_memory(table: Table, snapshot: i64, options: DatasetOptions) -> Dataset {
        Dataset {
            only: Some(table),
            root: PathBuf::new(),
            stem: String::new(),
            options: DatasetOptions {
                partitioning: Partitioning::None,
                ..options
            },
            snapshot,
            seq: 0,
            tick: 0,
            open: Default::default(),
            held: 0,
            written: Written::default(),
        }
    }

    /// In memory ([`in_memory`](Self::in_memory)): the record batches
    /// made since the last call, in the order of their rows; with `partial`
    /// the rows still gathered too, as a last, smaller batch (batches are
    /// otherwise made at [`DatasetOptions::batch_rows`] rows or
    /// [`DatasetOptions::batch_bytes`] bytes). Empty for a dataset written
    /// to files.
    pub fn take_batches(&mut self, partial: bool) -> Result<Vec<RecordBatch>, DatasetError> {
        let mut out = Vec::new();
        for o in self.open.iter_mut().flat_map(|m| m.values_mut()) {
            if o.part.is_some() {
                continue;
            }
            let before = o.held();
            if partial && o.batch.rows() > 0 {
                let b = o.batch.take().map_err(DatasetError::Arrow)?;
                o.ready.push(b);
            }
            out.append(&mut o.ready);
            self.held = (self.held + o.held()).saturating_sub(before);
        }
        Ok(out)
    }

    /// The options.
    pub fn options(&self) -> &DatasetOptions {
        &self.options
    }

    /// The `snapshot` value of this export's rows.
    pub fn snapshot(&self) -> i64 {
        self.snapshot
    }

    /// The partition directory of a conversation created at `created`
    /// (microseconds, the `created_at` column), `""` when unpartitioned.
    pub(crate) fn partition_of(&self, created: Option<i64>) -> String {
        match self.options.partitioning {
            Partitioning::None => String::new(),
            Partitioning::Date => {
                let date = created
                    .and_then(|us| jiff::Timestamp::from_microsecond(us).ok())
                    .map(|t| jiff::tz::Offset::UTC.to_datetime(t).date().to_string());
                format!(
                    "date={}",
                    date.as_deref().unwrap_or("__HIVE_DEFAULT_PARTITION__")
                )
            }
        }
    }

    /// Adds one row to `table` in `partition`: `fill` gives its columns in
    /// order. The rows gathered go to the Parquet writer when they reach
    /// the batch bounds.
    pub(crate) fn push(
        &mut self,
        table: Table,
        partition: &str,
        fill: impl FnOnce(Row<'_>),
    ) -> Result<(), DatasetError> {
        if self.only.is_some_and(|t| t != table) {
            return Ok(());
        }
        self.tick += 1;
        let tick = self.tick;
        // One search of the open parts for a row of a part already open
        // (the part is opened, and searched again, only for its first row).
        let o = match self.open[slot(table)].get_mut(partition) {
            Some(o) => o,
            None => {
                self.open_part(table, partition)?;
                match self.open[slot(table)].get_mut(partition) {
                    Some(o) => o,
                    None => return Ok(()),
                }
            }
        };
        let opts = &self.options;
        o.used = tick;
        let before = o.held();
        fill(o.batch.row());
        if o.batch.rows() >= opts.batch_rows || o.batch.bytes() >= opts.batch_bytes {
            Self::drain(o, opts.row_group_bytes)?;
        }
        self.held = (self.held + o.held()).saturating_sub(before);
        if self.held > self.options.memory_budget {
            self.write_out(self.options.memory_budget / 2)?;
        }
        Ok(())
    }

    /// Hands `o`'s gathered rows to its writer, and writes its row group out
    /// when the writer holds `row_group_bytes` for it.
    fn drain(o: &mut Open, row_group_bytes: usize) -> Result<(), DatasetError> {
        let Some(part) = &mut o.part else {
            if o.batch.rows() > 0 {
                let b = o.batch.take().map_err(DatasetError::Arrow)?;
                o.ready.push(b);
            }
            return Ok(());
        };
        if o.batch.rows() > 0 {
            let b = o.batch.take().map_err(DatasetError::Arrow)?;
            part.write(&b)?;
        }
        o.writer_bytes = part.memory();
        if o.writer_bytes >= row_group_bytes {
            part.flush()?;
            o.writer_bytes = part.memory();
        }
        Ok(())
    }

    /// Writes out the parts holding the most (their rows to the writer,
    /// their row groups to the file) until all hold at most `target`.
    fn write_out(&mut self, target: usize) -> Result<(), DatasetError> {
        let mut by_size: Vec<(usize, (Table, String))> = Table::ALL
            .iter()
            .flat_map(|&t| self.open[slot(t)].iter().map(move |(p, o)| (t, p, o)))
            .map(|(t, p, o)| (o.held(), (t, p.clone())))
            .collect();
        by_size.sort_unstable_by_key(|(held, _)| std::cmp::Reverse(*held));
        for (_, k) in by_size {
            if self.held <= target {
                break;
            }
            let Some(o) = self.open[slot(k.0)].get_mut(&k.1) else {
                continue;
            };
            let before = o.held();
            if let Some(part) = &mut o.part {
                if o.batch.rows() > 0 {
                    let b = o.batch.take().map_err(DatasetError::Arrow)?;
                    part.write(&b)?;
                }
                o.batch.release();
                part.flush()?;
                o.writer_bytes = part.memory();
            } else if o.batch.rows() > 0 {
                let b = o.batch.take().map_err(DatasetError::Arrow)?;
                o.ready.push(b);
            }
            self.held = (self.held + o.held()).saturating_sub(before);
        }
        Ok(())
    }

    /// Opens a part of `table` in `partition`, completing the least
    /// recently used one of the table first when too many are open.
    fn open_part(&mut self, table: Table, partition: &str) -> Result<(), DatasetError> {
        let of_table = &mut self.open[slot(table)];
        if of_table.len() >= self.options.max_open_parts.max(1) {
            let lru = of_table
                .iter()
                .min_by_key(|(_, o)| o.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = lru
                && let Some(o) = of_table.remove(&k)
            {
                self.complete(table, o)?;
            }
        }
        let part = if self.only.is_some() {
            None
        } else {
            let mut rel = PathBuf::from(table.name());
            if !partition.is_empty() {
                rel.push(partition);
            }
            // Inside the dataset: a link at the table's or the
            // partition's directory is refused, never written through.
            let dir = crate::output::create_dir_inside(&self.root, &rel)?;
            self.seq += 1;
            let dest = dir.join(format!("{}-{:04}.parquet", self.stem, self.seq));
            Some(Part::create(table, dest, self.options.row_group_rows)?)
        };
        self.open[slot(table)].insert(
            partition.to_owned(),
            Open {
                part,
                ready: Vec::new(),
                batch: Batch::new(table, table.schema()),
                used: self.tick,
                writer_bytes: 0,
            },
        );
        Ok(())
    }

    /// Writes the rest of `o` and completes its part file.
    fn complete(&mut self, table: Table, mut o: Open) -> Result<(), DatasetError> {
        self.held = self.held.saturating_sub(o.held());
        let Some(mut part) = o.part else {
            return Ok(()); // in memory: nothing to complete
        };
        if o.batch.rows() > 0 {
            let b = o.batch.take().map_err(DatasetError::Arrow)?;
            part.write(&b)?;
        }
        let staged = part.finish(table)?;
        if let Some(i) = Table::ALL.iter().position(|t| *t == table) {
            self.written.rows[i] += staged.rows;
        }
        self.written.parts.push(staged);
        Ok(())
    }

    /// The bytes held in memory: rows gathered and row groups in progress
    /// (the Parquet writers' bytes as measured after their last batch).
    pub fn buffered(&self) -> usize {
        self.held
    }

    /// Writes everything held in memory out to the part files (which stay
    /// open) when it exceeds the memory budget. The budget is kept after
    /// every row already ([`DatasetOptions::memory_budget`]); this is for
    /// callers that want the bound checked at a point of their choosing.
    pub fn bound_memory(&mut self) -> Result<(), DatasetError> {
        if self.held <= self.options.memory_budget {
            return Ok(());
        }
        self.write_out(0)
    }

    /// Completes every part file. With `every_table`, a table that has no
    /// part file in the dataset yet (from this export or an earlier one)
    /// gets an empty one, so that every table's directory can be queried.
    pub fn finish(mut self, every_table: bool) -> Result<Written, DatasetError> {
        let open = std::mem::take(&mut self.open);
        for (table, of_table) in Table::ALL.into_iter().zip(open) {
            for o in of_table.into_values() {
                self.complete(table, o)?;
            }
        }
        if every_table && self.only.is_none() {
            for table in Table::ALL {
                let staged = self.written.parts.iter().any(|p| p.table == table);
                if !staged && !has_part_file(&self.root.join(table.name())) {
                    self.open_part(table, "")?;
                    if let Some(o) = self.open[slot(table)].remove("") {
                        self.complete(table, o)?;
                    }
                }
            }
        }
        Ok(std::mem::take(&mut self.written))
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        // Unfinished (an error stopped the export): the parts it completed
        // go too; nothing took a final name.
        for p in &self.written.parts {
            let _ = fs::remove_file(&p.tmp);
        }
    }
}

/// Where `table`'s open parts are in [`Dataset`]'s `open`: its place in
/// [`Table::ALL`] (its declaration's, so that the parts go table by table
/// in [`Table`]'s order).
fn slot(table: Table) -> usize {
    table as usize
}

/// Whether `dir` or a directory under it holds a `*.parquet` file.
fn has_part_file(dir: &Path) -> bool {
    let Ok(rd) = fs::read_dir(dir) else {
        return false;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() && !name.starts_with('.') && has_part_file(&e.path()) {
            return true;
        }
        if t.is_file() && name.ends_with(".parquet") && !name.starts_with('.') {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each table's open parts are at its place in `Table::ALL`, so that
    /// going through `open` goes table by table in `Table`'s order.
    #[test]
    fn slots_follow_the_tables_order() {
        for (i, t) in Table::ALL.into_iter().enumerate() {
            assert_eq!(slot(t), i, "{t:?}");
        }
        assert!(Table::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
