//! The OpenHands corpus the benchmarks read: its folder, every
//! conversation directory in it and its largest conversation. Shared by
//! `benches/asf.rs`, `benches/openhands_read.rs`, `benches/rescan.rs`,
//! `benches/html.rs` and `benches/view.rs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentlog::openhands;

/// The OpenHands corpus the repository carries
/// (`tests/data/corpus/openhands`).
pub fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/openhands"
    ))
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

/// The largest corpus conversation (`1.58.2/large`, 2101 events), when
/// the corpus is there.
pub fn large_conversation() -> Option<PathBuf> {
    std::fs::read_dir(corpus().join("1.58.2/large"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.join("base_state.json").is_file())
}
