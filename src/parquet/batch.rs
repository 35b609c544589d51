//! Rows being gathered for one part file: one Arrow builder per column,
//! filled a row at a time in the schema's column order, and the bytes they
//! hold (or have room for) counted so that a caller can bound them.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, SchemaRef};

use super::schema::{ColumnType, Table};

/// One column's builder.
enum Col {
    Str(StringBuilder),
    I64(Int64Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    Time(TimestampMicrosecondBuilder),
    Utc(TimestampMicrosecondBuilder),
}

/// The rows gathered for one table's part file.
pub(crate) struct Batch {
    schema: SchemaRef,
    cols: Vec<Col>,
    rows: usize,
    bytes: usize,
    /// The bytes the builders were given room for when the batch started.
    reserved: usize,
    room: Option<Room>,
}

impl Batch {
    /// An empty batch of `table`'s columns.
    pub(crate) fn new(table: Table, schema: SchemaRef) -> Batch {
        let cols = table
            .columns()
            .iter()
            .map(|&(_, ty)| match ty {
                ColumnType::NotNullStr | ColumnType::Str => Col::Str(StringBuilder::new()),
                ColumnType::I64 => Col::I64(Int64Builder::new()),
                ColumnType::F64 => Col::F64(Float64Builder::new()),
                ColumnType::Bool => Col::Bool(BooleanBuilder::new()),
                ColumnType::Time => Col::Time(TimestampMicrosecondBuilder::new()),
                ColumnType::Utc => {
                    Col::Utc(TimestampMicrosecondBuilder::new().with_timezone("UTC"))
                }
            })
            .collect();
        Batch {
            schema,
            cols,
            rows: 0,
            bytes: 0,
            reserved: 0,
            room: None,
        }
    }

    /// Rows gathered.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// About how many bytes the gathered rows hold (texts by length, other
    /// values by width).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// About how many bytes the builders hold: the rows gathered, or the
    /// room they were given when that is more.
    pub(crate) fn held(&self) -> usize {
        self.bytes.max(self.reserved)
    }

    /// Forgets the room of the last batch: the next batch's builders start
    /// empty and grow (after its rows were written out to bound memory).
    pub(crate) fn release(&mut self) {
        self.room = None;
    }

    /// Starts a row: its columns are given in order, then [`Row::end`].
    pub(crate) fn row(&mut self) -> Row<'_> {
        if self.rows == 0 {
            self.reserve();
        }
        Row { b: self, i: 0 }
    }

    /// The gathered rows as a record batch; the builders start empty
    /// again. The next batch's first row gives them room for as many rows
    /// and text bytes as this batch held, so that a table's batches fill
    /// their builders without growing them (and nothing is held for a
    /// table between its batches).
    pub(crate) fn take(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut room = Room {
            rows: self.rows,
            bytes: Vec::with_capacity(self.cols.len()),
        };
        let arrays: Vec<ArrayRef> = self
            .cols
            .iter_mut()
            .map(|c| -> ArrayRef {
                match c {
                    Col::Str(b) => {
                        room.bytes.push(b.values_slice().len());
                        Arc::new(b.finish())
                    }
                    Col::I64(b) => Arc::new(b.finish()),
                    Col::F64(b) => Arc::new(b.finish()),
                    Col::Bool(b) => Arc::new(b.finish()),
                    Col::Time(b) => Arc::new(b.finish()),
                    Col::Utc(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        self.rows = 0;
        self.bytes = 0;
        self.reserved = 0;
        self.room = Some(room);
        RecordBatch::try_new(self.schema.clone(), arrays)
    }

    /// Gives the empty builders the room the last batch took.
    fn reserve(&mut self) {
        let Some(room) = self.room.take() else {
            return;
        };
        let rows = room.rows;
        let mut bytes = room.bytes.into_iter();
        let mut reserved = 0;
        for c in &mut self.cols {
            reserved += rows * 8;
            match c {
                Col::Str(b) => {
                    // A quarter more than the last batch took: a batch
                    // that takes a little more than its predecessor fills
                    // its builders without reallocating (and copying) them.
                    let n = bytes.next().map_or(0, |n| n + n / 4);
                    reserved += n;
                    *b = StringBuilder::with_capacity(rows, n);
                }
                Col::I64(b) => *b = Int64Builder::with_capacity(rows),
                Col::F64(b) => *b = Float64Builder::with_capacity(rows),
                Col::Bool(b) => *b = BooleanBuilder::with_capacity(rows),
                Col::Time(b) => *b = TimestampMicrosecondBuilder::with_capacity(rows),
                Col::Utc(b) => {
                    *b = TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC");
                }
            }
        }
        self.reserved = reserved;
    }
}

/// The room a batch's builders took: rows, and the text bytes of each text
/// column in order.
struct Room {
    rows: usize,
    bytes: Vec<usize>,
}

/// One row being filled: each call fills the next column. A value of
/// another type than the column's is a bug of this module; it is written
/// as null (debug builds stop).
pub(crate) struct Row<'b> {
    b: &'b mut Batch,
    i: usize,
}

impl Row<'_> {
    #[inline]
    fn next(&mut self) -> Option<&mut Col> {
        let c = self.b.cols.get_mut(self.i);
        self.i += 1;
        c
    }

    /// A text (null when `None`).
    #[inline]
    pub(crate) fn str(mut self, v: Option<&str>) -> Self {
        let n = v.map_or(0, str::len);
        match self.next() {
            Some(Col::Str(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += n + 4;
        self
    }

    /// A count or an index, into a signed 64-bit column (a count past
    /// `i64::MAX`, which no store holds, is written as `i64::MAX`).
    #[inline]
    pub(crate) fn count(self, v: Option<u64>) -> Self {
        self.i64(v.map(|v| i64::try_from(v).unwrap_or(i64::MAX)))
    }

    /// A signed integer.
    #[inline]
    pub(crate) fn i64(mut self, v: Option<i64>) -> Self {
        match self.next() {
            Some(Col::I64(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += 8;
        self
    }

    /// A float.
    #[inline]
    pub(crate) fn f64(mut self, v: Option<f64>) -> Self {
        match self.next() {
            Some(Col::F64(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += 8;
        self
    }

    /// A boolean.
    #[inline]
    pub(crate) fn bool(mut self, v: Option<bool>) -> Self {
        match self.next() {
            Some(Col::Bool(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += 1;
        self
    }

    /// A wall-clock time in microseconds (no zone).
    #[inline]
    pub(crate) fn time(mut self, v: Option<i64>) -> Self {
        match self.next() {
            Some(Col::Time(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += 8;
        self
    }

    /// Microseconds since the Unix epoch (UTC).
    #[inline]
    pub(crate) fn utc(mut self, v: Option<i64>) -> Self {
        match self.next() {
            Some(Col::Utc(b)) => b.append_option(v),
            other => mismatch(other),
        }
        self.b.bytes += 8;
        self
    }

    /// Ends the row: every column must have been given.
    #[inline]
    pub(crate) fn end(self) {
        debug_assert_eq!(self.i, self.b.cols.len(), "a row with missing columns");
        self.b.rows += 1;
    }
}

/// A value given to a column of another type: a bug of this module.
fn mismatch(c: Option<&mut Col>) {
    debug_assert!(false, "a value of the wrong type for its column");
    match c {
        Some(Col::Str(b)) => b.append_null(),
        Some(Col::I64(b)) => b.append_null(),
        Some(Col::F64(b)) => b.append_null(),
        Some(Col::Bool(b)) => b.append_null(),
        Some(Col::Time(b) | Col::Utc(b)) => b.append_null(),
        None => {}
    }
}
