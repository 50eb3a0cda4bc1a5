#!/usr/bin/env bash
# make cluster: three replicas of `mcpstack serve` (the chat app) on Redis
# and PostgreSQL behind HAProxy's round robin, all on loopback; prints the
# URL and a token, and stops everything on Ctrl-C.
#
# Redis: CLUSTER_REDIS_URL, else the machine's own at 127.0.0.1:6379 (its
# database 1), else a redis-server started here. PostgreSQL:
# CLUSTER_POSTGRES_DSN, else the machine's own at 127.0.0.1:5432 (database
# "test", schema mcpstack_cluster); without one the replicas keep
# conversations and tasks each in their own SQLite, and say so. HAProxy
# comes from the distribution's packages (apt-get, installed here when
# missing). CLUSTER_ADDR (127.0.0.1:8080) is the balancer's address.
# CLUSTER_CHECK=1 starts everything, sends a few sessions through the
# balancer with `mcpstack client`, and stops: what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR="${CLUSTER_ADDR:-127.0.0.1:8080}"
DIR=bin/cluster
BIN=bin/mcpstack
REPLICAS=3

say() { printf 'cluster: %s\n' "$*" >&2; }

need_haproxy() {
	command -v haproxy >/dev/null 2>&1 && return
	say "installing haproxy from the distribution's packages"
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	if ! command -v apt-get >/dev/null 2>&1 || ! { "${sudo[@]}" apt-get install -y -q haproxy >/dev/null 2>&1 ||
		{ "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q haproxy >/dev/null; }; }; then
		say "haproxy is missing and could not be installed (apt-get install haproxy)"
		exit 2
	fi
}

pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need_haproxy
mkdir -p "$DIR"
chmod 700 "$DIR"
[ -x "$BIN" ] || go build -o "$BIN" .

# Redis.
redis_url=${CLUSTER_REDIS_URL:-}
if [ -z "$redis_url" ]; then
	if command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
		redis_url=redis://127.0.0.1:6379/1
	elif command -v redis-server >/dev/null 2>&1; then
		redis-server --bind 127.0.0.1 --port 6391 --save '' --appendonly no --dir "$DIR" >"$DIR/redis.log" 2>&1 &
		pids+=($!)
		redis_url=redis://127.0.0.1:6391/0
		for _ in $(seq 50); do redis-cli -p 6391 ping >/dev/null 2>&1 && break; sleep 0.1; done
	else
		say "no Redis: set CLUSTER_REDIS_URL, or install redis-server"
		exit 2
	fi
fi

# PostgreSQL.
pg_dsn=${CLUSTER_POSTGRES_DSN:-}
if [ -z "$pg_dsn" ] && command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then
	candidate="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	# a server that answers may still want a password, or lack the database
	if command -v psql >/dev/null 2>&1 && psql "$candidate" -qtAc 'select 1' >/dev/null 2>&1; then
		pg_dsn=$candidate
	fi
fi

# The secrets every replica shares: the tokens' and requestState's.
[ -s "$DIR/auth-secret" ] || (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' >"$DIR/auth-secret")
[ -s "$DIR/state-key" ] || (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' >"$DIR/state-key")

store=(--task-store sqlite)
if [ -n "$pg_dsn" ]; then
	store=(--task-store postgres --postgres-schema mcpstack_cluster)
else
	say "no PostgreSQL (set CLUSTER_POSTGRES_DSN): each replica keeps conversations and tasks in its own SQLite"
fi

servers=""
for i in $(seq "$REPLICAS"); do
	rm -f "$DIR/replica$i.addr"
	MCPSTACK_REDIS_URL="$redis_url" MCPSTACK_POSTGRES_DSN="$pg_dsn" \
		"$BIN" serve --http 127.0.0.1:0 --addr-file "$DIR/replica$i.addr" --strict \
		--auth hs256 --auth-secret-file "$DIR/auth-secret" --state-key-file "$DIR/state-key" \
		--data-dir "$DIR/replica$i" "${store[@]}" --trusted-proxies 127.0.0.1 \
		--shutdown-delay 0s >"$DIR/replica$i.log" 2>&1 &
	pids+=($!)
done
for i in $(seq "$REPLICAS"); do
	for _ in $(seq 100); do [ -s "$DIR/replica$i.addr" ] && break; sleep 0.1; done
	if [ ! -s "$DIR/replica$i.addr" ]; then
		say "replica $i did not start:"
		tail -n 5 "$DIR/replica$i.log" >&2
		exit 1
	fi
	servers+="    server replica$i $(tr -d ' \n' <"$DIR/replica$i.addr") check"$'\n'
done

# Round robin, request by request; /readyz takes a draining replica out;
# a request a dead replica refused goes to the next (redispatch). Streams
# stay open while the server's keep-alives flow.
cat >"$DIR/haproxy.cfg" <<CFG
global
    log stderr format raw local0 warning
defaults
    mode http
    log global
    option httplog
    option redispatch
    retries 2
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-keep-alive 10s
frontend mcp
    bind $ADDR
    option forwardfor
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk
    # a Host header: the replicas guard loopback against DNS rebinding
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
    default-server inter 1s fall 2 rise 1
$servers
CFG
haproxy -W -db -f "$DIR/haproxy.cfg" >"$DIR/haproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
	curl -s -o /dev/null "http://$ADDR/healthz" 2>/dev/null && break
	sleep 0.1
done

TOKEN=$("$BIN" token --secret-file "$DIR/auth-secret" --sub cluster-user --scope mcp --ttl 24h)
URL="http://$ADDR/mcp"

if [ "${CLUSTER_CHECK:-0}" = 1 ]; then
	# Each client run is one session: initialize, initialized, the call and
	# DELETE, each request at the next replica.
	for i in $(seq 6); do
		if ! out=$("$BIN" client "$URL" --token "$TOKEN" --method tools/call --tool chat --arg "query=hello $i" 2>&1); then
			say "session $i failed through the balancer: $out"
			tail -n 20 "$DIR"/replica*.log "$DIR/haproxy.log" >&2
			exit 1
		fi
	done
	sleep 0.5 # the replicas' logs are written at most 200ms late
	served=0
	for i in $(seq "$REPLICAS"); do
		n=$(grep -c 'method=tools/call' "$DIR/replica$i.log" || true)
		[ "$n" -gt 0 ] && served=$((served + 1))
	done
	if [ "$served" -lt 2 ]; then
		say "the calls reached $served replica(s): the balancer does not spread them"
		exit 1
	fi
	say "ok: 6 sessions through $URL, served by $served replicas on $(echo "$redis_url" | sed 's#//[^@]*@#//#')"
	exit 0
fi

cat >&2 <<MSG

mcpstack cluster: $URL (HAProxy round robin over $REPLICAS replicas; Ctrl-C stops it)
  Redis: $(echo "$redis_url" | sed 's#//[^@]*@#//#')   PostgreSQL: ${pg_dsn:+yes}${pg_dsn:-no (SQLite per replica)}
  logs: $DIR/replica*.log, $DIR/haproxy.log

  export TOKEN=$TOKEN
  $BIN client $URL --token "\$TOKEN" --method tools/call --tool chat --arg query=hello

MSG
wait "${pids[@]}"
