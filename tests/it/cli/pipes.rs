//! A closed pipe ends the command quietly.

use super::*;

#[test]
fn a_closed_pipe_ends_quietly() {
    let root = openhands_corpus();
    for args in [
        vec!["export", "--jsonl", p(&root)],
        vec!["events", "--json", p(&scenario_dir("1.58.2", "large"))],
        vec!["view", "--json", p(&scenario_dir("1.58.2", "large"))],
    ] {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        {
            let out = child.stdout.take().unwrap();
            let mut r = BufReader::new(out);
            r.read_line(&mut first).unwrap();
            // Dropping the reader closes the pipe.
        }
        assert!(!first.is_empty());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}
