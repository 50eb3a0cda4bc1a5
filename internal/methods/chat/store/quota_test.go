package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
)

// A user's conversations and message bytes are bounded; the write that
// would pass the quota stores nothing, and other users are not affected
// (the regression: no quota, one user could fill the shared disk).
func TestQuota(t *testing.T) {
	configs := map[string]func(t *testing.T) store.Config{
		"sqlite": func(t *testing.T) store.Config { return store.Config{DataDir: filepath.Join(t.TempDir(), "data")} },
	}
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		configs["postgres"] = func(t *testing.T) store.Config {
			return store.Config{PostgresDSN: dsn, PostgresSchema: testSchema(t, dsn)}
		}
	} else {
		t.Logf("%s is not set: the PostgreSQL store's quota is not tested here", PostgresEnv)
	}
	for name, config := range configs {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			cfg := config(t)
			cfg.Quota = store.Quota{Conversations: 2, Bytes: 100}
			s, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			msg := func(n int) store.Message { return store.Message{Role: store.RoleUser, Content: strings.Repeat("x", n)} }
			first, second := store.NewID(), store.NewID()
			if _, err := s.Create(ctx, "alice", first, "a", msg(40)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, "alice", second, "b", msg(40)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, "alice", store.NewID(), "c"); !errors.Is(err, store.ErrQuota) {
				t.Errorf("a third conversation: %v, want ErrQuota", err)
			}
			if _, err := s.Append(ctx, "alice", first, msg(21)); !errors.Is(err, store.ErrQuota) || !strings.Contains(err.Error(), "100 bytes") {
				t.Errorf("101 bytes in all: %v, want ErrQuota naming 100 bytes", err)
			}
			if c, err := s.Get(ctx, "alice", first); err != nil || c.MessageCount != 1 || len(c.Messages) != 1 {
				t.Errorf("after the refused append: %+v %v, want the one message", c, err)
			}
			if _, err := s.Append(ctx, "alice", first, msg(20)); err != nil {
				t.Errorf("exactly 100 bytes: %v", err)
			}
			if _, err := s.Create(ctx, "bob", store.NewID(), "b", msg(100)); err != nil {
				t.Errorf("another user: %v", err)
			}
			if err := s.Delete(ctx, "alice", second); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, "alice", store.NewID(), "d", msg(40)); err != nil {
				t.Errorf("after a delete frees room: %v", err)
			}
		})
	}
}
