package wire

import (
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/jsontree"
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

// Object is the error as the error member of a response carries it: code,
// message, and data where there is any.
func (e *Error) Object() map[string]any {
	obj := map[string]any{"code": e.Code, "message": e.Message}
	if e.Data != nil {
		obj["data"] = e.Data
	}
	return obj
}

// ErrorOf reads the error member of a response (a decoded tree).
func ErrorOf(v any) (*Error, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object")
	}
	code, err := jsontree.Int(obj["code"])
	if err != nil {
		return nil, fmt.Errorf("code: %v", err)
	}
	msg, _ := obj["message"].(string)
	return &Error{Code: int(code), Message: msg, Data: obj["data"]}, nil
}

// NewError returns an Error with a formatted message.
func NewError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ResourceNotFound is the error of a resource that does not exist
// (-32002 with the URI; the server turns it into -32602 where a revision
// retired the code).
func ResourceNotFound(uri string) *Error {
	return &Error{Code: CodeResourceNotFound, Message: "Resource not found", Data: map[string]any{"uri": uri}}
}

// ErrMethodNotFound is returned by unimplemented handler methods. It is a
// sentinel, shared by every server of the process: compare with
// errors.Is, and return a NewError of your own rather than change it.
var ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "Method not found"}

// HeaderMismatch is -32020 (2026-07-28): an HTTP header that disagrees
// with the body it came with, or is missing, repeated or badly encoded.
func HeaderMismatch(header, reason string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + reason, Data: map[string]any{"header": header, "reason": reason}}
}

// InvalidParams turns a schema or decode failure into -32602 with the
// {field, reason} data of schema/ext/ErrorData.json.
func InvalidParams(err error) *Error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": ve.Pointer, "reason": ve.Reason}}
	}
	var de *jsontree.DecodeError
	if errors.As(err, &de) {
		return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": de.Pointer, "reason": de.Reason}}
	}
	return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"field": "", "reason": err.Error()}}
}

// ValidationError is the one structured error a schema failure becomes. Its
// Pointer locates the offending value inside the validated message; the
// server sends both as the data of a JSON-RPC -32602 error.
type ValidationError struct {
	Definition string // the schema definition validated against
	Pointer    string // JSON pointer of the offending value ("" for the root)
	Reason     string
	// Keyword is the JSON Schema keyword that failed ("required", "type",
	// "enum", ...): a bounded class of Reason, for metrics.
	Keyword string
}

func (e *ValidationError) Error() string {
	field := e.Pointer
	if field == "" {
		field = "/"
	}
	return fmt.Sprintf("%s: at %s: %s", e.Definition, field, e.Reason)
}
