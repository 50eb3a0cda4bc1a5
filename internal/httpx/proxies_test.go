package httpx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server/auth"
)

// TestIdentifyBehindTrustedProxies, each case on a connection that
// carries its address's caller (ConnCaller, as serve's server does) and
// on one that does not: the same caller either way, and where the
// connection's caller is the request's, the request is not copied.
func TestIdentifyBehindTrustedProxies(t *testing.T) {
	proxies := NewTrustedProxies([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")})
	for _, tt := range []struct {
		name    string
		proxies *TrustedProxies
		remote  string
		header  map[string]string
		want    string
	}{
		{"a proxy forwards", proxies, "10.1.2.3:4000", map[string]string{"X-Forwarded-For": "203.0.113.7"}, "addr:203.0.113.7"},
		{"a Forwarded header the client sent, passed on by an X-Forwarded-For proxy", proxies, "10.1.2.3:4000",
			map[string]string{"Forwarded": `for="198.51.100.9:1234"`, "X-Forwarded-For": "203.0.113.7"}, "addr:203.0.113.7"},
		{"a client that forged the header behind the proxy", proxies, "10.1.2.3:4000",
			map[string]string{"X-Forwarded-For": "192.0.2.66, 203.0.113.7, 10.9.9.9"}, "addr:203.0.113.7"},
		{"a client that is no proxy: its header is ignored", proxies, "203.0.113.7:5000",
			map[string]string{"X-Forwarded-For": "192.0.2.66"}, "addr:203.0.113.7"},
		{"no proxies trusted: the header is ignored", nil, "10.1.2.3:4000",
			map[string]string{"X-Forwarded-For": "203.0.113.7"}, "addr:10.1.2.3"},
		{"a proxy that forwards nothing", proxies, "10.1.2.3:4000", nil, "addr:10.1.2.3"},
		{"an IPv6 client counts by its /64", proxies, "[fd00::1]:4000",
			map[string]string{"X-Forwarded-For": "2001:db8:1:2:3:4:5:6"}, "addr:2001:db8:1:2::"},
		{"an IPv6 client of its own", nil, "[2001:db8:1:2:3:4:5:6]:4000", nil, "addr:2001:db8:1:2::"},
	} {
		for _, conn := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/conn=%v", tt.name, conn), func(t *testing.T) {
				var got string
				var seen *http.Request
				h := Identify(tt.proxies)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					got, seen = core.CallerFrom(r.Context()).Key, r
				}))
				r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
				r.RemoteAddr = tt.remote
				if conn {
					r = r.WithContext(connContext(r.Context(), tt.remote))
				}
				for k, v := range tt.header {
					r.Header.Set(k, v)
				}
				h.ServeHTTP(httptest.NewRecorder(), r)
				if got != tt.want {
					t.Errorf("caller %q, want %q", got, tt.want)
				}
				if copied := seen != r; conn && copied != (tt.want != addressCaller(tt.remote).Key) {
					t.Errorf("request copied: %v, though the connection's caller is %s", copied, addressCaller(tt.remote).Key)
				}
			})
		}
	}
}

// TestIdentifyPrincipalOverConnection: an authenticated request's caller
// is its principal, on a connection that carries its address's caller too.
func TestIdentifyPrincipalOverConnection(t *testing.T) {
	var got core.Caller
	h := Identify(nil)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = core.CallerFrom(r.Context())
	}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "192.0.2.1:5000"
	r = r.WithContext(auth.WithPrincipal(connContext(r.Context(), r.RemoteAddr), &auth.Principal{Subject: "alice"}))
	if c := Caller(r); c.Owner == "" || c.Key != "principal:"+c.Owner {
		t.Errorf("Caller before Identify: %+v, want alice's principal", c)
	}
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.Owner == "" || got.Key != "principal:"+got.Owner {
		t.Errorf("caller %+v, want alice's principal", got)
	}
}
