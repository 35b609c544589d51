//! The baselines every store benchmark is measured against, written the
//! obvious way with the standard library: a directory walk, reading every
//! file the OpenHands reader reads (`base_state.json`, `meta.json` and the
//! files of `events/`, sidecars aside), and the same plus simd-json's tape.
//! Shared by `benches/store.rs`, `benches/parquet.rs` and
//! `examples/parse_floor.rs`.
#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Walks every directory under `root` (depth first, links not followed),
/// calling `dir` for each directory and `file` for each other entry with
/// its directory and name.
pub fn walk(root: &Path, mut file: impl FnMut(&Path, &std::ffi::OsStr)) -> usize {
    let mut dirs = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        dirs += 1;
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                _ => file(&d, &e.file_name()),
            }
        }
    }
    dirs
}

/// A bare directory walk: every directory listed, every entry's type
/// looked at, nothing opened. Returns the number of entries.
pub fn bare_walk(root: &Path) -> usize {
    let mut n = 0;
    let dirs = walk(root, |_, _| n += 1);
    n + dirs
}

/// Whether the OpenHands reader reads a file of this name in `dir`.
pub fn is_read_file(dir: &Path, name: &std::ffi::OsStr) -> bool {
    let b = name.as_encoded_bytes();
    if b == b"base_state.json" || b == b"meta.json" {
        return true;
    }
    !b.starts_with(b".") && dir.file_name().is_some_and(|n| n == "events")
}

/// Reads every file the reader reads under `root` into `buf` (one reused
/// buffer: `File::open` + `read_to_end`), calling `each` with its bytes.
/// Returns the number of bytes read.
pub fn read_all(root: &Path, buf: &mut Vec<u8>, mut each: impl FnMut(&mut Vec<u8>)) -> u64 {
    let mut total = 0u64;
    let mut path = PathBuf::new();
    walk(root, |dir, name| {
        if !is_read_file(dir, name) {
            return;
        }
        path.clear();
        path.push(dir);
        path.push(name);
        buf.clear();
        if let Ok(mut f) = fs::File::open(&path)
            && f.read_to_end(buf).is_ok()
        {
            total += buf.len() as u64;
            each(buf);
        }
    });
    total
}

/// simd-json's tape over a reused, padded buffer: the least any reader
/// that looks at every value must do.
pub struct TapeFloor {
    buffers: simd_json::Buffers,
    tape: simd_json::Tape<'static>,
    pub nodes: usize,
    pub errors: usize,
}

impl Default for TapeFloor {
    fn default() -> Self {
        TapeFloor {
            buffers: simd_json::Buffers::new(1 << 16),
            tape: simd_json::Tape::null().reset(),
            nodes: 0,
            errors: 0,
        }
    }
}

impl TapeFloor {
    /// Builds the tape of the bytes in `buf` (padded in place, as
    /// `fill_tape_padded` wants; the contents are consumed).
    pub fn parse(&mut self, buf: &mut Vec<u8>) {
        let len = buf.len();
        buf.resize(len + simd_json::INPUT_PADDING, 0);
        let mut tape = std::mem::replace(&mut self.tape, simd_json::Tape::null().reset());
        match simd_json::fill_tape_padded(buf, len, &mut self.buffers, &mut tape) {
            Ok(()) => self.nodes += tape.0.len(),
            Err(_) => self.errors += 1,
        }
        self.tape = tape.reset();
    }
}

/// Reads and parses every file the reader reads under `root`.
pub fn parse_all(root: &Path, buf: &mut Vec<u8>, floor: &mut TapeFloor) -> u64 {
    read_all(root, buf, |b| floor.parse(b))
}
