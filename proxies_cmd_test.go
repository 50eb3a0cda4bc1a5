package main

import (
	"strings"
	"testing"
)

func TestPrefixList(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "10.1.2.3/8, 192.168.1.5 ,fd00::/8", want: "10.0.0.0/8,192.168.1.5/32,fd00::/8"},
		{in: "", want: ""},
		{in: "10.0.0.0/8,nope", err: `"nope" is neither`},
		{in: "10.0.0.0/33", err: "neither"},
	} {
		var l prefixList
		err := l.Set(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Set(%q) = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || l.String() != tt.want {
			t.Errorf("Set(%q) = %q, %v; want %q", tt.in, l.String(), err, tt.want)
		}
	}
}
