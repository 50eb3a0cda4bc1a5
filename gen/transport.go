package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// transportFile holds the facts of the transports that differ by revision
// and that no message schema carries (schema/transport.json).
const transportFile = "transport.json"

// transportFacts is transport.json: each fact names the revision it
// starts with, so that a new revision inherits it.
type transportFacts struct {
	Comment        string    `json:"$comment"`
	PrimingEvent   sinceFact `json:"primingEvent"`
	StreamableHTTP sinceFact `json:"streamableHTTP"`
	VersionHeader  sinceFact `json:"versionHeader"`
	MethodHeaders  sinceFact `json:"methodHeaders"`
	ErrorStatus    struct {
		sinceFact
		Codes map[string]int `json:"codes"`
	} `json:"errorStatus"`
	AssumedRevision struct {
		Revision string `json:"revision"`
		About    string `json:"about"`
	} `json:"assumedRevision"`

	raw              []byte // for the schema hash
	assumedByDefault bool   // no assumedRevision given: the oldest, unchecked
}

// sinceFact holds from revision Since on ("" : in none).
type sinceFact struct {
	Since string `json:"since"`
	About string `json:"about"`
}

// holds reports whether the fact holds in revision rev; revisions sort
// by date, so "since" is a string compare here, in the generator, and
// nowhere in handwritten code.
func (f sinceFact) holds(rev string) bool { return f.Since != "" && rev >= f.Since }

// facts are the since-facts by their name in transport.json.
func (t *transportFacts) facts() map[string]sinceFact {
	return map[string]sinceFact{
		"primingEvent": t.PrimingEvent, "streamableHTTP": t.StreamableHTTP,
		"versionHeader": t.VersionHeader, "methodHeaders": t.MethodHeaders, "errorStatus": t.ErrorStatus.sinceFact,
	}
}

// goTransport is the protocol.Transport literal of revision rev.
func (t *transportFacts) goTransport(rev string) string {
	status := "nil"
	if t.ErrorStatus.holds(rev) && len(t.ErrorStatus.Codes) > 0 {
		codes := slices.Sorted(maps.Keys(t.ErrorStatus.Codes))
		var b strings.Builder
		b.WriteString("[]protocol.CodeStatus{")
		for i, c := range codes {
			if i > 0 {
				b.WriteString(", ")
			}
			code, _ := strconv.Atoi(c) // loadTransport checked it
			fmt.Fprintf(&b, "{Code: %d, Status: %d}", code, t.ErrorStatus.Codes[c])
		}
		b.WriteString("}")
		status = b.String()
	}
	return fmt.Sprintf("protocol.Transport{PrimingEvent: %v, StreamableHTTP: %v, VersionHeader: %v, MethodHeaders: %v, ErrorStatus: %s}",
		t.PrimingEvent.holds(rev), t.StreamableHTTP.holds(rev), t.VersionHeader.holds(rev), t.MethodHeaders.holds(rev), status)
}

// loadTransport reads transport.json; without one (or without
// assumedRevision) no revision primes its streams and the oldest is
// assumed.
func loadTransport(fsys fs.FS, revisions []string) (*transportFacts, error) {
	t := &transportFacts{}
	b, err := fs.ReadFile(fsys, transportFile)
	if errors.Is(err, fs.ErrNotExist) {
		t.AssumedRevision.Revision, t.assumedByDefault = revisions[0], true
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("%s: %w", transportFile, err)
	}
	t.raw = b
	for _, name := range slices.Sorted(maps.Keys(t.facts())) {
		if s := t.facts()[name].Since; s != "" && !slices.Contains(revisions, s) {
			return nil, fmt.Errorf("%s: %s.since %q is not a revision (have %v)", transportFile, name, s, revisions)
		}
	}
	for code, status := range t.ErrorStatus.Codes {
		if n, err := strconv.Atoi(code); err != nil || n >= 0 || status < 400 || status > 599 {
			return nil, fmt.Errorf("%s: errorStatus.codes: %q: %d is not a JSON-RPC error code and an HTTP error status", transportFile, code, status)
		}
	}
	if t.AssumedRevision.Revision == "" {
		t.AssumedRevision.Revision, t.assumedByDefault = revisions[0], true
	}
	if !slices.Contains(revisions, t.AssumedRevision.Revision) {
		return nil, fmt.Errorf("%s: assumedRevision.revision %q is not a revision (have %v)", transportFile, t.AssumedRevision.Revision, revisions)
	}
	return t, nil
}

// primes reports whether the streams of revision rev start with a
// priming event.
func (t *transportFacts) primes(rev string) bool { return t.PrimingEvent.holds(rev) }

// check holds the facts to the model: the assumed revision is one with
// sessions (initialize), since a request without the header is a
// session's.
func (t *transportFacts) check(m *model) error {
	rev := t.AssumedRevision.Revision
	for i, rs := range m.Revisions {
		if rs.Name != rev {
			continue
		}
		for _, me := range m.Methods {
			if me.Name == "initialize" && me.Revs[i].Present {
				return nil
			}
		}
	}
	if t.assumedByDefault {
		return nil // nothing was claimed
	}
	return fmt.Errorf("%s: assumedRevision.revision %q has no initialize: a request without MCP-Protocol-Version is a session's", transportFile, rev)
}
