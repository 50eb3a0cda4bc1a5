package client

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// RedirectError is a redirect the client refused: to another origin
// (scheme, host and port) than the server it was given. Go's http.Client
// follows a 307 or 308 with the request's body and headers: the client's
// messages and custom headers to any host, its Authorization to another
// port or scheme of the same host. They are meant for the server the user
// named, so the client follows no redirect out of its origin.
type RedirectError struct {
	From, To string // the origins, scheme://host:port
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("client: server redirected to another origin (%s -> %s): not followed", e.From, e.To)
}

// maxRedirects is how many redirects within the origin a request follows
// (net/http's default).
const maxRedirects = 10

// sameOrigin returns a copy of hc (of a zero http.Client when nil) that
// follows redirects only within the origin of each request: a copy, since
// the user's client may serve other requests, where their own policy
// holds. A CheckRedirect of hc's still judges the redirects within it.
func sameOrigin(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from, to := origin(via[0].URL), origin(req.URL); from != to {
			return &RedirectError{From: from, To: to}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("client: stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &c
}

// origin is u's scheme://host:port, the port made explicit (and ws, wss
// taken as http, https, as WebSocket handshakes are).
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
