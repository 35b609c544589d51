//! The library's Parquet datasets (`agentlog::parquet`): the events'
//! details taken from the reader's parse give the rows a second parse
//! gives, a text that repeats is written once and read back whole, and a
//! dataset's memory stays within its budget after every row.

mod details;
mod encodings;
#[cfg(feature = "gen")]
mod memory;
mod runs;
