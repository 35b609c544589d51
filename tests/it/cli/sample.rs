//! The README's command on the sample store shipped in `examples/store/`, and loops of sub-agent links.

use super::*;

/// The README's main command, on the sample store shipped in the
/// repository: it runs, and its totals agree with the other commands.
#[test]
fn the_readme_command_on_the_shipped_sample() {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/store");
    let dirs: Vec<PathBuf> = {
        let mut d: Vec<PathBuf> = fs::read_dir(&store)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        d.sort();
        d
    };
    assert!(!dirs.is_empty());
    let text = ok(&["stats", p(&store)]);
    let first: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(first[2], dirs.len().to_string(), "{text}");
    let s = json(&ok(&["stats", "--json", p(&store)]));
    assert_eq!(s["conversations"], dirs.len() as u64);
    for v in s["files"].as_object().unwrap().values() {
        assert_eq!(v, 0);
    }
    // The events counted are those `export` writes, sub-agents' included.
    let exported = json_lines(&ok(&["export", "--jsonl", p(&store)]));
    assert_eq!(s["events"], exported.len() as u64);
    let subs = exported
        .iter()
        .filter(|l| !l["parent"].is_null())
        .map(|l| l["conversation"].as_str().unwrap())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(s["subagents"], subs.len() as u64);
    // The sample is clean, and its meta.json titles are listed.
    assert_eq!(code(&run(&["check", p(&store)])), 0);
    let rows = json_lines(&ok(&["ls", "--json", p(&store)]));
    assert_eq!(rows.len(), dirs.len());
    for (r, d) in rows.iter().zip(&dirs) {
        assert_eq!(r["path"], p(d));
        if d.join("meta.json").is_file() {
            let meta = json(&fs::read_to_string(d.join("meta.json")).unwrap());
            assert_eq!(r["title"], meta["title"]);
            assert_eq!(r["created"], meta["created_at"]);
        }
    }
}

/// Sub-agent directories that link back to their parent are followed once:
/// every command ends, counts each conversation once and says why.
#[test]
fn subagent_link_loops_end() {
    let tmp = tempfile::tempdir().unwrap();
    let src = scenario_dir("1.58.2", "subagent");
    let dir = tmp.path().join(src.file_name().unwrap());
    common::copy_tree(&src, &dir);
    let subs = dir.join("subagents");
    for name in [
        "0000000000000000000000000000000a",
        "0000000000000000000000000000000b",
    ] {
        std::os::unix::fs::symlink(&dir, subs.join(name)).unwrap();
    }
    let rows = json_lines(&ok(&["ls", "--json", p(&dir)]));
    assert_eq!(rows[0]["subagents"], 1);
    let out = run(&["stats", "--json", p(&dir)]);
    assert_eq!(code(&out), 0);
    let s = json(&stdout(&out));
    assert_eq!(
        (s["conversations"].as_u64(), s["subagents"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(stderr(&out).contains("met twice"), "{}", stderr(&out));
    assert_eq!(json_lines(&ok(&["export", "--jsonl", p(&dir)])).len(), 22);
    assert_eq!(code(&run(&["check", p(&dir)])), 0);
}
