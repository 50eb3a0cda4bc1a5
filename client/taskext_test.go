package client

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// Each question of a task is answered once while the server lists it,
// and the set of answered questions never outgrows one poll's, however
// many new ones a server lists poll after poll.
func TestPendingQuestions(t *testing.T) {
	answered := map[string]bool{}
	answer := func(reqs map[string]any) []string {
		fresh := pending(reqs, answered)
		for k := range fresh {
			answered[k] = true // as answerTask does once tasks/update is sent
		}
		return slices.Sorted(maps.Keys(fresh))
	}
	polls := []struct {
		listed []string
		want   []string // answered at this poll
	}{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "b"}, nil}, // not processed yet: not asked twice
		{[]string{"b", "c"}, []string{"c"}},
		{[]string{"a"}, []string{"a"}}, // dropped, then listed again: a new question
	}
	for i, p := range polls {
		reqs := map[string]any{}
		for _, k := range p.listed {
			reqs[k] = map[string]any{}
		}
		if got := answer(reqs); !slices.Equal(got, p.want) {
			t.Errorf("poll %d: answered %v, want %v", i, got, p.want)
		}
	}
	for i := range 10_000 { // a server that lists two new questions each poll
		reqs := map[string]any{fmt.Sprint("q", 2*i): nil, fmt.Sprint("q", 2*i+1): nil}
		if got := answer(reqs); len(got) != 2 {
			t.Fatalf("poll %d: answered %v", i, got)
		}
	}
	if len(answered) > 2 {
		t.Errorf("%d questions remembered, want at most one poll's (2)", len(answered))
	}
}
