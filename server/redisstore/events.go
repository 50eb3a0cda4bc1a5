package redisstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/mcphttp"
)

// NewEvents is an mcphttp.EventStore in rdb, for the events of resumable
// streams. A session's events are one
// Redis stream (entries: the stream's name, the event's number in it, its
// data) beside a hash of counters (the next number of each stream, the
// events each still has, the bytes kept), so that the bounds (events,
// bytes and age per session, oldest out first) and the difference between
// events that fell out (ErrEventsGone) and ids never issued
// (ErrUnknownEvent) are those of the in-memory store. Appends and replays
// are Lua scripts: each is atomic, whichever replica runs it. Event ids
// are "<stream>-<n>", as in memory.
func NewEvents(rdb redis.UniversalClient, opts ...Option) mcphttp.EventStore {
	return &events{rdb: rdb, cfg: newConfig(opts)}
}

type events struct {
	rdb redis.UniversalClient
	cfg config
}

// keys are a session's event keys: the entries, the counters, and the
// streams that lost their last event, oldest first (their counters are
// kept, so that a replay says "gone", up to the event bound).
func (e *events) keys(session string) []string {
	return []string{e.cfg.key("events", session), e.cfg.key("counters", session), e.cfg.key("emptied", session)}
}

func (e *events) limits() []any {
	return []any{e.cfg.maxEvents, e.cfg.maxAge.Milliseconds(), e.cfg.maxBytes}
}

// Append stores the next event of a stream and returns its id.
func (e *events) Append(session, stream string, data []byte) (string, error) {
	ctx, cancel := e.cfg.background()
	defer cancel()
	n, err := appendScript.Run(ctx, e.rdb, e.keys(session), append(e.limits(), stream, data)...).Int64()
	if err != nil {
		return "", fmt.Errorf("redisstore: append an event: %w", err)
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
	ctx, cancel := e.cfg.background()
	defer cancel()
	_ = e.rdb.Del(ctx, e.keys(session)...).Err() // what is left expires
}

// What the replay script answers first.
// (0 then the events: the replay).
const (
	replayUnknown = 1
	replayGone    = 2
)

// trimLua drops a session's oldest events while it holds more than the
// bounds allow, keeping the newest keep. Counters: "n:<stream>" the next
// number, "k:<stream>" the events kept, "bytes". A stream that loses its
// last event joins the emptied list; past maxEvents such streams, the
// oldest one's counters go (a replay from it is then unknown, not gone).
// Every key expires maxAge after the last append: by then every event
// has aged out.
const trimLua = `
local function trim(keys, maxEvents, maxAge, maxBytes, keep)
  local t = redis.call('TIME')
  local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - maxAge
  local bytes = tonumber(redis.call('HGET', keys[2], 'bytes') or '0')
  local len = redis.call('XLEN', keys[1])
  local dropped = false
  while len > keep do
    local e = redis.call('XRANGE', keys[1], '-', '+', 'COUNT', 1)[1]
    local ms = tonumber(string.match(e[1], '^(%d+)'))
    if len <= maxEvents and ms >= cutoff and (maxBytes <= 0 or bytes <= maxBytes) then
      break
    end
    local f = e[2]
    local name, data = f[2], f[6]
    redis.call('XDEL', keys[1], e[1])
    dropped = true
    len = len - 1
    bytes = bytes - string.len(data)
    if redis.call('HINCRBY', keys[2], 'k:' .. name, -1) <= 0 then
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
`

// appendScript: KEYS entries, counters, emptied; ARGV maxEvents, maxAge
// (ms), maxBytes, stream, data. Answers the event's number.
var appendScript = redis.NewScript(trimLua + `
local maxEvents, maxAge, maxBytes = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local name, data = ARGV[4], ARGV[5]
local n = redis.call('HINCRBY', KEYS[2], 'n:' .. name, 1) - 1
redis.call('HINCRBY', KEYS[2], 'k:' .. name, 1)
redis.call('HINCRBY', KEYS[2], 'bytes', string.len(data))
redis.call('XADD', KEYS[1], '*', 's', name, 'n', n, 'd', data)
trim(KEYS, maxEvents, maxAge, maxBytes, 1)
for _, k in ipairs(KEYS) do
  redis.call('PEXPIRE', k, maxAge)
end
return n
`)

// replayScript: KEYS as appendScript's; ARGV maxEvents, maxAge, maxBytes,
// stream, the number of the last event seen. Answers {0, n, data, ...},
// {1} for an id never issued, {2} when events after it fell out.
var replayScript = redis.NewScript(trimLua + `
local maxEvents, maxAge, maxBytes = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local name, seq = ARGV[4], tonumber(ARGV[5])
trim(KEYS, maxEvents, maxAge, maxBytes, 0)
local nxt = tonumber(redis.call('HGET', KEYS[2], 'n:' .. name) or '-1')
if seq >= nxt then
  return {1}
end
local out = {0}
local first = nil
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f = e[2]
  if f[2] == name then
    local n = tonumber(f[4])
    if first == nil then
      first = n
    end
    if n > seq then
      table.insert(out, n)
      table.insert(out, f[6])
    end
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
