package record_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/server"
)

var fixed = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600)) }

func TestLines(t *testing.T) {
	var buf bytes.Buffer
	r := record.New(&buf, record.WithFlushInterval(0), record.WithClock(fixed))
	r.Message("abc", server.ClientToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	r.Message("abc", server.ServerToClient, []byte("{\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": 1,\n  \"result\": {\"text\": \"a\\nb\"}\n}"))
	r.Message("abc", server.ClientToServer, []byte("not json\n"))
	r.Message("s\"\x01é", server.ClientToServer, []byte(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	r.Shutdown("abc", server.ClientToServer)
	if buf.Len() != 0 {
		t.Errorf("wrote before Flush: %q", buf.String())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2026-01-02T02:04:05.123456789Z","session":"abc","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}
{"ts":"2026-01-02T02:04:05.123456789Z","session":"abc","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"text":"a\nb"}}}
{"ts":"2026-01-02T02:04:05.123456789Z","session":"abc","dir":"c2s","raw":"not json\n"}
{"ts":"2026-01-02T02:04:05.123456789Z","session":"s\"\u0001é","dir":"c2s","msg":[{"jsonrpc":"2.0","method":"notifications/initialized"}]}
{"ts":"2026-01-02T02:04:05.123456789Z","session":"abc","dir":"c2s","event":"shutdown"}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not a JSON line: %s", l)
		}
	}
	r.Message("abc", server.ClientToServer, []byte(`{}`))
	if buf.String() != want {
		t.Error("a message after Close was written")
	}
	if err := r.Flush(); !errors.Is(err, record.ErrClosed) {
		t.Errorf("Flush after Close = %v", err)
	}
}

// TestConcurrent records from many goroutines: every line whole, none lost.
func TestConcurrent(t *testing.T) {
	var buf bytes.Buffer
	r := record.New(&buf, record.WithFlushInterval(time.Millisecond))
	var wg sync.WaitGroup
	const n, per = 16, 200
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				r.Message(fmt.Sprint("s", g), server.ServerToClient, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i)))
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != n*per {
		t.Fatalf("%d lines, want %d", len(lines), n*per)
	}
	for _, l := range lines {
		var rec struct {
			Dir string
			Msg json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Dir != "s2c" || len(rec.Msg) == 0 {
			t.Fatalf("bad line %q: %v", l, err)
		}
	}
}

func TestCreateAppendsAndFlushes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(p, []byte("{\"dir\":\"c2s\",\"event\":\"shutdown\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := record.Create(p, record.WithFlushInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	r.Message("a", server.ClientToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(p)
		if strings.Count(string(b), "\n") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the periodic flush did not write: %q", b)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCreatePrivate: a recording holds conversation text, so it is
// created readable by its owner only, in a folder only its owner can list,
// and an existing file is narrowed to that.
func TestCreatePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	path := filepath.Join(dir, "x.jsonl")
	r, err := record.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	wide := filepath.Join(t.TempDir(), "wide.jsonl")
	if err := os.WriteFile(wide, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = record.Create(wide)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if fi, _ := os.Stat(wide); fi.Mode().Perm() != 0o600 {
		t.Errorf("existing recording: %v, want 0600", fi.Mode().Perm())
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	r := record.New(failing{}, record.WithFlushInterval(0))
	r.Message("a", server.ClientToServer, bytes.Repeat([]byte(" "), 100<<10)) // more than the buffer
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err = %v", err)
	}
	if err := r.Close(); err == nil {
		t.Error("Close after a write error returned nil")
	}
}
