//! The ASF reader on broken input: every prefix of every reference fixture
//! and single-byte changes all through one, run through the fuzz target's
//! checks (`asf_support/fuzz_check.rs`): no panic, problems instead, and
//! the fuzz seeds.

use crate::common;
use crate::fuzz_checks::asf as fuzz_check;

use agentlog::asf::Session;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = common::data_dir().join("asf/sessions");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn every_prefix_reads_without_panic() {
    for (name, bytes) in fixtures() {
        for cut in (0..bytes.len()).step_by(23) {
            fuzz_check::check(&bytes[..cut]);
        }
        // A file whose header this reader refuses (a later draft) is
        // refused whole, cut or not.
        let Ok(s) = Session::read(&bytes[..bytes.len() - 5]) else {
            assert!(Session::read(&bytes).is_err(), "{name}");
            continue;
        };
        // A cut inside the last line is that line truncated, nothing else.
        let problems = s.verify();
        assert!(
            problems
                .iter()
                .any(|p| p.kind.code() == "truncated-last-line"),
            "{name}: {problems:?}"
        );
    }
}

#[test]
fn changed_bytes_are_problems_not_panics() {
    for name in ["/compaction.jsonl", "/runs.jsonl"] {
        changed_bytes_of(name);
    }
}

/// Changed bytes all through one fixture (one with runs, dispatches and
/// decisions among them, so the rules on calls and runs meet them).
fn changed_bytes_of(name: &str) {
    let (_, bytes) = fixtures()
        .into_iter()
        .find(|(n, _)| n.ends_with(name))
        .unwrap();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    for i in (header_end + 1..bytes.len()).step_by(13) {
        for b in [b'0', b'"', 0xff, b'\n'] {
            if bytes[i] == b {
                continue;
            }
            let mut m = bytes.clone();
            m[i] = b;
            fuzz_check::check(&m);
            // A changed byte inside an entry never verifies silently: the
            // line breaks, its hash fails, or a reference it held is gone.
            if bytes[i] != b'\n' && b != b'\n' {
                let s = Session::read(&m).unwrap();
                assert!(!s.verify().is_empty(), "byte {i} -> {b:#x} went unnoticed");
            }
        }
    }
}

#[test]
fn the_fuzz_seeds_pass_the_checks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/asf");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        fuzz_check::check(&bytes);
        let problems = Session::read(&bytes).unwrap().verify();
        if p.file_name().unwrap() == "truncated.jsonl" {
            assert_eq!(problems.len(), 1, "{problems:?}");
        } else {
            assert!(problems.is_empty(), "{}: {problems:?}", p.display());
        }
        n += 1;
    }
    assert!(n >= 3);
}
