package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/redisstore"
)

// redisEnv names the Redis server of the tests (.ci/run sets it); without
// it the tests that need one skip.
const redisEnv = "MCPSTACK_TEST_REDIS_URL"

// testRedis connects to the test Redis and gives the test a prefix of its
// own, whose keys are deleted when it ends.
func testRedis(t *testing.T) (*redis.Client, redisstore.Option) {
	t.Helper()
	rdb, prefix := testRedisPrefix(t)
	return rdb, redisstore.WithPrefix(prefix)
}

// testRedisPrefix is testRedis with the prefix itself, for a test that
// looks at the keys.
func testRedisPrefix(t *testing.T) (*redis.Client, string) {
	t.Helper()
	url := os.Getenv(redisEnv)
	if url == "" {
		t.Skipf("%s is unset: no Redis to test against (redis://127.0.0.1:6379/0 where one runs)", redisEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("%s: %v", redisEnv, err)
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("%s: %v", redisEnv, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "mcpstack-test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	return rdb, prefix
}

func TestSessions(t *testing.T) {
	rdb, prefix := testRedis(t)
	ctx := context.Background()
	s := redisstore.NewSessions(rdb, prefix)
	st := server.SessionState{ID: "s1", Transport: "streamable", Owner: "alice", Revision: "2025-11-25",
		Opened: time.Now().UTC().Truncate(time.Millisecond), Expires: time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)}
	if err := s.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, st); err == nil {
		t.Error("a second Create of one id succeeded")
	}
	got, err := s.Load(ctx, "s1")
	if err != nil || got.Owner != "alice" || got.Revision != "2025-11-25" || !got.Expires.Equal(st.Expires) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	ttl := rdb.PTTL(ctx, keyOf(t, rdb, "s1")).Val()
	if ttl <= 50*time.Second || ttl > time.Minute {
		t.Errorf("the key expires in %v, want the state's Expires (a minute)", ttl)
	}

	// Update pushes the expiry on (a sliding expiry) and replaces the state.
	st.LogLevel, st.Expires = "debug", time.Now().Add(time.Hour)
	if err := s.Update(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "s1"); got.LogLevel != "debug" || got.Version != 1 {
		t.Errorf("after Update: %+v, want version 1", got)
	}
	if ttl := rdb.PTTL(ctx, keyOf(t, rdb, "s1")).Val(); ttl < 59*time.Minute {
		t.Errorf("after Update the key expires in %v, want an hour", ttl)
	}
	// An update made from a version no longer kept is refused, and
	// changes nothing: another replica changed the state meanwhile.
	st.LogLevel = "error" // st.Version is still 0
	if err := s.Update(ctx, st); !errors.Is(err, server.ErrSessionChanged) {
		t.Errorf("Update from version 0 of a state at 1 = %v, want ErrSessionChanged", err)
	}
	if got, _ := s.Load(ctx, "s1"); got.LogLevel != "debug" || got.Version != 1 {
		t.Errorf("after a refused Update: %+v", got)
	}
	st.Version = 1
	if err := s.Update(ctx, st); err != nil {
		t.Errorf("Update from the version kept: %v", err)
	}
	if got, _ := s.Load(ctx, "s1"); got.LogLevel != "error" || got.Version != 2 {
		t.Errorf("after Update from version 1: %+v", got)
	}
	// A state that does not decode is none, to Update as to Load.
	if err := s.Create(ctx, server.SessionState{ID: "garbled"}); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, keyOf(t, rdb, "garbled"), "{not json", time.Minute)
	if err := s.Update(ctx, server.SessionState{ID: "garbled"}); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("Update of a state that does not decode = %v, want ErrSessionNotFound", err)
	}
	if err := s.Update(ctx, server.SessionState{ID: "nope"}); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("Update of an unknown session = %v, want ErrSessionNotFound", err)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("Load of an unknown session = %v", err)
	}

	// Without an Expires the state is kept for a day, not forever.
	if err := s.Create(ctx, server.SessionState{ID: "forever"}); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, keyOf(t, rdb, "forever")).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("a state without Expires: the key expires in %v, want a day", ttl)
	}

	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "s1"); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("after Delete: %v", err)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Errorf("a second Delete: %v", err)
	}
}

// keyOf finds the one key of the test's prefix that holds session id.
func keyOf(t *testing.T, rdb *redis.Client, id string) string {
	t.Helper()
	keys := rdb.Keys(context.Background(), "mcpstack-test:*session:{"+id+"}").Val()
	if len(keys) != 1 {
		t.Fatalf("keys of session %s: %v", id, keys)
	}
	return keys[0]
}

// The Redis event store keeps what the in-memory one keeps: the same ids,
// the same bounds, and "gone" told apart from "unknown".
func TestEvents(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(4, time.Minute, 0))
	for i := range 3 {
		if id, err := m.Append("s", "a", []byte(fmt.Sprint(i))); err != nil || id != fmt.Sprintf("a-%d", i) {
			t.Fatalf("Append = %q, %v", id, err)
		}
	}
	var got []string
	collect := func(id string, data []byte) error { got = append(got, id+"="+string(data)); return nil }
	if stream, err := m.Replay("s", "a-0", collect); err != nil || stream != "a" || fmt.Sprint(got) != "[a-1=1 a-2=2]" {
		t.Fatalf("replay: %v %q %v", got, stream, err)
	}
	got = nil
	if _, err := m.Replay("s", "a-2", collect); err != nil || len(got) != 0 {
		t.Fatalf("replay from the last: %v %v", got, err)
	}
	// An id past a known stream's events is one the client got before
	// they reached Redis (written behind): nothing to replay yet, not
	// unknown (in memory it is unknown).
	got = nil
	if _, err := m.Replay("s", "a-9", collect); err != nil || len(got) != 0 {
		t.Errorf("an id ahead of the stored events: %v %v, want nothing to replay", got, err)
	}
	for _, bad := range []string{"b-0", "nope", "a-x", "a--1", "-1"} {
		if _, err := m.Replay("s", bad, collect); !errors.Is(err, mcphttp.ErrUnknownEvent) {
			t.Errorf("Replay(%q) = %v, want ErrUnknownEvent", bad, err)
		}
	}
	if _, err := m.Replay("other", "a-0", collect); !errors.Is(err, mcphttp.ErrUnknownEvent) {
		t.Errorf("another session's id: %v, want ErrUnknownEvent", err)
	}
	// Bound by count: 4 events per session; a-0 and a-1 fall out, so a
	// client that saw only a-0 has lost a-1.
	for _, d := range []string{"x", "y", "z"} {
		if _, err := m.Append("s", "b", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Replay("s", "a-0", collect); !errors.Is(err, mcphttp.ErrEventsGone) {
		t.Errorf("after eviction: %v, want ErrEventsGone", err)
	}
	got = nil
	if _, err := m.Replay("s", "a-1", collect); err != nil || fmt.Sprint(got) != "[a-2=2]" {
		t.Errorf("from the first kept: %v %v", got, err)
	}
	// A priming event (no data) keeps its place and replays as empty.
	id, _ := m.Append("s", "c", nil)
	m.Append("s", "c", []byte("after priming"))
	got = nil
	if _, err := m.Replay("s", id, collect); err != nil || fmt.Sprint(got) != "[c-1=after priming]" {
		t.Errorf("after a priming event: %v %v", got, err)
	}
	m.Forget("s")
	if _, err := m.Replay("s", "c-1", collect); !errors.Is(err, mcphttp.ErrUnknownEvent) {
		t.Errorf("after Forget: %v", err)
	}
	if keys := rdb.Keys(context.Background(), "mcpstack-test:*{s}*").Val(); len(keys) != 0 {
		t.Errorf("Forget left %v", keys)
	}
}

func TestEventBounds(t *testing.T) {
	rdb, prefix := testRedis(t)
	ctx := context.Background()
	t.Run("bytes", func(t *testing.T) {
		m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(100, time.Minute, 10))
		m.Append("s", "a", []byte("12345"))
		m.Append("s", "a", []byte("67890"))
		m.Append("s", "a", []byte("abcde")) // 15 bytes: the oldest goes
		m.Append("s", "a", []byte("fghij")) // and the next: a client that saw a-0 lost a-1
		if _, err := m.Replay("s", "a-0", func(string, []byte) error { return nil }); !errors.Is(err, mcphttp.ErrEventsGone) {
			t.Errorf("past the byte bound: %v, want ErrEventsGone", err)
		}
		var got []string
		if _, err := m.Replay("s", "a-1", func(id string, d []byte) error { got = append(got, string(d)); return nil }); err != nil || fmt.Sprint(got) != "[abcde fghij]" {
			t.Errorf("replay: %v %v", got, err)
		}
		// The one event past the bound on its own is kept: the newest
		// is never dropped on its way in.
		m.Append("t", "a", []byte(strings.Repeat("x", 64)))
		if _, err := m.Replay("t", "a-0", func(string, []byte) error { return nil }); err != nil {
			t.Errorf("a big event alone: %v", err)
		}
	})
	t.Run("age", func(t *testing.T) {
		m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(100, 300*time.Millisecond, 0))
		m.Append("u", "a", []byte("old"))
		m.Append("u", "a", []byte("older"))
		m.Append("u", "b", nil) // a stream that sent only its priming event
		time.Sleep(400 * time.Millisecond)
		// The events aged out; the counters are the session's: a client
		// that lost events hears they are gone (410), one that saw all
		// of them resumes with nothing to replay, not "unknown" (404, which
		// would make it start the session over).
		if _, err := m.Replay("u", "a-0", func(string, []byte) error { return nil }); !errors.Is(err, mcphttp.ErrEventsGone) {
			t.Errorf("events past their age: %v, want ErrEventsGone", err)
		}
		if _, err := m.Replay("u", "b-0", func(string, []byte) error { return nil }); err != nil {
			t.Errorf("a quiet stream resumed after its events' age: %v, want nothing to replay", err)
		}
		// every key of the session expires: the events with their age,
		// the counters with the session TTL
		keys := rdb.Keys(ctx, "mcpstack-test:*{u}*").Val()
		if len(keys) == 0 {
			t.Fatal("no keys")
		}
		for _, k := range keys {
			ttl := rdb.PTTL(ctx, k).Val()
			if ttl <= 0 || ttl > 24*time.Hour {
				t.Errorf("%s expires in %v, want within the session TTL (a day)", k, ttl)
			}
		}
	})
	t.Run("streams", func(t *testing.T) {
		// A long session opens many streams: the counters of emptied
		// ones are dropped beyond the event bound, not kept forever.
		m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(4, time.Minute, 0))
		for i := range 50 {
			m.Append("v", fmt.Sprint("s", i), []byte("x"))
			m.Append("v", fmt.Sprint("s", i), []byte("y"))
			// A replay waits for what the store writes behind: the
			// events reach Redis in this order.
			m.Replay("v", "none-0", func(string, []byte) error { return nil })
		}
		fields := rdb.HLen(ctx, keyLike(t, rdb, "counters:{v}")).Val()
		if fields > 2*(4+4)+1 {
			t.Errorf("the counters hash holds %d fields after 50 streams, bound 4 events", fields)
		}
		if _, err := m.Replay("v", "s0-0", func(string, []byte) error { return nil }); !errors.Is(err, mcphttp.ErrUnknownEvent) {
			t.Errorf("a long-forgotten stream: %v, want ErrUnknownEvent", err)
		}
		if _, err := m.Replay("v", "s47-0", func(string, []byte) error { return nil }); !errors.Is(err, mcphttp.ErrEventsGone) {
			t.Errorf("a recently emptied stream: %v, want ErrEventsGone", err)
		}
	})
}

func keyLike(t *testing.T, rdb *redis.Client, suffix string) string {
	t.Helper()
	keys := rdb.Keys(context.Background(), "mcpstack-test:*"+suffix).Val()
	if len(keys) != 1 {
		t.Fatalf("keys *%s: %v", suffix, keys)
	}
	return keys[0]
}

// A replica writes a stream's events behind it (one round trip for many):
// they reach Redis in order, numbered as it sent them, and another
// replica replays them all.
func TestEventsWrittenBehind(t *testing.T) {
	rdb, prefix := testRedis(t)
	a, b := redisstore.NewEvents(rdb, prefix), redisstore.NewEvents(rdb, prefix)
	var ids []string
	for i := range 300 {
		id, err := a.Append("w", "s", []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != "s-0" || ids[299] != "s-299" {
		t.Fatalf("ids %s ... %s", ids[0], ids[299])
	}
	if _, err := a.Replay("w", "s-298", func(string, []byte) error { return nil }); err != nil { // waits for what a wrote behind
		t.Fatal(err)
	}
	var got []string
	if _, err := b.Replay("w", "s-0", func(id string, d []byte) error { got = append(got, id+"="+string(d)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 299 || got[0] != "s-1=1" || got[298] != "s-299=299" {
		t.Errorf("b replayed %d events (%v ... ), want s-1 ... s-299 in order", len(got), got[:min(3, len(got))])
	}
}

// holder is what the Redis event store does for held streams (the
// transport's streamable.StreamHolder) and Flush.
type holder interface {
	Hold(session, stream string, epitaph []byte) func(answered bool)
	AppendLast(session, stream string, data []byte) (string, error)
	Bury(session, stream string, lastSeen int64) (string, []byte, bool)
	Flush()
}

// A held stream's epitaph goes with its answer, in one step; a stream that
// ends unanswered gives up its lease at once, and is buried once,
// numbered past what the client saw.
func TestHeldStreams(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix)
	h := m.(holder)
	ctx := context.Background()
	epitaph := []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"stopped"}}`)

	release := h.Hold("h", "answered", epitaph)
	if _, err := m.Append("h", "answered", nil); err != nil { // the priming event: with the epitaph and lease
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, keyLike(t, rdb, "lease:{h}:answered")).Val(); n != 1 {
		t.Fatal("no lease with the first event")
	}
	if _, err := h.AppendLast("h", "answered", []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	release(true)
	h.Flush()
	if keys := rdb.Keys(ctx, "mcpstack-test:*lease:{h}:answered").Val(); len(keys) != 0 {
		t.Errorf("the answer left the lease: %v", keys)
	}
	if _, _, buried := h.Bury("h", "answered", 1); buried {
		t.Error("a stream whose answer is stored was buried")
	}

	release = h.Hold("h", "aborted", epitaph)
	if _, err := m.Append("h", "aborted", nil); err != nil {
		t.Fatal(err)
	}
	m.Append("h", "aborted", []byte("progress")) // written behind
	release(false)
	h.Flush()
	id, got, buried := h.Bury("h", "aborted", 5) // the client saw event 5
	if !buried || string(got) != string(epitaph) || id != "aborted-6" {
		t.Fatalf("Bury = %q %s %v, want the epitaph as aborted-6", id, got, buried)
	}
	if _, _, again := h.Bury("h", "aborted", 6); again {
		t.Error("buried twice")
	}
	var replayed []string
	if _, err := m.Replay("h", "aborted-0", func(id string, d []byte) error { replayed = append(replayed, id); return nil }); err != nil || fmt.Sprint(replayed) != "[aborted-1 aborted-6]" {
		t.Errorf("replay after the burial: %v %v", replayed, err)
	}
}

// Close writes what is queued and ends the store's goroutines.
func TestEventsClose(t *testing.T) {
	rdb, prefix := testRedis(t)
	before := runtime.NumGoroutine()
	m := redisstore.NewEvents(rdb, prefix)
	m.(interface{ RateCounter() httprate.LimitCounter }).RateCounter().Config(10, time.Second)
	m.Append("c", "s", nil)
	m.Append("c", "s", []byte("behind")) // written behind
	if err := m.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	other := redisstore.NewEvents(rdb, prefix)
	defer other.(io.Closer).Close()
	if _, err := other.Replay("c", "s-0", func(id string, d []byte) error { got = append(got, id+"="+string(d)); return nil }); err != nil || fmt.Sprint(got) != "[s-1=behind]" {
		t.Errorf("after Close, another store replays %v %v: the queue was not written", got, err)
	}
	if _, err := m.Append("c", "s", []byte("late")); err == nil {
		t.Error("an append written behind after Close succeeded")
	}
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before+2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	if n := runtime.NumGoroutine(); n > before+2 { // other's writer and renewer
		t.Errorf("%d goroutines after Close, %d before the store", n, before)
	}
}

// Every key the rate counter writes expires, those of the windows a
// client was quiet in included: reading a window's count with INCRBY 0
// made a key without an expiry for each.
func TestRateKeysExpire(t *testing.T) {
	rdb, prefix := testRedisPrefix(t)
	m := redisstore.NewEvents(rdb, redisstore.WithPrefix(prefix))
	defer m.(io.Closer).Close()
	counter := m.(interface{ RateCounter() httprate.LimitCounter }).RateCounter()
	counter.Config(10, time.Second)
	now := time.Now().UTC().Truncate(time.Second)
	if err := counter.IncrementBy("busy", now, 1); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"busy", "quiet"} { // as httprate asks before each request
		if _, _, err := counter.Get(key, now, now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // several syncs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("the counts never reached Redis")
	}
	for _, k := range keys {
		if ttl := rdb.TTL(ctx, k).Val(); ttl < 0 {
			t.Errorf("%s has no expiry (TTL %v)", k, ttl)
		}
	}
}

// The bytes a session's events hold go with the events when they expire
// with their age: the count kept them, so that once past the bound every
// new event pushed out all the others, and a client could resume nothing.
func TestEventBytesExpireWithTheEvents(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(1000, time.Second, 100))
	defer m.(io.Closer).Close()
	for stream, size := range map[string]int{"old1": 60, "old2": 38} {
		if _, err := m.Append("s", stream, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1300 * time.Millisecond) // they expire with their age
	var ids []string
	for range 6 {
		id, err := m.Append("s", "new", []byte("yy"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	m.(interface{ Flush() }).Flush()
	var got []string
	if _, err := m.Replay("s", ids[0], func(id string, _ []byte) error { got = append(got, id); return nil }); err != nil || len(got) != 5 {
		t.Errorf("replay after %s: %v %v, want the 5 events after it", ids[0], got, err)
	}
}

// A session's GET stream ("_...") keeps its numbering however many call
// streams come and go while it is quiet (their counters are forgotten past
// a bound; its own were too, and its ids began again at 0).
func TestQuietGetStreamKeepsItsNumbers(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(4, time.Minute, 0))
	defer m.(io.Closer).Close()
	for i := range 3 {
		if _, err := m.Append("s", "_g", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 { // calls, each a stream of its own, push the GET stream's events out
		if _, err := m.Append("s", fmt.Sprintf("call%d", i), []byte("answer")); err != nil {
			t.Fatal(err)
		}
	}
	m.(interface{ Flush() }).Flush()
	other := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(4, time.Minute, 0)) // a replica, numbering from Redis
	defer other.(io.Closer).Close()
	if id, err := other.Append("s", "_g", []byte("next")); err != nil || id != "_g-3" {
		t.Errorf("the GET stream's next event is %q (%v), want _g-3", id, err)
	}
}

// A negative byte bound is none (mcpstack serve's --max-event-bytes-per-session=0):
// it kept the 8 MiB default.
func TestEventLimitsWithoutABoundInBytes(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(1000, time.Minute, -1))
	defer m.(io.Closer).Close()
	var first string
	for i := range 10 {
		id, err := m.Append("s", "big", make([]byte, 1<<20))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = id
		}
	}
	m.(interface{ Flush() }).Flush()
	n := 0
	if _, err := m.Replay("s", first, func(string, []byte) error { n++; return nil }); err != nil || n != 9 {
		t.Errorf("replay after the first of 10 MiB: %d events, %v; want the 9 others", n, err)
	}
}

// A stream that expired with its age while the session's order lives on
// (other streams kept it) takes its bytes out of the count when the trim
// meets it: they stayed counted, and pushed the live streams' events out.
func TestExpiredStreamLeavesTheByteCount(t *testing.T) {
	rdb, prefix := testRedis(t)
	m := redisstore.NewEvents(rdb, prefix, redisstore.WithEventLimits(1000, 2*time.Second, 100))
	defer m.(io.Closer).Close()
	flush := m.(interface{ Flush() }).Flush
	if _, err := m.Append("s", "old", make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1400 * time.Millisecond)
	mid0, err := m.Append("s", "mid", make([]byte, 19))
	if err != nil {
		t.Fatal(err)
	}
	m.Append("s", "mid", make([]byte, 19))
	flush()
	time.Sleep(1000 * time.Millisecond) // old has expired (2 s); mid, and the order, have 1 s to go
	if _, err := m.Append("s", "new", make([]byte, 30)); err != nil {
		t.Fatal(err)
	}
	flush()
	var got []string
	if _, err := m.Replay("s", mid0, func(id string, _ []byte) error { got = append(got, id); return nil }); err != nil || len(got) != 1 {
		t.Errorf("replay after %s: %v %v, want the stream's second event", mid0, got, err)
	}
}
