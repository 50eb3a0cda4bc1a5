package taskstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/internal/redisx"
	"github.com/mcpstack/mcpstack/server"
)

// NewRedis keeps task records in Redis, for replicas that share one
// (with server/redisstore's sessions, a service on Redis alone): one key
// per record; per owner and per share a sorted set of their ids by
// creation, for List and Trim; and one of every id by expiry, for Sweep.
// Every key starts with prefix ("mcpstack:" if empty) and expires, an hour
// after the record's TTL where no Sweep dropped it before.
func NewRedis(rdb redis.UniversalClient, prefix string) server.TaskStore {
	if prefix == "" {
		prefix = "mcpstack:"
	}
	return &redisTasks{rdb: rdb, prefix: prefix + "task:"}
}

type redisTasks struct {
	rdb    redis.UniversalClient
	prefix string
}

func (s *redisTasks) record(id string) string   { return s.prefix + "{" + id + "}" }
func (s *redisTasks) owner(owner string) string { return s.prefix + "owner:{" + owner + "}" }
func (s *redisTasks) share(share string) string { return s.prefix + "share:{" + share + "}" }
func (s *redisTasks) all() string               { return s.prefix + "expiries" }

// sweepGrace is how long Redis keeps a record past its TTL by itself, for
// a service whose Sweep did not run.
const sweepGrace = time.Hour

func (s *redisTasks) Save(ctx context.Context, r server.TaskRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("taskstore: task %s: %w", r.ID, err)
	}
	expires := r.Created.Add(r.TTL)
	ttl := max(time.Until(expires), 0) + sweepGrace
	score := float64(r.Created.UnixNano())
	pipe := s.rdb.Pipeline()
	pipe.Set(ctx, s.record(r.ID), b, ttl)
	for _, set := range []string{s.owner(r.Owner), s.share(shareOf(r))} {
		pipe.ZAdd(ctx, set, redis.Z{Score: score, Member: r.ID})
		redisx.ExpireAtLeast(ctx, pipe, set, ttl)
	}
	pipe.ZAdd(ctx, s.all(), redis.Z{Score: float64(expires.UnixMilli()), Member: r.ID})
	redisx.ExpireAtLeast(ctx, pipe, s.all(), ttl)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("taskstore: save %s: %w", r.ID, err)
	}
	return nil
}

func (s *redisTasks) Load(ctx context.Context, id string) (server.TaskRecord, error) {
	b, err := s.rdb.Get(ctx, s.record(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return server.TaskRecord{}, server.ErrTaskNotFound
	}
	if err != nil {
		return server.TaskRecord{}, fmt.Errorf("taskstore: load %s: %w", id, err)
	}
	r, err := decodeRecord(b)
	if err != nil {
		return server.TaskRecord{}, fmt.Errorf("%w: task %s does not decode: %v", server.ErrTaskNotFound, id, err)
	}
	return r, nil
}

// decodeRecord reads a stored record; a result or error it did not have
// comes back as none, not as null.
func decodeRecord(b []byte) (server.TaskRecord, error) {
	var r server.TaskRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return r, err
	}
	if string(r.Result) == "null" {
		r.Result = nil
	}
	if string(r.Error) == "null" {
		r.Error = nil
	}
	return r, nil
}

// List gives an owner's records, oldest first; ids whose record expired
// leave the owner's set as they are met.
func (s *redisTasks) List(ctx context.Context, owner string) ([]server.TaskRecord, error) {
	return s.members(ctx, s.owner(owner), false)
}

// members reads the records of a set, oldest first (newest first with
// reverse), and drops the ids whose record is gone.
func (s *redisTasks) members(ctx context.Context, set string, reverse bool) ([]server.TaskRecord, error) {
	var ids []string
	var err error
	if reverse {
		ids, err = s.rdb.ZRevRange(ctx, set, 0, -1).Result()
	} else {
		ids, err = s.rdb.ZRange(ctx, set, 0, -1).Result()
	}
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.record(id)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("taskstore: list: %w", err)
	}
	var out []server.TaskRecord
	var gone []any
	for i, v := range vals {
		str, ok := v.(string)
		r, err := decodeRecord([]byte(str))
		if !ok || err != nil {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, r)
	}
	if len(gone) > 0 {
		_ = s.rdb.ZRem(ctx, set, gone...).Err()
	}
	return out, nil
}

// Sweep drops the records past their TTL (the sets drop them too as
// they are read).
func (s *redisTasks) Sweep(ctx context.Context, now time.Time) error {
	ids, err := s.rdb.ZRangeByScore(ctx, s.all(), &redis.ZRangeBy{Min: "-inf", Max: fmt.Sprint(now.UnixMilli()), Count: 1000}).Result()
	if err != nil {
		return fmt.Errorf("taskstore: sweep: %w", err)
	}
	for _, id := range ids {
		r, err := s.Load(ctx, id)
		if err == nil {
			err = s.drop(ctx, r)
		}
		if err != nil && !errors.Is(err, server.ErrTaskNotFound) {
			return err
		}
		if err := s.rdb.ZRem(ctx, s.all(), id).Err(); err != nil {
			return fmt.Errorf("taskstore: sweep: %w", err)
		}
	}
	return nil
}

func (s *redisTasks) Trim(ctx context.Context, share string, keep int, keepBytes int64) error {
	records, err := s.members(ctx, s.share(share), true)
	if err != nil {
		return err
	}
	kept, bytes := 0, int64(0)
	for _, r := range records {
		if !slices.Contains([]string{"completed", "failed", "cancelled"}, r.Status) {
			continue
		}
		kept++
		bytes += int64(len(r.Result) + len(r.Error))
		if kept > keep || bytes > keepBytes {
			if err := s.drop(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// drop removes a record and its place in its sets.
func (s *redisTasks) drop(ctx context.Context, r server.TaskRecord) error {
	pipe := s.rdb.Pipeline()
	pipe.Del(ctx, s.record(r.ID))
	pipe.ZRem(ctx, s.owner(r.Owner), r.ID)
	pipe.ZRem(ctx, s.share(shareOf(r)), r.ID)
	pipe.ZRem(ctx, s.all(), r.ID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("taskstore: drop %s: %w", r.ID, err)
	}
	return nil
}
