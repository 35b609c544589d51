//! Replays every input a fuzz target once failed on
//! (`tests/regressions/<target>/`) through the target's own checks
//! (`tests/fuzz_checks`), so that a plain `cargo test` keeps each fixed bug
//! fixed. Byte targets (`json`, `event`, `state`, `fs_safe_name`,
//! `occhat_text`, `asf`) store the raw input; structure-aware ones store a manifest
//! (see `fuzz_checks::Manifest`) written by running the target on the
//! crashing input with `AGENTLOG_FUZZ_DUMP=<file>`.
//!
//! One test walks every folder of `tests/regressions/`: a folder no target
//! owns, or a folder with no input in it, fails the test. A target with no
//! regression yet has no folder, and nothing claims to replay it.

use crate::common;
use crate::fuzz_checks;
use crate::fuzz_checks::asf as asf_check;

use std::path::{Path, PathBuf};

use agentlog::json::OwnedValue;
use fuzz_checks::{Manifest, OcChatCase, ParseCase, TailCase, ViewCase};

fn manifest<T: Manifest>(path: &Path, bytes: &[u8]) -> T {
    let v = OwnedValue::parse(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    T::from_manifest(&v).unwrap_or_else(|| panic!("{}: not a manifest", path.display()))
}

/// The check of the target a regression folder is named after; `None` for a
/// name no fuzz target has.
fn check_of(target: &str) -> Option<fn(&Path, &[u8])> {
    Some(match target {
        "json" => |_, b| fuzz_checks::json(b),
        "event" => |_, b| fuzz_checks::event(b),
        "state" => |_, b| fuzz_checks::state(b),
        "fs_safe_name" => |_, b| fuzz_checks::fs_safe(b),
        "occhat_text" => |_, b| {
            fuzz_checks::occhat_text(b);
        },
        "parse" => |p, b| fuzz_checks::parse(&manifest::<ParseCase>(p, b)),
        "view" => |p, b| fuzz_checks::view(&manifest::<ViewCase>(p, b)),
        "tail" => |p, b| fuzz_checks::tail(&manifest::<TailCase>(p, b).0),
        "occhat" => |p, b| fuzz_checks::occhat(&manifest::<OcChatCase>(p, b)),
        "asf" => |_, b| asf_check::check(b),
        _ => return None,
    })
}

/// Every target the fuzz crate builds (`fuzz/Cargo.toml`'s `[[bin]]`s) has a
/// check here, so a regression folder for any of them is replayed.
#[test]
fn every_fuzz_target_has_a_check() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/Cargo.toml"))
        .expect("fuzz/Cargo.toml");
    let names: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| {
            let line = bin.lines().find(|l| l.trim_start().starts_with("name"))?;
            line.split('"').nth(1)
        })
        .collect();
    assert!(names.len() >= 9, "fuzz targets not found: {names:?}");
    for name in names {
        assert!(
            check_of(name).is_some(),
            "fuzz target {name} has no check to replay its regressions"
        );
    }
}

#[test]
fn regressions() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions"));
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    folders.sort();
    assert!(
        !folders.is_empty(),
        "{}: no regression folder",
        root.display()
    );
    let mut total = 0;
    for folder in &folders {
        assert!(
            folder.is_dir(),
            "{}: not a target's folder",
            folder.display()
        );
        let target = folder
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 name");
        let check = check_of(target)
            .unwrap_or_else(|| panic!("{}: no fuzz target is named {target}", folder.display()));
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(folder)
            .expect("read the folder")
            .map(|e| e.expect("entry").path())
            .collect();
        inputs.sort();
        let mut replayed = 0;
        for path in &inputs {
            assert!(path.is_file(), "{}: not an input file", path.display());
            let bytes = std::fs::read(path).expect("read");
            eprintln!("replaying {}", path.display());
            check(path, &bytes);
            replayed += 1;
        }
        assert!(
            replayed >= 1,
            "{}: an empty regression folder replays nothing",
            folder.display()
        );
        total += replayed;
    }
    eprintln!(
        "{total} regression inputs replayed from {} folders",
        folders.len()
    );
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
    // The time-zone seeds: TZif files and POSIX rules; each must give a
    // zone, so the zone checks run on them.
    let mut zones = 0;
    for entry in std::fs::read_dir(root.join("occhat_text")).expect("seed dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("seed");
        assert!(
            fuzz_checks::occhat_text(&bytes) > 0,
            "{}: no zone read from the seed",
            path.display()
        );
        zones += 1;
    }
    assert!(zones >= 3, "the occhat_text seeds are missing");
}

/// The `json` check over every JSONTestSuite case: whatever both parsers
/// accept, serde_json reads as we do (the second opinion is exercised on
/// hundreds of inputs, not only on the seeds).
#[test]
fn json_check_over_json_test_suite() {
    let dir = common::data_dir().join("JSONTestSuite/test_parsing");
    let (mut cases, mut both) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("a case");
        fuzz_checks::json(&bytes);
        cases += 1;
        if OwnedValue::parse(&bytes).is_ok()
            && serde_json::from_slice::<serde_json::Value>(&bytes).is_ok()
        {
            both += 1;
        }
    }
    assert!(cases > 300, "{cases} cases");
    assert!(both >= 95, "only {both} cases accepted by both parsers");
}
