// Package redisx holds what mcpstack's Redis stores share.
package redisx

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// expireAtLeast sets a key's TTL to at least ARGV[1] milliseconds, keeping
// a longer one: what EXPIRE NX and GT do together from Redis 7.0 on, here
// for any Redis with scripting.
var expireAtLeast = redis.NewScript(`
local t = redis.call('PTTL', KEYS[1])
if t >= tonumber(ARGV[1]) then
  return 0
end
return redis.call('PEXPIRE', KEYS[1], ARGV[1])
`)

// ExpireAtLeast queues, in c (a client or a pipeline), the TTL of key set
// to at least d. The script is sent whole: it is short, and a pipeline
// cannot fall back from EVALSHA.
func ExpireAtLeast(ctx context.Context, c redis.Scripter, key string, d time.Duration) {
	expireAtLeast.Eval(ctx, c, []string{key}, d.Milliseconds())
}
