#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

// `gen` is a reserved keyword from edition 2024 on, hence the raw
// identifier: callers write `agentlog::r#gen::write_store`.
#[cfg(feature = "gen")]
pub mod r#gen;
pub mod json;
pub mod occhat;
pub mod openhands;
pub mod source;

pub use source::MAX_SIZE;
