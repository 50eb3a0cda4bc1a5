package core_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
)

// stateRE finds the requestState of an input-required result.
var stateRE = regexp.MustCompile(`"requestState":"([A-Za-z0-9_-]+)"`)

var update = flag.Bool("update", false, "rewrite the -- server -- section of the transcripts")

// recorder is an Outbox that keeps what the server sent.
type recorder struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (r *recorder) Send(msg []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, append([]byte(nil), msg...))
	return nil
}

func (r *recorder) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.msgs
	r.msgs = nil
	return out
}

// TestTranscripts replays testdata/transcripts/*.txtar: each line of the
// -- client -- section is handed to one session in order; what the server
// sends (messages about the call first, then the answer) must equal the
// -- server -- section, compared as JSON values. Lines starting with # are
// comments.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var client, want []string
			for _, f := range ar.Files {
				switch f.Name {
				case "client":
					client = lines(f.Data)
				case "server":
					want = lines(f.Data)
				}
			}
			srv := newServer(conformance.New(conformance.WithStepDelay(0), conformance.WithPageSize(2)), core.WithStrict(true),
				core.WithStateKey([]byte("transcript-state-key-0123456789ab")))
			defer srv.Close()
			out := &recorder{}
			sess, err := srv.NewSession("transcript", out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			state := "" // the last requestState the server sent
			keep := func(m []byte) string {
				// A requestState is sealed with a fresh nonce: the transcript
				// names it ${requestState}, and a client line gives it back.
				if sm := stateRE.FindSubmatch(m); sm != nil {
					state = string(sm[1])
					m = stateRE.ReplaceAllLiteral(m, []byte(`"requestState":"${requestState}"`))
				}
				return string(m)
			}
			for _, line := range client {
				line = strings.ReplaceAll(line, "${requestState}", state)
				reply := sess.Handle(context.Background(), []byte(line), out)
				for _, m := range out.take() {
					got = append(got, keep(m))
				}
				if reply != nil {
					got = append(got, keep(reply))
				}
			}
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "server" {
						ar.Files[i].Data = []byte(strings.Join(got, "\n") + "\n")
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(got) != len(want) {
				t.Fatalf("server sent %d messages, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
			for i := range want {
				if !sameJSON(t, got[i], want[i]) {
					t.Errorf("message %d:\n got %s\nwant %s", i+1, got[i], want[i])
				}
			}
		})
	}
	_ = time.Second
}

func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("bad JSON %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}
