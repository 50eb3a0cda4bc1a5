package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// FuzzStdio feeds arbitrary input to a stdio session: Serve returns by
// itself at EOF, without panic, and writes only whole JSON lines.
func FuzzStdio(f *testing.F) {
	files, _ := filepath.Glob("../testdata/transcripts/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fl := range ar.Files {
			if fl.Name == "client" {
				f.Add(fl.Data)
			}
		}
	}
	f.Add([]byte("\n\n{\"jsonrpc\":\"2.0\"\r\n\x00\xff[1,2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true), server.WithLimits(server.Limits{AnswerTimeout: 50 * time.Millisecond}))
		defer srv.Close()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- stdio.Serve(context.Background(), srv, bytes.NewReader(data), &out, stdio.WithMaxLine(1<<16))
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve hung on %q", data)
		}
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("non-JSON output line %q", sc.Text())
			}
		}
	})
}
