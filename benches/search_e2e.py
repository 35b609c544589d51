#!/usr/bin/env python3
"""Whole-process figures of `agentlog index` and `agentlog search` on a store,
beside `agentlog stats` and the unchanged checkpointed rescan, as a user runs
them (warm page cache):

- `stats --json` CPU (the reference);
- `index STORE --index DIR` into a new DIR: CPU, wall, peak RSS;
- `index` again with nothing changed: CPU, against `export --jsonl
  --checkpoint CP` with nothing changed (the unchanged rescan);
- queries: QUERIES searches (`search DIR Q --json --limit 10`), each a whole
  process, words drawn (seeded) from the store's own event files, a quarter
  of them with `--kind`, a quarter as two-word phrases, a tenth with a
  prefix `*`; wall time per query, p50, p99 and max.

CPU is user + system of the child (os.wait4); rounds alternate the commands.

Usage: benches/search_e2e.py STORE [--agentlog BIN] [--runs N] [--queries Q]
  e.g. benches/search_e2e.py /tmp/cstore --agentlog target/release/agentlog
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time


def run(argv, out=subprocess.DEVNULL):
    """Runs argv; (cpu seconds, wall seconds, peak RSS MB, status)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024, code


def texts(v):
    """The strings of a parsed event that the index holds as text (message
    texts, tool arguments and outputs, thoughts)."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("text", "content", "command", "thought", "path", "message") and isinstance(x, str):
                yield x
            else:
                yield from texts(x)
    elif isinstance(v, list):
        for x in v:
            yield from texts(x)


def words(store, n, seed):
    """n distinct query words from the texts of event files of the store
    (seeded)."""
    rnd = random.Random(seed)
    files = []
    for dirpath, _dirs, names in os.walk(store):
        if os.path.basename(dirpath) == "events":
            files.extend(os.path.join(dirpath, f) for f in names if f.startswith("event-"))
    rnd.shuffle(files)
    found = []
    seen = set()
    for f in files[:400]:
        try:
            with open(f, "rb") as fh:
                event = json.loads(fh.read())
        except ValueError:
            continue
        for text in texts(event):
            for w in re.findall(r"[A-Za-z]{5,12}", text):
                lw = w.lower()
                if lw not in seen:
                    seen.add(lw)
                    found.append(lw)
    rnd.shuffle(found)
    return found[: n * 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--agentlog", default="target/release/agentlog")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    bin_ = a.agentlog
    work = tempfile.mkdtemp(prefix="agentlog-search-e2e.")
    try:
        rows = {k: [] for k in ("stats", "index_new", "index_unchanged", "rescan_unchanged")}
        rss = []
        idx = os.path.join(work, "idx")
        cp = os.path.join(work, "cp")
        for r in range(a.runs):
            rows["stats"].append(run([bin_, "stats", "--json", a.store]))
            shutil.rmtree(idx, ignore_errors=True)
            res = run([bin_, "index", a.store, "--index", idx])
            assert res[3] == 0, f"index exited {res[3]}"
            rows["index_new"].append(res)
            rss.append(res[2])
            res = run([bin_, "index", a.store, "--index", idx])
            assert res[3] == 0, f"index exited {res[3]}"
            rows["index_unchanged"].append(res)
            if r == 0:
                run([bin_, "export", "--jsonl", "--checkpoint", cp, a.store])
            rows["rescan_unchanged"].append(run([bin_, "export", "--jsonl", "--checkpoint", cp, a.store]))
        med = {k: statistics.median(x[0] for x in v) for k, v in rows.items()}
        wall = {k: statistics.median(x[1] for x in v) for k, v in rows.items()}
        print(f"store {a.store}, {a.runs} rounds, medians (load average {os.getloadavg()[0]:.1f})")
        for k in rows:
            print(f"  {k:18} CPU {med[k]:7.3f} s  wall {wall[k]:7.3f} s")
        print(f"  index_new peak RSS: median {statistics.median(rss):.0f} MB, max {max(rss):.0f} MB")
        print(f"  index_new / stats CPU:                 {med['index_new'] / med['stats']:.2f} x (target <= 4)")
        print(
            f"  index_unchanged / rescan_unchanged CPU: {med['index_unchanged'] / med['rescan_unchanged']:.2f} x"
            " (target <= 1.2)"
        )

        rnd = random.Random(7)
        ws = words(a.store, a.queries, 11)
        kinds = ["message", "action", "observation", "error", "summary"]
        lat = []
        lat_hits = []
        hits = 0
        found = 0
        for i in range(a.queries):
            w = ws[i % len(ws)]
            q = [bin_, "search", idx, w, "--json", "--limit", "10"]
            roll = rnd.random()
            if roll < 0.25:
                q += ["--kind", rnd.choice(kinds)]
            elif roll < 0.5:
                q[3] = f'"{w} {ws[(i + 1) % len(ws)]}"'
            elif roll < 0.6:
                q[3] = w[:4] + "*"
            with tempfile.TemporaryFile() as out:
                res = run(q, out)
                out.seek(0)
                n = sum(1 for _ in out)
                hits += n
                found += n > 0
            assert res[3] in (0, 1), f"search exited {res[3]}: {q}"
            lat.append(res[1] * 1000)
            if n:
                lat_hits.append(res[1] * 1000)
        lat.sort()
        lat_hits.sort()
        p = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]  # noqa: E731
        print(
            f"  search, {len(lat)} queries as whole processes: p50 {p(0.5):.1f} ms, "
            f"p99 {p(0.99):.1f} ms, max {lat[-1]:.1f} ms ({found} queries with hits, {hits} hits in all; target p99 < 50 ms)"
        )
        if lat_hits:
            q = lambda f: lat_hits[min(len(lat_hits) - 1, int(f * len(lat_hits)))]  # noqa: E731
            print(
                f"  the {len(lat_hits)} queries with hits alone: p50 {q(0.5):.1f} ms, "
                f"p99 {q(0.99):.1f} ms, max {lat_hits[-1]:.1f} ms"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
