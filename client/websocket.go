package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// WebSocket is this project's WebSocket transport: subprotocol "mcp", one
// message per text frame.
type WebSocket struct {
	URL    string
	Header http.Header
	// Client makes the handshake (default: a zero http.Client). Whatever
	// its CheckRedirect, a redirect to another origin is not followed
	// (RedirectError).
	Client     *http.Client
	MaxMessage int64 // default 16 MiB
}

// Connect dials the socket.
func (t *WebSocket) Connect(ctx context.Context) (Conn, error) {
	ws, resp, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{HTTPClient: sameOrigin(t.Client), HTTPHeader: t.Header, Subprotocols: []string{"mcp"}})
	if err != nil {
		if resp != nil {
			return nil, &HTTPError{Status: resp.StatusCode, Body: err.Error()}
		}
		return nil, err
	}
	if ws.Subprotocol() != "mcp" {
		ws.Close(websocket.StatusProtocolError, "subprotocol mcp required")
		return nil, errors.New("client: the server did not accept the WebSocket subprotocol \"mcp\"")
	}
	max := messageLimit(t.MaxMessage)
	ws.SetReadLimit(max)
	return &wsConn{ws: ws, sending: make(chan struct{}, 1)}, nil
}

// wsWriteTimeout bounds one message's write: a server that takes none of
// it for that long has its connection closed.
const wsWriteTimeout = 10 * time.Second

type wsConn struct {
	ws *websocket.Conn
	// sending is held while a message is written: a message waiting for
	// it waits on its caller's context, which the write itself cannot.
	sending chan struct{}
}

// Send writes msg unless ctx has ended. coder/websocket closes the socket
// when a write's context ends mid-message: the write has the
// connection's own bound instead, so that a call given up while it is
// written does not end every other call on the connection (its caller
// hears of it once the message is out). Waiting for another message's
// write keeps ctx.
func (c *wsConn) Send(ctx context.Context, msg []byte) error {
	select {
	case c.sending <- struct{}{}:
		defer func() { <-c.sending }()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wsWriteTimeout)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, msg); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

func (c *wsConn) Read(ctx context.Context) ([]byte, error) {
	typ, msg, err := c.ws.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) && (ce.Code == websocket.StatusNormalClosure || ce.Code == websocket.StatusGoingAway) {
			return nil, ErrClosed
		}
		if errors.Is(err, context.Canceled) {
			return nil, ErrClosed
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("client: a binary WebSocket frame (MCP messages are text)")
	}
	return msg, nil
}

func (c *wsConn) Negotiated(string) {}

func (c *wsConn) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }
