"""Medians and ratios of a log of benches/before_after_e2e.sh.

Usage: python3 benches/before_after_medians.py LOG

Prints each name's medians (user, system, CPU = user + system, its range,
wall time, peak RSS), every median CPU over the median of all `stats` runs,
`stats` over `parse_floor`, each `asf convert` over the ASF floor run the
same way, and `export --parquet` over the DuckDB route.
"""

import collections
import statistics as st
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("#"):
        print(line.strip())
        continue
    p = line.split()
    runs[p[0]].append((float(p[1]), float(p[2]), float(p[3]), int(p[4])))
cpu = {}
for name, v in runs.items():
    c = [u + s for u, s, _, _ in v]
    cpu[name] = st.median(c)
    print(
        f"{name:16s} n={len(v)} user={st.median(x[0] for x in v):.2f} "
        f"sys={st.median(x[1] for x in v):.2f} cpu={cpu[name]:.2f} "
        f"[{min(c):.2f}-{max(c):.2f}] wall={st.median(x[2] for x in v):.2f} "
        f"rss={st.median(x[3] for x in v) / 1024:.1f}MB"
    )
stats = st.median(u + s for u, s, _, _ in runs["stats"] + runs["stats2"])
print(f"stats (both runs of each round) {stats:.2f}")
for name in sorted(cpu):
    print(f"{name} / stats {cpu[name] / stats:.2f}")
print(f"stats / parse_floor {stats / cpu['parse_floor']:.3f}")
if "stats_base" in cpu:
    print(f"stats_base / parse_floor {cpu['stats_base'] / cpu['parse_floor']:.3f}")
for suffix in ["", "_fresh"]:
    floor = cpu["asf_floor" + suffix]
    print(
        f"asf_new{suffix} / asf_floor{suffix} {cpu['asf_new' + suffix] / floor:.2f}, "
        f"asf_base{suffix} / asf_floor{suffix} {cpu['asf_base' + suffix] / floor:.2f}"
    )
if "jsonl" in cpu:
    route = cpu["jsonl"] + cpu["duckdb"]
    print(
        f"route {route:.2f}, pq_new / route {cpu['pq_new'] / route:.3f}, "
        f"pq_base / route {cpu['pq_base'] / route:.3f}"
    )
