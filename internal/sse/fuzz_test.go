package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader: whatever a server sends, the reader ends (EOF or an error),
// never hands out an event larger than its bound, and never panics.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"data: a\n\n", "id: 1-0\nretry: 2000\ndata:\n\n", "event: endpoint\ndata: /messages?sessionId=x\n\n",
		"data: a\r\ndata: b\r\n\r\n", "\uFEFFdata: bom\n\n", ": keep-alive\n\n", "data: cut", "data: a\rdata: b\r\r",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 256
		r := NewReader(bytes.NewReader(in), max)
		for i := 0; i <= len(in)+1; i++ {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > max {
				t.Fatalf("an event of %d bytes, over the bound %d", len(ev.Data), max)
			}
		}
		t.Fatal("the reader did not end")
	})
}
