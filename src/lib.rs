#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "follow")]
pub mod follow;
pub mod json;
pub mod occhat;
pub mod openhands;
pub mod source;
#[cfg(feature = "gen")]
pub mod synth;

pub use source::MAX_SIZE;
