package taskstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/taskstore"
	"github.com/redis/go-redis/v9"
)

// postgresEnv names the PostgreSQL database of the tests (.ci/run sets
// it); without it the PostgreSQL store's tests skip.
const postgresEnv = "MCPSTACK_TEST_POSTGRES_DSN"

// stores are every store, fresh.
func stores(t *testing.T) map[string]server.TaskStore {
	t.Helper()
	out := map[string]server.TaskStore{"memory": taskstore.Memory()}
	sq, err := taskstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	out["sqlite"] = sq
	if dsn := os.Getenv(postgresEnv); dsn != "" {
		pg, err := taskstore.OpenPostgres(context.Background(), dsn, "mcpstack_tasks_test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		if err := pg.Sweep(context.Background(), time.Now().Add(100*365*24*time.Hour)); err != nil { // what an earlier run left
			t.Fatal(err)
		}
		out["postgres"] = pg
	} else {
		t.Logf("%s is unset: the PostgreSQL store is not tested here", postgresEnv)
	}
	if url := os.Getenv(redisEnv); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opts)
		prefix := fmt.Sprintf("mcpstack-test:tasks-%d-%d:", os.Getpid(), time.Now().UnixNano())
		t.Cleanup(func() {
			if keys := rdb.Keys(context.Background(), prefix+"*").Val(); len(keys) > 0 {
				rdb.Del(context.Background(), keys...)
			}
			rdb.Close()
		})
		out["redis"] = taskstore.NewRedis(rdb, prefix)
	} else {
		t.Logf("%s is unset: the Redis store is not tested here", redisEnv)
	}
	return out
}

// redisEnv names the Redis server of the tests (.ci/run sets it).
const redisEnv = "MCPSTACK_TEST_REDIS_URL"

// One suite for every store: what the server needs of one.
func TestStores(t *testing.T) {
	ctx := context.Background()
	base := time.UnixMilli(time.Now().UnixMilli()) // stores keep milliseconds
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			a1 := server.TaskRecord{ID: "t1", Owner: "principal:a", Method: "tools/call", Revision: "2025-11-25", Status: "working",
				Created: base, Updated: base, TTL: time.Hour}
			a2 := a1
			a2.ID, a2.Created = "t2", base.Add(time.Second)
			b1 := a1
			b1.ID, b1.Owner = "t3", "principal:b"
			old := a1
			old.ID, old.TTL = "t0", time.Millisecond
			for _, r := range []server.TaskRecord{a2, a1, b1, old} {
				if err := st.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			done := a1
			done.Status, done.Updated, done.Result = "completed", base.Add(2*time.Second), json.RawMessage(`{"content":[]}`)
			if err := st.Save(ctx, done); err != nil {
				t.Fatal(err)
			}
			got, err := st.Load(ctx, "t1")
			if err != nil || got.Status != "completed" || string(got.Result) != `{"content":[]}` || !got.Created.Equal(base) || got.TTL != time.Hour {
				t.Errorf("load %+v %v", got, err)
			}
			if _, err := st.Load(ctx, "nope"); !errors.Is(err, server.ErrTaskNotFound) {
				t.Errorf("an unknown task: %v", err)
			}
			list, err := st.List(ctx, "principal:a")
			ids := []string{}
			for _, r := range list {
				ids = append(ids, r.ID)
			}
			if err != nil || strings.Join(ids, ",") != "t0,t1,t2" && strings.Join(ids, ",") != "t1,t0,t2" {
				t.Errorf("a's tasks %v %v, want t1 and t0 then t2, and none of b's", ids, err)
			}
			if err := st.Sweep(ctx, base.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Load(ctx, "t0"); !errors.Is(err, server.ErrTaskNotFound) {
				t.Errorf("an expired task after the sweep: %v", err)
			}
			if _, err := st.Load(ctx, "t1"); err != nil {
				t.Errorf("a live task after the sweep: %v", err)
			}

			// Trim: c's finished tasks beyond the newest 3, then beyond
			// 25 bytes of results; a running one and d's stay.
			for i := range 6 {
				r := server.TaskRecord{ID: fmt.Sprintf("c%d", i), Owner: "principal:c", Method: "tools/call", Revision: "2025-11-25", Status: "completed",
					Created: base.Add(time.Duration(i) * time.Second), Updated: base, TTL: time.Hour, Result: json.RawMessage(`{"n":123456}`)}
				if i == 0 {
					r.Status, r.Result = "working", nil
				}
				if err := st.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			d := server.TaskRecord{ID: "d0", Owner: "principal:d", Method: "tools/call", Revision: "2025-11-25", Status: "completed", Created: base, Updated: base, TTL: time.Hour}
			if err := st.Save(ctx, d); err != nil {
				t.Fatal(err)
			}
			owned := func(owner string) string {
				list, err := st.List(ctx, owner)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, r := range list {
					out = append(out, r.ID)
				}
				return strings.Join(out, ",")
			}
			if err := st.Trim(ctx, "principal:c", 3, 1<<20); err != nil {
				t.Fatal(err)
			}
			if got := owned("principal:c"); got != "c0,c3,c4,c5" {
				t.Errorf("c's tasks after trimming to 3: %s, want the running c0 and the newest three", got)
			}
			if err := st.Trim(ctx, "principal:c", 3, 25); err != nil {
				t.Fatal(err)
			}
			if got := owned("principal:c"); got != "c0,c4,c5" {
				t.Errorf("c's tasks after trimming to 25 bytes: %s, want c0 and the newest two (12 bytes each)", got)
			}
			if got := owned("principal:d"); got != "d0" {
				t.Errorf("d's tasks after trimming c's: %s", got)
			}

			// Tasks nobody owns count against the client that started
			// them: one anonymous client's trim leaves another's alone.
			for i, share := range []string{"client:x", "client:x", "client:x", "client:y"} {
				r := server.TaskRecord{ID: fmt.Sprintf("h%d", i), Owner: "holder", Share: share, Method: "tools/call", Revision: "2026-07-28", Status: "completed",
					Created: base.Add(time.Duration(i) * time.Second), Updated: base, TTL: time.Hour}
				if err := st.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Trim(ctx, "client:x", 1, 1<<20); err != nil {
				t.Fatal(err)
			}
			if got := owned("holder"); got != "h2,h3" {
				t.Errorf("holder tasks after trimming client x's to 1: %s, want x's newest and y's", got)
			}
			if r, err := st.Load(ctx, "h3"); err != nil || r.Share != "client:y" {
				t.Errorf("a record's share: %+v %v", r, err)
			}
		})
	}
}

// session opens an initialized 2025-11-25 session of alice's and returns
// its call function.
func session(t *testing.T, srv *server.Server) func(method, params string) map[string]any {
	t.Helper()
	call, _ := sessionOf(t, srv, core.Caller{Owner: "alice", Key: "principal:alice"})
	return call
}

// sessionOf opens an initialized session of caller; it returns the
// session's call and the owner its tasks get.
func sessionOf(t *testing.T, srv *server.Server, caller core.Caller) (func(method, params string) map[string]any, string) {
	t.Helper()
	sess, err := core.Of(srv).NewSession("", nil, core.OpenedBy(caller))
	if err != nil {
		t.Fatal(err)
	}
	owner := "principal:" + caller.Owner
	if caller.Owner == "" {
		owner = "session:" + sess.ID()
	}
	n := 0
	var mu sync.Mutex
	call := func(method, params string) map[string]any {
		mu.Lock()
		n++
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, n, method, params)
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var m map[string]any
		_ = json.Unmarshal(sess.Handle(ctx, []byte(body), nil), &m)
		return m
	}
	call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	return call, owner
}

// taskID is the id of the task a task-augmented call created.
func taskID(t *testing.T, m map[string]any) string {
	t.Helper()
	r, _ := m["result"].(map[string]any)
	task, _ := r["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", m)
	}
	return id
}

// A finished task's result is read after the server came back on the same
// SQLite file; a task that was running when it stopped has failed once its
// lease ran out (its heartbeat stopped with the server).
func TestRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	release := make(chan struct{})
	newServer := func() (*server.Server, *taskstore.SQL) {
		st, err := taskstore.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		a := app.New("restart", "1")
		app.AddTool(a, app.Tool{Name: "quick", TaskSupport: "optional"}, func(context.Context, struct{}) (string, error) { return "kept", nil })
		app.AddTool(a, app.Tool{Name: "forever", TaskSupport: "optional"}, func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "", errors.New("stopped")
		})
		return app.NewServer(a, server.WithStrict(true), server.WithTaskStore(st), server.WithTaskLease(300*time.Millisecond)), st
	}

	srv1, st1 := newServer()
	call := session(t, srv1)
	quick := taskID(t, call("tools/call", `{"name":"quick","task":{"ttl":60000}}`))
	if r := call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, quick)); r["result"] == nil {
		t.Fatalf("tasks/result before the restart: %v", r)
	}
	forever := taskID(t, call("tools/call", `{"name":"forever","task":{"ttl":60000}}`))
	st1.Close() // the process dies: the running task's end is never saved
	srv1.Close()

	srv2, st2 := newServer()
	defer st2.Close()
	defer srv2.Close()
	call = session(t, srv2)
	r := call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, quick))
	res, _ := r["result"].(map[string]any)
	if res == nil || !strings.Contains(fmt.Sprint(res["content"]), "kept") || res["_meta"] == nil {
		t.Errorf("tasks/result after the restart: %v", r)
	}
	g := call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, forever))
	if st, _ := g["result"].(map[string]any); st == nil || st["status"] != "working" {
		t.Errorf("the task that was running, within its lease: %v, want working (another process may run it)", g)
	}
	time.Sleep(400 * time.Millisecond) // its heartbeat stopped with the first server: the lease runs out
	g = call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, forever))
	if st, _ := g["result"].(map[string]any); st == nil || st["status"] != "failed" {
		t.Errorf("the task that was running, past its lease: %v, want failed", g)
	}
	list := call("tasks/list", `{}`)
	if tasks, _ := list["result"].(map[string]any)["tasks"].([]any); len(tasks) != 2 {
		t.Errorf("tasks/list after the restart: %v", list)
	}
	close(release)
}

// flaky fails every other Load, starting with the second: a database
// that drops a query now and then.
type flaky struct {
	server.TaskStore
	loads atomic.Int32
}

func (f *flaky) Load(ctx context.Context, id string) (server.TaskRecord, error) {
	if f.loads.Add(1)%2 == 0 {
		return server.TaskRecord{}, errors.New("connection reset")
	}
	return f.TaskStore.Load(ctx, id)
}

// Two servers on one store: tasks/result on the one that does not run the
// task answers when the other finishes it (it reads the record again,
// nothing else tells it), through the store's passing failures.
func TestTaskOfAnotherServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	release := make(chan struct{})
	newServer := func(wrap func(server.TaskStore) server.TaskStore) *server.Server {
		sq, err := taskstore.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sq.Close() })
		st := wrap(sq)
		a := app.New("replica", "1")
		app.AddTool(a, app.Tool{Name: "slow", TaskSupport: "optional"}, func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
				return "finished elsewhere", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		srv := app.NewServer(a, server.WithStrict(true), server.WithTaskStore(st))
		t.Cleanup(srv.Close)
		return srv
	}
	same := func(st server.TaskStore) server.TaskStore { return st }
	runner := session(t, newServer(same))
	other := session(t, newServer(func(st server.TaskStore) server.TaskStore { return &flaky{TaskStore: st} }))
	id := taskID(t, runner("tools/call", `{"name":"slow","task":{"ttl":60000}}`))
	answer := make(chan map[string]any, 1)
	go func() { answer <- other("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id)) }()
	time.Sleep(1500 * time.Millisecond) // the other server has read the record again, and failed to
	close(release)
	select {
	case r := <-answer:
		res, _ := r["result"].(map[string]any)
		if res == nil || !strings.Contains(fmt.Sprint(res["content"]), "finished elsewhere") {
			t.Errorf("tasks/result on the other server: %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tasks/result on the other server did not answer when the task ended")
	}
}

// Replicas that start at once on a new database all open the PostgreSQL
// store: creating the schema and the table is one migrator at a time.
func TestPostgresReplicasStartTogether(t *testing.T) {
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		t.Skipf("%s is unset: needs a PostgreSQL database", postgresEnv)
	}
	ctx := context.Background()
	const schema = "mcpstack_tasks_race_test"
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	drop := func() {
		if _, err := db.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		drop()
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := taskstore.OpenPostgres(ctx, dsn, schema)
				if err == nil {
					st.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	drop()
}

// A user's finished tasks are bounded in a durable store as in memory
// (the regression: the store kept any number until their TTL, 150 tasks
// of 1 MiB took 63 MB of tasks.db), and a client without a principal
// has one share for all its sessions, not one in each. The byte bound is
// TestStores' Trim.
func TestStoreKeepsABoundedShare(t *testing.T) {
	tests := []struct {
		name     string
		caller   core.Caller
		sessions int
	}{
		{"a principal", core.Caller{Owner: "alice", Key: "principal:alice"}, 1},
		{"a client's sessions without one", core.Caller{Key: "addr:192.0.2.1"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := taskstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "tasks.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			a := app.New("bounded", "1")
			app.AddTool(a, app.Tool{Name: "quick", TaskSupport: "optional"}, func(context.Context, struct{}) (string, error) { return "done", nil })
			srv := app.NewServer(a, server.WithTaskStore(st))
			defer srv.Close()
			var owners []string
			for range tt.sessions {
				call, owner := sessionOf(t, srv, tt.caller)
				owners = append(owners, owner)
				for range 130 / tt.sessions {
					id := taskID(t, call("tools/call", `{"name":"quick","task":{"ttl":600000}}`))
					if r := call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id)); r["result"] == nil {
						t.Fatalf("tasks/result: %v", r)
					}
				}
			}
			var kept int
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				kept = 0
				for _, owner := range owners {
					list, err := st.List(context.Background(), owner)
					if err != nil {
						t.Fatal(err)
					}
					kept += len(list)
				}
				if kept == 100 { // the last save and trim may come after tasks/result
					return
				}
			}
			t.Errorf("the store keeps %d of the caller's %d finished tasks, want the newest 100", kept, 130/tt.sessions*tt.sessions)
		})
	}
}

// A tasks table made before shares existed gains the column when opened,
// and its records count against their owner.
func TestStoreAddsShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE tasks (id TEXT PRIMARY KEY, owner TEXT NOT NULL, method TEXT NOT NULL, revision TEXT NOT NULL,
		status TEXT NOT NULL, message TEXT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, ttl_ms BIGINT NOT NULL,
		expires_ms BIGINT NOT NULL, result TEXT, error TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO tasks VALUES ('old', 'principal:a', 'tools/call', '2025-11-25', 'completed', '', 0, 0, 3600000, 3600000, '{}', NULL)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := taskstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r, err := st.Load(context.Background(), "old"); err != nil || r.Owner != "principal:a" || r.Share != "principal:a" {
		t.Fatalf("the old record: %+v %v", r, err)
	}
	if err := st.Trim(context.Background(), "principal:a", 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(context.Background(), "old"); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("the old record after trimming its owner's share to none: %v", err)
	}
}
