package client

import (
	"testing"

	"github.com/mcpstack/mcpstack/wire"
)

// error.type of an error answer is its JSON-RPC code where JSON-RPC
// reserves it, and one value for any other: a server cannot grow the
// client's metric attribute sets with codes of its own.
func TestErrorTypeIsBounded(t *testing.T) {
	for code, want := range map[int]string{
		-32601: "-32601", -32768: "-32768", -32000: "-32000",
		-32769: "_OTHER", -31999: "_OTHER", 0: "_OTHER", 424242: "_OTHER",
	} {
		if got := spanErrorType("ping", reply{err: &wire.Error{Code: code, Message: "x"}}); got != want {
			t.Errorf("code %d: error.type %q, want %q", code, got, want)
		}
	}
}
