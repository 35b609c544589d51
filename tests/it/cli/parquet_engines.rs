//! Schema version 2 as the engines read it: every table reads in DuckDB and
//! PyArrow, no count is unsigned or decimal, no column is named as a
//! keyword or function, the analyst columns agree with the verbatim JSON,
//! and the "current state" queries of `docs/parquet.md` (DuckDB's as
//! written, and the same in PyArrow) equal a fresh full export after new
//! events, a rewritten and a removed conversation.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::parquet::{check_against_stats, duckdb, export_ok, generated, query, stats, table, u};

const TABLES: [&str; 5] = [
    "conversations",
    "events",
    "messages",
    "tool_calls",
    "llm_calls",
];

/// Spark SQL's keywords (reserved and not, Spark 4 "ANSI compliance"
/// table) and the function names a column could be taken for.
const SPARK_WORDS: &[&str] = &[
    "add",
    "after",
    "all",
    "alter",
    "analyze",
    "and",
    "anti",
    "any",
    "archive",
    "array",
    "as",
    "asc",
    "at",
    "between",
    "both",
    "bucket",
    "buckets",
    "by",
    "cache",
    "cascade",
    "case",
    "cast",
    "change",
    "check",
    "cluster",
    "collate",
    "column",
    "columns",
    "comment",
    "commit",
    "compute",
    "constraint",
    "cost",
    "create",
    "cross",
    "cube",
    "current",
    "data",
    "database",
    "date",
    "day",
    "delete",
    "desc",
    "describe",
    "directory",
    "distinct",
    "distribute",
    "div",
    "drop",
    "else",
    "end",
    "error",
    "escape",
    "except",
    "exchange",
    "exists",
    "explain",
    "export",
    "extended",
    "external",
    "extract",
    "false",
    "fetch",
    "fields",
    "file",
    "filter",
    "first",
    "following",
    "for",
    "foreign",
    "format",
    "from",
    "full",
    "function",
    "global",
    "grant",
    "group",
    "having",
    "hour",
    "identifier",
    "if",
    "ignore",
    "import",
    "in",
    "index",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "items",
    "join",
    "json",
    "keys",
    "kind",
    "last",
    "lateral",
    "lazy",
    "leading",
    "left",
    "length",
    "like",
    "limit",
    "lines",
    "list",
    "load",
    "local",
    "location",
    "lock",
    "map",
    "merge",
    "message",
    "minute",
    "model",
    "month",
    "name",
    "natural",
    "no",
    "not",
    "null",
    "nulls",
    "of",
    "on",
    "only",
    "option",
    "options",
    "or",
    "order",
    "out",
    "outer",
    "over",
    "overlay",
    "partition",
    "path",
    "percent",
    "pivot",
    "position",
    "preceding",
    "primary",
    "query",
    "range",
    "record",
    "reduce",
    "references",
    "refresh",
    "rename",
    "repair",
    "replace",
    "reset",
    "restrict",
    "revoke",
    "right",
    "rlike",
    "role",
    "rollback",
    "rollup",
    "row",
    "rows",
    "schema",
    "second",
    "select",
    "semi",
    "set",
    "sets",
    "show",
    "snapshot",
    "some",
    "sort",
    "source",
    "start",
    "status",
    "struct",
    "substr",
    "substring",
    "table",
    "tables",
    "target",
    "text",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "transform",
    "trim",
    "true",
    "truncate",
    "type",
    "union",
    "unique",
    "unknown",
    "update",
    "use",
    "user",
    "using",
    "values",
    "view",
    "when",
    "where",
    "window",
    "with",
    "year",
    "zone",
];

/// Runs a Python script with `args`; its standard output as JSON.
fn python(script: &str, args: &[&str]) -> Value {
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "python: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// Whether PyArrow can be used (required in CI).
fn pyarrow() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pyarrow"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 with the pyarrow package is required in CI (pip install pyarrow)"
        );
        eprintln!("note: python3 -c 'import pyarrow' fails: the PyArrow checks are skipped");
    }
    ok
}

/// Whether Polars can be used (required in CI).
fn polars() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import polars"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 with the polars package is required in CI (pip install polars)"
        );
        eprintln!("note: python3 -c 'import polars' fails: the Polars checks are skipped");
    }
    ok
}

/// Every table in Polars: its rows and column types, the totals `stats`
/// gives, and the "any engine" example queries of `docs/parquet.md` run
/// unchanged in Polars' SQL (the tables registered under their names).
const POLARS_SCHEMA: &str = r#"
import json, sys
import polars as pl
out, queries = sys.argv[1], json.loads(sys.argv[2])
scan = lambda t: pl.scan_parquet(f"{out}/{t}/**/*.parquet")
res = {}
for t in ["conversations", "events", "messages", "tool_calls", "llm_calls"]:
    df = scan(t).collect()
    res[t] = {"rows": df.height, "types": {c: str(d) for c, d in df.schema.items()}}
ev = scan("events").collect()
res["events_ok"] = ev.filter(pl.col("file_status") == "event").height
llm = scan("llm_calls").collect()
res["prompt_tokens"] = int(llm["prompt_tokens"].sum())
res["calls"] = llm.filter(pl.col("record_kind") == "call").height
ctx = pl.SQLContext(**{t: scan(t) for t in ["conversations", "events", "messages", "tool_calls", "llm_calls"]})
res["queries"] = [ctx.execute(q).collect().height for q in queries]
print(json.dumps(res))
"#;

/// The statements of SQL blocks, their comment lines left out (a comment
/// may hold a `;`).
fn statements(blocks: &[String]) -> Vec<String> {
    blocks
        .iter()
        .flat_map(|b| {
            let code: String = b
                .lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .map(|l| format!("{l}\n"))
                .collect();
            code.split(';')
                .map(str::trim)
                .filter(|q| !q.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

const PYARROW_SCHEMA: &str = r#"
import json, sys
import pyarrow.dataset as pds, pyarrow.compute as pc
out = sys.argv[1]
res = {}
for t in ["conversations", "events", "messages", "tool_calls", "llm_calls"]:
    tab = pds.dataset(f"{out}/{t}", format="parquet").to_table()
    res[t] = {"rows": tab.num_rows, "types": {f.name: str(f.type) for f in tab.schema}}
ev = pds.dataset(f"{out}/events", format="parquet").to_table()
res["events_ok"] = pc.sum(pc.equal(ev["file_status"], "event")).as_py()
llm = pds.dataset(f"{out}/llm_calls", format="parquet").to_table()
res["prompt_tokens"] = pc.sum(llm["prompt_tokens"]).as_py()
res["calls"] = pc.sum(pc.equal(llm["record_kind"], "call")).as_py()
print(json.dumps(res))
"#;

#[test]
fn every_table_reads_in_duckdb_and_pyarrow_with_signed_counts_and_plain_names() {
    if !duckdb() || !pyarrow() {
        return;
    }
    let corpus = common::corpus_dir();
    let oh = corpus.join("openhands");
    let oc = corpus.join("occhat").join("sample_basic").join("sessions");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ds");
    export_ok(&[&oh, &oc], &out, &[]);
    check_against_stats(&[&oh, &oc], &out);
    let st = stats(&[&oh, &oc]);

    // PyArrow: every table reads (its dataset discovery skips `_agentlog`
    // and hidden files); its totals are stats --json's.
    let pa = python(PYARROW_SCHEMA, &[out.to_str().unwrap()]);
    assert_eq!(u(&pa["events_ok"]), u(&st["events"]));
    let usage = st["usage"].as_object().unwrap();
    let sum = |k: &str| usage.values().map(|m| u(&m[k])).sum::<u64>();
    assert_eq!(u(&pa["prompt_tokens"]), sum("prompt_tokens"));
    assert_eq!(u(&pa["calls"]), sum("calls"));
    let keywords: Vec<String> = query(
        "SELECT lower(keyword_name) FROM duckdb_keywords() \
         UNION SELECT DISTINCT lower(function_name) FROM duckdb_functions()",
    )
    .into_iter()
    .map(|r| r[0].as_str().unwrap().to_owned())
    .collect();
    for tb in TABLES {
        let types = pa[tb]["types"].as_object().unwrap();
        let n = query(&format!("SELECT count(*) FROM {}", table(&out, tb)));
        assert_eq!(u(&pa[tb]["rows"]), u(&n[0][0]), "{tb}: rows");
        assert!(u(&n[0][0]) > 0, "{tb} has rows");
        let described = query(&format!("DESCRIBE SELECT * FROM {}", table(&out, tb)));
        assert_eq!(described.len(), types.len());
        for (col, ty) in types {
            let ty = ty.as_str().unwrap();
            assert!(
                !ty.starts_with("uint") && !ty.starts_with("decimal"),
                "{tb}.{col}: {ty}"
            );
            if ty.starts_with("timestamp") {
                // Microseconds; UTC where the zone is known for every row
                // (snapshot_at), naive where rows may hold local times.
                let want = if col == "snapshot_at" {
                    "timestamp[us, tz=UTC]"
                } else {
                    "timestamp[us]"
                };
                assert_eq!(ty, want, "{tb}.{col}");
            }
            assert!(
                !keywords.contains(col),
                "{tb}.{col} is a DuckDB keyword or function"
            );
            assert!(
                !SPARK_WORDS.contains(&col.as_str()),
                "{tb}.{col} is a Spark SQL word"
            );
        }
        for r in &described {
            let ty = r[1].as_str().unwrap();
            assert!(
                !ty.starts_with('U') && !ty.starts_with("DECIMAL") && ty != "HUGEINT",
                "{tb}.{}: {ty}",
                r[0]
            );
        }
    }

    // Polars: every table reads with the same rows, no unsigned or decimal
    // type, timestamps in microseconds (UTC for snapshot_at), the totals of
    // stats --json, and the "any engine" queries of the docs run unchanged
    // in its SQL.
    if polars() {
        let any = statements(&doc_blocks(
            "## Example queries (any engine",
            "```sql\n",
            &out,
        ));
        assert_eq!(any.len(), 2, "{any:?}");
        let pl = python(
            POLARS_SCHEMA,
            &[out.to_str().unwrap(), &serde_json::to_string(&any).unwrap()],
        );
        assert_eq!(u(&pl["events_ok"]), u(&st["events"]));
        assert_eq!(u(&pl["prompt_tokens"]), sum("prompt_tokens"));
        assert_eq!(u(&pl["calls"]), sum("calls"));
        for q in pl["queries"].as_array().unwrap() {
            assert!(u(q) > 0, "a query of the docs gives rows in Polars");
        }
        for tb in TABLES {
            assert_eq!(u(&pl[tb]["rows"]), u(&pa[tb]["rows"]), "{tb}: Polars rows");
            for (col, ty) in pl[tb]["types"].as_object().unwrap() {
                let ty = ty.as_str().unwrap();
                assert!(
                    !ty.starts_with("UInt") && !ty.starts_with("Decimal"),
                    "Polars {tb}.{col}: {ty}"
                );
                if ty.starts_with("Datetime") {
                    let utc = col == "snapshot_at";
                    let want = if utc {
                        "Datetime(time_unit='us', time_zone='UTC')"
                    } else {
                        "Datetime(time_unit='us', time_zone=None)"
                    };
                    assert_eq!(ty, want, "Polars {tb}.{col}");
                }
            }
        }
    }

    // The analyst columns agree with the verbatim JSON.
    let ev = table(&out, "events");
    let bad = query(&format!(
        "SELECT count(*) FILTER (WHERE action_kind IS DISTINCT FROM \
           json_extract_string(event_json, '$.action.kind') AND event_kind = 'ActionEvent'), \
         count(*) FILTER (WHERE exit_code IS DISTINCT FROM coalesce( \
           TRY_CAST(json_extract(event_json, '$.observation.metadata.exit_code') AS BIGINT), \
           TRY_CAST(json_extract(event_json, '$.observation.exit_code') AS BIGINT)) \
           AND event_kind = 'ObservationEvent'), \
         count(*) FILTER (WHERE action_kind IS NOT NULL), \
         count(*) FILTER (WHERE exit_code IS NOT NULL), \
         count(*) FILTER (WHERE text_length IS NOT NULL) FROM {ev} WHERE file_status = 'event'"
    ));
    assert_eq!(u(&bad[0][0]), 0, "action_kind");
    assert_eq!(u(&bad[0][1]), 0, "exit_code");
    assert!(u(&bad[0][2]) > 0 && u(&bad[0][3]) > 0 && u(&bad[0][4]) > 0);
    // A message's text length is its text's.
    let m = query(&format!(
        "SELECT count(*) FILTER (WHERE text_length IS DISTINCT FROM length(message_text)) \
         FROM {}",
        table(&out, "messages")
    ));
    assert_eq!(u(&m[0][0]), 0);
    // The failure rate per action kind, without JSON functions (the query
    // of docs/parquet.md), agrees with tool_calls' outcomes.
    let rates = query(&format!(
        "SELECT action_kind, count(*), sum(CASE WHEN call_outcome = 'error' OR is_error \
         THEN 1 ELSE 0 END) FROM {} WHERE source_format = 'openhands' GROUP BY ALL",
        table(&out, "tool_calls")
    ));
    assert!(rates.len() > 1, "{rates:?}");
}

/// `docs/parquet.md`.
fn doc() -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join("parquet.md"),
    )
    .unwrap()
}

/// The code blocks opened by `fence` (e.g. "```sql\n") in the section of
/// `docs/parquet.md` that starts at the heading `heading`, up to the next
/// heading of its level, with `'OUT/` and `"OUT/` naming `out`.
fn doc_blocks(heading: &str, fence: &str, out: &Path) -> Vec<String> {
    let doc = doc();
    let at = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} in docs/parquet.md"));
    let level = heading.split(' ').next().unwrap();
    let body = &doc[at + heading.len()..];
    let end = body.find(&format!("\n{level} ")).unwrap_or(body.len());
    let mut rest = &body[..end];
    let mut blocks = Vec::new();
    while let Some(i) = rest.find(fence) {
        let from = i + fence.len();
        let len = rest[from..].find("```").unwrap();
        let shown = out.display();
        blocks.push(
            rest[from..from + len]
                .replace("'OUT/", &format!("'{shown}/"))
                .replace("\"OUT/", &format!("\"{shown}/")),
        );
        rest = &rest[from + len + 3..];
    }
    assert!(!blocks.is_empty(), "{fence} blocks under {heading}");
    blocks
}

/// The DuckDB block of `docs/parquet.md`'s "current state" section, for
/// the dataset `out`.
pub(super) fn current_state_sql(out: &Path) -> String {
    let doc = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join("parquet.md"),
    )
    .unwrap();
    let at = doc.find("### The current state, per engine").unwrap();
    let rest = &doc[at..];
    let start = rest.find("DuckDB:\n\n```sql\n").unwrap() + "DuckDB:\n\n```sql\n".len();
    let len = rest[start..].find("```").unwrap();
    rest[start..start + len].replace("'OUT/", &format!("'{}/", out.display()))
}

/// The columns compared: all but those a later snapshot changes.
fn exclude(tb: &str) -> &'static str {
    match tb {
        "conversations" => "snapshot_at, change_kind",
        "events" => "snapshot_at, in_context",
        _ => "snapshot_at",
    }
}

const DUCKDB_CURRENT: &str = r#"
import duckdb, json, sys
con = duckdb.connect()
for stmt in sys.argv[1].split(";"):
    if stmt.strip():
        con.execute(stmt)
res = {}
for t in ["conversations", "events", "messages", "tool_calls", "llm_calls"]:
    ex = json.loads(sys.argv[2])[t]
    rows = con.execute(f"SELECT * EXCLUDE ({ex}) FROM current_{t}").fetchall()
    res[t] = sorted(json.dumps(list(r), default=str) for r in rows)
print(json.dumps(res))
"#;

const DUCKDB_ALL: &str = r#"
import duckdb, json, sys
res = {}
for t in ["conversations", "events", "messages", "tool_calls", "llm_calls"]:
    ex = json.loads(sys.argv[2])[t]
    rows = duckdb.sql(f"SELECT * EXCLUDE ({ex}) FROM read_parquet('{sys.argv[1]}/{t}/**/*.parquet')").fetchall()
    res[t] = sorted(json.dumps(list(r), default=str) for r in rows)
print(json.dumps(res))
"#;

/// The current state in PyArrow: the same rules as the DuckDB views.
const PYARROW_CURRENT: &str = r#"
import json, sys
import pyarrow as pa, pyarrow.dataset as pds, pyarrow.compute as pc
out = sys.argv[1]
ex = json.loads(sys.argv[2])
read = lambda t: pds.dataset(f"{out}/{t}", format="parquet").to_table()
conv = read("conversations")
last = conv.group_by("conversation_id").aggregate([("snapshot_at", "max")]) \
    .rename_columns(["conversation_id", "snapshot_at"])
latest = conv.join(last, ["conversation_id", "snapshot_at"], join_type="inner")
latest = latest.filter(pc.not_equal(latest["change_kind"], "removed")) \
    .select(["conversation_id", "snapshot_at"])
base = conv.filter(pc.is_in(conv["change_kind"], pa.array(["full", "new", "rewrite"])))
since = base.group_by("conversation_id").aggregate([("snapshot_at", "max")]) \
    .rename_columns(["conversation_id", "since"])
res = {}
def rows(tab, t):
    cols = [c for c in tab.column_names if c not in [x.strip() for x in ex[t].split(",")]]
    tab = tab.select(cols)
    out = []
    for r in tab.to_pylist():
        out.append(json.dumps([r[c] for c in cols], default=str))
    return sorted(out)
if len(sys.argv) > 3:
    print(json.dumps({t: rows(read(t), t) for t in ex}))
    sys.exit(0)
for t in ["conversations", "messages", "tool_calls", "llm_calls"]:
    res[t] = rows(read(t).join(latest, ["conversation_id", "snapshot_at"], join_type="inner"), t)
ev = read("events")
ev = ev.join(latest.select(["conversation_id"]), "conversation_id", join_type="inner")
ev = ev.join(since, "conversation_id", join_type="inner")
ev = ev.filter(pc.greater_equal(ev["snapshot_at"], ev["since"])).drop_columns(["since"])
newest = ev.group_by(["conversation_id", "event_file"]).aggregate([("snapshot_at", "max")]) \
    .rename_columns(["conversation_id", "event_file", "snapshot_at"])
res["events"] = rows(ev.join(newest, ["conversation_id", "event_file", "snapshot_at"], join_type="inner"), "events")
print(json.dumps(res))
"#;

/// The current state in Polars: the Polars block of `docs/parquet.md`
/// (argv[3], `OUT` replaced) run as written, then each of its `current`
/// frames' rows (argv[2]'s columns left out, in the table's column order);
/// with a fourth argument, every row of the dataset argv[1] instead.
const POLARS_CURRENT: &str = r#"
import json, sys
import polars as pl
out, ex, block = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
def rows(frame, t):
    drop = [x.strip() for x in ex[t].split(",")]
    cols = [c for c in pl.scan_parquet(f"{out}/{t}/**/*.parquet").collect_schema().names() if c not in drop]
    return sorted(json.dumps(list(r), default=str) for r in frame.select(cols).collect().rows())
if len(sys.argv) > 4:
    print(json.dumps({t: rows(pl.scan_parquet(f"{out}/{t}/**/*.parquet"), t) for t in ex}))
    sys.exit(0)
env = {}
exec(block, env)
print(json.dumps({t: rows(env["current"][t], t) for t in ex}))
"#;

/// Asserts two sorted lists of rows are equal, naming the first that
/// differs (rows are long: the verbatim JSON).
fn same_rows(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_array().unwrap(), want.as_array().unwrap());
    let first = g.iter().zip(w).position(|(a, b)| a != b);
    let cut = |v: Option<&Value>| v.map(|v| v.to_string().chars().take(300).collect::<String>());
    assert!(
        g.len() == w.len() && first.is_none(),
        "{what}: {} rows, want {}; first difference: {:?} vs {:?}",
        g.len(),
        w.len(),
        cut(first.and_then(|i| g.get(i))),
        cut(first.and_then(|i| w.get(i)))
    );
}

/// The conversation directories of a store, sorted.
fn conversations(store: &Path) -> Vec<PathBuf> {
    let mut convs: Vec<PathBuf> = fs::read_dir(store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    convs.sort();
    convs
}

/// The event files of a conversation, sorted.
fn event_files(conv: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = fs::read_dir(conv.join("events"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    names
}

#[test]
fn the_current_state_queries_equal_a_fresh_full_export() {
    if !duckdb() || !pyarrow() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    generated(&store);
    let convs = conversations(&store);
    // Held back for the second run: the last events of one conversation.
    let aside = t.path().join("aside");
    fs::create_dir_all(&aside).unwrap();
    let grows = &convs[0];
    let held: Vec<PathBuf> = event_files(grows).into_iter().rev().take(6).collect();
    for f in &held {
        fs::rename(f, aside.join(f.file_name().unwrap())).unwrap();
    }
    let inc = t.path().join("inc");
    let cp = t.path().join("cp.json");
    let cp_arg = cp.to_str().unwrap();
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    // New events; a conversation rewritten (its last events removed); one
    // removed whole.
    for f in &held {
        fs::rename(aside.join(f.file_name().unwrap()), f).unwrap();
    }
    let rewritten = &convs[1];
    for f in event_files(rewritten).into_iter().rev().take(3) {
        fs::remove_file(f).unwrap();
    }
    fs::remove_dir_all(&convs[2]).unwrap();
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    // A second export into the same directory with nothing new.
    export_ok(&[&store], &inc, &["--checkpoint", cp_arg]);
    let kinds: Vec<String> = query(&format!(
        "SELECT DISTINCT change_kind FROM {} ORDER BY 1",
        table(&inc, "conversations")
    ))
    .into_iter()
    .map(|r| r[0].as_str().unwrap().to_owned())
    .collect();
    for k in ["new", "removed", "rewrite", "updated"] {
        assert!(kinds.iter().any(|x| x == k), "{k} in {kinds:?}");
    }
    let full = t.path().join("full");
    export_ok(&[&store], &full, &[]);

    let ex: BTreeMap<&str, &str> = TABLES.iter().map(|tb| (*tb, exclude(tb))).collect();
    let ex = serde_json::to_string(&ex).unwrap();
    let want = python(DUCKDB_ALL, &[full.to_str().unwrap(), &ex]);
    let sql = current_state_sql(&inc);
    let duck = python(DUCKDB_CURRENT, &[&sql, &ex]);
    let arrow = python(PYARROW_CURRENT, &[inc.to_str().unwrap(), &ex]);
    let arrow_want = python(PYARROW_CURRENT, &[full.to_str().unwrap(), &ex, "all"]);
    for tb in TABLES {
        let w = want[tb].as_array().unwrap();
        assert!(!w.is_empty(), "{tb}");
        same_rows(&duck[tb], &want[tb], &format!("DuckDB: current {tb}"));
        same_rows(
            &arrow[tb],
            &arrow_want[tb],
            &format!("PyArrow: current {tb}"),
        );
    }
    // Polars: the docs' block as written.
    if polars() {
        let block = doc_blocks(
            "### The current state, per engine",
            "Polars:\n\n```python\n",
            &inc,
        )
        .remove(0);
        let cur = python(POLARS_CURRENT, &[inc.to_str().unwrap(), &ex, &block]);
        let all = python(POLARS_CURRENT, &[full.to_str().unwrap(), &ex, "", "all"]);
        for tb in TABLES {
            same_rows(&cur[tb], &all[tb], &format!("Polars: current {tb}"));
        }
    }
    // Without the rules, the dataset holds more than the current state.
    let all = python(DUCKDB_ALL, &[inc.to_str().unwrap(), &ex]);
    assert_ne!(all["events"], want["events"]);
}

/// The example queries of `docs/parquet.md` run unchanged in DuckDB: those
/// of its DuckDB section over the files, and the "any engine" ones over
/// views named as the tables (as Spark's and DataFusion's `CREATE TABLE`
/// lines name them); each gives rows.
#[test]
fn the_example_queries_of_the_docs_run_unchanged_in_duckdb() {
    if !duckdb() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    generated(&store);
    let out = t.path().join("ds");
    export_ok(&[&store], &out, &[]);
    let own = statements(&doc_blocks("## Example queries (DuckDB)", "```sql\n", &out));
    assert_eq!(own.len(), 4, "{own:?}");
    let views: String = TABLES
        .iter()
        .map(|tb| {
            format!(
                "CREATE VIEW {tb} AS SELECT * FROM read_parquet('{}/{tb}/**/*.parquet');",
                out.display()
            )
        })
        .collect();
    let any = statements(&doc_blocks(
        "## Example queries (any engine",
        "```sql\n",
        &out,
    ));
    assert_eq!(any.len(), 2, "{any:?}");
    let script = "import duckdb, json, sys\n\
        con = duckdb.connect()\n\
        con.execute(sys.argv[1])\n\
        print(json.dumps([len(con.execute(q).fetchall()) for q in json.loads(sys.argv[2])]))";
    let all: Vec<String> = own.iter().chain(&any).cloned().collect();
    let n = python(script, &[&views, &serde_json::to_string(&all).unwrap()]);
    for (q, rows) in all.iter().zip(n.as_array().unwrap()) {
        // The rejection query has rows only where a store holds rejections.
        if q.contains("UserRejectObservation") {
            continue;
        }
        assert!(u(rows) > 0, "no rows: {q}");
    }
}
