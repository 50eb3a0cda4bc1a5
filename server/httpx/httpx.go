// Package httpx holds what the HTTP transports share: JSON-RPC error bodies
// with an HTTP status, and reading a JSON body within the limits.
package httpx

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpstack/mcpstack/server/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// Error answers with a status and a JSON-RPC error body without id.
func Error(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: code, Message: msg}))
}

// ReadJSON reads a POSTed JSON body of at most max bytes. When it cannot,
// it has answered already (415 for another media type, 413 above max, 400
// for a broken read) and returns false.
func ReadJSON(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		Error(w, http.StatusUnsupportedMediaType, wire.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
		return nil, false
	}
	rd := http.MaxBytesReader(w, r.Body, max)
	defer rd.Close()
	body, err := io.ReadAll(rd)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Error(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request Entity Too Large: the body exceeds "+strconv.FormatInt(max, 10)+" bytes")
			return nil, false
		}
		Error(w, http.StatusBadRequest, wire.CodeParseError, "Parse error: reading the body: "+err.Error())
		return nil, false
	}
	return body, true
}
