package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// transportFile holds the facts of the transports that differ by revision
// and that no message schema carries (schema/transport.json).
const transportFile = "transport.json"

// transportFacts is transport.json: each fact names the revision it
// starts with, so that a new revision inherits it.
type transportFacts struct {
	Comment      string `json:"$comment"`
	PrimingEvent struct {
		Since string `json:"since"`
		About string `json:"about"`
	} `json:"primingEvent"`
	AssumedRevision struct {
		Revision string `json:"revision"`
		About    string `json:"about"`
	} `json:"assumedRevision"`

	raw              []byte // for the schema hash
	assumedByDefault bool   // no assumedRevision given: the oldest, unchecked
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
	if s := t.PrimingEvent.Since; s != "" && !slices.Contains(revisions, s) {
		return nil, fmt.Errorf("%s: primingEvent.since %q is not a revision (have %v)", transportFile, s, revisions)
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
// priming event; revisions sort by date, so "since" is a string compare
// here, in the generator, and nowhere in handwritten code.
func (t *transportFacts) primes(rev string) bool {
	return t.PrimingEvent.Since != "" && rev >= t.PrimingEvent.Since
}

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
