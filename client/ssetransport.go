package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/internal/sse"
)

// SSE is the HTTP+SSE transport of 2024-11-05: a GET to URL opens the
// event stream that carries every message of the server, and names (its
// endpoint event) where the client POSTs its own.
type SSE struct {
	URL string
	// Client makes the requests (default: an http.Client without a
	// timeout). Whatever its CheckRedirect, a redirect to another origin
	// is not followed (RedirectError), as an endpoint event naming
	// another origin is refused.
	Client     *http.Client
	Header     http.Header
	MaxMessage int // default 16 MiB
}

// Connect opens the stream and waits for the endpoint event.
func (t *SSE) Connect(ctx context.Context) (Conn, error) {
	hc := sameOrigin(t.Client)
	max := messageLimit(t.MaxMessage)
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// Until the endpoint event came, Connect's context bounds the wait.
	stopHandshake := context.AfterFunc(ctx, cancel)
	defer stopHandshake()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, t.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	addHeader(req.Header, t.Header)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		cancel()
		return nil, &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	events := sse.NewReader(resp.Body, max)
	var endpoint *url.URL
	for endpoint == nil {
		ev, err := events.Next()
		if err != nil {
			resp.Body.Close()
			cancel()
			return nil, fmt.Errorf("client: the SSE stream ended before its endpoint event: %w", err)
		}
		if ev.Type == "endpoint" {
			base, _ := url.Parse(t.URL)
			if endpoint, err = base.Parse(strings.TrimSpace(string(ev.Data))); err != nil {
				resp.Body.Close()
				cancel()
				return nil, fmt.Errorf("client: the endpoint event names no URL: %w", err)
			}
			if endpoint.Scheme != base.Scheme || endpoint.Host != base.Host {
				resp.Body.Close()
				cancel()
				return nil, fmt.Errorf("client: the endpoint %s is not on the server's origin %s://%s: not sending it the client's messages (and headers)", endpoint, base.Scheme, base.Host)
			}
		}
	}
	if !stopHandshake() {
		resp.Body.Close()
		return nil, ctx.Err()
	}
	c := &sseConn{t: t, hc: hc, endpoint: endpoint.String(), in: make(chan []byte, 64), ctx: cctx, cancel: cancel}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer resp.Body.Close()
		for {
			ev, err := events.Next()
			if err != nil {
				c.fail(err)
				return
			}
			if ev.Type != "" && ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
				continue
			}
			select {
			case c.in <- bytes.Clone(ev.Data):
			case <-cctx.Done():
				return
			}
		}
	}()
	return c, nil
}

type sseConn struct {
	t        *SSE
	hc       *http.Client
	endpoint string
	in       chan []byte
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu  sync.Mutex
	err error
}

func (c *sseConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.cancel()
}

func (c *sseConn) Send(ctx context.Context, msg []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	addHeader(req.Header, c.t.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	return nil
}

func (c *sseConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil && !errors.Is(c.err, context.Canceled) {
			return nil, fmt.Errorf("the SSE stream ended: %w", c.err)
		}
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *sseConn) Negotiated(string) {}

func (c *sseConn) Close() error {
	c.cancel()
	c.wg.Wait()
	return nil
}
