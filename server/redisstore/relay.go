package redisstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// relay carries a client's messages between the processes (the relay of
// server.WithSessionStore), on Redis Pub/Sub: every process publishes on
// one channel (the prefix, "relay" and the database) and receives what the others
// publish; a process drops its own messages. Pub/Sub keeps nothing: a
// process that is not subscribed when a message goes out does not get it,
// which is right for a relay (the message is for a call that waits now).
// go-redis resubscribes after a lost connection, and its channel to the
// server is bounded (a message it cannot hand on within a minute is
// dropped and logged).
type relay struct {
	rdb     redis.UniversalClient
	channel string
	origin  string // this process, in every message it publishes
}

func newRelay(rdb redis.UniversalClient, c config) relay {
	var origin [8]byte
	_, _ = rand.Read(origin[:])
	channel := c.prefix + "relay"
	if cl, ok := rdb.(*redis.Client); ok {
		// Pub/Sub ignores databases: services on one Redis in different
		// databases must not hear each other.
		channel += ":" + strconv.Itoa(cl.Options().DB)
	}
	return relay{rdb: rdb, channel: channel, origin: hex.EncodeToString(origin[:])}
}

// A message on the channel: origin, session, message, separated by
// newlines (ids have none; the message is JSON on one line or more).
func (r *relay) Publish(ctx context.Context, session string, msg []byte) error {
	payload := make([]byte, 0, len(r.origin)+len(session)+len(msg)+2)
	payload = append(append(append(append(append(payload, r.origin...), '\n'), session...), '\n'), msg...)
	if err := r.rdb.Publish(ctx, r.channel, payload).Err(); err != nil {
		return fmt.Errorf("redisstore: relay: %w", err)
	}
	return nil
}

func (r *relay) Subscribe(deliver func(session string, msg []byte)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := r.rdb.Subscribe(ctx, r.channel)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			origin, rest, ok := bytes.Cut([]byte(m.Payload), []byte{'\n'})
			if !ok || string(origin) == r.origin {
				continue
			}
			session, msg, ok := bytes.Cut(rest, []byte{'\n'})
			if !ok {
				continue
			}
			deliver(string(session), msg)
		}
	}()
	return func() {
		cancel()
		_ = ps.Close()
		<-done
	}
}
