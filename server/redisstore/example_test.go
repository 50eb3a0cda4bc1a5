package redisstore_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/redisstore"
)

// Every replica of a service runs this with the same Redis: any of them
// serves any session, and resumes any stream.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	srv := server.New(app.New("replicated", "1.0.0").Handler(), server.WithSessionStore(redisstore.NewSessions(rdb)))
	defer srv.Close()
	if err := mcphttp.ListenAndServe(ctx, "127.0.0.1:8000", srv, mcphttp.WithEventStore(redisstore.NewEvents(rdb))); err != nil {
		log.Print(err)
	}
}
