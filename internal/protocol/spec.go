package protocol

import (
	"fmt"
	"io/fs"
	"sync"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// Method is one row of a revision's method table.
type Method struct {
	Name    string // "tools/call"
	Request string // definition a request or notification is validated against
	Result  string // definition its result is validated against ("" for notifications)
	// Response is the definition of the whole response message where the
	// revision has one per method (2026-07-28: a result or an
	// input-required result); "" elsewhere.
	Response       string
	Notification   bool
	ClientToServer bool
	ServerToClient bool
	ParamsRequired bool
	// TaskResult is the definition the request is answered with when its
	// params carry task, so that it runs as a task (2025-11-25:
	// CreateTaskResult); "" where it cannot.
	TaskResult string
	// TaskExtension names the extension that lets the request run as a
	// task (2026-07-28: io.modelcontextprotocol/tasks): then it is the
	// server that decides, for a client that declares the extension;
	// "" where the client asks with params.task.
	TaskExtension string
	// Extension names the extension that adds the method to the
	// revision: a client that does not declare it in its capabilities
	// gets -32021.
	Extension string
	// NameParam is the params member its Mcp-Name header repeats
	// (Streamable HTTP of 2026-07-28: x-mcp-name in its schema); "" for
	// none.
	NameParam string
}

// Spec is everything mcpstack knows of one protocol revision: its method
// table and its schemas. Each generated package declares one as a
// composite literal of constants, which the compiler lays out in the
// binary: a revision costs no code at startup and no heap until a session
// uses it, and its schemas are compiled on first use.
type Spec struct {
	Revision string
	Index    int    // position among the supported revisions, oldest first
	Hash     string // hash of the schema files the code was generated from
	// Methods is the method table, sorted by name (Method finds one).
	Methods []Method
	// Transport is what the transports do differently in this revision.
	Transport Transport
	// Extensions are the protocol extensions layered onto the revision
	// (schema/extensions).
	Extensions []Extension
	// Schemas holds the schema files: the revision's under Revision/,
	// each extension's under its Dir.
	Schemas fs.FS
	// Checks are the generated checks of the revision's definitions
	// (without them nothing is surely valid: the reference validator
	// decides everything).
	Checks Checks

	compile   sync.Once
	validator *Validator
	err       error // compiling the schemas
}

// Transport holds the facts of a revision that are the transports' and no
// message schema's (schema/transport.json).
type Transport struct {
	// PrimingEvent: each SSE stream starts with an event that has an id
	// and no data, so that the client can resume it.
	PrimingEvent bool
	// StreamableHTTP: a POST of notifications and responses only is
	// answered 202 Accepted (or an HTTP error); a POST holding requests,
	// with application/json or text/event-stream.
	StreamableHTTP bool
	// VersionHeader: every HTTP request after initialize carries the
	// negotiated revision in MCP-Protocol-Version.
	VersionHeader bool
	// MethodHeaders: a request's Mcp-Method, Mcp-Name and
	// MCP-Protocol-Version headers repeat its body's method, name and
	// _meta protocolVersion.
	MethodHeaders bool
	// ErrorStatus: the HTTP status a JSON error answer of these codes
	// comes with (none: the revision says none); Status looks one up.
	ErrorStatus []CodeStatus
}

// CodeStatus is the HTTP status of a JSON error answer with Code.
type CodeStatus struct{ Code, Status int }

// Status is the HTTP status the revision gives a JSON error answer with
// code, or 0 where it gives none.
func (t *Transport) Status(code int) int {
	for _, c := range t.ErrorStatus {
		if c.Code == code {
			return c.Status
		}
	}
	return 0
}

// Extension is a protocol extension layered onto a revision: its schema
// files (under Dir) count as the revision's, its methods are in the
// revision's table.
type Extension struct {
	ID  string // "io.modelcontextprotocol/tasks"
	Dir string // its folder in the schema file system
	// Tasks, when not nil, are the rules of the tasks the extension
	// brings, where they differ from those of 2025-11-25.
	Tasks *TaskRules
}

// TaskRules say how a revision's tasks differ from those of 2025-11-25,
// whose rules are the zero value.
type TaskRules struct {
	// ServerDirected: the server decides which requests run as tasks,
	// for a client that declares the extension; the client sends no
	// params.task.
	ServerDirected bool
	// ToolErrorCompletes: a tool result with isError ends its task
	// completed (the result says the rest), not failed.
	ToolErrorCompletes bool
	// CancelEndedAcknowledged: tasks/cancel of a task that has ended is
	// acknowledged like any other, not an error.
	CancelEndedAcknowledged bool
}

// TaskRules are the rules of the revision's tasks: those of an extension
// that brings tasks, or else the zero value (2025-11-25's).
func (s *Spec) TaskRules() TaskRules {
	for _, e := range s.Extensions {
		if e.Tasks != nil {
			return *e.Tasks
		}
	}
	return TaskRules{}
}

// Validator returns the compiled schemas of the revision. Format asserts
// in every revision: draft-07 (up to 2025-06-18) does so by default and
// 2020-12 (after) does not, so the same bytes would pass or fail by
// revision. The schemas say format where the protocol requires the shape
// (a resource's uri is a URI) in every revision.
func (s *Spec) Validator() (*Validator, error) {
	s.compile.Do(func() {
		defer func() { // a panic would leave the Once done and nothing compiled
			if r := recover(); r != nil {
				s.err = fmt.Errorf("compiling the schemas: %v", r)
			}
		}()
		layers := make([]string, len(s.Extensions))
		for i, e := range s.Extensions {
			layers[i] = e.Dir
		}
		s.validator, s.err = newValidator(s.Schemas, s.Revision, true, layers)
	})
	if s.err != nil {
		return nil, fmt.Errorf("revision %s: %w", s.Revision, s.err)
	}
	return s.validator, nil
}

// Validate checks a tree against one definition of the revision: the
// generated validator first, and where it is not sure, the reference
// validator (santhosh-tekuri v6), whose failure names the field and the
// reason.
func (s *Spec) Validate(definition string, value any) error {
	if s.SurelyValid(definition, value) {
		return nil
	}
	v, err := s.Validator()
	if err != nil {
		return err
	}
	return v.Validate(definition, value)
}

// Checks are what the generator compiled from a revision's schemas, as
// functions of a definition's name (a switch: no table to build).
type Checks struct {
	// Surely is the check of a definition: whether a tree is surely valid
	// against it (false: let the reference validator decide); nil for a
	// definition the revision does not have.
	Surely func(definition string) func(any) bool
	// Requires reports whether a definition requires a member, by itself
	// or by the definitions it refers to or is allOf.
	Requires func(definition, member string) bool
	// Envelope is, for the request and notification definitions whose
	// object is JSON-RPC's envelope and nothing else, what they ask of a
	// message's parts; false for any other definition.
	Envelope func(definition string) (Envelope, bool)
}

// Envelope is what a definition whose object holds JSON-RPC's members
// alone asks of a message: its method, its params, and whether it
// requires an id and params. Its id and "jsonrpc" the reader of messages
// (jsonrpc.Parse) holds to what such a definition asks (a string or an
// integer; "2.0"), so a message is checked on its parts, without its
// object.
type Envelope struct {
	Method         string
	Params         func(any) bool // whether params are surely valid; nil: any are
	IDRequired     bool
	ParamsRequired bool
}

// surely reports whether a request or notification is surely valid
// against the envelope.
func (e *Envelope) surely(m *jsonrpc.Message) bool {
	switch {
	case m.Kind == jsonrpc.Response, m.Method != e.Method, e.IDRequired && m.Kind != jsonrpc.Request:
		return false
	case m.Params == nil:
		return !e.ParamsRequired
	}
	return e.Params == nil || e.Params(m.Params)
}

// ValidateMessage is Validate for a message as jsonrpc.Parse gives it. A
// definition that is JSON-RPC's envelope alone (every request and
// notification of the protocol) is checked on the message's method and
// params; a message that check is not sure of, and any other definition,
// on the message's object (Message.Root), as Validate does.
func (s *Spec) ValidateMessage(definition string, m *jsonrpc.Message) error {
	if s.SurelyValidMessage(definition, m) {
		return nil
	}
	return s.Validate(definition, m.Root())
}

// SurelyValidMessage reports whether the generated envelope check of
// definition is sure that m is valid (false also where the definition has
// none).
func (s *Spec) SurelyValidMessage(definition string, m *jsonrpc.Message) bool {
	if s.Checks.Envelope == nil {
		return false
	}
	e, ok := s.Checks.Envelope(definition)
	return ok && e.surely(m)
}

// SurelyValid reports whether the generated validator of definition is
// sure that value is valid.
func (s *Spec) SurelyValid(definition string, value any) bool {
	if s.Checks.Surely == nil {
		return false
	}
	f := s.Checks.Surely(definition)
	return f != nil && f(value)
}

// Method looks a method up in the revision's table.
func (s *Spec) Method(name string) (Method, bool) {
	// A binary search written out: slices.BinarySearchFunc would pass
	// each row, some 150 bytes, to its comparison by value.
	lo, hi := 0, len(s.Methods)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if s.Methods[h].Name < name {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(s.Methods) && s.Methods[lo].Name == name {
		return s.Methods[lo], true
	}
	return Method{}, false
}

// Project renders a canonical value in this revision's shape.
func (s *Spec) Project(e wire.Encoder) any { return e.EncodeValue(s.Index) }

// Has reports whether the revision defines a definition.
func (s *Spec) Has(definition string) bool {
	v, err := s.Validator()
	return err == nil && v.Has(definition)
}

// ErrorResponse names the revision's definition of an error response
// (JSONRPCError up to 2025-06-18, JSONRPCErrorResponse after); "" when it
// has none.
func (s *Spec) ErrorResponse() string {
	for _, def := range []string{"JSONRPCErrorResponse", "JSONRPCError"} {
		if s.Has(def) {
			return def
		}
	}
	return ""
}

// Requires reports whether a definition of the revision requires prop.
// The generated check answers without the reference validator, which a
// revision then compiles only for a message that is not surely valid.
func (s *Spec) Requires(definition, prop string) bool {
	return s.Checks.Requires != nil && s.Checks.Requires(definition, prop)
}

// Stateless reports whether the revision has no initialize: each request
// carries its own protocol version and client capabilities (2026-07-28).
func (s *Spec) Stateless() bool {
	_, ok := s.Method("initialize")
	return !ok
}

// NewestStateless is the newest of specs (oldest first, as
// generated.Specs) without initialize, nil when none is: what reads a
// message that names no revision of its own on a session never
// initialized.
func NewestStateless(specs []*Spec) *Spec {
	for i := len(specs) - 1; i >= 0; i-- {
		if specs[i].Stateless() {
			return specs[i]
		}
	}
	return nil
}

// NewestSession is the newest of specs (oldest first, as generated.Specs)
// that has sessions (initialize): what a client that negotiates asks for
// by default. It is the oldest when none has.
func NewestSession(specs []*Spec) *Spec {
	for i := len(specs) - 1; i >= 0; i-- {
		if !specs[i].Stateless() {
			return specs[i]
		}
	}
	return specs[0]
}
