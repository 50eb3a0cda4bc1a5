package app_test

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
	mcpclient "github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server/stdio"
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
		{"streamable, session (2025-11-25)", "internal/transport/streamable.", func(t *testing.T, a *app.App) { callOverHTTP(t, a, "2025-11-25") }},
		{"streamable, stateless (2026-07-28)", "internal/transport/streamable.", func(t *testing.T, a *app.App) { callOverHTTP(t, a, "2026-07-28") }},
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
			var fns []string
			select { // the tool ran before the call was answered
			case fns = <-stack:
			default:
				t.Fatal("the call was answered without reaching the tool")
			}
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
	s, err := mcpclient.New("frames", "1", mcpclient.WithProtocolVersion(revision)).Connect(ctx, &mcpclient.StreamableHTTP{URL: hs.URL})
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
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = stdio.Serve(ctx, srv, in, out)
		out.Close()
	}()
	go func() {
		_, _ = io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"frames","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe","arguments":{}}}`+"\n")
	}()
	sc := bufio.NewScanner(answers)
	answered := false
	for !answered && sc.Scan() {
		if line := sc.Text(); strings.Contains(line, `"id":2`) {
			if !strings.Contains(line, `"result"`) {
				t.Errorf("tools/call over stdio: %s", line)
			}
			answered = true
		}
	}
	if !answered {
		t.Error("no answer to tools/call over stdio")
	}
	feed.Close()
	answers.Close()
	<-served
}
