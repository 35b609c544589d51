//! The OpenHands corpus the benchmarks read: its folder and every
//! conversation directory in it. Shared by `benches/asf.rs` and
//! `benches/openhands_read.rs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentlog::openhands;

/// `../shared/corpus/openhands` beside the repository, else the shared
/// folder's usual place.
pub fn corpus() -> PathBuf {
    let beside = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/openhands"
    ));
    if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/corpus/openhands")
    }
}

/// Every conversation directory under `root` (sub-agents included), sorted.
pub fn conversations(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = openhands::find_sessions(root).expect("corpus");
    while let Some(d) = stack.pop() {
        let c = openhands::read_conversation(&d).expect("conversation");
        stack.extend(c.subagent_dirs());
        out.push(d);
    }
    out.sort();
    out
}
