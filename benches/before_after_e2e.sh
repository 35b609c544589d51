#!/bin/bash
# Two builds of `agentlog` side by side, as whole processes, round robin
# (issue 31's write paths against their floors): each round runs `stats
# --json`, `parse_floor`, `asf convert` of BASE and NEW and the ASF floor
# program twice — first each into a new directory on a quiet file system,
# then each into a directory whose previous output was just removed, the
# three in an order that rotates from round to round — then `export
# --parquet` of BASE and NEW, the
# DuckDB route (`export --jsonl` then DuckDB's `COPY … TO 'x.parquet'`
# through Python's `duckdb` package) and `stats --json` again. With a sixth
# argument `nopq`, the Parquet runs and the route are left out (the 1 GB
# store). Each line of LOG: NAME user sys wall maxrss-KB (GNU time), exit
# status, the 1-minute load average; the ASF floor's lines carry the CPU of
# its measured part (`examples/asf_floor` prints it: the CPU of the thread
# that parses, hashes and writes; a second thread loads the converted
# bytes). Medians and ratios:
# benches/before_after_medians.py LOG. Outputs go to a scratch directory
# under $TMPDIR; STORE is only read. Later runs in a round find more dirty
# pages waiting to be written back than earlier ones: compare user times
# pairwise, and system times with that in mind.
#
# "Warm": before each run that only reads STORE (`stats`, `parse_floor`,
# the exports), STORE is read once (`tar`), so that it runs on a warm page
# cache. Some machines evict page cache that went unused for a minute or
# so (the VM this was measured on runs DAMON's proactive reclaim, a
# `pageout` scheme for unmapped file pages idle 60 s): without this, each
# run met a different share of the store evicted since it was last read.
# BASE's `stats` is timed beside NEW's (`stats_base`), the two in turn
# first from round to round.
#
# "A quiet file system": before each run into a new directory, everything
# is written back (`sync`) and, when this script may (as root), the kernel's
# caches are dropped and STORE and the programs read again, so that the run
# meets neither write-back nor the inodes of files removed minutes before.
# ext4 looks at each recently freed inode it could reuse while those
# inodes' table blocks are cached: creating a conversion's thousands of
# files right after another conversion's were removed cost 1.5-2 s more
# system time on the corpus copy (the `asf_floor` program's writing alone:
# 0.4-0.5 s after the caches were dropped, 1.7-2.3 s without, even 65 s
# after the removal). The runs "after a removal" keep that cost: it is
# what a user re-running a conversion into the same directory meets.
#
# Usage: benches/before_after_e2e.sh BASE NEW STORE ROUNDS LOG [nopq]
#   cargo build --release --features cli,parquet --bin agentlog \
#       --example parse_floor --example asf_floor
#   benches/before_after_e2e.sh /tmp/base-agentlog target/release/agentlog \
#       /tmp/cstore 6 /tmp/rounds.log
set -u
BASE=$1; NEW=$2; STORE=$3; R=$4; LOG=$5; NOPQ=${6:-}
EX="$(cd "$(dirname "$0")/.." && pwd)/target/release/examples"
FLOOR=$EX/parse_floor
AFLOOR=$EX/asf_floor
W=$(mktemp -d "${TMPDIR:-/tmp}/before_after.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$NEW" asf convert "$STORE" -o "$W/conv" >/dev/null 2>&1
: > "$LOG"
T() { local name=$1; shift; local la; la=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%U %S %e %M" -o "$W/t" sh -c "$1" >/dev/null 2>"$W/err"; local rc=$?
  echo "$name $(tail -1 "$W/t") rc=$rc load=$la" | tee -a "$LOG"; }
warm() { tar cf - "$STORE" 2>/dev/null | cat > /dev/null; }
quiet() { sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches; fi
  tar cf - "$STORE" 2>/dev/null | cat > /dev/null
  cat "$BASE" "$NEW" "$AFLOOR" > /dev/null; }
AF() { local name=$1 out=$2; local la; la=$(cut -d' ' -f1 /proc/loadavg)
  "$AFLOOR" "$STORE" "$W/conv" "$out" | awk -v la="$la" -v n="$name" \
    '/floor CPU/ {print n, $4, $7, 0, 0, "rc=0", "load=" la}' | sed 's/,//g' | tee -a "$LOG"; }
for r in $(seq 1 "$R"); do
  echo "# round $r $(date +%T)" >> "$LOG"
  # NEW's and BASE's `stats` in turn first.
  if [ $((r % 2)) = 1 ]; then
    warm; T stats "$NEW stats --json $STORE"
    warm; T stats_base "$BASE stats --json $STORE"
  else
    warm; T stats_base "$BASE stats --json $STORE"
    warm; T stats "$NEW stats --json $STORE"
  fi
  warm; T parse_floor "$FLOOR $STORE"
  # The three ASF runs in a rotating order (base, new, floor; then new,
  # floor, base; ...): into new directories each on a quiet file system,
  # then after a removal each meeting the write-back of the runs before it.
  order=(base new floor base new)
  for k in 0 1 2; do
    quiet
    case ${order[$(( (r - 1) % 3 + k ))]} in
      base) T asf_base_fresh "$BASE asf convert $STORE -o $W/fb$r" ;;
      new) T asf_new_fresh "$NEW asf convert $STORE -o $W/fn$r" ;;
      floor) AF asf_floor_fresh "$W/ff$r" ;;
    esac
  done
  rm -rf "$W/fb$r" "$W/fn$r" "$W/ff$r"
  for k in 0 1 2; do
    rm -rf "$W/a"
    case ${order[$(( (r - 1) % 3 + k ))]} in
      base) T asf_base "$BASE asf convert $STORE -o $W/a" ;;
      new) T asf_new "$NEW asf convert $STORE -o $W/a" ;;
      floor) AF asf_floor "$W/a" ;;
    esac
  done
  rm -rf "$W/a"
  if [ -z "$NOPQ" ]; then
    rm -rf "$W/p"; warm; T pq_base "$BASE export --parquet $W/p $STORE"
    rm -rf "$W/p"; warm; T pq_new "$NEW export --parquet $W/p $STORE"
    warm; T jsonl "$NEW export --jsonl $STORE > $W/x.jsonl"
    rm -f "$W/x.parquet"
    T duckdb "python3 -c \"import duckdb; duckdb.sql(\\\"COPY (SELECT * FROM read_json_auto('$W/x.jsonl')) TO '$W/x.parquet'\\\")\""
  fi
  warm; T stats2 "$NEW stats --json $STORE"
done
if [ -z "$NOPQ" ]; then
  echo "# sizes: pq $(du -sb "$W/p" | cut -f1) duckdb $(stat -c %s "$W/x.parquet")" | tee -a "$LOG"
fi
