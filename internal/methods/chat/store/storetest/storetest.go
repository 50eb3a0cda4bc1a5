// Package storetest is the suite every store.Store backend must pass. A
// backend's test calls Run with a function that makes a fresh, empty
// database and returns how to open it (again).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
)

// Opener opens the database under test; every call opens the same one
// (a second call after Close is a restart).
type Opener func() (store.Store, error)

// NewDB makes a fresh, empty database for one test, whose clock is now,
// and arranges its removal with t.Cleanup.
type NewDB func(t *testing.T, now func() time.Time) Opener

// Clock is a fake clock that advances by one second per reading, so every
// write has its own time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at 2026-01-02T03:04:05Z.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the next second.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func open(t *testing.T, newDB NewDB) (store.Store, Opener) {
	t.Helper()
	o := newDB(t, NewClock().Now)
	s, err := o()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, o
}

// Run runs the suite; its tests run in parallel, each on a database of its
// own.
func Run(t *testing.T, newDB NewDB) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newDB NewDB)
	}{
		{"CreateGet", testCreateGet},
		{"Append", testAppend},
		{"EmptyConversation", testEmpty},
		{"DuplicateID", testDuplicateID},
		{"BadRole", testBadRole},
		{"Users", testUsers},
		{"List", testList},
		{"ListPrefix", testListPrefix},
		{"Search", testSearch},
		{"SearchLiteral", testSearchLiteral},
		{"Delete", testDelete},
		{"Restart", testRestart},
		{"ConcurrentAppend", testConcurrentAppend},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each test has a database of its own
			tc.fn(t, newDB)
		})
	}
}

var ctx = context.Background()

func usage(p, c int64) *store.Usage {
	return &store.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func turns(q, a string) []store.Message {
	return []store.Message{
		{Role: store.RoleUser, Content: q},
		{Role: store.RoleAssistant, Content: a, Provider: "echo", Model: "echo-1", Usage: usage(3, 5)},
	}
}

func mustGet(t *testing.T, s store.Store, user, id string) *store.Conversation {
	t.Helper()
	c, err := s.Get(ctx, user, id)
	if err != nil {
		t.Fatalf("Get(%s, %s): %v", user, id, err)
	}
	return c
}

func checkMessages(t *testing.T, got []store.Message, want ...store.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != int64(i+1) || g.Role != w.Role || g.Content != w.Content || g.Provider != w.Provider || g.Model != w.Model {
			t.Errorf("message %d = {seq %d %s %q %s %s}, want {seq %d %s %q %s %s}", i, g.Seq, g.Role, g.Content, g.Provider, g.Model,
				i+1, w.Role, w.Content, w.Provider, w.Model)
		}
		switch {
		case w.Usage == nil && g.Usage != nil:
			t.Errorf("message %d has usage %+v, want none", i, *g.Usage)
		case w.Usage != nil && (g.Usage == nil || *g.Usage != *w.Usage):
			t.Errorf("message %d usage %+v, want %+v", i, g.Usage, *w.Usage)
		}
		if g.CreatedAt.IsZero() || g.CreatedAt.Location() != time.UTC {
			t.Errorf("message %d created %v, want a UTC time", i, g.CreatedAt)
		}
	}
}

func testCreateGet(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	msgs := turns("Hello, wörld ✓ — 你好", "Hi! How can I help?")
	msgs[1].Usage.Estimated = true
	c, err := s.Create(ctx, "alice", id, "Greeting", msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.User != "alice" || c.Title != "Greeting" || c.MessageCount != 2 || c.CreatedAt.IsZero() || !c.CreatedAt.Equal(c.UpdatedAt) {
		t.Errorf("Create = %+v", c)
	}
	got := mustGet(t, s, "alice", id)
	if got.ID != id || got.User != "alice" || got.Title != "Greeting" || got.MessageCount != 2 || !got.CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("Get = %+v, want the created conversation %+v", got, c)
	}
	checkMessages(t, got.Messages, msgs...)
	if !got.Messages[0].CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("message time %v, want the creation time %v", got.Messages[0].CreatedAt, c.CreatedAt)
	}
	if _, err := s.Get(ctx, "alice", store.NewID()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
	}
}

func testAppend(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	first := turns("one", "1")
	c0, err := s.Create(ctx, "alice", id, "Counting", first...)
	if err != nil {
		t.Fatal(err)
	}
	second := turns("two", "2")
	c1, err := s.Append(ctx, "alice", id, second...)
	if err != nil {
		t.Fatal(err)
	}
	if c1.MessageCount != 4 || !c1.UpdatedAt.After(c0.UpdatedAt) || !c1.CreatedAt.Equal(c0.CreatedAt) || c1.Title != "Counting" || c1.User != "alice" {
		t.Errorf("Append = %+v after %+v", c1, c0)
	}
	third := []store.Message{{Role: store.RoleUser, Content: "three"}}
	if _, err := s.Append(ctx, "alice", id, third...); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "alice", id)
	checkMessages(t, got.Messages, append(append(first, second...), third...)...)
	if got.MessageCount != 5 {
		t.Errorf("message count %d, want 5", got.MessageCount)
	}
	if _, err := s.Append(ctx, "alice", store.NewID(), third...); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Append(unknown) = %v, want ErrNotFound", err)
	}
}

func testEmpty(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, ""); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "alice", id)
	if got.Messages == nil || len(got.Messages) != 0 || got.MessageCount != 0 || got.Title != "" {
		t.Errorf("Get = %+v, want no messages (an empty, non-nil list)", got)
	}
}

func testDuplicateID(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, "a"); err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"alice", "bob"} {
		if _, err := s.Create(ctx, user, id, "b"); !errors.Is(err, store.ErrExists) {
			t.Errorf("Create(%s, taken id) = %v, want ErrExists", user, err)
		}
	}
	if got := mustGet(t, s, "alice", id); got.Title != "a" {
		t.Errorf("the failed Create changed the conversation: %+v", got)
	}
}

func testBadRole(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, "x", store.Message{Role: "system", Content: "no"}); err == nil {
		t.Fatal("Create with role system succeeded")
	}
	if _, err := s.Get(ctx, "alice", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed Create left a conversation behind: %v", err)
	}
}

// testUsers: a user never sees, changes or finds another's conversation,
// through any method, and cannot tell it from one that does not exist.
func testUsers(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, "alice's secret plan", turns("secret plan", "ok")...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "bob", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob Get = %v, want ErrNotFound", err)
	}
	if _, err := s.Append(ctx, "bob", id, turns("mine now", "no")...); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob Append = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "bob", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob Delete = %v, want ErrNotFound", err)
	}
	if l, _, err := s.List(ctx, "bob", store.ListOptions{}); err != nil || len(l) != 0 {
		t.Errorf("bob List = %v, %v; want nothing", l, err)
	}
	if l, _, err := s.List(ctx, "bob", store.ListOptions{Prefix: store.IDPrefix}); err != nil || len(l) != 0 {
		t.Errorf("bob List(prefix) = %v, %v; want nothing", l, err)
	}
	if h, err := s.Search(ctx, "bob", "secret", 10); err != nil || len(h) != 0 {
		t.Errorf("bob Search = %v, %v; want nothing", h, err)
	}
	if _, err := s.Get(ctx, "", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get by the empty user = %v, want ErrNotFound", err)
	}
	got := mustGet(t, s, "alice", id)
	checkMessages(t, got.Messages, turns("secret plan", "ok")...)
	// Users are compared exactly.
	if _, err := s.Get(ctx, "Alice", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get by Alice = %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	var ids []string
	for i := range 5 {
		id := store.NewID()
		ids = append(ids, id)
		if _, err := s.Create(ctx, "alice", id, fmt.Sprintf("c%d", i), turns(fmt.Sprint(i), "x")...); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, "bob", store.NewID(), "bob's"); err != nil {
			t.Fatal(err)
		}
	}
	// Updating a conversation does not move it: pages stay stable.
	if _, err := s.Append(ctx, "alice", ids[0], turns("again", "y")...); err != nil {
		t.Fatal(err)
	}
	var got []string
	offset := 0
	for page := 0; page < 5; page++ {
		l, more, err := s.List(ctx, "alice", store.ListOptions{Offset: offset, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l {
			if c.User != "alice" || c.Messages != nil {
				t.Errorf("listed %+v", c)
			}
			got = append(got, c.ID)
		}
		if wantMore := offset+len(l) < 5; more != wantMore {
			t.Errorf("page %d: more = %v, want %v", page, more, wantMore)
		}
		offset += len(l)
		if !more {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("listed %v, want %v in creation order", got, ids)
	}
	l, _, err := s.List(ctx, "alice", store.ListOptions{})
	if err != nil || len(l) != 5 {
		t.Fatalf("List() = %d, %v", len(l), err)
	}
	if l[0].MessageCount != 4 || l[1].MessageCount != 2 || l[0].Title != "c0" {
		t.Errorf("summaries %+v %+v", l[0], l[1])
	}
	if l, more, err := s.List(ctx, "alice", store.ListOptions{Offset: 10}); err != nil || len(l) != 0 || more {
		t.Errorf("List past the end = %v, %v, %v", l, more, err)
	}
}

func testListPrefix(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	for _, id := range []string{"conv_aa1", "conv_aa2", "conv_ab1", "conv_a%", "conv_a_x"} {
		if _, err := s.Create(ctx, "alice", id, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, "bob", "conv_aa3", "bob's"); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]string{
		"conv_aa":  "[conv_aa1 conv_aa2]",
		"conv_a":   "[conv_aa1 conv_aa2 conv_ab1 conv_a% conv_a_x]",
		"conv_a%":  "[conv_a%]",
		"conv_a_":  "[conv_a_x]",
		"conv_b":   "[]",
		"CONV_AA1": "[]",
	} {
		l, _, err := s.List(ctx, "alice", store.ListOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range l {
			got = append(got, c.ID)
		}
		if g := fmt.Sprint(got); g != want && !(want == "[]" && got == nil) {
			t.Errorf("prefix %q: %v, want %s", prefix, g, want)
		}
	}
}

func testSearch(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	a, b, c := store.NewID(), store.NewID(), store.NewID()
	mk := func(id, title string, msgs ...store.Message) {
		t.Helper()
		if _, err := s.Create(ctx, "alice", id, title, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	mk(a, "Go generics", turns("How do Go generics work?", "Type parameters, since Go 1.18.")...)
	mk(b, "Weather", turns("What is the water temperature?", "I have no weather data.")...)
	mk(c, "Cooking", turns("A pasta recipe", "Boil water, add pasta.")...)
	if _, err := s.Create(ctx, "bob", store.NewID(), "bob's go notes", turns("go go go", "GO")...); err != nil {
		t.Fatal(err)
	}
	// a becomes the most recently updated.
	if _, err := s.Append(ctx, "alice", a, turns("and GENERIC methods?", "Not yet.")...); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "alice", "generic", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Conversation.ID != a || hits[0].Matches != 2 || hits[0].First.Seq != 1 ||
		hits[0].First.Content != "How do Go generics work?" || hits[0].First.Role != store.RoleUser || hits[0].Conversation.Title != "Go generics" {
		t.Errorf("search generic: %s", dump(hits))
	}
	// Case-insensitive, newest first, title or messages.
	hits, err = s.Search(ctx, "alice", "WATER", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Conversation.ID != c || hits[1].Conversation.ID != b ||
		hits[0].Matches != 1 || hits[0].First.Seq != 2 || hits[1].Matches != 1 || hits[1].First.Seq != 1 {
		t.Errorf("search WATER: %s", dump(hits))
	}
	// Only the title matches.
	hits, err = s.Search(ctx, "alice", "cooking", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Conversation.ID != c || hits[0].Matches != 0 || hits[0].First.Seq != 0 {
		t.Errorf("search cooking: %s", dump(hits))
	}
	// Limit.
	hits, err = s.Search(ctx, "alice", "?", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Conversation.ID != a {
		t.Errorf("search ? limit 1: %s", dump(hits))
	}
	if hits, err := s.Search(ctx, "alice", "nothing like this", 10); err != nil || len(hits) != 0 {
		t.Errorf("search without hits = %s, %v", dump(hits), err)
	}
}

func testSearchLiteral(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	pct, und, back := store.NewID(), store.NewID(), store.NewID()
	for id, text := range map[string]string{pct: "100% sure", und: "snake_case names", back: `C:\temp\x`} {
		if _, err := s.Create(ctx, "alice", id, "", store.Message{Role: store.RoleUser, Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]string{"%": pct, "0% s": pct, "_": und, "e_c": und, `\`: back, `p\x`: back} {
		hits, err := s.Search(ctx, "alice", q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Conversation.ID != want {
			t.Errorf("search %q: %s, want only %s", q, dump(hits), want)
		}
	}
}

func testDelete(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id, keep := store.NewID(), store.NewID()
	for _, x := range []string{id, keep} {
		if _, err := s.Create(ctx, "alice", x, "t", turns("delete me", "ok")...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "alice", id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "alice", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
	if err := s.Delete(ctx, "alice", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if hits, err := s.Search(ctx, "alice", "delete me", 10); err != nil || len(hits) != 1 || hits[0].Conversation.ID != keep {
		t.Errorf("search after delete: %s, %v", dump(hits), err)
	}
	checkMessages(t, mustGet(t, s, "alice", keep).Messages, turns("delete me", "ok")...)
}

// testRestart: what was written survives closing and reopening.
func testRestart(t *testing.T, newDB NewDB) {
	o := newDB(t, NewClock().Now)
	s, err := o()
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, "Persistent", turns("remember me", "I will")...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "alice", id, store.Message{Role: store.RoleUser, Content: "still there?"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := o()
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got := mustGet(t, s2, "alice", id)
	if got.Title != "Persistent" || got.MessageCount != 3 {
		t.Errorf("after restart: %+v", got)
	}
	checkMessages(t, got.Messages, append(turns("remember me", "I will"), store.Message{Role: store.RoleUser, Content: "still there?"})...)
	if _, err := s2.Append(ctx, "alice", id, store.Message{Role: store.RoleAssistant, Content: "yes"}); err != nil {
		t.Fatalf("append after restart: %v", err)
	}
	if got := mustGet(t, s2, "alice", id); got.MessageCount != 4 || got.Messages[3].Seq != 4 {
		t.Errorf("after restart and append: %+v", got)
	}
}

func testConcurrentAppend(t *testing.T, newDB NewDB) {
	s, _ := open(t, newDB)
	id := store.NewID()
	if _, err := s.Create(ctx, "alice", id, "busy"); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q := fmt.Sprintf("w%d-%d", w, i)
				if _, err := s.Append(ctx, "alice", id, turns(q, q+"!")...); err != nil {
					errs <- err
				}
				if _, err := s.Get(ctx, "alice", id); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := mustGet(t, s, "alice", id)
	if got.MessageCount != workers*each*2 || len(got.Messages) != workers*each*2 {
		t.Fatalf("%d messages (count %d), want %d", len(got.Messages), got.MessageCount, workers*each*2)
	}
	for i, m := range got.Messages {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		// Each append's two turns stay together.
		if i%2 == 1 && m.Content != got.Messages[i-1].Content+"!" {
			t.Errorf("turns %d and %d are not one append's: %q, %q", i, i+1, got.Messages[i-1].Content, m.Content)
		}
	}
}

func dump(hits []*store.SearchHit) string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("{%s %q matches=%d first=#%d %q}", h.Conversation.ID, h.Conversation.Title, h.Matches, h.First.Seq, h.First.Content))
	}
	return fmt.Sprint(out)
}
