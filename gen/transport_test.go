package main

import (
	"strings"
	"testing"
	"testing/fstest"
)

// transport.json is checked when it is read: a fact names a revision
// that exists, and nothing unknown is accepted silently.
func TestLoadTransport(t *testing.T) {
	revs := []string{"2025-03-26", "2025-11-25"}
	for _, tc := range []struct {
		name, file, wantErr string
		primes              []bool
		assumed             string
	}{
		{"absent", "", "", []bool{false, false}, "2025-03-26"},
		{"since", `{"primingEvent":{"since":"2025-11-25"},"assumedRevision":{"revision":"2025-03-26"}}`, "", []bool{false, true}, "2025-03-26"},
		{"since the oldest", `{"primingEvent":{"since":"2025-03-26"},"assumedRevision":{"revision":"2025-11-25"}}`, "", []bool{true, true}, "2025-11-25"},
		{"unknown revision", `{"primingEvent":{"since":"2030-01-01"}}`, `primingEvent.since "2030-01-01" is not a revision`, nil, ""},
		{"unknown assumed", `{"assumedRevision":{"revision":"2024-01-01"}}`, `assumedRevision.revision "2024-01-01" is not a revision`, nil, ""},
		{"unknown fact", `{"pingEvery":"5s"}`, `unknown field "pingEvery"`, nil, ""},
		{"another fact, unknown revision", `{"versionHeader":{"since":"2031-01-01"}}`, `versionHeader.since "2031-01-01" is not a revision`, nil, ""},
		{"an error status that is none", `{"errorStatus":{"since":"2025-11-25","codes":{"-32601":200}}}`, `errorStatus.codes: "-32601": 200`, nil, ""},
		{"an error code that is none", `{"errorStatus":{"since":"2025-11-25","codes":{"x":400}}}`, `errorStatus.codes: "x"`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tc.file != "" {
				fsys[transportFile] = &fstest.MapFile{Data: []byte(tc.file)}
			}
			facts, err := loadTransport(fsys, revs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, rev := range revs {
				if facts.primes(rev) != tc.primes[i] {
					t.Errorf("primes(%s) = %v", rev, !tc.primes[i])
				}
			}
			if facts.AssumedRevision.Revision != tc.assumed {
				t.Errorf("assumed %q, want %q", facts.AssumedRevision.Revision, tc.assumed)
			}
		})
	}
}
