//! The parse floor as a whole program: walks a store, reads every file the
//! OpenHands reader reads (`base_state.json`, `meta.json`, the files of
//! `events/`) into one reused buffer and builds simd-json's tape of each —
//! nothing else. The baseline `agentlog stats --json` is compared with
//! (whole processes, `benches/README.md`).
//!
//! ```text
//! cargo run --release --example parse_floor -- STORE
//! ```

#[path = "../benches/support/floor.rs"]
mod floor;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: parse_floor STORE");
        return ExitCode::from(2);
    };
    let mut buf = Vec::with_capacity(1 << 16);
    let mut tape = floor::TapeFloor::default();
    let mut files = 0u64;
    let bytes = floor::read_all(&root, &mut buf, |b| {
        files += 1;
        tape.parse(b);
    });
    println!(
        "{files} files, {bytes} bytes, {} tape nodes, {} not JSON",
        tape.nodes, tape.errors
    );
    ExitCode::SUCCESS
}
