package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/redis/go-redis/v9"
)

// openRedis connects to the Redis server url names (redis://[user:password@]host:port/db,
// rediss:// for TLS) and checks that it answers; what it says of the URL
// leaves the password out. go-redis's own messages (a pool that cannot
// dial) go to log at warn: its logger is the package's, set here once.
func openRedis(ctx context.Context, url string, log *slog.Logger) (*redis.Client, error) {
	redis.SetLogger(redisLog{log})
	opts, err := redis.ParseURL(url)
	if err != nil {
		// Its text quotes the URL, or the part of it that did not parse,
		// which may be the password: none of it is repeated.
		return nil, errors.New("not a Redis URL (redis://[user:password@]host:port/db, rediss:// for TLS; a password with / or @ is percent-encoded)")
	}
	if opts.PoolSize == 0 {
		// go-redis's default, ten per GOMAXPROCS, is ten on a pinned core:
		// fewer than the calls in flight that write a stream's first event.
		opts.PoolSize = max(10*runtime.GOMAXPROCS(0), 64)
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("%s: %w", redactRedisURL(url), err)
	}
	return rdb, nil
}

// redisLog is go-redis's logger on ours.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// redactRedisURL is url without its password, for logs and errors.
func redactRedisURL(url string) string {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return "(an unparsable Redis URL)"
	}
	scheme := "redis"
	if opts.TLSConfig != nil {
		scheme = "rediss"
	}
	user := ""
	if opts.Username != "" || opts.Password != "" {
		user = opts.Username
		if opts.Password != "" {
			user += ":***"
		}
		user += "@"
	}
	return fmt.Sprintf("%s://%s%s/%d", scheme, user, opts.Addr, opts.DB)
}
