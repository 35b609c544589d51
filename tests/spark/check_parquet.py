#!/usr/bin/env python3
"""The Parquet dataset as Apache Spark (local mode) reads it: run before a release.

Not run by CI or `cargo test` (Spark needs a JVM and the pyspark package,
which CI does not install); `tests/spark/check_parquet.sh` builds agentlog
and runs this. It checks, on a copy of the repository's SDK corpus
(tests/data/corpus/openhands) and its OC Chat sample:

- every table reads; no count or index is a decimal (what unsigned
  columns become in Spark) or anything but LongType; `snapshot_at` is
  TIMESTAMP (UTC), the other times TIMESTAMP_NTZ;
- no column needs backticks: `max(event_index)` is a number;
- the totals equal `agentlog stats --json` (events, prompt tokens, calls);
- the "any engine" example queries of docs/parquet.md run unchanged in
  Spark SQL, over views named as the tables;
- incremental: a full run, then new events, a rewritten and a removed
  conversation and a renamed directory, then a second run with nothing new:
  the Spark SQL current-state block of docs/parquet.md, run as written,
  gives exactly a fresh full export's rows in every table.

Usage: check_parquet.py AGENTLOG_BINARY   (exit status 0 when every check holds)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import types as T

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DOC = (REPO / "docs" / "parquet.md").read_text()
TABLES = ["conversations", "events", "messages", "tool_calls", "llm_calls"]
# The columns a later snapshot changes: left out of the comparison.
EXCLUDE = {
    "conversations": ["snapshot_at", "change_kind"],
    "events": ["snapshot_at", "in_context"],
}
COUNT_SUFFIXES = ("_index", "_count", "_tokens", "_depth", "_bytes", "_length", "_window")

failures = []
passed = []


def check(ok, what):
    if not ok or not what.startswith(("events.", "conversations.", "messages.", "tool_calls.", "llm_calls.")):
        print(("ok   " if ok else "FAIL ") + what)
    (passed if ok else failures).append(what)


def agentlog(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"agentlog {' '.join(args)}: status {p.returncode}: {p.stderr}")
    return p.stdout


def doc_blocks(heading, fence, out, after=None):
    """The code blocks opened by `fence` in the section of docs/parquet.md at
    `heading` (up to the next heading of its level; from the text `after`
    on when given), OUT naming `out`."""
    at = DOC.index(heading)
    level = heading.split(" ")[0]
    body = DOC[at + len(heading):]
    end = body.find(f"\n{level} ")
    body = body if end < 0 else body[:end]
    if after is not None:
        body = body[body.index(after):]
    blocks = []
    for m in re.finditer(re.escape(fence) + r"(.*?)```", body, re.S):
        blocks.append(m.group(1).replace("'OUT/", f"'{out}/").replace('"OUT/', f'"{out}/'))
    assert blocks, f"{fence!r} under {heading}"
    return blocks


def statements(blocks):
    """SQL statements, comment lines left out (a comment may hold a `;`)."""
    out = []
    for b in blocks:
        code = "\n".join(l for l in b.splitlines() if not l.lstrip().startswith("--"))
        out += [q.strip() for q in code.split(";") if q.strip()]
    return out


def rows(df, cols):
    return df.select(*cols)


def same(spark_df, want_df, cols, what):
    a, b = rows(spark_df, cols), rows(want_df, cols)
    extra, missing = a.exceptAll(b).count(), b.exceptAll(a).count()
    check(extra == 0 and missing == 0,
          f"{what}: {a.count()} rows, full export {b.count()} ({extra} extra, {missing} missing)")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    spark = (SparkSession.builder.master("local[2]").appName("agentlog-parquet-check")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print("Spark", spark.version)
    work = Path(tempfile.mkdtemp(prefix="agentlog-spark-"))
    try:
        corpus = REPO / "tests" / "data" / "corpus"
        oh, oc = corpus / "openhands", corpus / "occhat" / "sample_basic" / "sessions"

        # A full dataset: every table, types, names, totals, example queries.
        full = work / "full"
        agentlog(binary, "export", str(oh), str(oc), "--parquet", str(full))
        st = json.loads(agentlog(binary, "stats", "--json", str(oh), str(oc)))
        dfs = {t: spark.read.parquet(str(full / t)) for t in TABLES}
        for t, df in dfs.items():
            n = df.count()
            check(n > 0, f"{t} reads: {n} rows")
            for f in df.schema.fields:
                ty = f.dataType
                check(not isinstance(ty, T.DecimalType), f"{t}.{f.name} is no decimal ({ty.simpleString()})")
                if f.name.endswith(COUNT_SUFFIXES) or f.name == "exit_code":
                    check(isinstance(ty, T.LongType), f"{t}.{f.name} is bigint ({ty.simpleString()})")
                if f.name == "snapshot_at":
                    check(type(ty) is T.TimestampType, f"{t}.snapshot_at is timestamp (UTC)")
                elif f.name.endswith("_at") or f.name == "event_time":
                    check(isinstance(ty, T.TimestampNTZType), f"{t}.{f.name} is timestamp_ntz")
            df.createOrReplaceTempView(t)
        m = spark.sql("SELECT max(event_index) AS m FROM events").collect()[0]["m"]
        check(isinstance(m, int), f"max(event_index) is a number without backticks: {m!r}")
        ev = spark.sql("SELECT count(*) AS n FROM events WHERE file_status = 'event'").collect()[0]["n"]
        check(ev == st["events"], f"events {ev} = stats {st['events']}")
        usage = st["usage"].values()
        r = spark.sql("SELECT sum(prompt_tokens) AS p, count_if(record_kind = 'call') AS c FROM llm_calls").collect()[0]
        check(r["p"] == sum(u["prompt_tokens"] for u in usage), f"prompt tokens {r['p']} = stats")
        check(r["c"] == sum(u["calls"] for u in usage), f"calls {r['c']} = stats")
        for q in statements(doc_blocks("## Example queries (any engine", "```sql\n", full)):
            n = len(spark.sql(q).collect())
            check(n > 0, f"docs query gives {n} rows: {q.splitlines()[0]}…")

        # Incremental: the current state of the docs' Spark SQL block.
        store = work / "store"
        shutil.copytree(oh, store)
        convs = sorted(p.parent for p in store.rglob("base_state.json") if "subagents" not in p.parts)
        grows, rewritten, removed, renamed = convs[0], convs[1], convs[2], convs[3]
        aside = work / "aside"
        aside.mkdir()
        held = sorted((grows / "events").iterdir())[-3:]
        for f in held:
            f.rename(aside / f.name)
        inc, cp = work / "inc", work / "cp"
        agentlog(binary, "export", str(store), "--parquet", str(inc), "--checkpoint", str(cp))
        for f in held:
            (aside / f.name).rename(f)
        for f in sorted((rewritten / "events").iterdir())[-2:]:
            f.unlink()
        shutil.rmtree(removed)
        renamed.rename(renamed.with_name(renamed.name + "-renamed"))
        agentlog(binary, "export", str(store), "--parquet", str(inc), "--checkpoint", str(cp))
        agentlog(binary, "export", str(store), "--parquet", str(inc), "--checkpoint", str(cp))
        fresh = work / "fresh"
        agentlog(binary, "export", str(store), "--parquet", str(fresh))
        kinds = {r["change_kind"] for r in spark.read.parquet(str(inc / "conversations"))
                 .select("change_kind").distinct().collect()}
        check({"new", "updated", "rewrite", "removed"} <= kinds, f"change kinds {sorted(kinds)}")
        for t in TABLES:
            spark.catalog.dropTempView(t)
        block = doc_blocks("### The current state, per engine", "```sql\n", inc, after="Spark SQL (no")[0]
        for q in statements([block]):
            spark.sql(q)
        for t in TABLES:
            want = spark.read.parquet(str(fresh / t))
            cols = [c for c in want.columns if c not in EXCLUDE.get(t, ["snapshot_at"])]
            same(spark.table(f"current_{t}"), want, cols, f"current_{t}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(passed)} passed, {len(failures)} failed")
        sys.exit(1)
    print(f"{len(passed)} passed, 0 failed")


if __name__ == "__main__":
    main()
