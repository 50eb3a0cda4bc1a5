package chat

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// WithTiming sees the chat tool's calls to its store and its model, with
// how each ended.
func TestTiming(t *testing.T) {
	type timed struct {
		what string
		err  error
	}
	var mu sync.Mutex
	var got []timed
	timing := func(ctx context.Context, kind, op string) (context.Context, func(error)) {
		return ctx, func(err error) {
			mu.Lock()
			got = append(got, timed{kind + " " + op, err})
			mu.Unlock()
		}
	}
	ag := &scripted{deltas: []string{"Hi."}}
	a, _ := newApp(t, ag, WithTiming(timing))
	ctx := ctxOf(client(t, "s1"), "alice")
	if tree := call(t, a, ctx, ToolChat, map[string]any{"query": "Hello"}); isError(tree) {
		t.Fatalf("chat: %v", tree)
	}
	var whats []string
	for _, g := range got {
		whats = append(whats, g.what)
		if g.err != nil {
			t.Errorf("%s ended with %v", g.what, g.err)
		}
	}
	if !slices.Contains(whats, "model scripted") || !slices.Contains(whats, "store create") {
		t.Errorf("timed %v, want the model's answer and the conversation's creation", whats)
	}
	ag.err = errors.New("down")
	got = nil
	call(t, a, ctx, ToolChat, map[string]any{"query": "Again"})
	if i := slices.IndexFunc(got, func(g timed) bool { return g.what == "model scripted" }); i < 0 || got[i].err == nil {
		t.Errorf("a failing model: timed %v, want its error", got)
	}
}
