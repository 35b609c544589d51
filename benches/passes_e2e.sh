#!/bin/bash
# Whole processes as a user runs them, on one store, alternated round robin
# (issue 31's passes, each beside `agentlog stats --json` in the same sitting):
# `find STORE -type d`, an unchanged `export --checkpoint` rescan, `asf
# convert`, `export --parquet`, the DuckDB route (`export --jsonl` then
# DuckDB's `COPY … TO 'x.parquet'` through Python's `duckdb` package), and
# `index` (a fresh index, and an unchanged second run). Each line of LOG:
# NAME user sys wall maxrss-KB (GNU time), exit status, the 1-minute load
# average; then the outputs' sizes, and the medians and ratios
# (benches/passes_medians.py LOG). Outputs go to a scratch directory under
# $TMPDIR (removed between runs, outside the timing); STORE is only read.
#
# `parse_floor` (examples/parse_floor.rs: every file the reader reads, read
# and parsed into simd-json's tape, nothing else) runs too when it is built
# beside BIN (BIN's directory's examples/parse_floor).
#
# Usage: benches/passes_e2e.sh BIN STORE ROUNDS LOG
#   cargo build --release --features cli,parquet --bin agentlog
#   cargo build --release --example parse_floor
#   benches/passes_e2e.sh target/release/agentlog /tmp/cstore 5 /tmp/passes.log
set -u
BIN=$1; STORE=$2; ROUNDS=$3; LOG=$4
W=$(mktemp -d "${TMPDIR:-/tmp}/passes_e2e.XXXXXX")
FLOOR=$(dirname "$BIN")/examples/parse_floor
T() { # NAME, then the command (an `sh -c` string)
  local name=$1; shift
  local la; la=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%U %S %e %M" -o $W/t sh -c "$1" >/dev/null 2>$W/err
  local rc=$?
  echo "$name $(tail -1 $W/t) rc=$rc load=$la" | tee -a "$LOG"
}
# set-up: the checkpoint exists (first run), the index's previous state kept aside
rm -rf $W/cp $W/x $W/idx2
$BIN export --jsonl --checkpoint $W/cp $STORE -o /dev/stdout > $W/x
$BIN index $STORE --index $W/idx2 >/dev/null
for r in $(seq 1 $ROUNDS); do
  echo "# round $r $(date +%T) loadavg $(cat /proc/loadavg)" | tee -a $LOG
  T stats "$BIN stats --json $STORE"
  if [ -x "$FLOOR" ]; then T parse_floor "$FLOOR $STORE"; fi
  T find "find $STORE -type d | wc -l"
  T export_cp_unchanged "$BIN export --jsonl --checkpoint $W/cp $STORE -o /dev/stdout > $W/x"
  rm -rf $W/asf
  T asf_convert "$BIN asf convert $STORE -o $W/asf"
  rm -rf $W/pq
  T export_parquet "$BIN export --parquet $W/pq $STORE"
  T export_jsonl "$BIN export --jsonl $STORE > $W/x.jsonl"
  rm -f $W/x.parquet
  T duckdb_copy "python3 -c \"import duckdb; duckdb.sql(\\\"COPY (SELECT * FROM read_json_auto('$W/x.jsonl')) TO '$W/x.parquet'\\\")\""
  T py_import_duckdb "python3 -c 'import duckdb'"
  rm -rf $W/idx
  T index_first "$BIN index $STORE --index $W/idx"
  T index_unchanged "$BIN index $STORE --index $W/idx2"
done
echo "# sizes (bytes): store $(du -sb $STORE | cut -f1), parquet dataset $(du -sb $W/pq | cut -f1), x.jsonl $(stat -c %s $W/x.jsonl), duckdb x.parquet $(stat -c %s $W/x.parquet), asf out $(du -sb $W/asf | cut -f1), checkpoint $(stat -c %s $W/cp)" | tee -a $LOG
echo "# files in parquet dataset: $(find $W/pq -type f | wc -l)" | tee -a $LOG
python3 "$(dirname "$0")/passes_medians.py" "$LOG"
rm -rf "$W"
