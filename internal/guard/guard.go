// Package guard protects HTTP transports of a server bound to a loopback
// address from DNS rebinding: a page on another site must not be able to
// reach it through the victim's browser.
package guard

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Loopback refuses, with 403, requests whose Host is not a loopback name
// or address, or whose Origin (when present) is not a loopback origin.
// extra lists more host names to accept (without port).
func Loopback(extra ...string) func(http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true}
	for _, h := range extra {
		allowed[strings.ToLower(h)] = true
	}
	ok := func(host string) bool {
		host = strings.ToLower(host)
		if allowed[host] {
			return true
		}
		ip := net.ParseIP(strings.Trim(host, "[]"))
		return ip != nil && ip.IsLoopback()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !ok(hostOnly(r.Host)) {
				Forbid(w, "Host "+r.Host+" is not allowed")
				return
			}
			if o := r.Header["Origin"]; len(o) > 0 && o[0] != "" { // canonical: no key to canonicalize
				o := o[0]
				u, err := url.Parse(o)
				if err != nil || u.Host == "" || !ok(hostOnly(u.Host)) {
					Forbid(w, "Origin "+o+" is not allowed")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// IsLoopbackAddr reports whether a listen address binds loopback only.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// Forbid answers 403 with a JSON-RPC error body without id, as the
// Streamable HTTP transport allows.
func Forbid(w http.ResponseWriter, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":` + quote("Forbidden: "+why) + `}}`))
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
