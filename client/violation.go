package client

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

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

// MaxExcerpt bounds what a Violation keeps of the server's message: the
// first MaxExcerpt bytes of Message, and of Method, Pointer and Reason,
// which may quote it. A message may be up to the transport's MaxMessage
// (16 MiB), and a program that keeps the violations it hears of (mcpstack
// client does, to print them) would otherwise keep every one whole.
const MaxExcerpt = 1 << 10

// Violation is a message from the server that breaks the protocol.
type Violation struct {
	Rule    string // one of the Rule constants
	Method  string // the method the message is (or answers), when known
	Pointer string // where in the message, as a JSON pointer ("" for the whole)
	Reason  string
	// Message is the message as received, or its first MaxExcerpt bytes
	// when it is longer (Truncated; Size is its whole length). Method,
	// Pointer and Reason are cut likewise, marked "…[truncated]".
	Message   []byte
	Truncated bool
	Size      int
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

// bound cuts v to MaxExcerpt, in copies: a slice or a substring of the
// message would keep the whole of it in memory.
func (v *Violation) bound() *Violation {
	if v.Size < len(v.Message) {
		v.Size = len(v.Message)
	}
	if len(v.Message) > MaxExcerpt {
		v.Message, v.Truncated = bytes.Clone(v.Message[:MaxExcerpt]), true
	}
	v.Method, v.Pointer, v.Reason = excerpt(v.Method), excerpt(v.Pointer), excerpt(v.Reason)
	return v
}

// truncatedMark ends a string cut by excerpt.
const truncatedMark = "…[truncated]"

// excerpt is s, or a copy of its first MaxExcerpt bytes (whole runes)
// marked as cut.
func excerpt(s string) string {
	if len(s) <= MaxExcerpt {
		return s
	}
	n := MaxExcerpt - len(truncatedMark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncatedMark // a new string: it keeps nothing of s
}

// schemaViolation turns a validation error into a Violation; prefix is
// the pointer of the validated value in the message ("/result", "").
func schemaViolation(method, prefix string, err error, msg []byte) *Violation {
	v := &Violation{Rule: RuleSchema, Method: method, Pointer: prefix, Reason: err.Error(), Message: msg}
	var ve *wire.ValidationError
	if errors.As(err, &ve) {
		v.Pointer, v.Reason = prefix+ve.Pointer, ve.Reason
	}
	return v.bound()
}
