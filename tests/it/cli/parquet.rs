//! `agentlog export --parquet`, checked with the real DuckDB (Python's
//! `duckdb` package): the dataset's counts and sums equal `stats --json`,
//! its messages equal `view --json`, its JSON column is the files' text,
//! incremental exports add up to a full one, malformed events are rows,
//! and a failed write leaves no part file under a final name.
//!
//! Without DuckDB the tests are skipped with a message, except when `CI`
//! is set: then they fail.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use agentlog::synth::{GenConfig, SdkStyle, write_store};
use serde_json::Value;

pub(super) fn agentlog() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

/// Whether DuckDB can be used; `false` (after a message) to skip.
pub(super) fn duckdb() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 with the duckdb package is required in CI (pip install duckdb)"
        );
        eprintln!("note: python3 -c 'import duckdb' fails: the Parquet checks are skipped");
    }
    ok
}

/// Runs `sql` in DuckDB; the rows as JSON arrays.
pub(super) fn query(sql: &str) -> Vec<Vec<Value>> {
    let script = "import duckdb, json, sys\n\
        rows = duckdb.sql(sys.argv[1]).fetchall()\n\
        print(json.dumps([list(r) for r in rows], default=str))";
    let o = Command::new("python3")
        .args(["-c", script, sql])
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "duckdb: {sql}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("the rows as JSON")
}

pub(super) fn table(out: &Path, t: &str) -> String {
    format!(
        "read_parquet('{}/{t}/**/*.parquet', union_by_name = true)",
        out.display()
    )
}

pub(super) fn export(args: &[&Path], extra: &[&str]) -> std::process::Output {
    let mut c = agentlog();
    c.arg("export");
    for a in args {
        c.arg(a);
    }
    c.args(extra);
    c.output().expect("agentlog runs")
}

pub(super) fn export_ok(paths: &[&Path], out: &Path, extra: &[&str]) {
    let mut all: Vec<&str> = vec!["--parquet", out.to_str().unwrap()];
    all.extend_from_slice(extra);
    let o = export(paths, &all);
    assert!(
        o.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

pub(super) fn stats(paths: &[&Path]) -> Value {
    let mut c = agentlog();
    c.arg("stats").arg("--json");
    for p in paths {
        c.arg(p);
    }
    let o = c.output().expect("agentlog runs");
    serde_json::from_slice(&o.stdout).expect("stats --json")
}

pub(super) fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The rows of a query of (name, count) pairs, by name.
fn counts_by(sql: &str) -> BTreeMap<String, u64> {
    query(sql)
        .into_iter()
        .map(|r| (r[0].as_str().unwrap().to_owned(), u(&r[1])))
        .collect()
}

/// A `stats --json` object of counts, by name.
fn stats_counts(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), u(v)))
        .collect()
}

/// The dataset's totals equal `stats --json`'s.
pub(super) fn check_against_stats(paths: &[&Path], out: &Path) {
    let st = stats(paths);
    let ev = table(out, "events");
    let kinds = counts_by(&format!(
        "SELECT coalesce(event_kind, '(none)'), count(*) FROM {ev} \
         WHERE file_status = 'event' GROUP BY ALL ORDER BY 1"
    ));
    assert_eq!(kinds, stats_counts(&st["events_by_kind"]), "events by kind");
    let n = query(&format!(
        "SELECT count(*) FROM {ev} WHERE file_status = 'event'"
    ));
    assert_eq!(u(&n[0][0]), u(&st["events"]), "events");
    let malformed = query(&format!(
        "SELECT count(*) FROM {ev} WHERE file_status = 'malformed'"
    ));
    assert_eq!(u(&malformed[0][0]), u(&st["files"]["malformed"]));

    let tools = counts_by(&format!(
        "SELECT coalesce(tool_name, '(none)'), count(*) FROM {} GROUP BY ALL",
        table(out, "tool_calls")
    ));
    assert_eq!(tools, stats_counts(&st["tool_calls"]), "tool calls by tool");

    let usage = query(&format!(
        "SELECT usage_model, count(*) FILTER (WHERE record_kind = 'call'), sum(prompt_tokens), \
         sum(completion_tokens), sum(cache_read_tokens), sum(cache_write_tokens), \
         sum(reasoning_tokens), sum(cost_usd) FROM {} GROUP BY ALL ORDER BY 1",
        table(out, "llm_calls")
    ));
    let want = st["usage"].as_object().unwrap();
    assert_eq!(usage.len(), want.len(), "models: {usage:?} vs {want:?}");
    for r in &usage {
        let m = &want[r[0].as_str().unwrap()];
        for (i, k) in [
            "calls",
            "prompt_tokens",
            "completion_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(u(&r[i + 1]), u(&m[k]), "{} {k}", r[0]);
        }
        let (a, b) = (f(&r[7]), f(&m["cost"]));
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{} cost {a} vs {b}",
            r[0]
        );
    }
    let by_role = counts_by(&format!(
        "SELECT coalesce(message_role, '(none)'), count(*) FROM {} WHERE source_format = 'occhat' GROUP BY ALL",
        table(out, "messages")
    ));
    assert_eq!(
        by_role,
        stats_counts(&st["messages_by_role"]),
        "OC Chat messages by role"
    );
}

/// Each OpenHands conversation's messages equal `view --json`, in order.
fn check_against_view(out: &Path) {
    let convs = query(&format!(
        "SELECT conversation_id, conversation_path FROM {} WHERE source_format = 'openhands'",
        table(out, "conversations")
    ));
    assert!(!convs.is_empty());
    let rows = query(&format!(
        "SELECT conversation_id, message_role, message_json FROM {} \
         WHERE source_format = 'openhands' ORDER BY conversation_id, message_index",
        table(out, "messages")
    ));
    let mut by_conv: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for r in rows {
        by_conv
            .entry(r[0].as_str().unwrap().to_owned())
            .or_default()
            .push((
                r[1].as_str().unwrap_or("").to_owned(),
                serde_json::from_str(r[2].as_str().unwrap()).unwrap(),
            ));
    }
    for c in &convs {
        let id = c[0].as_str().unwrap();
        let o = agentlog()
            .args(["view", "--json"])
            .arg(c[1].as_str().unwrap())
            .output()
            .unwrap();
        assert!(o.status.success());
        let view: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
        let got = by_conv.get(id).cloned().unwrap_or_default();
        let roles: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
        let want: Vec<&str> = view.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, want, "{id}: roles");
        for ((_, m), v) in got.iter().zip(&view) {
            assert_eq!(m, v, "{id}: a message");
        }
    }
}

/// The `json` column is each event file's text.
fn check_verbatim(out: &Path) {
    let rows = query(&format!(
        "SELECT c.conversation_path, e.event_file, e.event_json FROM {} e JOIN (SELECT DISTINCT \
         conversation_id, conversation_path FROM {}) c USING (conversation_id) \
         WHERE e.file_status = 'event'",
        table(out, "events"),
        table(out, "conversations")
    ));
    assert!(!rows.is_empty());
    for r in rows {
        let p = Path::new(r[0].as_str().unwrap())
            .join("events")
            .join(r[1].as_str().unwrap());
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(r[2].as_str().unwrap(), text, "{}", p.display());
        if let (Ok(a), Ok(b)) = (
            serde_json::from_str::<Value>(r[2].as_str().unwrap()),
            serde_json::from_str::<Value>(&text),
        ) {
            assert_eq!(a, b);
        }
    }
}

#[test]
fn corpus_dataset_equals_stats_and_view() {
    if !duckdb() {
        return;
    }
    let corpus = common::corpus_dir();
    let oh = corpus.join("openhands");
    let oc = corpus.join("occhat").join("sample_basic").join("sessions");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ds");
    export_ok(&[&oh, &oc], &out, &[]);
    check_against_stats(&[&oh, &oc], &out);
    check_against_view(&out);
    check_verbatim(&out);
    // The schema version is in every file's key-value metadata.
    let kv = query(&format!(
        "SELECT DISTINCT decode(value) FROM parquet_kv_metadata('{}/*/*.parquet') \
         WHERE decode(key) = 'agentlog.schema_version'",
        out.display()
    ));
    assert_eq!(kv, vec![vec![Value::from("2")]]);
}

/// A temporary directory holding a [`generated`] store at `store`.
pub(super) fn generated_store() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    generated(&store);
    (t, store)
}

/// Writes a small generated store at `dir`: mixed SDK styles, sub-agents,
/// condensations, confirmations, branches and metas in half the
/// conversations each.
pub(super) fn generated(dir: &Path) {
    let cfg = GenConfig {
        conversations: 12,
        events_per_conversation: 80,
        seed: 15,
        style: SdkStyle::Mixed,
        subagent_ratio: 0.5,
        condenser_ratio: 0.5,
        confirm_ratio: 0.5,
        branch_ratio: 0.5,
        meta_ratio: 0.5,
        content_scale: 1.0,
        length_spread: 0.3,
        threads: 1,
    };
    write_store(dir, &cfg).unwrap();
}

#[test]
fn generated_dataset_equals_stats_and_view_partitioned() {
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    let out = t.path().join("ds");
    export_ok(&[&store], &out, &["--partition-by", "date"]);
    let dirs: Vec<_> = fs::read_dir(out.join("events"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !dirs.is_empty() && dirs.iter().all(|d| d.starts_with("date=")),
        "{dirs:?}"
    );
    check_against_stats(&[&store], &out);
    check_against_view(&out);
    check_verbatim(&out);
    // Without the JSON column: null everywhere, the rest the same.
    let slim = t.path().join("slim");
    export_ok(&[&store], &slim, &["--no-json"]);
    let n = query(&format!(
        "SELECT count(*), count(event_json) FROM {}",
        table(&slim, "events")
    ));
    assert!(u(&n[0][0]) > 0);
    assert_eq!(u(&n[0][1]), 0);
    check_against_stats(&[&store], &slim);
}

/// The columns to compare: all but `snapshot` and `change`.
pub(super) fn rows_of(out: &Path, t: &str, latest: bool) -> Vec<String> {
    let filter = if latest {
        " QUALIFY snapshot_at = max(snapshot_at) OVER (PARTITION BY conversation_id)"
    } else {
        ""
    };
    let exclude = if t == "conversations" {
        "snapshot_at, change_kind"
    } else {
        "snapshot_at"
    };
    let mut rows: Vec<String> = query(&format!(
        "SELECT * EXCLUDE ({exclude}) FROM {}{filter}",
        table(out, t)
    ))
    .into_iter()
    .map(|r| serde_json::to_string(&r).unwrap())
    .collect();
    rows.sort();
    rows
}

#[test]
fn incremental_exports_add_up_to_a_full_one() {
    if !duckdb() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let full_src = t.path().join("gen");
    generated(&full_src);
    // The first state: half the conversations, and one of the others cut
    // short by its last events.
    common::copy_tree(&full_src, &store);
    let mut convs: Vec<PathBuf> = fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    convs.sort();
    let aside = t.path().join("aside");
    fs::create_dir_all(&aside).unwrap();
    for (i, c) in convs.iter().enumerate().skip(convs.len() / 2) {
        fs::rename(c, aside.join(i.to_string())).unwrap();
    }
    let cut = &convs[0];
    let mut names: Vec<_> = fs::read_dir(cut.join("events"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    let tail = aside.join("tail");
    fs::create_dir_all(&tail).unwrap();
    for n in &names[names.len() - 5..] {
        fs::rename(cut.join("events").join(n), tail.join(n)).unwrap();
    }
    let inc = t.path().join("inc");
    let cp = t.path().join("cp.json");
    let cp_arg = cp.to_str().unwrap();
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    // The rest arrives.
    for (i, c) in convs.iter().enumerate().skip(convs.len() / 2) {
        fs::rename(aside.join(i.to_string()), c).unwrap();
    }
    for n in &names[names.len() - 5..] {
        fs::rename(tail.join(n), cut.join("events").join(n)).unwrap();
    }
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    // A third run with nothing new adds no event rows.
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    let full = t.path().join("full");
    export_ok(&[&store], &full, &[]);
    assert_eq!(
        rows_of(&inc, "events", false),
        rows_of(&full, "events", false)
    );
    for tb in ["conversations", "messages", "tool_calls", "llm_calls"] {
        assert_eq!(rows_of(&inc, tb, true), rows_of(&full, tb, true), "{tb}");
    }
    // The incremental dataset is several part files, none rewritten.
    let parts = query(&format!(
        "SELECT count(DISTINCT filename) FROM read_parquet('{}/events/*.parquet', filename = true)",
        inc.display()
    ));
    assert!(u(&parts[0][0]) >= 2);
}

#[test]
fn malformed_events_are_rows() {
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    let mut convs: Vec<PathBuf> = fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    convs.sort();
    let events = convs[0].join("events");
    let mut names: Vec<_> = fs::read_dir(&events)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    fs::write(
        events.join(&names[3]),
        b"{\"kind\": \"ActionEvent\", \"id\": ",
    )
    .unwrap();
    fs::write(events.join(&names[5]), b"[1, 2, 3]").unwrap();
    fs::write(events.join(&names[6]), [0xff, 0xfe, b'{']).unwrap();
    let out = t.path().join("ds");
    export_ok(&[&store], &out, &[]);
    let bad = query(&format!(
        "SELECT event_file, file_status, file_error IS NOT NULL, event_json IS NOT NULL FROM {} \
         WHERE file_status <> 'event' ORDER BY event_file",
        table(&out, "events")
    ));
    let files: Vec<&str> = bad.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(files, [&names[3], &names[5], &names[6]]);
    for r in &bad {
        assert_eq!(r[1], "malformed");
        assert_eq!(r[2], true);
        assert_eq!(r[3], true);
    }
    check_against_stats(&[&store], &out);
}

#[test]
fn a_failed_write_leaves_no_part_file() {
    use std::os::unix::process::CommandExt;
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    let out = t.path().join("ds");
    let mut c = agentlog();
    c.arg("export").arg(&store).arg("--parquet").arg(&out);
    // A full disk: no file may grow past 64 KiB (EFBIG, the signal ignored).
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: 64 << 10,
                rlim_max: 64 << 10,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut left = Vec::new();
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                left.push(e.path());
            }
        }
    }
    // Nothing of the failed run is published: no part file, no manifest,
    // not even a temporary file (the lock file stays).
    assert_eq!(
        left,
        vec![out.join("_agentlog").join("lock")],
        "only the lock is left"
    );
}
