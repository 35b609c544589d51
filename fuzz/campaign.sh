#!/usr/bin/env bash
# A long fuzz campaign: every target (or the ones named) gets CPU_SECONDS of
# CPU time (user + sys, fork-mode children included), JOBS targets at a time,
# at the lowest scheduling priority so other work on the machine comes first.
# The budget is CPU time, not wall time: a target that shares its core runs
# in further rounds until it has had its budget. Each target keeps a corpus
# under corpus/<target>/ (seeded from seeds/ and, for the byte targets, from
# the OpenHands corpus and JSONTestSuite in tests/data), crashes land in
# artifacts/<target>/, and a log per target in campaign/<target>.log with a
# summary line per round.
#
#   ./campaign.sh                      # every target, 1800 s each, 2 at a time
#   CPU_SECONDS=600 JOBS=1 ./campaign.sh json event
set -euo pipefail
cd "$(dirname "$0")"
CPU_SECONDS="${CPU_SECONDS:-1800}"
JOBS="${JOBS:-2}"
DATA="${DATA:-../tests/data}"

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build >/dev/null
mkdir -p campaign

seed_corpus() {
  local t="$1" dir="corpus/$1"
  mkdir -p "$dir"
  if [ -d "seeds/$t" ]; then cp -r "seeds/$t/." "$dir/"; fi
  case "$t" in
    event)
      find "$DATA/corpus/openhands" -path '*/events/event-*.json' -exec cp {} "$dir/" \; 2>/dev/null || true
      cp "$DATA"/JSONTestSuite/test_parsing/*.json "$dir/" 2>/dev/null || true ;;
    json)
      cp "$DATA"/JSONTestSuite/test_parsing/*.json "$dir/" 2>/dev/null || true
      find "$DATA/corpus/openhands" -name base_state.json -size -64k 2>/dev/null | head -n 50 |
        while read -r f; do cp "$f" "$dir/$(printf '%s' "$f" | md5sum | cut -c1-16)"; done ;;
    state)
      find "$DATA/corpus/openhands" \( -name base_state.json -o -name meta.json \) 2>/dev/null |
        while read -r f; do cp "$f" "$dir/$(printf '%s' "$f" | md5sum | cut -c1-16)"; done ;;
  esac
}

run_target() {
  local t="$1" used=0 round=0 log="campaign/$1.log"
  seed_corpus "$t"
  local dict=()
  if [ -f "dict/$t.dict" ]; then dict=(-dict="dict/$t.dict"); fi
  : >"$log"
  while [ "$used" -lt "$CPU_SECONDS" ]; do
    round=$((round + 1))
    local left=$((CPU_SECONDS - used)) t0 t1
    t0="$(date +%s)"
    /usr/bin/time -f '%U %S' -o "campaign/$t.time" nice -n 19 \
      cargo +nightly fuzz run "$t" "corpus/$t" -- "${dict[@]}" \
      -max_total_time="$left" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
      -ignore_ooms=1 -timeout=20 -rss_limit_mb=3072 -max_len=65536 \
      >>"$log" 2>&1 || true
    t1="$(date +%s)"
    local cpu
    cpu="$(awk '{printf "%d", $1 + $2}' "campaign/$t.time")"
    used=$((used + cpu))
    echo "== round $round: wall $((t1 - t0)) s, cpu $cpu s, total cpu $used s of $CPU_SECONDS" >>"$log"
    # A round that burnt no CPU means the fuzzer cannot run: stop, do not spin.
    if [ "$cpu" -lt 1 ]; then echo "== no progress, stopping" >>"$log"; break; fi
  done
  local crashes=0
  if [ -d "artifacts/$t" ]; then crashes="$(find "artifacts/$t" -type f | wc -l)"; fi
  echo "$t: cpu ${used} s, corpus $(find "corpus/$t" -type f | wc -l) inputs, artifacts $crashes"
}

export -f run_target seed_corpus
export CPU_SECONDS DATA
printf '%s\n' "${targets[@]}" | xargs -P "$JOBS" -I{} bash -c 'run_target "$1"' _ {}
