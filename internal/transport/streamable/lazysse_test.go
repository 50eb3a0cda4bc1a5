package streamable

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpstack/mcpstack/app"
)

// A stateless request answered as JSON takes no event after: a message
// that a goroutine the method left running sends once the answer was
// chosen fails, instead of writing an event into the JSON answer and
// racing it for the headers (a concurrent map write is fatal).
func TestLazySSEAfterJSONWritesNothing(t *testing.T) {
	srv := app.NewServer(app.New("t", "1"))
	defer srv.Close()
	h := New(srv)
	rec := httptest.NewRecorder()
	l := h.newLazySSE(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	defer l.close()
	if l.started() {
		t.Fatal("a stream started with nothing sent")
	}
	err := l.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
	if !errors.Is(err, errStreamClosed) {
		t.Errorf("a send after the JSON answer was chosen: %v, want errStreamClosed", err)
	}
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Errorf("it wrote %q with Content-Type %q into the JSON answer", rec.Body.String(), rec.Header().Get("Content-Type"))
	}
}
