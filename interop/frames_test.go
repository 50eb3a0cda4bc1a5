package interop_test

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server/stdio"
	"github.com/mcpstack/mcpstack/server/streamable"
)

// maxFrames bounds the frames between a transport and a tool function:
// each is a layer a call passes through, and a goroutine's stack grows,
// and is copied, with their depth.
const maxFrames = 10

// From the transport's frame to the user's tool function, a tools/call
// passes at most maxFrames frames, over every transport and revision.
func TestFramesToTheTool(t *testing.T) {
	for _, tt := range []struct {
		name, transport string // transport: the package whose frame the count starts at
		call            func(t *testing.T, a *app.App)
	}{
		{"streamable, session (2025-11-25)", "server/streamable.", func(t *testing.T, a *app.App) { callOverHTTP(t, a, "2025-11-25") }},
		{"streamable, stateless (2026-07-28)", "server/streamable.", func(t *testing.T, a *app.App) { callOverHTTP(t, a, "2026-07-28") }},
		{"stdio", "server/stdio.", callOverStdio},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stack := make(chan []string, 1)
			a := app.New("frames", "1")
			app.AddTool(a, app.Tool{Name: "probe"}, func(context.Context, struct{}) (string, error) {
				pc := make([]uintptr, 64)
				frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)]) // from the tool function's caller
				var fns []string
				for {
					f, more := frames.Next()
					fns = append(fns, f.Function)
					if !more {
						break
					}
				}
				stack <- fns
				return "ok", nil
			})
			tt.call(t, a)
			fns := <-stack
			for i, fn := range fns {
				if strings.Contains(fn, "/mcpstack/"+tt.transport) {
					if i > maxFrames {
						t.Errorf("%d frames from the transport to the tool, want at most %d:\n%s", i, maxFrames, strings.Join(fns[:i+1], "\n"))
					}
					return
				}
			}
			t.Fatalf("no frame of %s under the tool:\n%s", tt.transport, strings.Join(fns, "\n"))
		})
	}
}

func callOverHTTP(t *testing.T, a *app.App, revision string) {
	srv := app.NewServer(a)
	defer srv.Close()
	hs := httptest.NewServer(streamable.New(srv))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("frames", "1", client.WithProtocolVersion(revision)).Connect(ctx, &client.StreamableHTTP{URL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "probe"}); err != nil {
		t.Fatal(err)
	}
}

func callOverStdio(t *testing.T, a *app.App) {
	srv := app.NewServer(a)
	defer srv.Close()
	in, feed := io.Pipe()
	answers, out := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = stdio.Serve(ctx, srv, in, out); out.Close() }()
	go func() {
		_, _ = io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"frames","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe","arguments":{}}}`+"\n")
	}()
	sc := bufio.NewScanner(answers)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			break
		}
	}
	feed.Close()
}
