#!/bin/sh
# Whole processes on a cold and a warm page cache: `agentlog stats --json
# STORE` with the default read-ahead, without it (`--io-depth 0`: the scan
# as before read-ahead), with more reader threads instead
# (`RAYON_NUM_THREADS=32 --io-depth 0`) and at other depths; RUNS rounds
# (default 5), variants alternated, each run cold (page cache dropped
# before it: root only) then warm (the same run again); medians of wall
# time, CPU time (user + sys) and peak RSS. Build first:
#   cargo build --release --features cli --bin agentlog
# Usage: benches/cold_e2e.sh STORE [RUNS]
set -eu
store=${1:?usage: benches/cold_e2e.sh STORE [RUNS]}
runs=${2:-5}
bin=$(dirname "$0")/../target/release/agentlog
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! (sync && echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null; then
    echo "cannot drop the page cache (needs root): cold runs skipped" >&2
    cold=no
else
    cold=yes
fi
# name threads depth
variants="default:-:64 plain:-:0 plain_32t:32:0 depth_8:-:8 depth_32:-:32"
run() { # name threads depth state
    if [ "$2" = - ]; then
        /usr/bin/time -f "$1 $4 %e %U %S %M" -a -o "$out" "$bin" stats --json --io-depth "$3" "$store" >/dev/null
    else
        RAYON_NUM_THREADS=$2 /usr/bin/time -f "$1 $4 %e %U %S %M" -a -o "$out" "$bin" stats --json --io-depth "$3" "$store" >/dev/null
    fi
}
i=0
while [ "$i" -lt "$runs" ]; do
    for v in $variants; do
        name=${v%%:*}; rest=${v#*:}; threads=${rest%%:*}; depth=${rest#*:}
        if [ "$cold" = yes ]; then
            sync; echo 3 > /proc/sys/vm/drop_caches
            run "$name" "$threads" "$depth" cold
        fi
        run "$name" "$threads" "$depth" warm
    done
    i=$((i + 1))
done
echo "store $store; load: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
{ k = $1 " " $2; n[k]++; wall[k, n[k]] = $3; cpu[k, n[k]] = $4 + $5; rss[k, n[k]] = $6; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
function median(arr, k, c,   i, j, t, v) {
    for (i = 1; i <= c; i++) v[i] = arr[k, i]
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((c + 1) / 2)]
}
END {
    for (i = 1; i <= m; i++) {
        k = order[i]
        printf "%-16s %-5s wall %7.2f s  cpu %6.2f s  peak RSS %7.1f MB\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), median(wall, k, n[k]), median(cpu, k, n[k]), median(rss, k, n[k]) / 1024
    }
}' "$out"
