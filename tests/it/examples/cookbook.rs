//! The cookbook in `examples/` stays true: each program is run on data the
//! repository ships and its output is checked against an answer worked out
//! here another way.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The crate features this test binary was built with, for `cargo build
/// --features`: building the example with other features would build the
/// library and its dependencies a second time (as much disk again, which a
/// CI machine may not have), and overwrite the example `cargo test` built.
fn these_features() -> String {
    let on: Vec<&str> = FEATURES
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    on.join(",")
}

/// Every feature of `Cargo.toml`, with whether this build has it.
const FEATURES: [(&str, bool); 7] = [
    ("cli", cfg!(feature = "cli")),
    ("parallel", cfg!(feature = "parallel")),
    ("gen", cfg!(feature = "gen")),
    ("html", cfg!(feature = "html")),
    ("follow", cfg!(feature = "follow")),
    ("parquet", cfg!(feature = "parquet")),
    ("search", cfg!(feature = "search")),
];

#[test]
fn the_feature_list_names_every_feature_of_the_manifest() {
    let manifest = fs::read_to_string(repo("Cargo.toml")).unwrap();
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table");
    let section = section.split("\n[").next().unwrap();
    let mut declared: Vec<&str> = section
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('=').next().map(str::trim))
        .filter(|name| *name != "default")
        .collect();
    declared.sort_unstable();
    let mut listed: Vec<&str> = FEATURES.iter().map(|(name, _)| *name).collect();
    listed.sort_unstable();
    assert_eq!(listed, declared);
}

/// The example `name`, built now (a no-op when it is fresh: `cargo test
/// --test it examples` alone would otherwise run a stale binary) beside the
/// test binaries, in `target/<profile>/examples/`, with the test binary's
/// own features.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir.join("examples").join(name);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--quiet", "--example", name])
        .args(["--no-default-features", "--features", &these_features()])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.ends_with("release") {
        build.arg("--release");
    }
    let status = build.status().expect("run cargo");
    assert!(status.success(), "cargo build --example {name}");
    assert!(path.is_file(), "{} is built", path.display());
    path
}

fn run(name: &str, args: &[&Path]) -> Output {
    let out = Command::new(example(name))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the example");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The store's totals computed from the `base_state.json` files with
/// serde_json: every `usage_to_metrics` entry, except a parent's `task:` /
/// `delegate:` copies when the conversation has a `subagents/` directory.
fn expected_totals(dir: &Path, calls: &mut u64, prompt: &mut u64, completion: &mut u64) {
    let state = dir.join("base_state.json");
    if let Ok(bytes) = fs::read(&state) {
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("state JSON");
        let has_subagents = dir.join("subagents").is_dir();
        let metrics = v["stats"]["usage_to_metrics"].as_object().cloned();
        for (key, m) in metrics.into_iter().flatten() {
            let copy = key.starts_with("task:") || key.starts_with("delegate:");
            if copy && has_subagents {
                continue;
            }
            *calls += m["token_usages"].as_array().map_or(0, |a| a.len() as u64);
            let u = &m["accumulated_token_usage"];
            *prompt += u["prompt_tokens"].as_u64().unwrap_or(0);
            *completion += u["completion_tokens"].as_u64().unwrap_or(0);
        }
    }
    if let Ok(subs) = fs::read_dir(dir.join("subagents")) {
        for s in subs {
            expected_totals(&s.expect("entry").path(), calls, prompt, completion);
        }
    }
}

#[test]
fn store_usage_counts_each_call_once() {
    let store = repo("examples/store");
    let out = run("store_usage", &[&store]);
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let (mut calls, mut prompt, mut completion) = (0, 0, 0);
    let mut conversations = 0;
    for d in fs::read_dir(&store).expect("store") {
        expected_totals(
            &d.expect("entry").path(),
            &mut calls,
            &mut prompt,
            &mut completion,
        );
        conversations += 1;
    }
    // The sample store has a sub-agent whose parent keeps a `task:` copy:
    // counting it twice would change the total.
    let total = text.lines().last().expect("a total line");
    assert!(
        total.starts_with(&format!(
            "total  {calls} calls  {prompt} prompt + {completion} completion tokens"
        )),
        "{text}"
    );
    let top_level = text.lines().filter(|l| !l.starts_with(' ')).count() - 1;
    assert_eq!(top_level, conversations, "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("  ")),
        "the sub-agent is listed: {text}"
    );
}

#[test]
fn what_the_model_saw_prints_the_view() {
    let store = repo("examples/store");
    for d in fs::read_dir(&store).expect("store") {
        let dir = d.expect("entry").path();
        let out = run("what_the_model_saw", &[&dir]);
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        let mut lines = text.lines();
        assert!(
            lines.next().is_some_and(|l| l.starts_with("SDK ")),
            "{text}"
        );
        // The first message the model is sent is the system prompt, then the
        // user's first message.
        assert!(
            lines.next().is_some_and(|l| l.starts_with("system ")),
            "{text}"
        );
        assert!(
            lines.next().is_some_and(|l| l.starts_with("user ")),
            "{text}"
        );
    }
}

#[test]
fn occhat_export_writes_the_markdown_export() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let sessions = tmp.path().join("sessions");
    // The sample store the example's documented command names, copied so
    // that nothing is written into the repository.
    crate::common::copy_tree(&repo("examples/occhat-sessions"), &sessions);
    let target = tmp.path().join("weekly.md");
    let out = run(
        "occhat_export",
        &[&sessions, Path::new("weekly-report"), &target],
    );
    let md = fs::read_to_string(&target).expect("the export");
    assert!(md.starts_with("# Chat Export — weekly-report\n"), "{md}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("9 messages"));
    // A missing session is one line on standard error, not a Debug dump.
    let missing = Command::new(example("occhat_export"))
        .args([
            sessions.as_os_str(),
            "no-such-session".as_ref(),
            target.as_os_str(),
        ])
        .output()
        .expect("run");
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("occhat_export: ") && !err.contains(" { "),
        "{err}"
    );
}
