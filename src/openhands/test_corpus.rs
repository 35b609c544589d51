//! The test corpus's conversations (`tests/data/corpus/openhands`,
//! written by the real SDK at several versions), for the unit tests that
//! check a property on every one of them.

use std::path::PathBuf;

use super::{Conversation, find_sessions, read_conversation};

/// The corpus's conversation directories (sub-agents included).
pub(crate) fn sessions() -> Vec<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/openhands");
    find_sessions(root).expect("the test corpus is listed")
}

/// Every corpus conversation that reads (asserting there are enough of
/// them for a test to mean something).
pub(crate) fn conversations() -> Vec<Conversation> {
    let all: Vec<Conversation> = sessions()
        .iter()
        .filter_map(|dir| read_conversation(dir).ok())
        .collect();
    assert!(all.len() > 20, "{} corpus conversations", all.len());
    all
}
