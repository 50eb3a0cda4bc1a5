package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
	return &wsConn{ws: ws}, nil
}

type wsConn struct{ ws *websocket.Conn }

func (c *wsConn) Send(ctx context.Context, msg []byte) error {
	return c.ws.Write(ctx, websocket.MessageText, msg)
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
