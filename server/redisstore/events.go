package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
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
// (mcphttp.ErrUnknownEvent, 400) are those of the in-memory store, and a
// replay reads only its own stream. Appends and replays are Lua scripts:
// each is atomic, whichever replica runs it. The events expire with their
// age; the counters a day after the session's last append or replay (the
// session TTL), so that a stream resumed after a quiet spell is told
// apart from one never issued.
func NewEvents(rdb redis.UniversalClient, opts ...Option) mcphttp.EventStore {
	e := &events{rdb: rdb, cfg: newConfig(opts), held: map[streamKey]*hold{}, stop: make(chan struct{})}
	e.wb.start(e, e.stop, &e.running)
	e.running.Go(e.renewLeases)
	return e
}

type events struct {
	rdb redis.UniversalClient
	cfg config
	wb  writeBehind

	holds sync.Mutex
	held  map[streamKey]*hold // the streams this process holds (Hold)

	stop      chan struct{}  // Close: the goroutines below end
	running   sync.WaitGroup // the writer, the lease renewer, the rate counters' syncs
	closeOnce sync.Once
}

// Close writes what is queued, then ends the store's goroutines (the
// writer, the lease renewer, the rate counters'); an append after it
// fails. The Redis client is the caller's to close, after it.
func (e *events) Close() error {
	e.closeOnce.Do(func() {
		e.wb.drain()
		close(e.stop)
		e.running.Wait()
	})
	return nil
}

// keys are a session's keys: its order, its counters, its emptied
// streams; a stream's events, and its lease, are at the prefixes of
// streams and leases and the stream's name (the same hash tag: one
// Cluster slot).
func (e *events) keys(session string) []string {
	return []string{e.cfg.key("order", session), e.cfg.key("counters", session), e.cfg.key("emptied", session),
		e.cfg.key("stream", session) + ":", e.cfg.key("lease", session) + ":"}
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
	return e.append(session, stream, data, false)
}

// append stores an event; last is a held stream's answer.
func (e *events) append(session, stream string, data []byte, last bool) (string, error) {
	if n, ok := e.wb.number(session, stream); ok {
		if err := e.wb.push(pending{session: session, stream: stream, n: n, data: data, last: last}); err != nil {
			return "", err
		}
		return stream + "-" + strconv.FormatInt(n, 10), nil
	}
	ctx, cancel := e.cfg.background()
	defer cancel()
	args := append(e.limits(), stream, data, "", lastArg(last))
	var n int64
	var err error
	if epitaph := e.holding(session, stream); epitaph != nil {
		// The stream's epitaph and lease go in the first event's round trip.
		pipe := e.rdb.Pipeline()
		pipe.HSet(ctx, e.cfg.key("counters", session), "r:"+stream, epitaph)
		pipe.Set(ctx, e.cfg.key("lease", session)+":"+stream, "1", leaseTTL)
		appended := pipe.EvalSha(ctx, appendScript.Hash(), e.keys(session), args...)
		if _, err = pipe.Exec(ctx); redis.HasErrorPrefix(err, "NOSCRIPT") {
			_ = appendScript.Load(ctx, e.rdb).Err()
			appended = e.rdb.EvalSha(ctx, appendScript.Hash(), e.keys(session), args...)
			err = appended.Err()
		}
		if err == nil {
			n, err = appended.Int64()
		}
	} else {
		n, err = appendScript.Run(ctx, e.rdb, e.keys(session), args...).Int64()
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: append an event: %w", err)
	}
	if n == 0 && !last {
		e.wb.own(session, stream)
	}
	return stream + "-" + strconv.FormatInt(n, 10), nil
}

// lastArg is the append script's mark of a held stream's answer.
func lastArg(last bool) string {
	if last {
		return "last"
	}
	return ""
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

// Flush waits until the events this process writes behind are in Redis
// (mcphttp's shutdown calls it, after the streams have ended).
func (e *events) Flush() { e.wb.drain() }

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
// "k:<stream>" the events kept, "b:<stream>" their bytes, "bytes" those
// of all. A stream that loses its last event joins the emptied list; past
// maxEvents such streams, the oldest one's counters go (a replay from it
// is then unknown, not gone), but a GET stream's ("_..."), kept while its
// session is. Events also expire with their age, the
// counters later: a stream found expired takes its bytes out of the
// count, and so does every stream when the whole order has expired
// (settle), or the count would keep bytes no longer there, and trim the
// session's new events down to one.
const trimLua = `
local function emptied(keys, name, maxEvents)
  redis.call('DEL', keys[4] .. name)
  redis.call('HDEL', keys[2], 'b:' .. name)
  if string.sub(name, 1, 1) == '_' then
    return -- a GET stream lives on quiet: its numbering is kept with the session
  end
  redis.call('RPUSH', keys[3], name)
  if redis.call('LLEN', keys[3]) > maxEvents then
    local old = redis.call('LPOP', keys[3])
    if tonumber(redis.call('HGET', keys[2], 'k:' .. old) or '0') <= 0 then
      redis.call('HDEL', keys[2], 'n:' .. old, 'k:' .. old)
    end
  end
end

local function settle(keys, maxEvents)
  if redis.call('EXISTS', keys[1]) == 1 then
    return
  end
  local fields = redis.call('HGETALL', keys[2])
  for i = 1, #fields, 2 do
    local f = fields[i]
    if string.sub(f, 1, 2) == 'k:' and tonumber(fields[i + 1]) > 0 then
      redis.call('HSET', keys[2], f, 0)
      emptied(keys, string.sub(f, 3), maxEvents)
    end
  end
  if #fields > 0 then
    redis.call('HSET', keys[2], 'bytes', 0)
  end
end

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
      local size = string.len(e[2][4])
      bytes = bytes - size
      redis.call('HINCRBY', keys[2], 'b:' .. name, -size)
    else
      -- the stream expired with its age: its bytes went with it
      bytes = bytes - tonumber(redis.call('HGET', keys[2], 'b:' .. name) or '0')
      redis.call('HDEL', keys[2], 'b:' .. name)
    end
    redis.call('LPOP', keys[1])
    dropped = true
    len = len - 1
    if redis.call('HINCRBY', keys[2], 'k:' .. name, -1) <= 0 then
      emptied(keys, name, maxEvents)
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

// appendLua stores the next event of a stream: numbered n when given
// (the process that carries the stream numbered it: written behind), by
// Redis otherwise; the stream's last (its answer) also lets go of its
// epitaph and lease, in the same step.
const appendLua = trimLua + `
local function append(keys, name, data, n, last, maxEvents, maxAge, maxBytes, ttl)
  settle(keys, maxEvents)
  if n then
    -- numbered by the process that writes the stream in order: an n
    -- below the next is stored already (a batch sent again)
    if n < tonumber(redis.call('HGET', keys[2], 'n:' .. name) or '0') then
      return n
    end
    redis.call('HSET', keys[2], 'n:' .. name, n + 1)
  else
    n = redis.call('HINCRBY', keys[2], 'n:' .. name, 1) - 1
  end
  redis.call('HINCRBY', keys[2], 'k:' .. name, 1)
  redis.call('HINCRBY', keys[2], 'bytes', string.len(data))
  redis.call('HINCRBY', keys[2], 'b:' .. name, string.len(data))
  redis.call('XADD', keys[4] .. name, '*', 'n', n, 'd', data)
  redis.call('RPUSH', keys[1], name)
  if last then
    redis.call('HDEL', keys[2], 'r:' .. name)
    redis.call('DEL', keys[5] .. name)
  end
  trim(keys, maxEvents, maxAge, maxBytes, 1)
  expire(keys, name, maxAge, ttl)
  return n
end
`

// appendScript: KEYS as keys gives them; ARGV maxEvents, maxAge (ms),
// maxBytes, the session TTL (ms), stream, data, the event's number or
// "", "last" or "". Answers the event's number.
var appendScript = redis.NewScript(appendLua + `
local n = nil
if ARGV[7] and ARGV[7] ~= '' then
  n = tonumber(ARGV[7])
end
return append(KEYS, ARGV[5], ARGV[6], n, ARGV[8] == 'last', tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
`)

// buryScript: KEYS as keys gives them; ARGV the limits as appendScript's,
// stream, the number of the last event the client saw. When the stream's
// lease ran out before its answer, it stores the epitaph as the stream's
// next event, numbered past what the client saw (events written behind
// may have reached the client and not Redis), lets go of it, and answers
// {n, epitaph}; else nothing.
var buryScript = redis.NewScript(appendLua + `
local name = ARGV[5]
if redis.call('EXISTS', KEYS[5] .. name) == 1 then
  return false
end
local epitaph = redis.call('HGET', KEYS[2], 'r:' .. name)
if not epitaph then
  return false
end
local n = math.max(tonumber(redis.call('HGET', KEYS[2], 'n:' .. name) or '0'), tonumber(ARGV[6]) + 1)
append(KEYS, name, epitaph, n, true, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
return {n, epitaph}
`)

// renewScript keeps a held stream's lease while its epitaph is there:
// KEYS the counters, the lease; ARGV the epitaph's field, the TTL (ms). A
// lease that ran out (a stall) is taken again, unless the stream was
// buried meanwhile.
var renewScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return 0
`)

// replayScript: KEYS as trimLua's; ARGV maxEvents, maxAge, maxBytes, the
// session TTL, stream, the number of the last event seen. Answers {0, n,
// data, ...} (the stream's events after it, only its own: none when the
// client is ahead of what reached Redis), {1} for a stream never issued,
// {2} when events after it fell out.
var replayScript = redis.NewScript(trimLua + `
local maxEvents, maxAge, maxBytes, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local name, seq = ARGV[5], tonumber(ARGV[6])
trim(KEYS, maxEvents, maxAge, maxBytes, 0)
local nxt = tonumber(redis.call('HGET', KEYS[2], 'n:' .. name) or '-1')
if nxt < 0 and redis.call('HEXISTS', KEYS[2], 'r:' .. name) == 0 then
  return {1}
end
if seq >= nxt then
  -- the client saw events not written yet (behind): nothing to replay now
  return {0}
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
// process dies before the stream's answer (the epitaph, beside the
// stream's counters), under a lease the process renews until release.
// Both are written with the stream's first event, in its round trip; the
// answer (AppendLast) lets go of them in its own step; a stream released
// unanswered (aborted) gives up its lease at once, so that another process
// buries it without waiting. One goroutine renews the leases of every
// stream the process holds.
func (e *events) Hold(session, stream string, epitaph []byte) (release func(answered bool)) {
	k := streamKey{session, stream}
	e.holds.Lock()
	e.held[k] = &hold{epitaph: epitaph}
	e.holds.Unlock()
	var once sync.Once
	return func(answered bool) {
		once.Do(func() {
			e.holds.Lock()
			h := e.held[k]
			delete(e.held, k)
			e.holds.Unlock()
			e.wb.disown(session, stream)
			if h != nil && h.written && !answered {
				e.wb.letGo(session, stream) // behind the stream's last events
			}
		})
	}
}

// AppendLast stores a held stream's answer, its last event, which lets go
// of its epitaph and lease in the same step.
func (e *events) AppendLast(session, stream string, data []byte) (string, error) {
	return e.append(session, stream, data, true)
}

// Bury stores and gives the epitaph of a stream whose process died before
// its answer (its lease ran out), numbered past lastSeen, once.
func (e *events) Bury(session, stream string, lastSeen int64) (string, []byte, bool) {
	ctx, cancel := e.cfg.background()
	defer cancel()
	out, err := buryScript.Run(ctx, e.rdb, e.keys(session), append(e.limits(), stream, lastSeen)...).Slice()
	if err != nil || len(out) != 2 {
		return "", nil, false
	}
	n, _ := out[0].(int64)
	epitaph, _ := out[1].(string)
	return stream + "-" + strconv.FormatInt(n, 10), []byte(epitaph), true
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
// TTL, in one pipeline (taking again one that ran out in a stall, unless
// another process buried the stream meanwhile), and forgets the numbering
// of streams idle for longer than their events live (a later event of one
// is numbered by Redis again, which has all the earlier ones by then).
func (e *events) renewLeases() {
	tick := time.NewTicker(leaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-e.stop:
			return
		}
		e.wb.forgetIdle(e.cfg.maxAge)
		e.holds.Lock()
		var held []streamKey
		for k, h := range e.held {
			if h.written {
				held = append(held, k)
			}
		}
		e.holds.Unlock()
		if len(held) == 0 {
			continue
		}
		ctx, cancel := e.cfg.background()
		pipe := e.rdb.Pipeline()
		for _, k := range held {
			pipe.EvalSha(ctx, renewScript.Hash(), []string{e.cfg.key("counters", k.session), e.cfg.key("lease", k.session) + ":" + k.stream},
				"r:"+k.stream, leaseTTL.Milliseconds())
		}
		if _, err := pipe.Exec(ctx); redis.HasErrorPrefix(err, "NOSCRIPT") {
			_ = renewScript.Load(ctx, e.rdb).Err() // the next tick renews
		}
		cancel()
	}
}
