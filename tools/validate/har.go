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
	"time"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/sse"
	"github.com/mcpstack/mcpstack/wire"
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

// maxHAR bounds a HAR file. Its entries are decoded one at a time, but
// their records are all held, to be put in time order: maxHARRecords
// bounds how many (a tiny event costs a record and its place).
const (
	maxHAR        = 256 << 20
	maxHARRecords = 1 << 20
)

// errHARRecords is a HAR file that becomes more records than are held.
var errHARRecords = fmt.Errorf("more than %d messages: split the HAR file", maxHARRecords)

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
	anchors  map[string]time.Time // when requests and progress tokens were POSTed
}

func (h *harReader) next() (data []byte, line int, tooLong bool, ok bool) {
	if h.at >= len(h.lines) {
		return nil, 0, false, false
	}
	l := h.lines[h.at]
	h.at++
	if len(l.data) > h.max {
		return nil, l.entry, true, true
	}
	return l.data, l.entry, false, true
}

func (h *harReader) failure() error { return nil }

// readHAR reads a HAR file, one entry at a time, into records in time
// order; max bounds one record and one event of a stream.
func readHAR(r io.Reader, max int) (*harReader, error) {
	lr := &io.LimitedReader{R: r, N: maxHAR + 1}
	dec := json.NewDecoder(lr)
	h := &harReader{max: max, anchors: map[string]time.Time{}}
	events := sse.NewReader(nil, max)
	entries := 0
	err := harEntries(dec, func(e *harEntry) error {
		entries++
		h.entry(entries, e, events)
		if h.tooMany || len(h.lines)+len(h.streamed) > maxHARRecords {
			return errHARRecords
		}
		return nil
	})
	if lr.N <= 0 {
		return nil, fmt.Errorf("a HAR file larger than %d bytes", maxHAR)
	}
	if errors.Is(err, errHARRecords) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("not a HAR file: %w", err)
	}
	h.place()
	// Records of one time keep the order they were made in.
	sort.SliceStable(h.lines, func(i, j int) bool { return h.lines[i].at.Before(h.lines[j].at) })
	return h, nil
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
			data := bytes.TrimSpace(ev.Data)
			if len(posted) > 0 { // a POST's stream answers its request
				h.message(started, n, session, "s2c", data, nil)
				continue
			}
			h.streamed = append(h.streamed, streamEvent{entry: n, session: session, start: started, data: append([]byte(nil), data...)})
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

// add appends a record of entry n.
func (h *harReader) add(at time.Time, n int, session, dir string, rec map[string]any) {
	rec["ts"], rec["session"], rec["dir"] = at.UTC().Format(time.RFC3339Nano), session, dir
	b, err := json.Marshal(rec)
	if err != nil {
		b = []byte(`{"dir":"` + dir + `","raw":"mcpstack validate: a HAR entry that does not encode"}`)
	}
	h.lines = append(h.lines, harLine{at: at, entry: n, data: b})
}

// message appends the record of a message of entry n (raw when body is
// not JSON) and returns it parsed (nil when it is not).
func (h *harReader) message(at time.Time, n int, session, dir string, body []byte, facts map[string]any) any {
	tree, err := wire.Parse(body)
	rec := map[string]any{"msg": tree}
	if err != nil {
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
			h.anchors[anchorKey(session, "id", id)] = at
		}
		params, _ := m["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		if tok, has := meta["progressToken"]; has {
			h.anchors[anchorKey(session, "token", tok)] = at
		}
	}
}

func anchorKey(session, kind string, v any) string {
	b, _ := json.Marshal(wire.Plain(v))
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
	for _, ev := range h.streamed {
		if ev.entry != prev {
			t, prev = ev.start, ev.entry
		}
		tree, err := wire.Parse(ev.data)
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
