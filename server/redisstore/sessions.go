package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/internal/redisx"
	"github.com/mcpstack/mcpstack/server"
)

// NewSessions is a server.SessionStore in rdb: one string key per session
// holding its state as JSON, expiring when the state does (its Expires,
// pushed on as the session is used: a sliding expiry), so that Redis
// drops what no replica serves any more. It also relays a client's
// messages to the replica that waits for them, on Redis Pub/Sub, and
// counts a client's sessions across the replicas (see
// server.WithSessionStore).
func NewSessions(rdb redis.UniversalClient, opts ...Option) server.SessionStore {
	c := newConfig(opts)
	return &sessions{relay: newRelay(rdb, c), rdb: rdb, cfg: c}
}

type sessions struct {
	relay // Publish and Subscribe
	rdb   redis.UniversalClient
	cfg   config
}

// Create stores a new session; it fails when the id is taken.
func (s *sessions) Create(ctx context.Context, st server.SessionState) error {
	b, at, err := s.encode(st)
	if err != nil {
		return err
	}
	created, err := s.rdb.SetArgs(ctx, s.cfg.key("session", st.ID), b, redis.SetArgs{Mode: "NX", ExpireAt: at}).Result()
	switch {
	case errors.Is(err, redis.Nil) || err == nil && created != "OK":
		return fmt.Errorf("redisstore: session %s exists", st.ID)
	case err != nil:
		return fmt.Errorf("redisstore: create session: %w", err)
	}
	// The state is written: as in Update, the count's error is not the
	// write's (the server would refuse a session whose state stays, until
	// it expires); the next save counts the session again.
	_ = s.count(ctx, st.Client, st.ID, at)
	return nil
}

// count keeps session id among client's, until at: a sorted set per
// client whose scores are the sessions' expiries, so that a session whose
// process died without a word leaves the count when it expires. A session
// deleted meanwhile (Delete drops the state, then the count) is taken out
// again: either this sees it gone, or Delete's removal comes after.
func (s *sessions) count(ctx context.Context, client, id string, at time.Time) error {
	if client == "" {
		return nil
	}
	key := s.cfg.key("client", client)
	pipe := s.rdb.Pipeline()
	pipe.ZAdd(ctx, key, redis.Z{Score: float64(at.UnixMilli()), Member: id})
	redisx.ExpireAtLeast(ctx, pipe, key, time.Until(at)+time.Second)
	kept := pipe.Exists(ctx, s.cfg.key("session", id))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redisstore: count a client's session: %w", err)
	}
	if kept.Val() == 0 {
		_ = s.rdb.ZRem(ctx, key, id).Err() // else it leaves the count when it expires
	}
	return nil
}

// ClientSessions counts the live sessions client holds in every process
// (server.WithSessionStore: a client's share holds for the service).
func (s *sessions) ClientSessions(ctx context.Context, client string) (int, error) {
	key := s.cfg.key("client", client)
	pipe := s.rdb.Pipeline()
	pipe.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(time.Now().UnixMilli(), 10))
	n := pipe.ZCard(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("redisstore: count a client's sessions: %w", err)
	}
	return int(n.Val()), nil
}

// Load returns a session's state, server.ErrSessionNotFound when Redis
// keeps none (it ended, expired or never existed).
func (s *sessions) Load(ctx context.Context, id string) (server.SessionState, error) {
	b, err := s.rdb.Get(ctx, s.cfg.key("session", id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return server.SessionState{}, server.ErrSessionNotFound
	}
	if err != nil {
		return server.SessionState{}, fmt.Errorf("redisstore: load session: %w", err)
	}
	var st server.SessionState
	if err := json.Unmarshal(b, &st); err != nil {
		// Not a state this version can serve (corrupt, or written by an
		// incompatible one): the client starts over, rather than hearing
		// "try again" until it expires.
		return server.SessionState{}, fmt.Errorf("%w: its state does not decode: %v", server.ErrSessionNotFound, err)
	}
	if !st.Expires.IsZero() && time.Now().After(st.Expires) {
		return server.SessionState{}, server.ErrSessionNotFound
	}
	return st, nil
}

// Update replaces a kept session's state at st.Version with st at the
// next version, and pushes its expiry on, in one script;
// server.ErrSessionChanged when the state kept is at another version,
// server.ErrSessionNotFound when Redis keeps none (it ended elsewhere).
func (s *sessions) Update(ctx context.Context, st server.SessionState) error {
	from := st.Version
	st.Version++
	b, at, err := s.encode(st)
	if err != nil {
		return err
	}
	set, err := updateScript.Run(ctx, s.rdb, []string{s.cfg.key("session", st.ID)}, b, from, at.UnixMilli()).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: update session: %w", err)
	case set == 0:
		return server.ErrSessionNotFound
	case set < 0:
		return server.ErrSessionChanged
	}
	// The state is written: an error of the count is not the update's (the
	// server would make the write again, on a newer state), and the next
	// save counts the session again.
	_ = s.count(ctx, st.Client, st.ID, at)
	return nil
}

// updateScript sets KEYS[1] to ARGV[1], expiring at ARGV[3] (unix ms),
// when the state it holds is at version ARGV[2] (no version: 0): 1; 0
// when it holds none, or one that does not decode (as Load has it), -1
// when it holds another version.
var updateScript = redis.NewScript(`
local kept = redis.call('GET', KEYS[1])
if not kept then return 0 end
local ok, st = pcall(cjson.decode, kept)
if not ok or type(st) ~= 'table' then return 0 end
local version = 0
if type(st.version) == 'number' then version = st.version end
if version ~= tonumber(ARGV[2]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
return 1
`)

// Delete drops a session's state, and its place in its client's count;
// one Redis does not keep is no error.
func (s *sessions) Delete(ctx context.Context, id string) error {
	key := s.cfg.key("session", id)
	var st server.SessionState
	if b, err := s.rdb.Get(ctx, key).Bytes(); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	if err := s.rdb.Del(ctx, key).Err(); err != nil {
		return fmt.Errorf("redisstore: delete session: %w", err)
	}
	if st.Client != "" { // after the state is gone: see count
		_ = s.rdb.ZRem(ctx, s.cfg.key("client", st.Client), id).Err() // else it leaves the count when it expires
	}
	return nil
}

// encode is the state as stored and when its key expires: at its Expires,
// or the session TTL from now when it has none.
func (s *sessions) encode(st server.SessionState) ([]byte, time.Time, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: session %s: %w", st.ID, err)
	}
	at := st.Expires
	if at.IsZero() {
		at = time.Now().Add(s.cfg.maxIdle)
	}
	if !at.After(time.Now()) {
		at = time.Now().Add(time.Millisecond) // expired already: gone at once, but SET needs a future time
	}
	return b, at, nil
}
