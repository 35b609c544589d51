//! The integration tests, one crate whose modules follow `src/`: `json`,
//! `openhands` (reader, store, view), `occhat`, `asf`, `convert`, `follow`,
//! `output`, `parquet`, `search`, `synth`, the command (`cli`), and what crosses them (`hostile`
//! stores, `fuzz_regressions`, the cookbook in `examples`). A module that
//! needs a feature is declared under `#[cfg(feature = "...")]` here or in its
//! parent, so `cargo test` and `cargo test --all-features` both build.
//!
//! Tests that change process-wide state live in their own binaries: a
//! counting global allocator (`tests/alloc/`), environment variables and
//! the working directory (`tests/process/`).

#[path = "../common/mod.rs"]
mod common;
// The fuzz targets' checks, shared with `fuzz/fuzz_targets/` (which include
// the same file), hence the path.
#[path = "../fuzz_checks/mod.rs"]
mod fuzz_checks;

mod asf;
#[cfg(feature = "cli")]
mod cli;
mod convert;
mod examples;
#[cfg(feature = "follow")]
mod follow;
mod fuzz_regressions;
#[cfg(unix)]
mod hostile;
mod json;
mod occhat;
mod openhands;
mod output;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(all(feature = "search", unix))]
mod search;
#[cfg(feature = "gen")]
mod synth;
