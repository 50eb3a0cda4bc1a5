package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// prefixList is a flag of comma-separated CIDR prefixes; an address alone
// is the prefix of that one host.
type prefixList []netip.Prefix

func (l *prefixList) String() string {
	parts := make([]string, len(*l))
	for i, p := range *l {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

func (l *prefixList) Set(s string) error {
	*l = nil
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			*l = append(*l, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return fmt.Errorf("%q is neither a CIDR prefix (10.0.0.0/8) nor an address", item)
		}
		*l = append(*l, netip.PrefixFrom(a, a.BitLen()))
	}
	return nil
}
