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

/// The subcommands a help text lists under `Commands:` (`help` aside).
fn listed_commands(help: &str) -> Vec<String> {
    let Some(at) = help.find("Commands:\n") else {
        return Vec::new();
    };
    help[at + "Commands:\n".len()..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command's help, found from the top-level one: within 100 columns
/// whatever the terminal says (`COLUMNS=250`), wrapped to a narrower one
/// (`COLUMNS=60`), and one exit-status block, at its end.
#[test]
fn every_help_fits_100_columns_with_one_exit_status_block() {
    let top = stdout(&run(&["--help"]));
    let table = &top[top.find("Exit status (every command):").expect("table")..];
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(cmd) = todo.pop() {
        for (columns, limit) in [("250", 100), ("60", 60)] {
            let mut c = bin();
            c.args(&cmd).arg("--help").env("COLUMNS", columns);
            let out = c.output().unwrap();
            assert_eq!(code(&out), 0, "{cmd:?}");
            let help = stdout(&out);
            // A usage line is not wrapped (at 100 columns it fits).
            for line in help
                .lines()
                .filter(|l| limit == 100 || !l.starts_with("Usage:"))
            {
                let width = line.chars().count();
                assert!(
                    width <= limit,
                    "agentlog {cmd:?} --help at {columns} columns: {width}: {line}"
                );
            }
            assert_eq!(
                help.matches("Exit status").count(),
                1,
                "agentlog {cmd:?} --help: {help}"
            );
            if columns == "250" {
                assert!(help.ends_with(table), "{cmd:?}");
                for sub in listed_commands(&help) {
                    let mut next = cmd.clone();
                    next.push(sub);
                    todo.push(next);
                }
            }
        }
        seen += 1;
    }
    assert!(seen > 20, "every command: {seen}");
}
