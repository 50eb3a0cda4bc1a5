package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A stdio server links only what it uses: no net/http (the core decides
// no HTTP status; the HTTP transports do), no Prometheus, no OpenTelemetry
// SDK or exporters, no gRPC (they come with mcphttp and observe, which
// mcpstack serve imports and a stdio server does not), at most 250
// packages in all (it was 554; 180 now), and a binary of at most 14 MB
// (it was 28.9; 7.7 MiB now). Its revisions cost nothing at startup: their
// tables are constants the compiler lays out, so no package of
// internal/generated runs code before main (they built maps there: 107 kB
// of heap in 651 allocations for five revisions).
func TestHelloLinksOnlyWhatItUses(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../examples/hello").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "hello")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/hello").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if fi, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	} else if fi.Size() > 14e6 {
		t.Errorf("examples/hello builds to %.1f MB, want at most 14", float64(fi.Size())/1e6)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader("") // serves nothing, and ends
	trace, _ := cmd.CombinedOutput()
	if !strings.Contains(string(trace), "init runtime") {
		t.Fatalf("GODEBUG=inittrace=1 printed no trace:\n%s", trace)
	}
	for _, line := range strings.Split(string(trace), "\n") {
		if strings.Contains(line, "mcpstack/internal/generated") {
			t.Errorf("a generated package runs code at startup: %s", line)
		}
	}
	deps := strings.Fields(string(out))
	if len(deps) > 250 {
		t.Errorf("examples/hello links %d packages, want at most 250", len(deps))
	}
	for _, d := range deps {
		if d == "net/http" {
			t.Errorf("examples/hello links net/http")
		}
		for _, heavy := range []string{"google.golang.org/grpc", "github.com/prometheus/", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "github.com/mcpstack/mcpstack/mcphttp", "github.com/mcpstack/mcpstack/observe", "github.com/go-chi/"} {
			if strings.HasPrefix(d, heavy) {
				t.Errorf("examples/hello links %s", d)
			}
		}
	}
}

// The library's packages link nothing that registers handlers on
// http.DefaultServeMux in its init: net/http/pprof (the runtime's
// profiles, the command line included), expvar (the command line and
// memory statistics), golang.org/x/net/trace (gRPC's request traces). A
// program that serves the default mux beside mcphttp.Handler would expose
// them. chi's middleware package, linked for its Recoverer, brought pprof;
// observe's exporters from the environment brought gRPC, and live in
// observe/otelenv now. Package observe links expvar only because the
// Prometheus client imports it (its doc says so).
func TestLibraryRegistersNothingOnDefaultServeMux(t *testing.T) {
	tests := []struct {
		pkg    string
		expvar bool // may link expvar
	}{
		{"../mcphttp", false},
		{"../server/...", false},
		{"../app", false},
		{"../client", false},
		{"../mcp", false},
		{"../observe", true},
	}
	for _, tt := range tests {
		deps := linked(t, tt.pkg)
		for _, f := range []string{"net/http/pprof", "golang.org/x/net/trace", "google.golang.org/grpc", "expvar"} {
			if slices.Contains(deps, f) && !(f == "expvar" && tt.expvar) {
				t.Errorf("%s links %s", tt.pkg, f)
			}
		}
	}
}

// An HTTP server links WebSocket only when it serves it: mcphttp leaves
// it to mcphttp/websocket, which `mcpstack serve` adds. The library, its
// deflate and its rate limiters were about 400 KiB of the resident
// memory of an echo server on mcphttp (12.5 MiB against 12.1 without).
func TestHTTPServerLinksWebSocketOnlyWhenItServesIt(t *testing.T) {
	tests := []struct {
		pkg       string
		websocket bool
	}{
		{"../mcphttp", false},
		{"../internal/tools/bench/echo", false},
		{"../mcphttp/websocket", true},
	}
	for _, tt := range tests {
		if got := slices.Contains(linked(t, tt.pkg), "github.com/coder/websocket"); got != tt.websocket {
			t.Errorf("%s links github.com/coder/websocket: %v, want %v", tt.pkg, got, tt.websocket)
		}
	}
}

// linked lists the packages pkg links (go list -deps).
func linked(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
