package validate

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/tools/validate/internal/loggen"
)

var benchLog = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if _, err := loggen.Write(&b, loggen.Options{Size: 16 << 20, Seed: 1}); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkCheck validates a generated 16 MB recording (internal/tools/validate/
// bench.sh does the same on 100 MB against jq). It reports MB/s and
// messages/s.
func BenchmarkCheck(b *testing.B) {
	log := benchLog()
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	v.Check(context.Background(), []Input{ReaderInput("warm-up", bytes.NewReader(log[:1<<20]))}) // compiles the schemas
	b.SetBytes(int64(len(log)))
	b.ResetTimer()
	var msgs int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		rep := v.Check(context.Background(), []Input{ReaderInput("bench", bytes.NewReader(log))})
		if rep.Errors+rep.Warnings > 0 {
			b.Fatalf("the generated log has findings: %v", rep.Findings[0])
		}
		msgs += rep.Messages
	}
	b.ReportMetric(float64(msgs)/time.Since(start).Seconds(), "msgs/s")
}

// TestGeneratedLogValid: the benchmark's log is valid, so the benchmark
// measures the full set of checks and no finding output.
func TestGeneratedLogValid(t *testing.T) {
	var b bytes.Buffer
	st, err := loggen.Write(&b, loggen.Options{Size: 2 << 20, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rep := checkBytes(t, "generated", b.Bytes())
	for i, f := range rep.Findings {
		if i == 10 {
			break
		}
		t.Errorf("%s\n\t%s", f, f.Excerpt)
	}
	if rep.Lines != st.Lines || rep.Sessions != st.Sessions {
		t.Errorf("read %d lines, %d sessions; wrote %d, %d", rep.Lines, rep.Sessions, st.Lines, st.Sessions)
	}
}
