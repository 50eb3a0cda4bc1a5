package client

import (
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/wire"
)

// The rules a server's message can break; Violation.Rule is one of them.
const (
	RuleJSON          = "json"           // not JSON, or not a JSON-RPC 2.0 message
	RuleUnknownID     = "unknown-id"     // a response to no request in flight
	RuleUnknownMethod = "unknown-method" // a method the revision does not have, or not in this direction
	RuleSchema        = "schema"         // fails the schema of the negotiated revision
	RuleVersion       = "version"        // negotiation: a revision the client did not ask for and does not know
)

// Violation is a message from the server that breaks the protocol.
type Violation struct {
	Rule    string // one of the Rule constants
	Method  string // the method the message is (or answers), when known
	Pointer string // where in the message, as a JSON pointer ("" for the whole)
	Reason  string
	Message []byte // the message as received
}

func (v *Violation) Error() string {
	at := ""
	if v.Pointer != "" {
		at = " at " + v.Pointer
	}
	what := ""
	if v.Method != "" {
		what = " (" + v.Method + ")"
	}
	return fmt.Sprintf("client: protocol violation [%s]%s%s: %s", v.Rule, what, at, v.Reason)
}

// schemaViolation turns a validation error into a Violation; prefix is
// the pointer of the validated value in the message ("/result", "").
func schemaViolation(method, prefix string, err error, msg []byte) *Violation {
	v := &Violation{Rule: RuleSchema, Method: method, Pointer: prefix, Reason: err.Error(), Message: msg}
	var ve *wire.ValidationError
	if errors.As(err, &ve) {
		v.Pointer, v.Reason = prefix+ve.Pointer, ve.Reason
	}
	return v
}
