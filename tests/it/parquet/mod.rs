//! The library's Parquet datasets (`agentlog::parquet`): the events'
//! details taken from the reader's parse give the rows a second parse
//! gives, and a dataset's memory stays within its budget after every row.

mod details;
#[cfg(feature = "gen")]
mod memory;
mod runs;
