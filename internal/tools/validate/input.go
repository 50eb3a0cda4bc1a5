package validate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Format is the layout of a log.
type Format string

const (
	// FormatAuto tells the two apart by the first line that is JSON: an
	// object with "dir" and no "jsonrpc" is a recording.
	FormatAuto Format = "auto"
	// FormatRecorded is this project's recording format: one
	// schema/ext/RecordedMessage per line, {"dir":"c2s"|"s2c","msg":...}
	// with optional "ts" and "session" (what `mcpstack serve --record`
	// writes).
	FormatRecorded Format = "recorded"
	// FormatJSONL is one JSON-RPC message (or batch) per line, as a stdio
	// capture holds them; directions are inferred.
	FormatJSONL Format = "jsonl"
	// FormatHAR is an HTTP Archive (browser devtools, proxies): read as
	// the recording of its exchanges (see har.go). Auto detects it by a
	// .har name or a document that starts with {"log".
	FormatHAR Format = "har"
)

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatAuto, FormatRecorded, FormatJSONL, FormatHAR:
		return f, nil
	case "":
		return FormatAuto, nil
	}
	return "", fmt.Errorf("unknown format %q (want auto, recorded, jsonl or har)", s)
}

// Input is one log to check.
type Input struct {
	// Name is how findings name the log (a path; "-" is stdin).
	Name string
	// Open returns the log's bytes; gzip is detected and undone.
	Open func() (io.ReadCloser, error)
	// Format overrides the validator's format for this input.
	Format Format
	// Server, when set, makes this input the client's side of a stdio
	// pair (what the client wrote) and Server the server's side (what the
	// server wrote). Both are plain JSON Lines; they are merged into one
	// session (see pair.go).
	Server *Input
}

// FileInput is the file at path; "-" is standard input.
func FileInput(path string) Input {
	if path == "-" {
		return ReaderInput("-", os.Stdin)
	}
	return Input{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// ReaderInput reads r once.
func ReaderInput(name string, r io.Reader) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }}
}

// PairInput is a stdio pair: what the client wrote and what the server
// wrote, one message a line each.
func PairInput(clientSide, serverSide Input) Input {
	in := clientSide
	s := serverSide
	in.Server = &s
	return in
}

// ExpandArgs turns command-line arguments into file paths: "-" stays,
// an existing file stays, a directory gives its *.jsonl, *.ndjson and
// *.log files (also gzipped) recursively, anything else is a glob
// (filepath.Match syntax) that must match at least one file.
func ExpandArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		switch {
		case err == nil && fi.IsDir():
			files, werr := logFiles(a)
			if werr != nil {
				return nil, werr
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.jsonl, *.ndjson, *.log or *.har files in the directory", a)
			}
			out = append(out, files...)
		case err == nil:
			out = append(out, a)
		case strings.ContainsAny(a, "*?["):
			m, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", a, gerr)
			}
			var files []string
			for _, p := range m {
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
					files = append(files, p)
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no file matches", a)
			}
			out = append(out, files...)
		default:
			return nil, err
		}
	}
	return out, nil
}

func logFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := strings.TrimSuffix(d.Name(), ".gz")
		switch filepath.Ext(name) {
		case ".jsonl", ".ndjson", ".log", ".har":
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// openLog opens an input, undoing gzip (detected by its magic bytes).
func openLog(in Input) (io.ReadCloser, error) {
	if in.Open == nil {
		return nil, errors.New("no way to open it")
	}
	rc, err := in.Open()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 256<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return &readCloser{Reader: bufio.NewReaderSize(zr, 256<<10), close: func() error { zr.Close(); return rc.Close() }}, nil
	}
	return &readCloser{Reader: br, close: rc.Close}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }

// lineSource is where the pipeline gets a log's lines: a lineReader, or
// the records a HAR file becomes.
type lineSource interface {
	next() (data []byte, line int, tooLong bool, ok bool)
	failure() error
}

// isHAR reports whether a log is a HAR file: by its format, its name, or
// (auto) a document that opens with {"log".
func isHAR(in Input, format Format, rc io.Reader) bool {
	switch format {
	case FormatHAR:
		return true
	case FormatAuto:
	default:
		return false
	}
	if strings.HasSuffix(strings.TrimSuffix(in.Name, ".gz"), ".har") {
		return true
	}
	rcc, ok := rc.(*readCloser)
	if !ok {
		return false
	}
	br, ok := rcc.Reader.(*bufio.Reader)
	if !ok {
		return false
	}
	head, _ := br.Peek(256)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if !bytes.HasPrefix(head, []byte("{")) {
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(head[1:], " \t\r\n"), []byte(`"log"`))
}

// lineReader splits a log into lines. Blank lines are skipped; a trailing
// \r and a UTF-8 byte order mark at the start are dropped. A line longer
// than max is reported (tooLong) and skipped without being held.
type lineReader struct {
	br   *bufio.Reader
	max  int
	line int
	buf  []byte
	err  error
	bom  bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	return &lineReader{br: br, max: max}
}

// next returns the next non-blank line and its number. The bytes are valid
// until the next call. tooLong is set for a line over the limit (data is
// then nil). At the end it returns ok false; err says why when it is not
// the end of the input.
func (lr *lineReader) next() (data []byte, line int, tooLong bool, ok bool) {
	for lr.err == nil {
		lr.buf = lr.buf[:0]
		long := false
		for {
			chunk, err := lr.br.ReadSlice('\n')
			if !long {
				if len(lr.buf)+len(chunk) > lr.max+2 {
					long = true
					lr.buf = lr.buf[:0]
				} else {
					lr.buf = append(lr.buf, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				lr.err = err
			} else if err != nil {
				lr.err = io.EOF
				if len(chunk) == 0 && len(lr.buf) == 0 && !long {
					return nil, 0, false, false
				}
			}
			break
		}
		lr.line++
		if long {
			return nil, lr.line, true, true
		}
		b := lr.buf
		if !lr.bom {
			lr.bom = true
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		b = bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if len(b) > lr.max {
			return nil, lr.line, true, true
		}
		return b, lr.line, false, true
	}
	return nil, 0, false, false
}

// failure returns the read error, nil at a clean end.
func (lr *lineReader) failure() error {
	if errors.Is(lr.err, io.EOF) {
		return nil
	}
	return lr.err
}

// detectFormat tells a recording from plain JSON Lines by one line.
func detectFormat(line []byte) (Format, bool) {
	v, err := parseJSON(line)
	if err != nil {
		return "", false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return FormatJSONL, true
	}
	if _, rpc := obj["jsonrpc"]; rpc {
		return FormatJSONL, true
	}
	if _, dir := obj["dir"]; dir {
		return FormatRecorded, true
	}
	return FormatJSONL, true
}
