package validate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/jsontree"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/sse"
)

// A HAR file (HTTP Archive 1.2: browser devtools, proxies and test tools
// export one) is read as the recording mcpstack proxy would have written
// of the same exchanges: each POSTed message with the facts of its
// exchange, the messages of JSON and event-stream answers, a refused
// event for an answer without a JSON-RPC body, a shutdown for a DELETE.
// A finding's line is the number of the HAR entry (1-based, in
// log.entries order) the message came in.
//
// A HAR entry has one time, its start: the events of a stream have
// none. An answer (JSON or a POST's stream) is placed right after its
// request; the events of a GET stream in their stream's order from its
// start, each answer after its request's POST (see place), so that they
// come before the DELETE that ends their session.

// maxHAR bounds what a HAR file holds in memory. Its bytes (after gzip)
// are read up to maxHAR, and the file is refused as soon as there are
// more; its entries are decoded one at a time from them, and each chunk
// of them is let go once decoded. The records the entries become are all
// held, to be put in time order: with the bytes not decoded yet, they may
// not come to more than maxHAR either (a body of control characters
// becomes a record six times its size). A body longer than the line bound
// is not held (a line too long). maxHARRecords bounds how many records (a
// tiny event costs a record and its place). A variable: tests lower it.
var maxHAR = 256 << 20

const maxHARRecords = 1 << 20

// harRecordCost is what a record costs besides its bytes (its place, its
// share of the slice): held counts it.
const harRecordCost = 64

// errHARRecords is a HAR file that becomes more records than are held.
var errHARRecords = fmt.Errorf("more than %d messages: split the HAR file", maxHARRecords)

// errHARHeld is a HAR file whose records, with the bytes not decoded yet,
// come to more than maxHAR.
var errHARHeld = errors.New("too many message bytes")

// harHeldError is what readHAR says of errHARHeld.
func harHeldError() error {
	return fmt.Errorf("its messages need more than %d bytes of memory: split the HAR file", maxHAR)
}

type harEntry struct {
	Started string `json:"startedDateTime"`
	Request struct {
		Method   string      `json:"method"`
		URL      string      `json:"url"`
		Headers  []harHeader `json:"headers"`
		PostData *struct {
			Text string `json:"text"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int         `json:"status"`
		Headers []harHeader `json:"headers"`
		Content struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func harHeaders(hs []harHeader) http.Header {
	h := http.Header{}
	for _, x := range hs {
		h.Add(x.Name, x.Value)
	}
	return h
}

// harLine is one record of the recording a HAR file becomes.
type harLine struct {
	at    time.Time
	entry int    // 1-based
	data  []byte // the record, encoded
}

// harReader serves the records of a HAR file as lines, numbered by entry.
type harReader struct {
	lines []harLine
	at    int
	max   int // a record larger than this is tooLong, as a line would be

	streamed []streamEvent        // GET streams' events, until place
	tooMany  bool                 // more records than maxHARRecords
	held     int                  // bytes of the records, streamed events and anchors (harRecordCost each)
	doc      *chunkReader         // the bytes not decoded yet
	full     bool                 // held and doc passed maxHAR: readHAR fails
	anchors  map[string]time.Time // when requests and progress tokens were POSTed
}

// fits reports whether n bytes more would fit in maxHAR with what is held
// and the bytes of the file not decoded yet; when they would not, the
// file fails (full), before they are made.
func (h *harReader) fits(n int) bool {
	if h.held+n+harRecordCost+h.doc.left > maxHAR {
		h.full = true
	}
	return !h.full
}

// hold counts n bytes more held, and reports whether they fit in maxHAR
// with the bytes of the file not decoded yet.
func (h *harReader) hold(n int) bool {
	h.held += n + harRecordCost
	if h.held+h.doc.left > maxHAR {
		h.full = true
	}
	return !h.full
}

func (h *harReader) next() (data []byte, line int, tooLong bool, ok bool) {
	if h.at >= len(h.lines) {
		return nil, 0, false, false
	}
	l := h.lines[h.at]
	h.lines[h.at].data = nil // read: let it go
	h.at++
	if l.data == nil || len(l.data) > h.max {
		return nil, l.entry, true, true
	}
	return l.data, l.entry, false, true
}

func (h *harReader) failure() error { return nil }

// readHAR reads a HAR file, one entry at a time, into records in time
// order; max bounds one record and one event of a stream.
func readHAR(r io.Reader, max int) (*harReader, error) {
	doc, err := readBounded(r, maxHAR)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(doc)
	h := &harReader{max: max, doc: doc, anchors: map[string]time.Time{}}
	events := sse.NewReader(nil, max)
	entries := 0
	err = harEntries(dec, func(e *harEntry) error {
		entries++
		h.entry(entries, e, events)
		if h.full {
			return errHARHeld
		}
		if h.tooMany || len(h.lines)+len(h.streamed) > maxHARRecords {
			return errHARRecords
		}
		return nil
	})
	switch {
	case errors.Is(err, errHARHeld):
		return nil, harHeldError()
	case errors.Is(err, errHARRecords):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("not a HAR file: %w", err)
	}
	h.place()
	if h.full {
		return nil, harHeldError()
	}
	// Records of one time keep the order they were made in.
	sort.SliceStable(h.lines, func(i, j int) bool { return h.lines[i].at.Before(h.lines[j].at) })
	return h, nil
}

// harChunk is the most readBounded reads at once.
const harChunk = 1 << 20

// readBounded reads r to its end in chunks, and fails as soon as it read
// more than limit bytes: it never holds more than limit plus a chunk.
// The reader it returns lets each chunk go once read.
func readBounded(r io.Reader, limit int) (*chunkReader, error) {
	var c chunkReader
	total, size := 0, 32<<10
	for {
		buf := make([]byte, min(size, limit+1-total))
		n, err := io.ReadFull(r, buf)
		total += n
		if n > 0 {
			c.chunks = append(c.chunks, buf[:n])
			c.left += n
		}
		if total > limit {
			return nil, fmt.Errorf("a HAR file larger than %d bytes", limit)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &c, nil
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, harChunk)
	}
}

// chunkReader reads the chunks of readBounded, letting each go once read.
type chunkReader struct {
	chunks [][]byte
	left   int // bytes not read yet
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks[0] = nil
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	c.left -= n
	return n, nil
}

// harEntries calls fn with each entry of log.entries, decoding one at a
// time; it fails on a document that is not {"log":{"entries":[...]}}.
func harEntries(dec *json.Decoder, fn func(*harEntry) error) error {
	found := false
	err := members(dec, "", func(key string) error {
		if key != "log" {
			return skipValue(dec)
		}
		return members(dec, "log", func(key string) error {
			if key != "entries" {
				return skipValue(dec)
			}
			found = true
			if err := expectDelim(dec, '['); err != nil {
				return fmt.Errorf("log.entries: %w", err)
			}
			for n := 0; dec.More(); n++ {
				var e harEntry
				if err := dec.Decode(&e); err != nil {
					return fmt.Errorf("log.entries[%d]: %w", n, err)
				}
				if err := fn(&e); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ]
			return err
		})
	})
	if err == nil && !found {
		err = errors.New("no log.entries")
	}
	return err
}

// members reads the JSON object at dec (at, its path for errors), calling
// fn with each key: fn reads the value.
func members(dec *json.Decoder, at string, fn func(key string) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		if at != "" {
			return fmt.Errorf("%s: %w", at, err)
		}
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if err := fn(key.(string)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // }
	return err
}

// skipValue reads past the value at dec.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

// entry adds the records of one HAR entry.
func (h *harReader) entry(n int, e *harEntry, events *sse.Reader) {
	started, _ := time.Parse(time.RFC3339Nano, e.Started)
	reqH, respH := harHeaders(e.Request.Headers), harHeaders(e.Response.Headers)
	u, _ := url.Parse(e.Request.URL)
	session := reqH.Get("Mcp-Session-Id")
	if session == "" {
		session = respH.Get("Mcp-Session-Id")
	}
	sse := false // HTTP+SSE: the session is in the URL
	if session == "" && u != nil {
		session = httpfacts.QuerySession(u)
		sse = session != ""
	}
	var posted []byte
	if e.Request.Method == http.MethodPost && e.Request.PostData != nil {
		posted = bytes.TrimSpace([]byte(e.Request.PostData.Text))
	}
	var postedTree any // what the POST held, parsed, for anchor
	if len(posted) > 0 {
		facts := map[string]any{"method": e.Request.Method, "request": stringMap(httpfacts.Kept(reqH)), "response": stringMap(httpfacts.Kept(respH))}
		if sse {
			facts["sse"] = true
		}
		if e.Response.Status >= 100 && e.Response.Status <= 599 {
			facts["status"] = e.Response.Status
		}
		postedTree = h.message(started, n, session, "c2s", posted, facts)
	}
	body := []byte(e.Response.Content.Text)
	if e.Response.Content.Encoding == "base64" {
		if d, err := base64.StdEncoding.DecodeString(e.Response.Content.Text); err == nil {
			body = d
		}
	}
	ct := respH.Get("Content-Type")
	if ct == "" {
		ct = e.Response.Content.MimeType
	}
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case e.Response.Status >= 400 && e.Response.Status <= 599 && mt != "application/json" && mt != "text/event-stream":
		if ids := httpfacts.RequestIDs(posted); len(ids) > 0 {
			answers := make([]any, len(ids))
			for i, id := range ids {
				answers[i] = id.Value()
			}
			h.add(started, n, session, "s2c", map[string]any{"event": eventRefused, "status": e.Response.Status, "answers": answers})
		}
	case mt == "application/json" && len(bytes.TrimSpace(body)) > 0:
		facts := map[string]any{"response": stringMap(httpfacts.Kept(respH))}
		if e.Response.Status >= 100 && e.Response.Status <= 599 {
			facts["status"] = e.Response.Status
		}
		h.message(started, n, session, "s2c", bytes.TrimSpace(body), facts)
	case mt == "text/event-stream":
		events.Reset(bytes.NewReader(body))
		for {
			ev, err := events.Next()
			if err != nil {
				break
			}
			if ev.Type == "endpoint" { // HTTP+SSE: the stream's session is in the URL it names
				if eu, err := url.Parse(string(ev.Data)); err == nil && httpfacts.QuerySession(eu) != "" {
					session = httpfacts.QuerySession(eu)
				}
				continue
			}
			if len(h.lines)+len(h.streamed) > maxHARRecords {
				h.tooMany = true // readHAR fails; holding more would not bound memory
				break
			}
			if h.full {
				break
			}
			data := bytes.TrimSpace(ev.Data)
			if len(posted) > 0 { // a POST's stream answers its request
				h.message(started, n, session, "s2c", data, nil)
				continue
			}
			if h.hold(len(data)) {
				h.streamed = append(h.streamed, streamEvent{entry: n, session: session, start: started, data: append([]byte(nil), data...)})
			}
		}
	}
	h.anchor(session, started, postedTree)
	if e.Request.Method == http.MethodDelete && e.Response.Status/100 == 2 && session != "" {
		h.add(started, n, session, "c2s", map[string]any{"event": eventShutdown})
	}
}

// streamEvent is an event of a GET stream, placed once every entry is
// read (see place).
type streamEvent struct {
	entry   int
	session string
	start   time.Time
	data    []byte
}

// add appends a record of entry n. A record longer than the line bound
// is held as a line too long, without its bytes; past maxHAR none is.
// Its size is known before it is encoded (encodedLen), and checked
// against both: a record that does not fit is never made (one of 1.1
// times maxHAR, encoded then refused, took 8.9 times maxHAR at its peak),
// and one that does is written into a buffer of its size, with no
// encoder's buffer besides.
func (h *harReader) add(at time.Time, n int, session, dir string, rec map[string]any) {
	if h.full {
		return
	}
	rec["ts"], rec["session"], rec["dir"] = at.UTC().Format(time.RFC3339Nano), session, dir
	size, ok := encodedLen(rec)
	switch {
	case !ok:
		h.keep(at, n, []byte(`{"dir":"`+dir+`","raw":"mcpstack validate: a HAR entry that does not encode"}`))
	case size > h.max:
		h.keep(at, n, nil) // too long: next says so
	case h.fits(size):
		h.keep(at, n, appendJSON(make([]byte, 0, size), rec))
	}
}

// keep holds a record (nil: a line too long), within maxHAR.
func (h *harReader) keep(at time.Time, n int, b []byte) {
	if h.hold(cap(b)) {
		h.lines = append(h.lines, harLine{at: at, entry: n, data: b})
	}
}

// message appends the record of a message of entry n (raw when body is
// not JSON) and returns it parsed (nil when it is not). A body longer
// than the line bound is a line too long, neither parsed nor encoded.
func (h *harReader) message(at time.Time, n int, session, dir string, body []byte, facts map[string]any) any {
	if len(body) > h.max || h.full {
		h.keep(at, n, nil)
		return nil
	}
	tree, err := jsontree.Parse(body)
	rec := map[string]any{"msg": tree}
	if err != nil {
		if jsonStringLen(body) > h.max {
			h.keep(at, n, nil) // control characters: six bytes each, escaped
			return nil
		}
		tree, rec = nil, map[string]any{"raw": string(body)}
	}
	if facts != nil {
		rec["http"] = facts
	}
	h.add(at, n, session, dir, rec)
	return tree
}

// anchor remembers when a POST sent its requests and progress tokens:
// what a GET stream says of them goes after it.
func (h *harReader) anchor(session string, at time.Time, tree any) {
	if tree == nil {
		return
	}
	msgs, isBatch := tree.([]any)
	if !isBatch {
		msgs = []any{tree}
	}
	for _, v := range msgs {
		m, _ := v.(map[string]any)
		if _, isCall := m["method"]; !isCall {
			continue
		}
		if id, has := m["id"]; has {
			h.setAnchor(anchorKey(session, "id", id), at)
		}
		params, _ := m["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		if tok, has := meta["progressToken"]; has {
			h.setAnchor(anchorKey(session, "token", tok), at)
		}
	}
}

func (h *harReader) setAnchor(key string, at time.Time) {
	if _, known := h.anchors[key]; known || h.hold(len(key)) {
		h.anchors[key] = at
	}
}

// jsonStringLen is the length of body encoded as a JSON string (as add
// encodes it), without encoding it.
func jsonStringLen[T string | []byte](body T) int {
	n := 2
	for i := 0; i < len(body); {
		c := body[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := decodeRune(body[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

func decodeRune[T string | []byte](s T) (rune, int) {
	switch s := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(s)
	case []byte:
		return utf8.DecodeRune(s)
	}
	return utf8.RuneError, 1
}

// appendJSONString appends s encoded as a JSON string, as encoding/json
// writes it with SetEscapeHTML(false): jsonStringLen bytes.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				if c < 0x20 {
					dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				} else {
					dst = append(dst, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// encodedLen is the length of a record encoded by appendJSON, without
// encoding it; ok is false for a value appendJSON cannot encode. Records
// hold what jsontree.Parse makes (objects, arrays, strings, json.Number,
// booleans, null) and the facts add puts with them (ints).
func encodedLen(v any) (n int, ok bool) {
	switch v := v.(type) {
	case nil:
		return 4, true
	case bool:
		if v {
			return 4, true
		}
		return 5, true
	case string:
		return jsonStringLen(v), true
	case json.Number:
		if !isJSONNumber(string(v)) {
			return 0, false
		}
		return len(v), true
	case int:
		return len(strconv.Itoa(v)), true
	case []any:
		n = 2 + max(len(v)-1, 0)
		for _, e := range v {
			m, ok := encodedLen(e)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case map[string]any:
		n = 2 + max(len(v)-1, 0)
		for k, e := range v {
			m, ok := encodedLen(e)
			if !ok {
				return 0, false
			}
			n += jsonStringLen(k) + 1 + m
		}
		return n, true
	}
	return 0, false
}

// appendJSON appends v encoded as encoding/json encodes it (members in
// the order of their names, HTML characters as they are); v is one
// encodedLen accepts.
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case string:
		return appendJSONString(dst, v)
	case json.Number:
		return append(dst, v...)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, v[k])
		}
		return append(dst, '}')
	}
	return dst
}

// isJSONNumber reports whether s is a JSON number (encoding/json refuses
// to encode a json.Number that is not).
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func anchorKey(session, kind string, v any) string {
	b, _ := json.Marshal(codec.Plain(v))
	return session + "\x00" + kind + "\x00" + string(b)
}

// place puts the events of GET streams in time: a HAR gives a stream one
// time, its start, and none to its events. Each event keeps its place in
// its stream; an answer goes after the POST of its request (HTTP+SSE
// answers every request so), a progress notification after the request
// that carries its token, anything else right after the event before it.
func (h *harReader) place() {
	var t time.Time
	prev := 0
	for i := range h.streamed {
		ev := h.streamed[i]
		h.streamed[i].data = nil // let it go once placed
		if ev.entry != prev {
			t, prev = ev.start, ev.entry
		}
		tree, err := jsontree.Parse(ev.data)
		if err == nil {
			msgs, isBatch := tree.([]any) // a batch goes after the latest of its anchors
			if !isBatch {
				msgs = []any{tree}
			}
			for _, v := range msgs {
				m, _ := v.(map[string]any)
				if m == nil {
					continue
				}
				var key string
				if _, isCall := m["method"]; !isCall {
					key = anchorKey(ev.session, "id", m["id"])
				} else if m["method"] == "notifications/progress" {
					params, _ := m["params"].(map[string]any)
					key = anchorKey(ev.session, "token", params["progressToken"])
				}
				if at, ok := h.anchors[key]; ok && at.After(t) {
					t = at
				}
			}
		}
		h.held -= len(ev.data) + harRecordCost // held as an event so far: now as a record
		if err != nil && jsonStringLen(ev.data) > h.max {
			h.keep(t, ev.entry, nil)
			continue
		}
		rec := map[string]any{"msg": tree}
		if err != nil {
			rec = map[string]any{"raw": string(ev.data)}
		}
		h.add(t, ev.entry, ev.session, "s2c", rec)
	}
	h.streamed, h.anchors = nil, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
