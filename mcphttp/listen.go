package mcphttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server"
)

// ListenAndServe serves srv over HTTP on a loopback addr (Handler's routes)
// until ctx ends, then drains for up to 10 seconds. It has no
// authentication, so it refuses any other address; requests are guarded
// against DNS rebinding (Host and Origin must be loopback). To serve
// others, serve Handler with WithAuth.
func ListenAndServe(ctx context.Context, addr string, srv *server.Server, opts ...Option) error {
	if !guard.IsLoopbackAddr(addr) {
		return fmt.Errorf("mcphttp: ListenAndServe serves loopback addresses only (it has no authentication), not %q: serve Handler with WithAuth", addr)
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	h, shutdown := Handler(srv, append(opts[:len(opts):len(opts)], WithLoopbackOnly())...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, ConnContext: httpx.ConnCaller}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var drained sync.WaitGroup
	drained.Go(func() { shutdown(sctx) }) // the transports' connections, while hs waits for its requests
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	drained.Wait()
	flushEvents(c.events)
	return nil
}

// flushEvents waits until a store that writes events behind (redisstore's)
// has written them, once the calls have ended.
func flushEvents(store EventStore) {
	if f, ok := store.(interface{ Flush() }); ok {
		f.Flush()
	}
}
