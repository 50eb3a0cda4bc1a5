package schema

import (
	"slices"
	"testing"
	"testing/fstest"
)

// The revisions are the folders named like one: no list to keep by hand.
func TestRevisionsFromFolders(t *testing.T) {
	if want := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}; !slices.Equal(RevisionsIn(FS)[:5], want) {
		t.Errorf("RevisionsIn(FS) = %v, want %v first", RevisionsIn(FS), want)
	}
	fsys := fstest.MapFS{
		"2027-01-01/request/A.json": {}, "2026-07-28/request/A.json": {}, "ext/A.json": {},
		"extensions/tasks/extension.json": {}, "2026-13-01/x.json": {}, "transport.json": {},
	}
	if got := RevisionsIn(fsys); !slices.Equal(got, []string{"2026-07-28", "2027-01-01"}) {
		t.Errorf("RevisionsIn = %v, want the two date folders, oldest first", got)
	}
}
