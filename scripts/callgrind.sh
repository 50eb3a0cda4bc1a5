#!/usr/bin/env bash
# Instructions per stdio tools/call, which machine noise does not move:
# bin/mcpstack serve --stdio --profile bench (defaults: validation, access
# log and metrics on) under callgrind, N and 3N pipelined echo calls, the
# difference over 2N.
#
#   scripts/callgrind.sh            N=1000
#   N=500 scripts/callgrind.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "callgrind: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
N=${N:-1000}
GO=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$GO build -o "$work/mcpstack" .
calls() {
  printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"callgrind","version":"1"}}}'
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  text=$(printf 'x%.0s' $(seq 64))
  for i in $(seq 1 "$1"); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}\n' "$i" "$text"
  done
}
count() {
  calls "$1" > "$work/in.$1"
  GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$work/out.$1" \
    "$work/mcpstack" serve --stdio --profile bench < "$work/in.$1" > "$work/answers.$1" 2>/dev/null
  got=$(wc -l < "$work/answers.$1")
  [ "$got" -eq "$(($1 + 1))" ] || { echo "callgrind: $got answers to $1 calls" >&2; exit 1; }
  sed -n 's/^totals: //p' "$work/out.$1"
}
a=$(count "$N")
b=$(count "$((3 * N))")
echo "callgrind: $(( (b - a) / (2 * N) )) instructions per stdio tools/call ($N calls: $a, $((3 * N)): $b)"
