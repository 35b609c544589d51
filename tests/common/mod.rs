//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared data folder (`../shared` beside the repository; `/work/shared`
/// when the repository is checked out elsewhere on the development machine).
pub fn shared_dir() -> PathBuf {
    let beside = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared"));
    if beside.is_dir() {
        return beside;
    }
    PathBuf::from("/work/shared")
}

/// `../shared/corpus`.
pub fn corpus_dir() -> PathBuf {
    shared_dir().join("corpus")
}
