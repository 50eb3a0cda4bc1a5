package validate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// corpusSeeds returns the corpus logs (not gzipped) and some of their
// lines, to seed the fuzz targets.
func corpusSeeds(t testing.TB) (logs, lines [][]byte) {
	_ = filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		logs = append(logs, b)
		for i, l := range bytes.Split(b, []byte("\n")) {
			if i < 12 && len(l) > 0 {
				lines = append(lines, l)
			}
		}
		return nil
	})
	if len(logs) == 0 {
		t.Fatal("no corpus to seed from")
	}
	return logs, lines
}

// FuzzParse holds the log reader's JSON parser to encoding/json (through
// jsontree.Parse): the same documents are accepted and give the same trees.
func FuzzParse(f *testing.F) {
	_, lines := corpusSeeds(f)
	for _, l := range lines {
		f.Add(l)
	}
	for _, s := range []string{`"\ud800"`, `"\ud83d\ude00"`, "\"\xff\xfe\"", `1e400`, `-0.0e-0`, `{"a":1,"a":2}`, ` [ ] `, `"\u00e9\/"`, `01`, `1.`, `[1,]`, `{"a" 1}`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseJSON(b)
		want, werr := jsontree.Parse(b)
		var se *syntaxError
		if errors.As(err, &se) && strings.Contains(se.msg, "nesting deeper") {
			return // encoding/json allows deeper nesting
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseJSON(%q): err %v, encoding/json: %v", b, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("parseJSON(%q) = %#v, encoding/json %#v", b, got, want)
		}
	})
}

// FuzzCheck feeds arbitrary bytes to the log reader and the checker, as a
// recording, as plain JSON Lines and as a stdio pair: no panic, no hang,
// and the same findings whatever the number of workers.
func FuzzCheck(f *testing.F) {
	logs, _ := corpusSeeds(f)
	for _, l := range logs {
		f.Add(l)
	}
	v1, err := New(WithWorkers(1))
	if err != nil {
		f.Fatal(err)
	}
	v3, err := New(WithWorkers(3), WithRevision("2025-06-18"), WithMaxLine(4096))
	if err != nil {
		f.Fatal(err)
	}
	rec, err := New(WithFormat(FormatRecorded), WithWorkers(2))
	if err != nil {
		f.Fatal(err)
	}
	jsonl, err := New(WithFormat(FormatJSONL), WithWorkers(2), WithMaxErrors(3))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		in := func() []Input { return []Input{ReaderInput("fuzz", bytes.NewReader(b))} }
		a := v1.Check(ctx, in())
		v1b, _ := New(WithWorkers(4))
		c := v1b.Check(ctx, in())
		if !reflect.DeepEqual(a.Findings, c.Findings) {
			t.Fatalf("1 worker and 4 workers disagree:\n%v\n%v", a.Findings, c.Findings)
		}
		v3.Check(ctx, in())
		rec.Check(ctx, in())
		if r := jsonl.Check(ctx, in()); r.Errors > 3 {
			t.Fatalf("--max-errors 3 let %d errors through", r.Errors)
		}
		var cl, sv bytes.Buffer
		for i, l := range bytes.Split(b, []byte("\n")) {
			w := &cl
			if i%2 == 1 {
				w = &sv
			}
			w.Write(l)
			w.WriteByte('\n')
		}
		v1.Check(ctx, []Input{PairInput(ReaderInput("c", &cl), ReaderInput("s", &sv))})
		if ctx.Err() != nil {
			t.Fatal("Check hung")
		}
	})
}

// FuzzRecordFastPath: the fast check of a record agrees with the
// RecordedMessage schema on every JSON value.
func FuzzRecordFastPath(f *testing.F) {
	_, lines := corpusSeeds(f)
	for _, l := range lines {
		f.Add(l)
	}
	for _, s := range []string{`{"dir":"c2s","raw":"x"}`, `{"dir":"s2c","event":"shutdown","session":""}`, `{"dir":"c2s","msg":null}`, `{"dir":"c2s"}`, `{"dir":"c2s","msg":1,"raw":"x"}`, `{"dir":"c2s","event":"close"}`} {
		f.Add([]byte(s))
	}
	ext := loadExt()
	if ext.err != nil {
		f.Fatal(ext.err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseJSON(b)
		if err != nil {
			return
		}
		rec, ok := v.(map[string]any)
		if !ok {
			return
		}
		reason, _ := recordProblem(rec)
		serr := ext.v.Validate("RecordedMessage", rec)
		if (reason == "") != (serr == nil) {
			t.Fatalf("%s: fast check %q, schema %v", b, reason, serr)
		}
	})
}

// TestRecordFastPath runs the fuzz seeds of FuzzRecordFastPath and the
// corpus through the agreement check (go test runs seeds of fuzz targets
// too; this keeps it explicit for the record lines of the corpus).
func TestRecordFastPath(t *testing.T) {
	ext := loadExt()
	_, lines := corpusSeeds(t)
	for _, h := range []string{
		`{"method":"POST","status":202,"request":{"Mcp-Session-Id":"s"},"response":{}}`, `{}`, `[]`,
		`{"method":1}`, `{"status":99}`, `{"status":200.5}`, `{"request":{"A":1}}`, `{"response":[]}`,
	} {
		lines = append(lines, []byte(`{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x"},"http":`+h+`}`))
	}
	for _, l := range lines {
		v, err := parseJSON(l)
		if err != nil {
			continue
		}
		rec, ok := v.(map[string]any)
		if !ok {
			continue
		}
		reason, _ := recordProblem(rec)
		if serr := ext.v.Validate("RecordedMessage", rec); (reason == "") != (serr == nil) {
			t.Errorf("%s: fast check %q, schema %v", l, reason, serr)
		}
	}
}

// FuzzHAR: whatever a HAR file holds, reading it does not panic, and
// every record it becomes is one the recording schema accepts (the
// validator then checks the messages, not the conversion).
func FuzzHAR(f *testing.F) {
	_ = filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".har") {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"POST","postData":{"text":"{"}},"response":{"status":500,"content":{"mimeType":"text/event-stream","text":"data: x\n\n"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"POST","postData":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}"}},"response":{"status":999}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := readHAR(bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		for {
			data, _, _, ok := h.next()
			if !ok {
				break
			}
			v, err := parseJSON(data)
			if err != nil {
				t.Fatalf("a record that is not JSON: %s", data)
			}
			rec, _ := v.(map[string]any)
			if reason, _ := recordProblem(rec); reason != "" {
				t.Fatalf("record %s: %s", data, reason)
			}
		}
	})
}
