//! Help and usage errors.

use super::*;

#[test]
fn help_for_every_command_with_an_example() {
    let commands: &[&[&str]] = &[
        &[],
        &["ls"],
        &["events"],
        &["files"],
        &["show"],
        &["stats"],
        &["check"],
        &["export"],
        &["view"],
        &["occhat"],
        &["occhat", "list"],
        &["occhat", "show"],
        &["occhat", "tail"],
        &["occhat", "recover"],
        &["occhat", "export-md"],
        &["occhat", "migrate"],
        &["occhat", "safe-name"],
    ];
    for c in commands {
        let mut args = c.to_vec();
        args.push("--help");
        let out = ok(&args);
        assert!(out.contains("Example"), "{args:?} has no example:\n{out}");
        assert!(out.contains("Usage: agentlog"), "{args:?}:\n{out}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[&[&str]] = &[
        &[],
        &["bogus"],
        &["ls"],
        &["show", "x"],
        &["show", "x", "--index", "1", "--id", "y"],
        &["export", "x"],
        &["view", "x", "--sdk-version", "one"],
        &["occhat", "recover", "x", "--choice", "maybe"],
        &["ls", "--no-such-flag", "x"],
    ];
    for c in cases {
        let out = run(c);
        assert_eq!(code(&out), 2, "{c:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{c:?}");
        assert!(!stderr(&out).is_empty(), "{c:?}");
    }
}
