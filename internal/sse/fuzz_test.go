package sse

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"
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

// FuzzLines holds readLine, which splits lines as their ends arrive, to
// the standard's rule applied to the whole stream at once: lines end with
// CRLF, LF or CR, a line the stream ends inside is dropped, a leading BOM
// goes. Read one byte at a time, a CRLF split across reads is one end.
func FuzzLines(f *testing.F) {
	for _, seed := range []string{"a\nb\r\nc\rd", "\r\n\r\r\n\n", "\uFEFFx\ry\r", "a\r", "\r\nz\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want []string
		rest := bytes.TrimPrefix(in, []byte("\uFEFF"))
		for {
			i := bytes.IndexAny(rest, "\r\n")
			if i < 0 {
				break
			}
			want = append(want, string(rest[:i]))
			if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
				i++
			}
			rest = rest[i+1:]
		}
		for _, src := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			r := NewReader(src, 1<<20)
			var got []string
			for {
				line, err := r.readLine()
				if err != nil {
					break
				}
				got = append(got, string(line))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("lines %q, want %q", got, want)
			}
		}
	})
}
