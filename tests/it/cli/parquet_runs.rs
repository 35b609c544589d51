//! `agentlog export --parquet`: the parts of a run are read all or none.
//! Runs killed at random moments leave nothing a reader sees, and the
//! next run completes to exactly a full export's rows; a second full
//! export into a dataset is refused, `--replace` replaces it whole; an
//! incremental run refuses a dataset its checkpoint is not of.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::parquet::{
    agentlog, duckdb, export, export_ok, generated_store, query, rows_of, table, u,
};

/// The part files a reader sees: `*.parquet` names not starting with `.`
/// or `_`, under the table directories (as a glob, Spark or PyArrow finds
/// them).
fn visible_parts(out: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = [
        "conversations",
        "events",
        "messages",
        "tool_calls",
        "llm_calls",
    ]
    .iter()
    .map(|t| out.join(t))
    .collect();
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if name.ends_with(".parquet") {
                found.push(e.path());
            }
        }
    }
    found.sort();
    found
}

/// The `events` rows a reader sees, and how many distinct
/// (conversation, index) keys they hold; every visible part is read whole.
fn visible_events(out: &Path) -> (u64, u64) {
    let parts = visible_parts(out);
    for p in &parts {
        query(&format!(
            "SELECT count(*) FROM read_parquet('{}')",
            p.display()
        ));
    }
    let events: Vec<String> = parts
        .iter()
        .filter(|p| p.starts_with(out.join("events")))
        .map(|p| format!("'{}'", p.display()))
        .collect();
    if events.is_empty() {
        return (0, 0);
    }
    let r = query(&format!(
        "SELECT count(*), count(DISTINCT (conversation_id, event_file)) FROM read_parquet([{}])",
        events.join(",")
    ));
    (u(&r[0][0]), u(&r[0][1]))
}

/// A delay between `lo` and `hi` milliseconds, from the clock's nanoseconds.
fn jitter(lo: u64, hi: u64) -> Duration {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    Duration::from_millis(lo + ns % (hi - lo + 1))
}

#[test]
fn killed_runs_leave_nothing_a_reader_sees() {
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    let full = t.path().join("full");
    export_ok(&[&store], &full, &[]);
    let (full_rows, _) = visible_events(&full);
    assert!(full_rows > 500, "{full_rows}");
    let pq = t.path().join("pq");
    let cp = t.path().join("cp.json");
    let mut killed = 0;
    let mut delays: Vec<Duration> = [10u64, 30, 50, 80, 120, 170, 250, 350, 500]
        .iter()
        .map(|&ms| Duration::from_millis(ms))
        .collect();
    delays.extend((0..4).map(|_| jitter(5, 600)));
    for d in delays {
        let mut child = agentlog()
            .arg("export")
            .arg(&store)
            .arg("--parquet")
            .arg(&pq)
            .arg("--checkpoint")
            .arg(&cp)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(d);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
        // A reader sees nothing, or exactly one complete run (a run that
        // was not killed in time, or got as far as its checkpoint): never
        // a part of a run, never a run twice.
        let (rows, keys) = visible_events(&pq);
        assert!(rows == 0 || rows == full_rows, "{rows} rows after {d:?}");
        assert_eq!(rows, keys, "no event twice after {d:?}");
    }
    assert!(
        killed >= 3,
        "only {killed} runs were killed before they ended"
    );
    // Two complete runs: a full export's rows, exactly.
    export_ok(&[&store], &pq, &["--checkpoint", cp.to_str().unwrap()]);
    export_ok(&[&store], &pq, &["--checkpoint", cp.to_str().unwrap()]);
    assert_eq!(
        rows_of(&pq, "events", false),
        rows_of(&full, "events", false)
    );
    for tb in ["conversations", "messages", "tool_calls", "llm_calls"] {
        assert_eq!(rows_of(&pq, tb, true), rows_of(&full, tb, true), "{tb}");
    }
    // Nothing of the killed runs is left: no temporary file, no pending
    // manifest.
    let mut stack = vec![pq.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".tmp"), "{}", e.path().display());
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
    let pending = fs::read_dir(pq.join("_agentlog").join("pending"))
        .unwrap()
        .count();
    assert_eq!(pending, 0);
}

#[test]
fn a_second_full_export_is_refused_and_replace_replaces_the_dataset() {
    // The refusal and the replacement are checked by the files a reader
    // sees, with or without DuckDB; the rows too where DuckDB is here.
    let db = duckdb();
    let (t, store) = generated_store();
    let pq = t.path().join("pq");
    export_ok(&[&store], &pq, &[]);
    let parts_before = visible_parts(&pq);
    assert!(!parts_before.is_empty());
    let before = db.then(|| rows_of(&pq, "events", false));
    let o = export(&[&store], &["--parquet", pq.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--replace"), "{err}");
    assert_eq!(visible_parts(&pq), parts_before, "no part added");
    if db {
        assert_eq!(Some(rows_of(&pq, "events", false)), before, "nothing added");
    }
    // Replaced whole: one export's rows, nothing beside the directory.
    export_ok(&[&store], &pq, &["--replace"]);
    assert_eq!(visible_parts(&pq).len(), parts_before.len());
    if db {
        assert_eq!(Some(rows_of(&pq, "events", false)), before);
    }
    let runs = fs::read_dir(pq.join("_agentlog").join("runs"))
        .unwrap()
        .count();
    assert_eq!(runs, 1, "the old dataset's runs are gone");
    let beside: Vec<String> = fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("agentlog-new"))
        .collect();
    assert!(beside.is_empty(), "{beside:?}");
    // A directory holding anything else is not replaced.
    let other = t.path().join("other");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("notes.txt"), "keep me").unwrap();
    let o = export(
        &[&store],
        &["--parquet", other.to_str().unwrap(), "--replace"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        fs::read_to_string(other.join("notes.txt")).unwrap(),
        "keep me"
    );
    let o = export(&[&store], &["--parquet", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1, "nothing added");
}

#[test]
fn an_incremental_run_refuses_a_dataset_its_checkpoint_is_not_of() {
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    let pq = t.path().join("pq");
    let cp = t.path().join("cp.json");
    let cp_arg = cp.to_str().unwrap();
    // A full dataset is not an incremental one.
    export_ok(&[&store], &pq, &[]);
    let o = export(
        &[&store],
        &["--parquet", pq.to_str().unwrap(), "--checkpoint", cp_arg],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!cp.exists(), "no checkpoint saved");
    // Started afresh with --replace, then incremental runs add to it.
    export_ok(&[&store], &pq, &["--checkpoint", cp_arg, "--replace"]);
    let full = rows_of(&pq, "events", false);
    export_ok(&[&store], &pq, &["--checkpoint", cp_arg]);
    assert_eq!(rows_of(&pq, "events", false), full);
    // The checkpoint lost (or another one): refused, nothing written.
    fs::remove_file(&cp).unwrap();
    let o = export(
        &[&store],
        &["--parquet", pq.to_str().unwrap(), "--checkpoint", cp_arg],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--replace"));
    assert_eq!(rows_of(&pq, "events", false), full);
    // A checkpoint with no dataset: refused too.
    export_ok(&[&store], &pq, &["--checkpoint", cp_arg, "--replace"]);
    let empty = t.path().join("empty");
    let o = export(
        &[&store],
        &["--parquet", empty.to_str().unwrap(), "--checkpoint", cp_arg],
    );
    assert_eq!(o.status.code(), Some(2));
    let n = query(&format!("SELECT count(*) FROM {}", table(&pq, "events")));
    assert_eq!(u(&n[0][0]) as usize, full.len());
}

/// The names of the files under `dir` (recursively), relative to it.
fn names_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn datasets_of_several_machines_and_runs_copy_into_one_bucket() {
    if !duckdb() {
        return;
    }
    let (t, store) = generated_store();
    // Two machines exporting the same store, and two incremental runs of
    // a third: every part and manifest name differs.
    let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
    export_ok(&[&store], &a, &["--partition-by", "date"]);
    export_ok(&[&store], &b, &["--partition-by", "date"]);
    let cp = t.path().join("cp");
    export_ok(&[&store], &c, &["--checkpoint", cp.to_str().unwrap()]);
    let first = fs::read_dir(store.as_path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("events").is_dir())
        .unwrap();
    fs::remove_dir_all(&first).unwrap();
    export_ok(&[&store], &c, &["--checkpoint", cp.to_str().unwrap()]);
    let bucket = t.path().join("bucket");
    let mut all: Vec<String> = Vec::new();
    for ds in [&a, &b, &c] {
        for name in names_under(ds) {
            if name.starts_with("_agentlog/lock") {
                continue;
            }
            let to = bucket.join(&name);
            assert!(!to.exists(), "{name} twice");
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(ds.join(&name), &to).unwrap();
            all.push(name);
        }
    }
    // Part names: part-<16-digit snapshot>-<32 hex digits>-<4 digits>.parquet.
    let parts: Vec<&String> = all.iter().filter(|n| n.ends_with(".parquet")).collect();
    assert!(parts.len() >= 15, "{parts:?}");
    for p in &parts {
        let file = p.rsplit('/').next().unwrap();
        let body = file
            .strip_prefix("part-")
            .and_then(|f| f.strip_suffix(".parquet"))
            .unwrap_or_else(|| panic!("{p}"));
        let fields: Vec<&str> = body.split('-').collect();
        assert_eq!(fields.len(), 3, "{p}");
        assert!(
            fields[0].len() == 16 && fields[0].bytes().all(|b| b.is_ascii_digit()),
            "{p}"
        );
        assert!(
            fields[1].len() == 32 && fields[1].bytes().all(|b| b.is_ascii_hexdigit()),
            "{p}"
        );
        assert!(fields[2].bytes().all(|b| b.is_ascii_digit()), "{p}");
    }
    let runs: Vec<&String> = all
        .iter()
        .filter(|n| n.starts_with("_agentlog/runs/"))
        .collect();
    assert_eq!(runs.len(), 4, "{runs:?}");
    // Read as one: each dataset's rows, added up.
    let n = |d: &Path| u(&query(&format!("SELECT count(*) FROM {}", table(d, "events")))[0][0]);
    assert_eq!(n(&bucket), n(&a) + n(&b) + n(&c));
}
