//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared data folder, `../shared` beside the repository. The tests
/// that need it fail, saying so, when it is missing: they never look
/// anywhere else.
pub fn shared_dir() -> PathBuf {
    let beside = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared"));
    assert!(
        beside.is_dir(),
        "{}: the shared data folder (corpus, test suites) is missing; \
         check it out beside the repository as `../shared`",
        beside.display()
    );
    beside
}

/// `../shared/corpus`.
pub fn corpus_dir() -> PathBuf {
    shared_dir().join("corpus")
}
