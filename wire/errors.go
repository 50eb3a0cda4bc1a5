package wire

import (
	"errors"
	"fmt"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeResourceNotFound = -32002 // MCP, up to 2025-11-25
	CodeServerBusy       = -32000 // implementation-defined: too many requests in flight

	CodeURLElicitationRequired          = -32042 // 2025-11-25
	CodeHeaderMismatch                  = -32020 // 2026-07-28
	CodeMissingRequiredClientCapability = -32021 // 2026-07-28
	CodeUnsupportedProtocolVersion      = -32022 // 2026-07-28
)

// Error is a JSON-RPC error a handler returns to be sent as it is. Any other
// error a handler returns becomes -32603 with a generic message.
type Error struct {
	Code    int
	Message string
	Data    any // encoded as the error's data member when not nil
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// NewError returns an Error with a formatted message.
func NewError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrMethodNotFound is returned by unimplemented handler methods.
var ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "Method not found"}

// InvalidParams turns a schema or decode failure into -32602 with the
// {field, reason} data of schema/ext/ErrorData.json.
func InvalidParams(err error) *Error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": ve.Pointer, "reason": ve.Reason}}
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": de.Pointer, "reason": de.Reason}}
	}
	return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": "", "reason": err.Error()}}
}
