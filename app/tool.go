package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Tool describes a tool. InputSchema and OutputSchema, when set, replace
// the schemas derived from the handler's types (a JSON object schema, as
// a map or anything that marshals to one).
type Tool struct {
	Name        string
	Title       string
	Description string
	Annotations *mcp.ToolAnnotations
	// TaskSupport lets a call run as a task: "optional", "required", or
	// "" (no). Under 2025-11-25 the client asks with params.task, gets the
	// task at once and the result with tasks/result; a required tool
	// refuses a call without it. Under the 2026-07-28 tasks extension the
	// server decides: a call from a client that declares the extension
	// becomes a task when it runs longer than the task delay
	// (server.WithTaskDelay), and a required tool refuses a client without
	// the extension (-32021).
	TaskSupport string

	InputSchema  any
	OutputSchema any
}

type tool struct {
	def     mcp.Tool
	headers []paramHeader  // arguments mirrored in Mcp-Param headers
	schema  map[string]any // the input schema, for its defaults
	// defaults says whether the input schema gives any property a
	// default: most give none, and their calls skip looking.
	defaults bool
	input    *protocol.Schema
	output   *protocol.Schema // nil: no structured output
	run      func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)
	// decoded: run's structured content, when it has any, is a decoded
	// tree already (it comes from Structured), validated as it is.
	decoded bool
}

func (t *tool) key() string { return t.def.Name }

// AddTool registers a typed tool, replacing one of the same name. The
// schemas are derived from In and Out unless t gives them; it panics when
// one does not compile, or is not an object schema, as that is a bug of
// the program (as http.HandleFunc panics on a bad pattern).
//
// h gets In decoded from the validated arguments; Out becomes the
// structured content (and its JSON the text content). An error is a tool
// error (isError) whose text is the error's message; a *wire.Error is a
// JSON-RPC error instead (a refused scope, say). Out may be
// *mcp.CallToolResult for full control of the result (_meta, its own
// text): then only an explicit Tool.OutputSchema (SchemaFor) is checked
// against its structured content.
func AddTool[In, Out any](a *App, t Tool, h func(ctx context.Context, in In) (Out, error)) {
	in := t.InputSchema
	if in == nil {
		in = schemaOf(reflect.TypeFor[In](), inputSide)
	}
	out := t.OutputSchema
	resultType := reflect.TypeFor[Out]()
	direct := resultType == reflect.TypeFor[*mcp.CallToolResult]()
	if out == nil && !direct && isObject(resultType) {
		out = schemaOf(resultType, outputSide)
	}
	tl := mustTool(t, in, out)
	tl.decoded = !direct
	props := tl.def.InputSchema.Properties
	tl.run = func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		var v In
		// straight from the tree where it can, as json.Unmarshal would
		if err := jsontree.Decode(onlyProperties(args, props), &v); err != nil {
			return ToolError("Invalid arguments: " + err.Error()), nil
		}
		res, err := h(ctx, v)
		if err != nil {
			return nil, err
		}
		if direct {
			r, _ := any(res).(*mcp.CallToolResult)
			return r, nil
		}
		if s, ok := any(res).(string); ok { // what most tools answer: Structured's first case, without boxing res
			return textResult(s), nil
		}
		if rv := reflect.ValueOf(&res).Elem(); rv.Kind() == reflect.Pointer && rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem())) // a nil *Out is its zero value, as the schema describes
		}
		return Structured(res)
	}
	a.addTool(tl)
}

// AddRawTool registers a tool with an explicit input schema (and, when
// t.OutputSchema is set, an output schema its structured content is
// checked against), served with the arguments as a map: for a tool whose
// schema is only known at run time. h gets the validated arguments as
// they came.
func (a *App) AddRawTool(t Tool, h func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)) {
	in := t.InputSchema
	if in == nil {
		in = map[string]any{"type": "object"}
	}
	tl := mustTool(t, in, t.OutputSchema)
	tl.run = h
	a.addTool(tl)
}

// RemoveTools unregisters tools; the clients hear of it (list_changed).
func (a *App) RemoveTools(names ...string) {
	a.mu.Lock()
	changed := a.tools.remove(names...)
	a.mu.Unlock()
	if changed {
		a.onChange(mcp.MethodToolListChanged)
	}
}

func (a *App) addTool(t *tool) {
	a.mu.Lock()
	a.tools.put(t)
	a.mu.Unlock()
	a.onChange(mcp.MethodToolListChanged)
}

// mustTool builds the definition and compiles the schemas.
func mustTool(t Tool, in, out any) *tool {
	if t.Name == "" {
		panic("app: a tool needs a name")
	}
	inTree, err := objectSchema(in)
	if err != nil {
		panic(fmt.Sprintf("app: tool %q: input schema: %v", t.Name, err))
	}
	tl := &tool{def: mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}}
	switch t.TaskSupport {
	case "":
	case "optional", "required", "forbidden":
		tl.def.Execution = &mcp.ToolExecution{TaskSupport: t.TaskSupport}
	default:
		panic(fmt.Sprintf("app: tool %q: TaskSupport %q is not optional, required or forbidden", t.Name, t.TaskSupport))
	}
	tl.def.InputSchema = mcp.ToolInputSchema{Properties: properties(inTree), Required: required(inTree), Extra: rest(inTree)}
	tl.def.InputSchema.Schema, _ = inTree["$schema"].(string)
	tl.schema, tl.defaults = inTree, hasDefaults(inTree)
	if tl.input, err = protocol.CompileSchema(t.Name+".inputSchema", inTree); err != nil {
		panic(fmt.Sprintf("app: tool %q: %v", t.Name, err))
	}
	if tl.headers, err = paramHeaders(inTree); err != nil {
		panic(fmt.Sprintf("app: tool %q: input schema: %v", t.Name, err))
	}
	if out != nil {
		outTree, err := objectSchema(out)
		if err != nil {
			panic(fmt.Sprintf("app: tool %q: output schema: %v", t.Name, err))
		}
		tl.def.OutputSchema = &mcp.ToolOutputSchema{Properties: properties(outTree), Required: required(outTree), Extra: rest(outTree)}
		tl.def.OutputSchema.Schema, _ = outTree["$schema"].(string)
		if tl.output, err = protocol.CompileSchema(t.Name+".outputSchema", outTree); err != nil {
			panic(fmt.Sprintf("app: tool %q: %v", t.Name, err))
		}
	}
	return tl
}

// TaskSupport tells the server core which tools run as tasks
// (server.TaskSupporter).
func (h handler) TaskSupport(name string) string {
	a := h.app
	a.mu.RLock()
	defer a.mu.RUnlock()
	if t, ok := a.tools.get(name); ok && t.def.Execution != nil {
		return t.def.Execution.TaskSupport
	}
	return ""
}

// RunsTasks reports whether a tool may run as a task: then the app
// declares the tasks capability (server.TaskSupporter).
func (h handler) RunsTasks() bool {
	a := h.app
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.runsTasks()
}

// runsTasks is RunsTasks with a.mu held.
func (a *App) runsTasks() bool {
	for _, t := range a.tools.items {
		if e := t.def.Execution; e != nil && (e.TaskSupport == "optional" || e.TaskSupport == "required") {
			return true
		}
	}
	return false
}

// ListTools lists the registered tools, a page at a time.
func (h handler) ListTools(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	a := h.app
	defs, next, err := page(a, &a.tools, "tools", p, func(t *tool) *mcp.Tool { d := t.def; return &d })
	if err != nil {
		return nil, err
	}
	scope, ttl := a.cacheHint(mcp.MethodListTools)
	return &mcp.ListToolsResult{Tools: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// CallTool validates the arguments against the tool's input schema and
// runs it. An unknown tool is -32602; invalid arguments, a handler's error
// and a refused input are tool errors (isError), which the model can read.
func (h handler) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	a := h.app
	a.mu.RLock()
	t, ok := a.tools.get(p.Name)
	a.mu.RUnlock()
	if !ok {
		return nil, unknown("tool", p.Name, "/params/name")
	}
	// The Mcp-Param headers are the transport's: checked first, like the
	// core checks Mcp-Method and Mcp-Name.
	if h := core.HeadersFrom(ctx); h != nil {
		if err := t.checkHeaders(h, p.Arguments); err != nil {
			return nil, err
		}
	}
	// Validation runs under the middleware too, so that a refusal there
	// (authorization) comes before anything is said about the arguments.
	var res any
	var err error
	if len(a.middleware) == 0 {
		res, err = a.validateAndRun(ctx, t, p.Arguments)
	} else {
		res, err = a.wrap(Invocation{Method: mcp.MethodCallTool, Name: p.Name, Params: p}, func(ctx context.Context) (any, error) {
			return a.validateAndRun(ctx, t, p.Arguments)
		})(ctx)
	}
	if err != nil {
		return nil, err
	}
	out, ok := res.(*mcp.CallToolResult)
	if !ok || out == nil {
		a.logger().Error("app: a middleware returned no tool result", "tool", p.Name, "got", fmt.Sprintf("%T", res))
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	}
	return out, nil
}

// validateAndRun fills the arguments' defaults, validates them against the
// tool's input schema (a failure is a tool error naming the member, for the
// model to fix) and runs the tool.
func (a *App) validateAndRun(ctx context.Context, t *tool, args map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	if t.defaults {
		args, _ = withDefaults(args, t.schema)
	}
	if err := t.input.Validate(args); err != nil {
		return invalidArguments(err), nil
	}
	return a.runTool(ctx, t, args)
}

// runTool runs a tool's handler: a panic is -32603 (and a log line), an
// error a tool error, structured content checked against the output
// schema.
func (a *App) runTool(ctx context.Context, t *tool, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := t.run(ctx, args) // a panic is the server core's: -32603 and a log line naming the tool
	switch {
	case err != nil:
		if we := (*wire.Error)(nil); errors.As(err, &we) {
			return nil, we
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, peer.ErrInputRequired) {
			return nil, err // the server answers with what the client must give
		}
		return ToolError(err.Error()), nil
	case res == nil:
		a.logger().Error("app: tool returned no result", "tool", t.def.Name)
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	}
	if t.output != nil && (res.IsError == nil || !*res.IsError) {
		var tree any = res.StructuredContent
		var err error
		if !t.decoded || res.StructuredContent == nil {
			tree, err = jsontree.TreeOf(tree)
		}
		if err == nil {
			err = t.output.Validate(tree)
		}
		if err != nil {
			a.logger().Error("app: tool output does not match its outputSchema", "tool", t.def.Name, "err", err)
			return nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the tool's output does not match its outputSchema"}
		}
	}
	return res, nil
}

// invalidArguments is the tool error for arguments that fail the input
// schema: it names the JSON pointer and the reason, for the model to fix.
func invalidArguments(err error) *mcp.CallToolResult {
	var ve *wire.ValidationError
	if errors.As(err, &ve) {
		at := ve.Pointer
		if at == "" {
			at = "/"
		}
		return ToolError(fmt.Sprintf("Invalid arguments: at %s: %s", at, ve.Reason))
	}
	return ToolError("Invalid arguments: " + err.Error())
}

// ToolError is the result of a tool that failed in a way the model should
// read: isError, with text as its content. A handler's error becomes the
// same; ToolError is for handlers that build their results themselves.
func ToolError(text string) *mcp.CallToolResult {
	yes := true
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: text}}, IsError: &yes}
}

// SchemaFor is the JSON Schema AddTool derives from T for a tool's
// output (a nil slice, map or pointer may be null, as encoding/json writes
// it): to declare the OutputSchema of a handler that builds its whole
// *mcp.CallToolResult (with Structured, to set _meta or its own text), or
// to start an explicit schema from.
func SchemaFor[T any]() map[string]any {
	s, _ := schemaOf(reflect.TypeFor[T](), outputSide).(map[string]any)
	return s
}

// Structured is the result AddTool makes of a typed handler's output: v
// as structured content when it is an object, and its JSON as text (v
// itself when it is a string).
func Structured(v any) (*mcp.CallToolResult, error) {
	if s, ok := v.(string); ok {
		return textResult(s), nil
	}
	tree, err := jsontree.TreeOf(v) // built from v itself where it can, as encoding and parsing would
	if err != nil {
		return nil, fmt.Errorf("app: encoding the tool's output: %w", err)
	}
	res := &mcp.CallToolResult{}
	var text []byte
	if obj, ok := tree.(map[string]any); ok {
		res.StructuredContent = obj
		text, err = jsontree.Marshal(obj) // the text is the structured content, byte for byte as it is sent
	} else {
		text, err = json.Marshal(v)
	}
	if err != nil {
		return nil, fmt.Errorf("app: encoding the tool's output: %w", err)
	}
	res.Content = []mcp.ContentBlock{&mcp.TextContent{Text: string(text)}}
	return res, nil
}

// textResult is a result of one text content, made in one allocation
// rather than three (the result, its content slice and the text): a
// string is what most tools answer.
func textResult(s string) *mcp.CallToolResult {
	x := &struct {
		res     mcp.CallToolResult
		content [1]mcp.ContentBlock
		text    mcp.TextContent
	}{text: mcp.TextContent{Text: s}}
	x.content[0] = &x.text
	x.res.Content = x.content[:]
	return &x.res
}

// withDefaults fills the properties the client left out with their
// schema's default, before validation: at the top level, and inside the
// objects the client gave whose schema has properties with defaults. It
// copies what it changes: the request's own arguments stay as they came,
// and a handler that changes what it gets leaves the defaults as
// registered. changed says whether it filled anything (args came back
// otherwise).
func withDefaults(args, schema map[string]any) (filled map[string]any, changed bool) {
	props, _ := schema["properties"].(map[string]any)
	var out map[string]any
	set := func(k string, v any) {
		if out == nil {
			out = make(map[string]any, len(args)+1)
			for k, v := range args {
				out[k] = v
			}
		}
		out[k] = v
	}
	for k, p := range props {
		ps, _ := p.(map[string]any)
		v, given := args[k]
		switch {
		case !given:
			if d, ok := ps["default"]; ok {
				set(k, copyTree(d))
			}
		case ps["properties"] != nil:
			if obj, ok := v.(map[string]any); ok {
				if filled, changed := withDefaults(obj, ps); changed {
					set(k, filled)
				}
			}
		}
	}
	if out == nil {
		return args, false
	}
	return out, true
}

// hasDefaults reports whether withDefaults could fill anything in from
// schema: a property with a default, at the top level or inside a
// property that has properties of its own.
func hasDefaults(schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	for _, p := range props {
		ps, _ := p.(map[string]any)
		if _, ok := ps["default"]; ok {
			return true
		}
		if ps["properties"] != nil && hasDefaults(ps) {
			return true
		}
	}
	return false
}

// onlyProperties drops the arguments the schema does not name exactly:
// encoding/json matches field names ignoring case, so an extra
// "MaxResults" would otherwise land on the field the schema checked as
// "maxResults" without checking it.
func onlyProperties(args map[string]any, props map[string]map[string]any) map[string]any {
	for k := range args {
		if _, ok := props[k]; !ok {
			out := make(map[string]any, len(props))
			for k, v := range args {
				if _, ok := props[k]; ok {
					out[k] = v
				}
			}
			return out
		}
	}
	return args
}

// copyTree copies a schema's default, so that what one call's handler
// changes the next call does not see.
func copyTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyTree(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = copyTree(e)
		}
		return a
	}
	return v
}

// isObject reports whether values of t encode as JSON objects.
func isObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String
}

// objectSchema is s as a JSON tree that describes objects.
func objectSchema(s any) (map[string]any, error) {
	tree, err := jsontree.TreeOf(s)
	if err != nil {
		return nil, err
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a schema is a JSON object, not %s", jsontree.KindOf(tree))
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return nil, fmt.Errorf(`a tool's schema describes an object ("type": "object"), not %v`, typ)
	}
	obj["type"] = "object"
	return obj, nil
}

func properties(s map[string]any) map[string]map[string]any {
	props, _ := s["properties"].(map[string]any)
	out := make(map[string]map[string]any, len(props))
	for k, v := range props {
		if m, ok := v.(map[string]any); ok {
			out[k] = m
		}
	}
	return out
}

func required(s map[string]any) []string {
	list, _ := s["required"].([]any)
	var out []string
	for _, v := range list {
		if r, ok := v.(string); ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// rest is what a schema says besides type, properties and required: kept
// in the definition as it is ($defs, additionalProperties, ...).
func rest(s map[string]any) map[string]any {
	var out map[string]any
	for k, v := range s {
		switch k {
		case "type", "properties", "required", "$schema", "$id":
		default:
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}
