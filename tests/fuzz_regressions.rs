//! Replays every input a fuzz target once failed on
//! (`tests/regressions/<target>/`) through the target's own checks
//! (`tests/fuzz_checks`), so that a plain `cargo test` keeps each fixed bug
//! fixed. Byte targets (`json`, `event`, `state`, `fs_safe_name`) store the
//! raw input; structure-aware ones store a manifest (see
//! `fuzz_checks::Manifest`) written by running the target on the crashing
//! input with `AGENTLOG_FUZZ_DUMP=<file>`.

mod fuzz_checks;

use std::path::PathBuf;

use agentlog::json::OwnedValue;
use fuzz_checks::{Manifest, OcChatCase, ParseCase, TailCase, ViewCase};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions")).join(target);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Vec<u8>)> = rd
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let b = std::fs::read(&p).expect("read");
            (p, b)
        })
        .collect();
    out.sort();
    out
}

fn manifest<T: Manifest>(path: &std::path::Path, bytes: &[u8]) -> T {
    let v = OwnedValue::parse(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    T::from_manifest(&v).unwrap_or_else(|| panic!("{}: not a manifest", path.display()))
}

fn replay(target: &str, check: impl Fn(&std::path::Path, &[u8])) -> usize {
    let all = inputs(target);
    for (path, bytes) in &all {
        eprintln!("replaying {}", path.display());
        check(path, bytes);
    }
    all.len()
}

#[test]
fn json() {
    replay("json", |_, b| fuzz_checks::json(b));
}

#[test]
fn event() {
    replay("event", |_, b| fuzz_checks::event(b));
}

#[test]
fn state() {
    replay("state", |_, b| fuzz_checks::state(b));
}

#[test]
fn fs_safe_name() {
    replay("fs_safe_name", |_, b| fuzz_checks::fs_safe(b));
}

#[test]
fn parse() {
    replay("parse", |p, b| {
        fuzz_checks::parse(&manifest::<ParseCase>(p, b))
    });
}

#[test]
fn view() {
    replay("view", |p, b| {
        fuzz_checks::view(&manifest::<ViewCase>(p, b))
    });
}

#[test]
fn tail() {
    replay("tail", |p, b| {
        fuzz_checks::tail(&manifest::<TailCase>(p, b).0)
    });
}

#[test]
fn occhat() {
    replay("occhat", |p, b| {
        fuzz_checks::occhat(&manifest::<OcChatCase>(p, b))
    });
}

/// The fuzz seeds (`fuzz/seeds/<target>/`) pass the checks too: they are
/// the targets' starting points, and a plain `cargo test` runs them.
#[test]
fn seeds() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds"));
    let mut n = 0;
    for (target, check) in [
        ("json", fuzz_checks::json as fn(&[u8])),
        ("event", fuzz_checks::event),
        ("state", fuzz_checks::state),
        ("fs_safe_name", fuzz_checks::fs_safe),
    ] {
        for entry in std::fs::read_dir(root.join(target)).expect("seed dir") {
            let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
            check(&bytes);
            n += 1;
        }
    }
    assert!(n >= 10, "the byte targets' seeds are missing");
    // The tail seeds: message lists as JSON arrays.
    let mut tails = 0;
    for entry in std::fs::read_dir(root.join("tail")).expect("seed dir") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
        let v = OwnedValue::parse(&bytes).expect("the seed's messages parse");
        fuzz_checks::tail(v.as_array().expect("a list"));
        tails += 1;
    }
    assert!(tails >= 4);
}
