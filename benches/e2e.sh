#!/bin/sh
# End to end: `agentlog stats --json STORE` against `parse_floor STORE` (read
# every file the reader reads + simd-json tape, nothing else), whole
# processes, alternated, RUNS runs each (default 5); prints each run and the
# medians of CPU (user + sys) and wall time. Build first:
#   cargo build --release --features cli --bin agentlog --example parse_floor
# Usage: benches/e2e.sh STORE [RUNS]
set -eu
store=${1:?usage: benches/e2e.sh STORE [RUNS]}
runs=${2:-5}
dir=$(dirname "$0")/..
stats="$dir/target/release/agentlog"
floor="$dir/target/release/examples/parse_floor"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Warm the page cache once with each.
"$stats" stats --json "$store" >/dev/null 2>&1
"$floor" "$store" >/dev/null
i=0
while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -f "stats %e %U %S" -a -o "$out" "$stats" stats --json "$store" >/dev/null 2>&1
    /usr/bin/time -f "floor %e %U %S" -a -o "$out" "$floor" "$store" >/dev/null
    i=$((i + 1))
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
{ wall[$1, ++n[$1]] = $2; cpu[$1, n[$1]] = $3 + $4; printf "%-6s wall %6.2f s  cpu %6.2f s\n", $1, $2, $3 + $4 }
function median(arr, who, k,   i, j, t, v) {
    for (i = 1; i <= k; i++) v[i] = arr[who, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((k + 1) / 2)]
}
END {
    sw = median(wall, "stats", n["stats"]); sc = median(cpu, "stats", n["stats"])
    fw = median(wall, "floor", n["floor"]); fc = median(cpu, "floor", n["floor"])
    printf "median  stats: wall %.2f s, cpu %.2f s;  floor: wall %.2f s, cpu %.2f s\n", sw, sc, fw, fc
    printf "stats / floor: cpu %.2fx, wall %.2fx\n", sc / fc, sw / fw
}' "$out"
