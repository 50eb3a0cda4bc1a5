package streamable

import (
	"net/http"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/wire"
)

// status is the HTTP status of a reply with a body: the core says why it
// refused a body, or which JSON-RPC error a stateless revision answered,
// and the transport decides what HTTP says of it.
func status(r core.Reply) int {
	switch r.Refused {
	case core.RefusedMalformed:
		return http.StatusBadRequest
	case core.RefusedUnknownSession:
		return http.StatusNotFound
	case core.RefusedFull, core.RefusedUnavailable:
		return http.StatusServiceUnavailable
	case core.RefusedOverShare:
		return http.StatusTooManyRequests
	}
	if r.Code == 0 {
		return http.StatusOK // a result, or any answer of a session
	}
	// The serving revision's own facts first (schema/transport.json,
	// errorStatus), then what this transport answers the other errors of a
	// stateless request with.
	if r.Transport != nil {
		if st := r.Transport.Status(r.Code); st != 0 {
			return st
		}
	}
	switch r.Code {
	case wire.CodeMethodNotFound:
		return http.StatusNotFound
	case wire.CodeParseError, wire.CodeInvalidRequest, wire.CodeInvalidParams, wire.CodeHeaderMismatch,
		wire.CodeMissingRequiredClientCapability, wire.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case wire.CodeServerBusy:
		return http.StatusTooManyRequests
	}
	return http.StatusOK
}
