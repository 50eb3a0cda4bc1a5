package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcphttp"
)

// NewEvents is an mcphttp.EventStore in rdb, for the events of resumable
// streams, laid out as the in-memory store keeps them: each stream's events
// are a Redis stream of their own (entries: the event's number, its data),
// beside the session's order of events (a list of stream names, oldest
// first, for the session's bounds), a hash of counters (each stream's next
// number and events kept, the bytes kept) and the streams that lost their
// last event. So the bounds (events, bytes and age per session, the oldest
// out first), the ids ("<stream>-<n>") and the difference between events
// that fell out (mcphttp.ErrEventsGone, 410) and ids never issued
// (mcphttp.ErrUnknownEvent, 404) are those of the in-memory store, and a
// replay reads only its own stream. Appends and replays are Lua scripts:
// each is atomic, whichever replica runs it. The events expire with their
// age; the counters a day after the session's last append or replay (the
// session TTL), so that a stream resumed after a quiet spell is told
// apart from one never issued.
func NewEvents(rdb redis.UniversalClient, opts ...Option) mcphttp.EventStore {
	e := &events{rdb: rdb, cfg: newConfig(opts), held: map[streamKey]*hold{}}
	e.wb.start(e)
	go e.renewLeases() // lives as long as the process
	return e
}

type events struct {
	rdb   redis.UniversalClient
	cfg   config
	rates atomic.Int64 // counters handed out (RateCounter), each with keys of its own
	wb    writeBehind

	holds sync.Mutex
	held  map[streamKey]*hold // the streams this process holds (Hold)
}

// keys are a session's keys: its order, its counters, its emptied
// streams; a stream's events are at the prefix of its streams and the
// stream's name (the same hash tag: one Cluster slot).
func (e *events) keys(session string) []string {
	return []string{e.cfg.key("order", session), e.cfg.key("counters", session), e.cfg.key("emptied", session),
		e.cfg.key("stream", session) + ":"}
}

func (e *events) limits() []any {
	return []any{e.cfg.maxEvents, e.cfg.maxAge.Milliseconds(), e.cfg.maxBytes, e.cfg.maxIdle.Milliseconds()}
}

// Append stores the next event of a stream and returns its id.
//
// The first event of a stream is written at once, and numbered by Redis;
// when it is the stream's first (a stream this process opened, which only
// it appends to), the process numbers the rest itself and writes them
// behind (writebehind.go), so that an event costs no round trip of its
// own.
func (e *events) Append(session, stream string, data []byte) (string, error) {
	if n, ok := e.wb.number(session, stream); ok {
		if err := e.wb.push(session, stream, n, data); err != nil {
			return "", err
		}
		return stream + "-" + strconv.FormatInt(n, 10), nil
	}
	ctx, cancel := e.cfg.background()
	defer cancel()
	var n int64
	var err error
	if epitaph := e.holding(session, stream); epitaph != nil {
		// The stream's epitaph and lease go in the first event's round trip.
		pipe := e.rdb.Pipeline()
		pipe.HSet(ctx, e.cfg.key("counters", session), "r:"+stream, epitaph)
		pipe.Set(ctx, e.cfg.key("lease", session)+":"+stream, "1", leaseTTL)
		appended := pipe.EvalSha(ctx, appendScript.Hash(), e.keys(session), append(e.limits(), stream, data)...)
		if _, err = pipe.Exec(ctx); redis.HasErrorPrefix(err, "NOSCRIPT") {
			_ = appendScript.Load(ctx, e.rdb).Err()
			appended = e.rdb.EvalSha(ctx, appendScript.Hash(), e.keys(session), append(e.limits(), stream, data)...)
			err = appended.Err()
		}
		if err == nil {
			n, err = appended.Int64()
		}
	} else {
		n, err = appendScript.Run(ctx, e.rdb, e.keys(session), append(e.limits(), stream, data)...).Int64()
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: append an event: %w", err)
	}
	if n == 0 {
		e.wb.own(session, stream)
	}
	return stream + "-" + strconv.FormatInt(n, 10), nil
}

// Replay calls fn for each event of lastID's stream after it, in order.
func (e *events) Replay(session, lastID string, fn func(id string, data []byte) error) (string, error) {
	i := strings.LastIndexByte(lastID, '-')
	if i <= 0 {
		return "", mcphttp.ErrUnknownEvent
	}
	stream := lastID[:i]
	seq, err := strconv.ParseInt(lastID[i+1:], 10, 64)
	if err != nil || seq < 0 {
		return "", mcphttp.ErrUnknownEvent
	}
	e.wb.drain() // what this process wrote behind is in Redis before it is read
	ctx, cancel := e.cfg.background()
	defer cancel()
	out, err := replayScript.Run(ctx, e.rdb, e.keys(session), append(e.limits(), stream, seq)...).Slice()
	if err != nil {
		return "", fmt.Errorf("redisstore: replay events: %w", err)
	}
	if len(out) == 0 {
		return "", fmt.Errorf("redisstore: replay events: an empty answer")
	}
	switch status, _ := out[0].(int64); status {
	case replayUnknown:
		return "", mcphttp.ErrUnknownEvent
	case replayGone:
		return "", mcphttp.ErrEventsGone
	}
	for k := 1; k+1 < len(out); k += 2 {
		n, _ := out[k].(int64)
		data, _ := out[k+1].(string)
		if err := fn(stream+"-"+strconv.FormatInt(n, 10), []byte(data)); err != nil {
			return stream, err
		}
	}
	return stream, nil
}

// Forget drops a session's events: it has ended.
func (e *events) Forget(session string) {
	e.wb.drain()
	e.wb.disownSession(session)
	ctx, cancel := e.cfg.background()
	defer cancel()
	_ = forgetScript.Run(ctx, e.rdb, e.keys(session)).Err() // what is left expires
}

// What the replay script answers first.
// (0 then the events: the replay).
const (
	replayUnknown = 1
	replayGone    = 2
)

// trimLua drops a session's oldest events while it holds more than the
// bounds allow, keeping the newest keep. KEYS: order, counters, emptied,
// the prefix of the streams. Counters: "n:<stream>" the next number,
// "k:<stream>" the events kept, "bytes". A stream that loses its last
// event joins the emptied list; past maxEvents such streams, the oldest
// one's counters go (a replay from it is then unknown, not gone).
const trimLua = `
local function trim(keys, maxEvents, maxAge, maxBytes, keep)
  local t = redis.call('TIME')
  local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - maxAge
  local bytes = tonumber(redis.call('HGET', keys[2], 'bytes') or '0')
  local len = redis.call('LLEN', keys[1])
  local dropped = false
  while len > keep do
    local name = redis.call('LINDEX', keys[1], 0)
    local e = redis.call('XRANGE', keys[4] .. name, '-', '+', 'COUNT', 1)[1]
    if e then
      local ms = tonumber(string.match(e[1], '^(%d+)'))
      if len <= maxEvents and ms >= cutoff and (maxBytes <= 0 or bytes <= maxBytes) then
        break
      end
      redis.call('XDEL', keys[4] .. name, e[1])
      bytes = bytes - string.len(e[2][4])
    end
    redis.call('LPOP', keys[1])
    dropped = true
    len = len - 1
    if redis.call('HINCRBY', keys[2], 'k:' .. name, -1) <= 0 then
      redis.call('DEL', keys[4] .. name)
      redis.call('RPUSH', keys[3], name)
      if redis.call('LLEN', keys[3]) > maxEvents then
        local old = redis.call('LPOP', keys[3])
        if tonumber(redis.call('HGET', keys[2], 'k:' .. old) or '0') <= 0 then
          redis.call('HDEL', keys[2], 'n:' .. old, 'k:' .. old)
        end
      end
    end
  end
  if dropped then
    redis.call('HSET', keys[2], 'bytes', bytes)
  end
end

-- expire: the events and their order with their age, the counters and
-- the emptied list a session TTL after the session was last used.
local function expire(keys, name, maxAge, ttl)
  for _, k in ipairs({keys[1], keys[4] .. name}) do
    if redis.call('EXISTS', k) == 1 then
      redis.call('PEXPIRE', k, maxAge)
    end
  end
  for _, k in ipairs({keys[2], keys[3]}) do
    if redis.call('EXISTS', k) == 1 then
      redis.call('PEXPIRE', k, ttl)
    end
  end
end
`

// appendScript: KEYS as trimLua's; ARGV maxEvents, maxAge (ms), maxBytes,
// the session TTL (ms), stream, data, and the event's number when the
// process that carries the stream numbered it (written behind), else
// none. Answers the event's number.
var appendScript = redis.NewScript(trimLua + `
local maxEvents, maxAge, maxBytes, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local name, data = ARGV[5], ARGV[6]
local n
if ARGV[7] then
  n = tonumber(ARGV[7])
  if n + 1 > tonumber(redis.call('HGET', KEYS[2], 'n:' .. name) or '0') then
    redis.call('HSET', KEYS[2], 'n:' .. name, n + 1)
  end
else
  n = redis.call('HINCRBY', KEYS[2], 'n:' .. name, 1) - 1
end
redis.call('HINCRBY', KEYS[2], 'k:' .. name, 1)
redis.call('HINCRBY', KEYS[2], 'bytes', string.len(data))
redis.call('XADD', KEYS[4] .. name, '*', 'n', n, 'd', data)
redis.call('RPUSH', KEYS[1], name)
trim(KEYS, maxEvents, maxAge, maxBytes, 1)
expire(KEYS, name, maxAge, ttl)
return n
`)

// replayScript: KEYS as trimLua's; ARGV maxEvents, maxAge, maxBytes, the
// session TTL, stream, the number of the last event seen. Answers {0, n,
// data, ...} (the stream's events after it, only its own), {1} for an id
// never issued, {2} when events after it fell out.
var replayScript = redis.NewScript(trimLua + `
local maxEvents, maxAge, maxBytes, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local name, seq = ARGV[5], tonumber(ARGV[6])
trim(KEYS, maxEvents, maxAge, maxBytes, 0)
local nxt = tonumber(redis.call('HGET', KEYS[2], 'n:' .. name) or '-1')
if seq >= nxt then
  return {1}
end
expire(KEYS, name, maxAge, ttl)
local out = {0}
local first = nil
for _, e in ipairs(redis.call('XRANGE', KEYS[4] .. name, '-', '+')) do
  local n = tonumber(e[2][2])
  if first == nil then
    first = n
  end
  if n > seq then
    table.insert(out, n)
    table.insert(out, e[2][4])
  end
end
if first == nil then
  first = nxt
end
if seq + 1 < first then
  return {2}
end
return out
`)

// forgetScript drops a session's keys, its streams' too. KEYS as
// trimLua's.
var forgetScript = redis.NewScript(`
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(f, 1, 2) == 'n:' then
    redis.call('DEL', KEYS[4] .. string.sub(f, 3))
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 0
`)

// leaseTTL is how long a stream's process may be silent before the stream
// counts as orphaned: it renews the lease every third of it.
const leaseTTL = 10 * time.Second

// Hold keeps what the client of a stream this process carries gets if the
// process dies before the stream ends (the epitaph, beside the stream's
// counters), under a lease the process renews until release. Both are
// written with the stream's first event, in its round trip; one goroutine
// renews the leases of every stream the process holds.
func (e *events) Hold(session, stream string, epitaph []byte) (release func()) {
	k := streamKey{session, stream}
	e.holds.Lock()
	e.held[k] = &hold{epitaph: epitaph}
	e.holds.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.holds.Lock()
			h := e.held[k]
			delete(e.held, k)
			e.holds.Unlock()
			e.wb.disown(session, stream)
			if h != nil && h.written {
				e.wb.unhold(session, stream) // behind the stream's last events
			}
		})
	}
}

// hold is a stream this process holds: its epitaph until the first event
// wrote it, with its lease.
type hold struct {
	epitaph []byte
	written bool
}

// holding takes the epitaph of a held stream whose first event is being
// written, once.
func (e *events) holding(session, stream string) []byte {
	e.holds.Lock()
	defer e.holds.Unlock()
	h := e.held[streamKey{session, stream}]
	if h == nil || h.written {
		return nil
	}
	h.written = true
	return h.epitaph
}

// renewLeases renews the leases of the held streams every third of their
// TTL, in one pipeline; a failed renewal is tried again at the next tick.
func (e *events) renewLeases() {
	tick := time.NewTicker(leaseTTL / 3)
	defer tick.Stop()
	for range tick.C {
		e.holds.Lock()
		var leases []string
		for k, h := range e.held {
			if h.written {
				leases = append(leases, e.cfg.key("lease", k.session)+":"+k.stream)
			}
		}
		e.holds.Unlock()
		if len(leases) == 0 {
			continue
		}
		ctx, cancel := e.cfg.background()
		pipe := e.rdb.Pipeline()
		for _, l := range leases {
			pipe.PExpire(ctx, l, leaseTTL)
		}
		_, _ = pipe.Exec(ctx)
		cancel()
	}
}

// Orphaned gives the epitaph of a stream whose process stopped renewing
// its lease before the stream ended, once.
func (e *events) Orphaned(session, stream string) ([]byte, bool) {
	ctx, cancel := e.cfg.background()
	defer cancel()
	v, err := orphanScript.Run(ctx, e.rdb, []string{e.cfg.key("lease", session) + ":" + stream, e.cfg.key("counters", session)}, "r:"+stream).Text()
	if err != nil || v == "" {
		return nil, false
	}
	return []byte(v), true
}

// orphanScript: KEYS the lease, the counters; ARGV the epitaph's field.
// Answers the epitaph when the lease is gone, and forgets it.
var orphanScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v then
  return false
end
redis.call('HDEL', KEYS[2], ARGV[1])
return v
`)
