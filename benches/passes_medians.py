"""Medians of a benches/passes_e2e.sh log: CPU (user + sys) and wall time of
each command, its range, and the ratios issue 31 asks about (CPU against
`stats`, `stats` against the parse floor when it ran, the unchanged rescan's wall against `find`'s, `export --parquet`
against the DuckDB route). Usage: python3 benches/passes_medians.py LOG"""
import collections,statistics,sys
d=collections.defaultdict(list); loads=collections.defaultdict(list)
for l in open(sys.argv[1]):
    if l.startswith('#'): continue
    p=l.split()
    n=p[0]; u,s,e,m=float(p[1]),float(p[2]),float(p[3]),int(p[4])
    d[n].append((u+s,u,s,e,m)); loads[n].append(float(p[6].split('=')[1]))
def r(a, b):
    return a / b if b else float("nan")

med={}
for n,v in d.items():
    cpu=statistics.median(x[0] for x in v); wall=statistics.median(x[3] for x in v)
    med[n]=(cpu,wall)
    print(f"{n:22} n={len(v)} cpu med {cpu:.2f} [{min(x[0] for x in v):.2f}-{max(x[0] for x in v):.2f}] user {statistics.median(x[1] for x in v):.2f} sys {statistics.median(x[2] for x in v):.2f} wall med {wall:.2f} [{min(x[3] for x in v):.2f}-{max(x[3] for x in v):.2f}] rss {statistics.median(x[4] for x in v)/1024:.1f}MB load {min(loads[n])}-{max(loads[n])}")
s=med['stats'][0]
for n in med: print(f"{n:22} cpu/stats {r(med[n][0], s):.2f}")
if 'parse_floor' in med:
    print("stats cpu / parse_floor cpu", r(s, med['parse_floor'][0]))
print("export_cp_unchanged wall / find wall", r(med['export_cp_unchanged'][1], med['find'][1]))
print("export_cp_unchanged cpu / stats", r(med['export_cp_unchanged'][0], s))
print("index_unchanged cpu / export_cp_unchanged cpu", r(med['index_unchanged'][0], med['export_cp_unchanged'][0]))
print("index_unchanged wall / export_cp wall", r(med['index_unchanged'][1], med['export_cp_unchanged'][1]))
route=med['export_jsonl'][0]+med['duckdb_copy'][0]
print("route cpu", route, "parquet/route", r(med["export_parquet"][0], route))
