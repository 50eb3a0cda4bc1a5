# mcpstack: the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
# -pgo=off: default.pgo optimizes the mcpstack binary; the tests of the
# main package would otherwise build every package a second time with it.
GOFLAGS_TEST ?= -race -count=1 -timeout 9m -pgo=off

.PHONY: pgo cluster bench-cluster callgrind bench-observe soak validate-bench bench bench-client vet-peers run all generate check-generate test test-long tools test-short lint fmt vet bench-ingress fuzz conformance bin/mcpstack

all: generate test

## run: build and serve the chat app on http://127.0.0.1:8000/mcp, printing a
## token and how to connect (Ctrl-C stops it)
run: bin/mcpstack
	bash scripts/run.sh

## generate: compile schema/ into mcp/, internal/generated/ and client/requests_gen.go
## (never edit them by hand)
generate:
	$(GO) run ./gen
	$(GO) test ./internal/tools/schemadiff -run '^TestChangelogDoc$$' -update-doc -count=1

## check-generate: fail when the generated code or docs/revisions.md does not match schema/ and gen/
check-generate:
	$(GO) run ./gen -check
	$(GO) test ./internal/tools/schemadiff -run '^TestChangelogDoc$$' -count=1

## test: gofmt, vet, the pinned interop tools, every test with the race
## detector, the Dockerfile's and the Kubernetes manifests' checks (deploy/,
## a module of its own), and the soak test (abusive clients beside a
## well-behaved one) without it; about 5 minutes. The longer tests are test-long's.
test: fmt vet tools
	$(GO) test $(GOFLAGS_TEST) ./...
	cd deploy && $(GO) test -count=1 ./...
	$(GO) test -count=1 -run '^TestSoak$$' -v ./interop/

## test-long: the tests that take minutes on their own (adopting a revision
## builds a copy of the tree twice); CI runs them after make test
test-long:
	MCPSTACK_LONG_TESTS=1 $(GO) test -count=1 -timeout 20m -run '^TestAdoptRevision$$' -v ./internal/tools/revision/

## tools: the pinned Node 22, conformance suite, TypeScript SDK and
## server-everything in .tools/ (npm ci, reused while their lockfile is
## unchanged), which the interop tests drive; without npm they skip, saying so
tools:
	@if command -v npm >/dev/null 2>&1; then bash scripts/conformance.sh install; \
	else echo "npm not found: the interop tests that drive the TypeScript SDK and server-everything will skip"; fi

## soak: the soak test alone, for longer (SOAK=60s)
SOAK ?= 15s
soak:
	MCPSTACK_SOAK=$(SOAK) $(GO) test -count=1 -run '^TestSoak$$' -v ./interop/

test-short:
	$(GO) test -short -pgo=off ./...

## pgo: profile serve under the HTTP benchmark load and write default.pgo,
## which go build applies to the mcpstack binary (profile-guided optimization)
pgo:
	bash scripts/pgo.sh

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd deploy && $(GO) vet ./...

lint: fmt vet

## bench-ingress: the ingress benchmark against its encoding/json baseline
bench-ingress:
	$(GO) test -run '^$$' -bench Ingress -benchmem -count 5 ./gen/

## bench-client: our validating client against the go-sdk client, one call after another on the same server
bench-client:
	$(GO) test -run '^$$' -bench BenchmarkClientCall -benchtime 3s -count 3 -benchmem ./interop/

## fuzz: run each fuzz target for FUZZTIME (default 20s)
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeMessage -fuzztime $(FUZZTIME) ./gen/
	$(GO) test -run '^$$' -fuzz FuzzSurelyValid -fuzztime $(FUZZTIME) ./internal/generated/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzParseMembers -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzRoot -fuzztime $(FUZZTIME) ./internal/jsonrpc/
	$(GO) test -run '^$$' -fuzz FuzzMarshal -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzTreeOf -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzPlainRun -fuzztime $(FUZZTIME) ./internal/jsontree/
	$(GO) test -run '^$$' -fuzz FuzzWord -fuzztime $(FUZZTIME) ./internal/swar/
	$(GO) test -run '^$$' -fuzz FuzzSchemaSurely -fuzztime $(FUZZTIME) ./internal/protocol/
	$(GO) test -run '^$$' -fuzz FuzzHTTPHandler -fuzztime $(FUZZTIME) ./internal/transport/streamable/
	$(GO) test -run '^$$' -fuzz FuzzStdio -fuzztime $(FUZZTIME) ./server/stdio/
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime $(FUZZTIME) ./internal/tools/validate/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/tools/validate/
	$(GO) test -run '^$$' -fuzz FuzzRecordFastPath -fuzztime $(FUZZTIME) ./internal/tools/validate/
	$(GO) test -run '^$$' -fuzz FuzzReceive -fuzztime $(FUZZTIME) ./client/
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME) ./internal/sse/
	$(GO) test -run '^$$' -fuzz FuzzLines -fuzztime $(FUZZTIME) ./internal/sse/
	$(GO) test -run '^$$' -fuzz FuzzHAR -fuzztime $(FUZZTIME) ./internal/tools/validate/
	$(GO) test -run '^$$' -fuzz FuzzEventSplitter -fuzztime $(FUZZTIME) ./internal/tools/proxy/
	$(GO) test -run '^$$' -fuzz FuzzSameAsTextHandler -fuzztime $(FUZZTIME) ./internal/logfmt/
	$(GO) test -run '^$$' -fuzz FuzzSpecialIn -fuzztime $(FUZZTIME) ./internal/logfmt/
	$(GO) test -run '^$$' -fuzz FuzzArgSets -fuzztime $(FUZZTIME) ./internal/tools/check/
	$(GO) test -run '^$$' -fuzz FuzzOwner -fuzztime $(FUZZTIME) ./server/auth/

## build: the mcpstack binary
bin/mcpstack:
	$(GO) build -o bin/mcpstack .

## cluster: three replicas of the chat app on Redis and PostgreSQL behind
## HAProxy's round robin on 127.0.0.1:8080 (installed from the distribution's
## packages when missing); prints the URL and a token. CLUSTER_CHECK=1 sends
## a few sessions through it and stops (CI does).
cluster: bin/mcpstack
	bash scripts/cluster.sh

## conformance: the official MCP conformance suite against bin/mcpstack
## (the first run installs Node 22 and the pinned suite into .tools/conformance/ with npm)
## CONFORMANCE_REVISIONS also runs the pinned 0.2.0 alpha's per-revision
## requirements (2026-07-28 is only there); a failed check fails the run,
## in the scenarios the suite does not score (the tasks extension, pending) too.
CONFORMANCE_REVISIONS ?= 2025-11-25 2026-07-28
conformance: bin/mcpstack
	GO="$(GO)" CONFORMANCE_REVISIONS="$(CONFORMANCE_REVISIONS)" bash scripts/conformance.sh
	@# The default (auto) answers quick calls as JSON; the suite's checks of
	@# POST event streams run against the SSE mode too.
	GO="$(GO)" CONFORMANCE_SUITES=active CONFORMANCE_CLIENT_SCENARIOS= \
		CONFORMANCE_SERVER_CMD='bin/mcpstack serve --profile conformance --response-mode sse --http 127.0.0.1:0 --addr-file {addr_file}' \
		bash scripts/conformance.sh

## callgrind: instructions per stdio tools/call under valgrind (N=1000 and 3N)
callgrind:
	GO="$(GO)" bash scripts/callgrind.sh

## bench-observe: what metrics and tracing cost, as ratios of calls/s against both off (in process and over Streamable HTTP)
bench-observe:
	$(GO) test -run '^$$' -bench 'BenchmarkObserver' -benchtime 1x ./observe/

## bench: mcpstack vs the go-sdk and mcp-go echo servers, interleaved, with ratios and target checks
## (BENCH_SUITES="sse json stdio idle validation" BENCH_DURATION=10s BENCH_ROUNDS=3 BENCH_IDLE=1000)
bench:
	bash scripts/bench.sh

## bench-cluster: one replica in memory against one on Redis and three on
## Redis behind HAProxy (needs Redis at 127.0.0.1:6379 or BENCH_REDIS_URL,
## and haproxy: make cluster installs it)
bench-cluster: bin/mcpstack
	BENCH_SUITES=cluster bash scripts/bench.sh

## vet-peers: the benchmark-only peers module (its own go.mod; the root ./... skips it)
vet-peers:
	cd internal/tools/bench/peers && $(GO) vet ./... && $(GO) build ./...

## validate-bench: mcpstack validate on a generated 100 MB log against jq -c . (SIZE=, RUNS=, MIN_RATIO=)
validate-bench:
	GO="$(GO)" bash internal/tools/validate/bench.sh
