package jsonrpc

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, body string
		kind       Kind
		code       int // of the item's error, 0 for a message
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Request, 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, 0},
		{"result", `{"jsonrpc":"2.0","id":"a","result":{}}`, Response, 0},
		{"null result", `{"jsonrpc":"2.0","id":"a","result":null}`, Response, 0},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, Response, 0},
		{"the last duplicate wins", `{"jsonrpc":"1.0","id":1,"method":"ping","jsonrpc":"2.0"}`, Request, 0},
		{"unknown members are kept", `{"jsonrpc":"2.0","id":1,"method":"ping","x":[1],"error":7}`, Request, 0},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, 0, wire.CodeInvalidRequest},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 0, wire.CodeInvalidRequest},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 0, wire.CodeInvalidRequest},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, 0, wire.CodeInvalidRequest},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, 0, wire.CodeInvalidRequest},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, 0, wire.CodeInvalidRequest},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, 0, wire.CodeInvalidRequest},
		{"nothing", `{"jsonrpc":"2.0","id":1}`, 0, wire.CodeInvalidRequest},
		{"not an object", `"ping"`, 0, wire.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, batch, err := Parse([]byte(tt.body), Limits{})
			if err != nil || batch || len(items) != 1 {
				t.Fatalf("Parse: %d items, batch %v, error %v", len(items), batch, err)
			}
			it := items[0]
			if tt.code != 0 {
				if it.Err == nil || it.Err.Code != tt.code {
					t.Fatalf("item %+v, want error %d", it, tt.code)
				}
				return
			}
			if it.Err != nil || it.Msg.Kind != tt.kind {
				t.Fatalf("item %+v (error %v), want a message of kind %d", it, it.Err, tt.kind)
			}
			want, _ := jsontree.Parse([]byte(tt.body))
			if got := it.Msg.Root(); !reflect.DeepEqual(got, want) {
				t.Errorf("Root() = %v, want the message as sent, %v", got, want)
			}
		})
	}
}

// FuzzRoot holds Message.Root to the tree the message's body parses to:
// whatever the reader made of a message, Root gives back what was sent,
// for the reference validator and the relay. A batch's messages too.
func FuzzRoot(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"ping","x":1,"x":2,"error":null}`,
		`{"jsonrpc":"2.0","id":"7","result":null,"params":{}}`,
		`{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":[1]},"z":{}}`,
		`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{}},3]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		items, batch, err := Parse(body, Limits{})
		if err != nil {
			return
		}
		tree, perr := jsontree.ParseLimit(body, 128)
		if perr != nil {
			t.Fatalf("%q: Parse took it, ParseLimit says %v", body, perr)
		}
		sent := []any{tree}
		if batch {
			sent = tree.([]any)
		}
		if len(sent) != len(items) {
			t.Fatalf("%q: %d items of %d messages", body, len(items), len(sent))
		}
		for i, it := range items {
			if it.Msg == nil {
				continue
			}
			if got := it.Msg.Root(); !reflect.DeepEqual(got, sent[i]) {
				t.Fatalf("%q: message %d: Root() = %#v, sent %#v", body, i, got, sent[i])
			}
		}
	})
}

// A batch is bounded: past Limits.MaxBatch messages (DefaultMaxBatch when
// it is 0) the body is one Invalid Request, read no further, whatever its
// elements are; up to the bound each element is answered on its own.
func TestParseBatchBound(t *testing.T) {
	batch := func(n int, elem string) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + "]")
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name  string
		body  []byte
		lim   Limits
		items int // 0: refused whole
	}{
		{"at the default bound", batch(DefaultMaxBatch, ping), Limits{}, DefaultMaxBatch},
		{"one past it", batch(DefaultMaxBatch+1, ping), Limits{}, 0},
		{"numbers count as messages", batch(DefaultMaxBatch+1, "0"), Limits{}, 0},
		{"a body of two million zeros", batch(2<<20, "0"), Limits{}, 0},
		{"a bound of its own", batch(3, ping), Limits{MaxBatch: 2}, 0},
		{"within it", batch(2, "0"), Limits{MaxBatch: 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, isBatch, err := Parse(tt.body, tt.lim)
			if tt.items > 0 {
				if err != nil || !isBatch || len(items) != tt.items {
					t.Fatalf("%d items, batch %v, error %v; want %d items", len(items), isBatch, err, tt.items)
				}
				return
			}
			if err == nil || items != nil {
				t.Fatalf("%d items, error %v; want the batch refused", len(items), err)
			}
			if max := cmp.Or(tt.lim.MaxBatch, DefaultMaxBatch); err.Code != wire.CodeInvalidRequest || err.Message != fmt.Sprintf("Invalid Request: a batch of more than %d messages", max) {
				t.Errorf("error %+v", err)
			}
		})
	}
}
