//! The checks of the `asf` fuzz target, shared with `tests/it/asf/robust.rs`:
//! reading, verifying, the resume rule, contexts at every tip and the
//! canonical write-back never panic; a file that reads and verifies writes
//! back to bytes that read and verify again, and to themselves when written
//! once more; the checks without the `request_hash` comparisons find a
//! subset of what the full check finds (the call, run and `records` rules
//! among them).

use agentlog::asf::Session;

/// Runs every check on one input; panics on a failed one.
pub fn check(data: &[u8]) {
    let Ok(s) = Session::read(data) else { return };
    let problems = s.verify();
    for p in &problems {
        assert!(
            p.line >= 1 && p.line <= data.split(|&b| b == b'\n').count(),
            "{p}"
        );
        let _ = p.to_string();
    }
    let entries_only = s.verify_entries();
    assert!(
        entries_only.iter().all(|p| problems.contains(p)),
        "verify_entries finds only what verify finds"
    );
    let _ = s.leaf();
    let _ = s.context(None);
    for tip in s.tips().iter().take(8) {
        if let Ok(c) = s.context(Some(&tip.id)) {
            let _ = c.request_hash();
            let _ = c.to_json();
        }
    }
    let mut out = Vec::new();
    if s.write_canonical(&mut out).is_ok() && problems.is_empty() {
        let again = Session::read(&out).expect("a verified file's canonical form reads");
        assert!(
            again.verify().is_empty(),
            "the canonical form of a verified file verifies"
        );
        let mut twice = Vec::new();
        again.write_canonical(&mut twice).expect("canonical");
        assert_eq!(twice, out, "canonical write-back is idempotent");
    }
}
