#!/usr/bin/env bash
# scripts/pgo.sh: `make pgo`. Writes default.pgo, the CPU profile that
# `go build` uses for profile-guided optimization of mcpstack (Go applies a
# main package's default.pgo by itself): `mcpstack serve --profile bench`
# (default flags: validation, access log and metrics on, response mode
# auto) answering Streamable HTTP tools/call from 16 sessions, profiled for
# SECONDS_PROFILED (20) seconds through --debug-addr. Everything listens on 127.0.0.1.
# Refresh it when the request path changes much; a stale profile still
# builds, it just optimizes less.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
seconds=${SECONDS_PROFILED:-20}
work=$(mktemp -d)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
$GO build -pgo=off -o "$work/mcpstack" .
"$work/mcpstack" serve --profile bench --rate-limit 0 --rate-limit-bytes 0 --max-client-sessions 0 --max-client-inflight 0 \
	--http 127.0.0.1:0 --addr-file "$work/addr" --debug-addr 127.0.0.1:0 2>"$work/log" &
pid=$!
debug=""
for _ in $(seq 100); do
	# the profiles' listener says where it is: "serving Go profiles" url=http://ADDR/debug/pprof/
	debug=$(sed -n 's|.*serving Go profiles.*url=\(http://[^ ]*\)/debug/pprof/.*|\1|p' "$work/log" | head -1)
	[ -s "$work/addr" ] && [ -n "$debug" ] && break
	sleep 0.1
done
[ -s "$work/addr" ] && [ -n "$debug" ] || { echo "pgo: the server did not listen:" >&2; tail -5 "$work/log" >&2; exit 1; }
"$work/mcpstack" bench --url "http://$(tr -d ' \n' <"$work/addr")/mcp" --sessions 16 --duration "$((seconds + 4))s" --warmup 0s >"$work/bench" 2>&1 &
load=$!
sleep 2
curl -sf -o "$work/cpu.pprof" "$debug/debug/pprof/profile?seconds=$seconds"
wait "$load"
mv "$work/cpu.pprof" default.pgo
echo "pgo: wrote default.pgo ($(wc -c <default.pgo) bytes, ${seconds}s of $(grep -m1 'calls/s' "$work/bench" | tr -s ' '))"
