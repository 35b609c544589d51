#!/usr/bin/env python3
"""Events per second from Python: every event's kind over a store, read with
the package `agentlog`, against the command (`agentlog stats --json`, a
whole process) and, when a Python with `openhands-sdk` is given, against the
SDK's own loader (each conversation's `EventLog` iterated, every event
validated into its pydantic class) on the same store. A script, not a test:
the numbers go in benches/README.md.

Usage:
  benches/python_kinds.py STORE [--agentlog BIN] [--runs N] [--sdk-python PY]

  STORE        e.g. the corpus-copy store: benches/corpus_store.py tests/data/corpus/openhands /tmp/cstore 82
  --agentlog   the command (default: target/release/agentlog)
  --runs       runs of each variant, the median reported (default 5)
  --sdk-python the python of a separate venv with `pip install openhands-sdk openhands-tools`
               (Python 3.12+)

Run it with the Python the package is installed in (`pip install ./python`
builds a release extension; `maturin develop` a debug one: say which).
Every variant must count the same events, or the script stops.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import agentlog

# Run in the SDK's venv: every conversation directory's events through the
# SDK's EventLog (what `Conversation(...)` resuming a stored one reads), one
# conversation at a time. Prints {"events", "failed", "seconds"}.
SDK_SNIPPET = textwrap.dedent(
    """
    import json, sys, time
    try:
        import openhands.tools  # noqa: F401  (registers the tools' action/observation classes)
    except ImportError:
        pass
    from openhands.sdk.io import LocalFileStore
    from openhands.sdk.conversation.event_store import EventLog
    dirs = json.loads(sys.stdin.read())
    n = failed = 0
    t = time.perf_counter()
    for d in dirs:
        try:
            log = EventLog(LocalFileStore(d), dir_path="events")
            for e in log:
                type(e).__name__
                n += 1
        except Exception:
            failed += 1
    print(json.dumps({"events": n, "failed": failed, "seconds": time.perf_counter() - t, "cpu": time.process_time()}))
    """
)


def every_conversation(store):
    return store.conversations(subagents=True)


def by_attribute(root):
    """Each event object made, its `kind` read."""
    n = 0
    for conv in every_conversation(agentlog.open(root)):
        for e in conv.events:
            e.kind
            n += 1
    return n


def by_list(root):
    """`conv.events.kinds()`: one call per conversation, no event objects."""
    n = 0
    for conv in every_conversation(agentlog.open(root)):
        n += len(conv.events.kinds())
    return n


def parallel(root):
    """`store.read_all()` (top-level conversations read on every core), then
    each event's `kind`; sub-agents read one at a time."""
    n = 0
    stack = list(agentlog.open(root).read_all())
    while stack:
        conv = stack.pop()
        for e in conv.events:
            e.kind
            n += 1
        stack.extend(conv.subagents)
    return n


def timed(f, runs):
    times, counts = [], set()
    for _ in range(runs):
        t = time.perf_counter()
        counts.add(f())
        times.append(time.perf_counter() - t)
    if len(counts) != 1:
        sys.exit(f"{f}: the runs counted different numbers of events: {counts}")
    return counts.pop(), statistics.median(times), min(times), max(times)


def cli_stats(binary, root, runs):
    def run():
        out = subprocess.run(
            [binary, "stats", "--json", str(root)], capture_output=True, check=True
        ).stdout
        return json.loads(out)["events"]

    return timed(run, runs)


def sdk(python, root, runs):
    dirs = [str(c.path) for c in every_conversation(agentlog.open(root))]
    results = []
    for _ in range(runs):
        r = subprocess.run(
            [python, "-c", SDK_SNIPPET],
            input=json.dumps(dirs),
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(r.stdout))
    secs = [r["seconds"] for r in results]
    return results[0]["events"], results[0]["failed"], statistics.median(secs), min(secs), max(secs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path)
    ap.add_argument("--agentlog", default="target/release/agentlog")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sdk-python")
    a = ap.parse_args()

    rows = []
    for name, f in (
        ("python: event.kind per event", by_attribute),
        ("python: conv.events.kinds()", by_list),
        ("python: store.read_all() + event.kind", parallel),
    ):
        by_attribute(a.store)  # warm the page cache
        rows.append((name,) + timed(lambda f=f: f(a.store), a.runs))
    rows.append(("agentlog stats --json (process)",) + cli_stats(a.agentlog, a.store, a.runs))
    counts = {r[1] for r in rows}
    if len(counts) != 1:
        sys.exit(f"the variants counted different numbers of events: {rows}")
    sdk_row = None
    if a.sdk_python:
        events, failed, med, lo, hi = sdk(a.sdk_python, a.store, a.runs)
        sdk_row = (f"openhands-sdk EventLog ({failed} conversations failed)", events, med, lo, hi)

    cli_med = rows[-1][2]
    print(f"store {a.store}: {rows[0][1]} events, median of {a.runs} runs")
    print(f"{'variant':48} {'events':>8} {'median s':>9} {'min':>7} {'max':>7} {'events/s':>10} {'vs CLI':>7}")
    for name, n, med, lo, hi in rows + ([sdk_row] if sdk_row else []):
        print(f"{name:48} {n:8d} {med:9.3f} {lo:7.3f} {hi:7.3f} {n / med:10.0f} {med / cli_med:7.2f}")
    if sdk_row:
        best_py = min(r[2] / r[1] for r in rows[:3])
        print(f"SDK per event / agentlog (python) per event: {(sdk_row[2] / sdk_row[1]) / best_py:.1f} x")


if __name__ == "__main__":
    main()
