package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store/storetest"
)

// PostgresEnv names the DSN of the PostgreSQL server the tests may use
// (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable). Each test
// gets a schema of its own, dropped afterwards.
const PostgresEnv = "MCPSTACK_TEST_POSTGRES_DSN"

func postgresDSN(t *testing.T) string {
	dsn := os.Getenv(PostgresEnv)
	if dsn == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", PostgresEnv)
	}
	return dsn
}

// testSchema returns a schema name no other run uses, and drops the
// schema when t ends.
func testSchema(t *testing.T, dsn string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("mcpstack_test_%d_%s", os.Getpid(), hex.EncodeToString(b[:]))
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("cleanup: drop schema %s: %v", schema, err)
		}
	})
	return schema
}

func TestPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Opener {
		schema := testSchema(t, dsn)
		return func() (store.Store, error) {
			return store.Open(context.Background(), store.Config{PostgresDSN: dsn, PostgresSchema: schema, Now: now})
		}
	})
}

// Servers starting together migrate once, and all of them work after.
func TestPostgresConcurrentMigrate(t *testing.T) {
	dsn := postgresDSN(t)
	schema := testSchema(t, dsn)
	var wg sync.WaitGroup
	stores := make([]store.Store, 4)
	errs := make([]error, 4)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = store.OpenPostgres(context.Background(), dsn, schema, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	id := store.NewID()
	if _, err := stores[0].Create(context.Background(), "alice", id, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[3].Get(context.Background(), "alice", id); err != nil {
		t.Fatal(err)
	}
	v, err := store.SchemaVersionForTest(stores[1])
	if err != nil || v != 2 {
		t.Errorf("schema version %d, %v; want 2", v, err)
	}
}

func TestPostgresBadSchema(t *testing.T) {
	for _, schema := range []string{"Upper", "x;drop", `a"b`, "1abc"} {
		if s, err := store.OpenPostgres(context.Background(), "postgres://127.0.0.1:1/none", schema, nil); err == nil {
			s.Close()
			t.Errorf("schema %q accepted", schema)
		}
	}
}
