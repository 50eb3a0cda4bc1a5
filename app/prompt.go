package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Prompt describes a prompt. Its arguments are derived from the handler's
// In type (string fields; json names; required unless omitempty;
// `jsonschema:"description=..."`). Complete offers completions per
// argument.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Complete    map[string]Completer
}

// Completer suggests values of an argument (or template variable) that
// start like value; args are the other arguments the client has filled.
// Past 100 values the answer says there are more: a completer over a
// large set may stop at 101.
type Completer func(ctx context.Context, value string, args map[string]string) ([]string, error)

// maxCompletions is the most values a completion answers.
const maxCompletions = 100

type prompt struct {
	def      mcp.Prompt
	get      func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error)
	complete map[string]Completer
}

func (p *prompt) key() string { return p.def.Name }

// AddPrompt registers a prompt, replacing one of the same name. It panics
// when In is not a struct of string fields (a bug of the program). h
// builds the prompt's messages from its typed arguments: a *wire.Error is
// sent as it is; any other error is -32602 with its message (the
// arguments did not make a prompt).
func AddPrompt[In any](a *App, p Prompt, h func(ctx context.Context, in In) (*mcp.GetPromptResult, error)) {
	if p.Name == "" {
		panic("app: a prompt needs a name")
	}
	args, err := promptArguments(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("app: prompt %q: %v", p.Name, err))
	}
	for name := range p.Complete {
		if !slices.ContainsFunc(args, func(a *mcp.PromptArgument) bool { return a.Name == name }) {
			panic(fmt.Sprintf("app: prompt %q: a completer for %q, which is not an argument", p.Name, name))
		}
	}
	pr := &prompt{def: mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: args}, complete: p.Complete}
	pr.get = func(ctx context.Context, given map[string]string) (*mcp.GetPromptResult, error) {
		for _, arg := range args {
			if arg.Required != nil && *arg.Required && strings.TrimSpace(given[arg.Name]) == "" {
				return nil, invalidArgument(arg.Name, "missing required argument")
			}
		}
		// Only the declared arguments, by their exact names: encoding/json
		// matches a field's name ignoring case (and folds ſ to s), so an
		// undeclared "Topic" or "topıc" would land on a checked one.
		declared := make(map[string]string, len(args))
		for _, arg := range args {
			if v, ok := given[arg.Name]; ok {
				declared[arg.Name] = v
			}
		}
		var in In
		b, err := json.Marshal(declared)
		if err == nil {
			err = json.Unmarshal(b, &in)
		}
		if err != nil {
			return nil, wire.NewError(wire.CodeInvalidParams, "Invalid params: %v", err)
		}
		return h(ctx, in)
	}
	a.mu.Lock()
	a.prompts.put(pr)
	a.mu.Unlock()
	a.onChange(mcp.MethodPromptListChanged)
}

// RemovePrompts unregisters prompts; the clients hear of it (list_changed).
func (a *App) RemovePrompts(names ...string) {
	a.mu.Lock()
	changed := a.prompts.remove(names...)
	a.mu.Unlock()
	if changed {
		a.onChange(mcp.MethodPromptListChanged)
	}
}

func invalidArgument(name, reason string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "Invalid params: argument %q: %s", name, reason)
	e.Data = map[string]any{"field": "/params/arguments/" + name, "reason": reason}
	return e
}

// promptArguments derives a prompt's arguments from a struct type.
func promptArguments(t reflect.Type) ([]*mcp.PromptArgument, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the arguments type is %v, not a struct", t)
	}
	schema, _ := schemaOf(t, inputSide).(map[string]any)
	req := required(schema)
	props := properties(schema)
	var out []*mcp.PromptArgument
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if f.Type.Kind() != reflect.String {
			return nil, fmt.Errorf("argument %q is %v: prompt arguments are strings", name, f.Type)
		}
		yes := slices.Contains(req, name)
		arg := &mcp.PromptArgument{Name: name, Required: &yes}
		arg.Description, _ = props[name]["description"].(string)
		arg.Title, _ = props[name]["title"].(string)
		out = append(out, arg)
	}
	return out, nil
}

// ListPrompts lists the registered prompts, a page at a time.
func (h handler) ListPrompts(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	a := h.app
	defs, next, err := page(a, &a.prompts, "prompts", p, func(pr *prompt) *mcp.Prompt { d := pr.def; return &d })
	if err != nil {
		return nil, err
	}
	scope, ttl := a.cacheHint(mcp.MethodListPrompts)
	return &mcp.ListPromptsResult{Prompts: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// GetPrompt builds a prompt; an unknown one, or arguments that do not make
// it, is -32602.
func (h handler) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	a := h.app
	a.mu.RLock()
	pr, ok := a.prompts.get(p.Name)
	a.mu.RUnlock()
	if !ok {
		return nil, unknown("prompt", p.Name, "/params/name")
	}
	res, err := a.wrap(Invocation{Method: mcp.MethodGetPrompt, Name: p.Name, Params: p}, func(ctx context.Context) (any, error) {
		res, err := pr.get(ctx, p.Arguments)
		var we *wire.Error
		if err != nil && !errors.As(err, &we) && ctx.Err() == nil && !errors.Is(err, peer.ErrInputRequired) {
			return nil, wire.NewError(wire.CodeInvalidParams, "Invalid params: %v", err) // the arguments did not make a prompt
		}
		return res, err
	})(ctx)
	if err != nil {
		return nil, err
	}
	out, _ := res.(*mcp.GetPromptResult)
	if out == nil {
		a.logger().Error("app: prompt handler returned no result", "prompt", p.Name)
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	}
	if out.Description == "" {
		out.Description = pr.def.Description
	}
	return out, nil
}

// completes reports whether anything registered offers completions.
// Called with a.mu held.
func (a *App) completes() bool {
	for _, p := range a.prompts.items {
		if len(p.complete) > 0 {
			return true
		}
	}
	for _, t := range a.templates.items {
		if len(t.complete) > 0 {
			return true
		}
	}
	return false
}

// Complete answers completion/complete from the completer registered for
// the prompt argument or template variable; none registered is an empty
// list, an unknown prompt or template -32602.
func (h handler) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	a := h.app
	completers, err := a.completersOf(p.Ref)
	if err != nil {
		return nil, err
	}
	done := func(values []string) *mcp.CompleteResult {
		more := len(values) > maxCompletions
		c := mcp.CompleteResultCompletion{HasMore: &more}
		if more {
			values = values[:maxCompletions] // and no total: the completer may have stopped looking
		} else {
			total := int64(len(values))
			c.Total = &total
		}
		c.Values = append([]string{}, values...)
		return &mcp.CompleteResult{Completion: c}
	}
	c := completers[p.Argument.Name]
	if c == nil {
		return done(nil), nil
	}
	var others map[string]string
	if p.Context != nil {
		others = p.Context.Arguments
	}
	values, err := c(ctx, p.Argument.Value, others)
	if err != nil {
		return nil, err
	}
	return done(values), nil
}

// completersOf finds the completers of the prompt or template a ref names.
func (a *App) completersOf(ref mcp.CompleteRequestParamsRef) (map[string]Completer, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	switch ref := ref.(type) {
	case *mcp.PromptReference:
		if pr, ok := a.prompts.get(ref.Name); ok {
			return pr.complete, nil
		}
		return nil, unknown("prompt", ref.Name, "/params/ref/name")
	case *mcp.ResourceTemplateReference:
		if t, ok := a.templates.get(ref.URI); ok {
			return t.complete, nil
		}
		return nil, unknown("resource template", ref.URI, "/params/ref/uri")
	}
	return nil, wire.NewError(wire.CodeInvalidParams, "Invalid params: completion/complete needs a ref")
}

// Prefixed is a Completer over a fixed list: the values that start with
// what was typed, ignoring case.
func Prefixed(values ...string) Completer {
	return func(_ context.Context, typed string, _ map[string]string) ([]string, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(strings.ToLower(v), strings.ToLower(typed)) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}
