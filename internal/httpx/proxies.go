package httpx

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/realclientip/realclientip-go"
)

// TrustedProxies believes the client address a reverse proxy forwards
// only when the request comes from one of the proxies' ranges: then the
// client is the rightmost address of X-Forwarded-For outside those ranges,
// so that a client cannot pass for another by sending the header itself.
// One header only, the one HAProxy, nginx, the ingress controllers and
// cloud balancers append to: they pass a Forwarded header the client sent
// through untouched, so reading it too would let the client choose its
// address. The parsing is realclientip-go's, a library that does only
// this and says why each strategy is or is not safe.
type TrustedProxies struct {
	ranges []net.IPNet
	from   realclientip.Strategy
}

// NewTrustedProxies trusts the proxies in prefixes; nil for none.
func NewTrustedProxies(prefixes []netip.Prefix) *TrustedProxies {
	if len(prefixes) == 0 {
		return nil
	}
	t := &TrustedProxies{}
	for _, p := range prefixes {
		p = p.Masked()
		t.ranges = append(t.ranges, net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())})
	}
	t.from = realclientip.Must(realclientip.NewRightmostTrustedRangeStrategy("X-Forwarded-For", t.ranges))
	return t
}

// clientIP is the address a trusted proxy forwarded for r, "" when r does
// not come from one or it forwarded none.
func (t *TrustedProxies) clientIP(r *http.Request) string {
	if t == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return ""
	}
	for _, n := range t.ranges {
		if n.Contains(ip) {
			return t.from.ClientIP(r.Header, r.RemoteAddr)
		}
	}
	return ""
}
