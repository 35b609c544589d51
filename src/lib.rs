#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod asf;
mod chars;
pub mod convert;
#[cfg(feature = "follow")]
pub mod follow;
mod hash;
pub mod json;
pub mod occhat;
mod open;
pub mod openhands;
pub mod output;
#[cfg(feature = "parallel")]
pub mod parallel;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod readahead;
#[cfg(feature = "search")]
pub mod search;
pub mod source;
#[cfg(feature = "gen")]
pub mod synth;
#[cfg(feature = "html")]
pub mod theme;

pub use open::{OpenError, Opened, open};
pub use readahead::ReadAhead;
pub use source::MAX_SIZE;
