//! A schema requested of a table's stream (the Arrow PyCapsule interface's
//! `requested_schema`): the same columns in another Arrow representation
//! (`large_string` for `string`, another timestamp unit or time zone,
//! another integer width), each column cast by arrow-rs's cast kernels as
//! the batches are read. Only casts that keep every value are made: a
//! value the requested type cannot hold (out of range, or a null in a
//! column asked for as not nullable) is the stream's error, never a null
//! or a truncated value, and a timestamp is not asked into a coarser unit.
//!
//! The interface lets a consumer negotiate the representation of the data,
//! not transform it: a request for other columns (another number of them,
//! other names, another order) is refused, and a request the casts cannot
//! meet (a type no column of this table converts to) gets the table's own
//! schema, which the interface allows and the consumer checks.

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_cast::{CastOptions, can_cast_types, cast_with_options};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef, TimeUnit};

/// What a request makes of a table's stream.
#[derive(Debug)]
pub enum Plan {
    /// The table's own schema: asked for, or the only one the casts can give.
    AsIs,
    /// Every batch cast to this schema.
    Cast(SchemaRef),
}

/// The plan for a stream of `table` asked for as `requested`; `Err` (why)
/// when the request names other columns.
pub fn plan(table: &Schema, requested: &Schema) -> Result<Plan, String> {
    let (have, want) = (table.fields(), requested.fields());
    if have.len() != want.len() {
        return Err(format!(
            "the requested schema has {} columns; this table has {}",
            want.len(),
            have.len()
        ));
    }
    for (h, w) in have.iter().zip(want.iter()) {
        if h.name() != w.name() {
            return Err(format!(
                "the requested schema has column {:?} where this table has {:?}",
                w.name(),
                h.name()
            ));
        }
    }
    let same = have
        .iter()
        .zip(want.iter())
        .all(|(h, w)| h.data_type() == w.data_type() && (w.is_nullable() || !h.is_nullable()));
    let castable = have
        .iter()
        .zip(want.iter())
        .all(|(h, w)| keeps_values(h.data_type(), w.data_type()));
    Ok(if same || !castable {
        Plan::AsIs
    } else {
        Plan::Cast(SchemaRef::new(requested.clone()))
    })
}

/// Whether a column of type `from` casts to `to` keeping every value it can
/// hold (a value out of `to`'s range is an error when it is met): any cast
/// arrow-rs makes, but a timestamp's or a duration's into a coarser unit,
/// which would drop the finer digits.
fn keeps_values(from: &DataType, to: &DataType) -> bool {
    let fineness = |u: &TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    match (from, to) {
        (DataType::Timestamp(a, _), DataType::Timestamp(b, _))
        | (DataType::Duration(a), DataType::Duration(b)) => fineness(b) >= fineness(a),
        _ => can_cast_types(from, to),
    }
}

/// `inner`'s batches, each column cast to `schema`'s type for it.
pub struct Cast<R> {
    inner: R,
    schema: SchemaRef,
}

impl<R> Cast<R> {
    /// `inner` read as `schema` (from [`plan`]).
    pub fn new(inner: R, schema: SchemaRef) -> Self {
        Cast { inner, schema }
    }
}

impl<R: Iterator<Item = Result<RecordBatch, ArrowError>>> Iterator for Cast<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.inner.next()? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let columns = batch
            .columns()
            .iter()
            .zip(self.schema.fields().iter())
            .map(|(c, f)| {
                // An error, not a null, for a value the type cannot hold.
                let options = CastOptions {
                    safe: false,
                    ..CastOptions::default()
                };
                cast_with_options(c, f.data_type(), &options)
            })
            .collect::<Result<Vec<_>, _>>();
        // A column whose values the requested type cannot hold (a null in a
        // field asked for as not nullable, a value out of range) is the
        // stream's error.
        Some(columns.and_then(|c| RecordBatch::try_new(self.schema.clone(), c)))
    }
}

impl<R: Iterator<Item = Result<RecordBatch, ArrowError>>> RecordBatchReader for Cast<R> {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
