#!/usr/bin/env bash
# Benchmark of `mcpstack validate` against a pure JSON parse of the same log.
#
# Generates a recorded message log of SIZE (default 100MB) in a temporary
# folder (removed afterwards), then times, on that same file and in this
# same run, alternately:
#   jq -c . LOG >/dev/null          (parse and print every line, nothing else)
#   mcpstack validate LOG           (parse, schema, every rule)
# and reports MB/s and messages/s of each, and the ratio. Each is run RUNS
# times (default 3); the best time counts, since other work on the machine
# only ever slows a run down. Without jq the comparison is skipped.
#
#   internal/tools/validate/bench.sh                  # 100MB, 3 runs
#   SIZE=400MB RUNS=5 internal/tools/validate/bench.sh
#   MIN_RATIO=1 internal/tools/validate/bench.sh      # exit 1 when slower than jq
set -euo pipefail
cd "$(dirname "$0")/../../.."

SIZE="${SIZE:-100MB}"
RUNS="${RUNS:-3}"
MIN_RATIO="${MIN_RATIO:-}"
GO="${GO:-go}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/mcpstack-validate-bench.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

"$GO" build -o "$tmp/benchtool" ./internal/tools/validate/internal/benchtool
log="$tmp/log.jsonl"
"$tmp/benchtool" gen -size "$SIZE" -o "$log"
bytes=$(wc -c <"$log")

now() { date +%s%N; }

# best_of CMD...: the best wall time of RUNS runs, in nanoseconds.
best=0
time_once() {
  local t0 t1
  t0=$(now)
  "$@" >/dev/null
  t1=$(now)
  local d=$((t1 - t0))
  if [ "$best" -eq 0 ] || [ "$d" -lt "$best" ]; then best=$d; fi
}

summary="$("$tmp/benchtool" validate --output json "$log")" || {
  echo "bench: the generated log has findings:" >&2
  echo "$summary" | head -c 2000 >&2
  exit 1
}
msgs=$(printf '%s' "$summary" | grep -o '"messages":[0-9]*' | head -n1 | cut -d: -f2)

have_jq=1
command -v jq >/dev/null 2>&1 || have_jq=0

validate_best=0
jq_best=0
for _ in $(seq "$RUNS"); do
  if [ "$have_jq" -eq 1 ]; then
    best=$jq_best; time_once jq -c . "$log"; jq_best=$best
  fi
  best=$validate_best; time_once "$tmp/benchtool" validate "$log"; validate_best=$best
done

rate() { # name ns
  awk -v b="$bytes" -v m="$msgs" -v ns="$2" -v name="$1" \
    'BEGIN { s = ns / 1e9; printf "%-18s %7.3f s  %8.1f MB/s  %10.0f msgs/s\n", name, s, b / s / 1e6, m / s }'
}

echo "log: $bytes bytes, $msgs messages ($SIZE generated), best of $RUNS, $(nproc 2>/dev/null || echo ?) CPUs"
rate "mcpstack validate" "$validate_best"
if [ "$have_jq" -eq 1 ]; then
  rate "jq -c ." "$jq_best"
  ratio=$(awk -v v="$validate_best" -v j="$jq_best" 'BEGIN { printf "%.2f", j / v }')
  echo "ratio: validate is ${ratio}x the speed of jq -c . ($(jq --version))"
  if [ -n "$MIN_RATIO" ] && awk -v r="$ratio" -v m="$MIN_RATIO" 'BEGIN { exit !(r < m) }'; then
    echo "bench: ratio $ratio is below $MIN_RATIO" >&2
    exit 1
  fi
else
  echo "jq not found: comparison skipped (apt-get install -y jq)"
fi
