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
// request; the events of a GET stream at the stream's end (start + time),
// which puts HTTP+SSE answers after the requests they answer.

// maxHAR bounds a HAR file: it is read whole.
const maxHAR = 1 << 30

type harFile struct {
	Log struct {
		Entries []harEntry `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	Started string  `json:"startedDateTime"`
	Time    float64 `json:"time"` // ms
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
	seq   int // the order of making, for equal times
	entry int // 1-based
	rec   map[string]any
}

// harReader serves the records of a HAR file as lines, numbered by entry.
type harReader struct {
	lines []harLine
	next_ int
	err   error
}

func (h *harReader) next() (data []byte, line int, tooLong bool, ok bool) {
	if h.next_ >= len(h.lines) {
		return nil, 0, false, false
	}
	l := h.lines[h.next_]
	h.next_++
	b, err := json.Marshal(l.rec)
	if err != nil {
		h.err = err
		return nil, 0, false, false
	}
	return b, l.entry, false, true
}

func (h *harReader) failure() error { return h.err }

// readHAR reads a HAR file whole and turns it into records.
func readHAR(r io.Reader, maxEvent int) (*harReader, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxHAR+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxHAR {
		return nil, fmt.Errorf("a HAR file larger than %d bytes", maxHAR)
	}
	var f harFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a HAR file: %w", err)
	}
	if f.Log.Entries == nil {
		return nil, errors.New("not a HAR file: no log.entries")
	}
	h := &harReader{}
	events := sse.NewReader(nil, maxEvent)
	for i, e := range f.Log.Entries {
		h.entry(i+1, e, events)
	}
	sort.SliceStable(h.lines, func(i, j int) bool {
		if !h.lines[i].at.Equal(h.lines[j].at) {
			return h.lines[i].at.Before(h.lines[j].at)
		}
		return h.lines[i].seq < h.lines[j].seq
	})
	return h, nil
}

// entry adds the records of one HAR entry.
func (h *harReader) entry(n int, e harEntry, events *sse.Reader) {
	started, _ := time.Parse(time.RFC3339Nano, e.Started)
	end := started.Add(time.Duration(e.Time * float64(time.Millisecond)))
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
	add := func(at time.Time, dir string, rec map[string]any) {
		rec["ts"], rec["session"], rec["dir"] = at.UTC().Format(time.RFC3339Nano), session, dir
		h.lines = append(h.lines, harLine{at: at, seq: len(h.lines), entry: n, rec: rec})
	}
	message := func(at time.Time, dir string, body []byte) map[string]any {
		rec := map[string]any{}
		if tree, err := wire.Parse(body); err == nil {
			rec["msg"] = tree
		} else {
			rec["raw"] = string(body)
		}
		add(at, dir, rec)
		return rec
	}
	var posted []byte
	if e.Request.Method == http.MethodPost && e.Request.PostData != nil {
		posted = bytes.TrimSpace([]byte(e.Request.PostData.Text))
	}
	if len(posted) > 0 {
		rec := message(started, "c2s", posted)
		facts := map[string]any{"method": e.Request.Method, "request": stringMap(httpfacts.Kept(reqH)), "response": stringMap(httpfacts.Kept(respH))}
		if sse {
			facts["sse"] = true
		}
		if e.Response.Status >= 100 && e.Response.Status <= 599 {
			facts["status"] = e.Response.Status
		}
		rec["http"] = facts
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
			add(started, "s2c", map[string]any{"event": eventRefused, "status": e.Response.Status, "answers": answers})
		}
	case mt == "application/json" && len(bytes.TrimSpace(body)) > 0:
		message(started, "s2c", bytes.TrimSpace(body))
	case mt == "text/event-stream":
		at := started // a POST's stream answers its request
		if len(posted) == 0 {
			at = end
		}
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
			message(at, "s2c", append([]byte(nil), bytes.TrimSpace(ev.Data)...))
		}
	}
	if e.Request.Method == http.MethodDelete && e.Response.Status/100 == 2 && session != "" {
		add(started, "c2s", map[string]any{"event": eventShutdown})
	}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
