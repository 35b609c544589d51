#!/bin/sh
# End to end: `agentlog export STORE --parquet OUT` against `agentlog stats
# --json STORE` on the same store, whole processes, alternated, RUNS runs
# each (default 3); prints each run, the medians of CPU (user + sys), the
# export's peak RSS, and the dataset's size against the store's (with and
# without the verbatim JSON column). Build first:
#   cargo build --release --features cli,parquet --bin agentlog
# Usage: benches/parquet_e2e.sh STORE [RUNS]
set -eu
store=${1:?usage: benches/parquet_e2e.sh STORE [RUNS]}
runs=${2:-3}
dir=$(dirname "$0")/..
bin="$dir/target/release/agentlog"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/times"
# Warm the page cache.
"$bin" stats --json "$store" >/dev/null 2>&1
i=0
while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -f "stats %e %U %S %M" -a -o "$out" "$bin" stats --json "$store" >/dev/null 2>&1
    rm -rf "$tmp/ds"
    /usr/bin/time -f "export %e %U %S %M" -a -o "$out" "$bin" export "$store" --parquet "$tmp/ds" 2>/dev/null
    i=$((i + 1))
done
"$bin" export "$store" --parquet "$tmp/slim" --no-json 2>/dev/null
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
{ cpu[$1, ++n[$1]] = $3 + $4; rss[$1] = ($5 > rss[$1]) ? $5 : rss[$1]; printf "%-7s wall %6.2f s  cpu %6.2f s  max RSS %7.1f MB\n", $1, $2, $3 + $4, $5 / 1024 }
function median(arr, who, k,   i, j, t, v) {
    for (i = 1; i <= k; i++) v[i] = arr[who, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((k + 1) / 2)]
}
END {
    s = median(cpu, "stats", n["stats"]); e = median(cpu, "export", n["export"])
    printf "median cpu  stats %.2f s, export %.2f s: export / stats %.2fx; export peak RSS %.1f MB\n", s, e, e / s, rss["export"] / 1024
}' "$out"
in=$(du -sk "$store" | cut -f1)
full=$(du -sk "$tmp/ds" | cut -f1)
slim=$(du -sk "$tmp/slim" | cut -f1)
echo "size: store $in KB, dataset $full KB ($(awk "BEGIN{printf \"%.3f\", $full/$in}") of the store), without json $slim KB ($(awk "BEGIN{printf \"%.3f\", $slim/$in}"))"
