package check

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// tools lists the tools, then calls those it may with argument sets made
// from their input schemas.
func (w *walk) tools(ctx context.Context) error {
	if w.caps.Tools == nil {
		return nil
	}
	refused := map[string]string{} // a name's reason not to call it, from any of its listings
	tools, more, ok, abort := listed(ctx, w, mcp.MethodListTools, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := w.s.ListTools(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	}, func(t *mcp.Tool) string { return t.Name }, func(t *mcp.Tool) {
		if why := w.c.mayCall(t); why != "" {
			refused[t.Name] = why // a name listed twice counts as its most dangerous listing
		}
	})
	if abort != nil || !ok {
		return abort
	}
	if more > 0 {
		w.c.logf("%s: %d tools more not called (--max-items %d)", w.session, more, w.c.cfg.MaxItems)
	}
	w.listed = w.toolsChanged.Load()
	for _, t := range tools {
		if why := refused[t.Name]; why != "" {
			w.c.logf("%s: tool %q not called: %s", w.session, t.Name, why)
			continue
		}
		if err := w.tool(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// mayCall says why a tool is not called ("" when it is): by default only
// the tools that declare readOnlyHint; --call-all widens it to every tool
// but the destructive ones; --call NAME to that tool, whatever it says.
func (c *checker) mayCall(t *mcp.Tool) string {
	if slices.Contains(c.cfg.Skip, t.Name) {
		return "--skip names it"
	}
	if slices.Contains(c.cfg.Call, t.Name) {
		return ""
	}
	a := t.Annotations
	destructive := a != nil && a.DestructiveHint != nil && *a.DestructiveHint
	readOnly := a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint
	switch {
	case destructive: // even beside readOnlyHint: the two contradict, the worse counts
		return "it declares destructiveHint (name it with --call to call it)"
	case readOnly, c.cfg.CallAll:
		return ""
	}
	return "it does not declare readOnlyHint (--call NAME or --call-all to call it)"
}

// tool calls one tool with each argument set made from its input schema
// and judges the answers.
func (w *walk) tool(ctx context.Context, t *mcp.Tool) error {
	schema, err := schemaMap(t.InputSchema)
	if err != nil {
		w.c.logf("%s: tool %q not called: its inputSchema: %v", w.session, t.Name, err)
		return nil
	}
	sets, note := argSets(t.Name, schema)
	if note != "" {
		w.c.logf("%s: tool %q: %s", w.session, t.Name, note)
	}
	var output *protocol.Schema
	if t.OutputSchema != nil {
		doc, err := schemaMap(*t.OutputSchema)
		if err == nil {
			output, err = protocol.CompileSchema("tool "+t.Name+" outputSchema", doc, protocol.FormatAsAnnotation())
		}
		if err != nil {
			w.c.logf("%s: tool %q: its outputSchema does not compile (%v): structured content not checked", w.session, t.Name, err)
		}
	}
	for _, set := range sets {
		if w.c.cfg.DryRun {
			b, _ := json.Marshal(map[string]any{"method": "tools/call", "params": map[string]any{"name": t.Name, "arguments": set.args}})
			what := "valid"
			if !set.valid {
				what = "invalid: " + set.broke
			}
			fmt.Fprintf(w.c.cfg.DryRunOut, "%s: would send (%s): %s\n", w.session, what, b)
			continue
		}
		rctx, cancel := w.ctx(ctx)
		res, err := w.s.CallTool(rctx, &mcp.CallToolRequestParams{Name: t.Name, Arguments: set.args})
		cancel()
		we, judged, abort := w.outcome(err)
		if abort != nil {
			return abort
		}
		if judged {
			continue
		}
		if set.valid {
			w.judgeValid(t, output, res, we, err)
		} else {
			w.judgeInvalid(t, set, res, we, err)
		}
	}
	return nil
}

func (w *walk) judgeValid(t *mcp.Tool, output *protocol.Schema, res *mcp.CallToolResult, we *wire.Error, err error) {
	switch {
	case we != nil && we.Code == wire.CodeInvalidParams && w.gone(t.Name):
		// The list changed since it was read, and the tool left it.
	case we != nil && we.Code == wire.CodeInvalidParams:
		w.c.find(ruleValidRefused, w.session, "", fmt.Sprintf("tool %q refused arguments its inputSchema accepts: %s", t.Name, errText(we, err)), "")
	case err != nil, res == nil:
		// A tool may fail for reasons of its own (a file that is not
		// there): not a finding.
	case res.IsError != nil && *res.IsError:
	case output != nil && res.StructuredContent == nil:
		w.c.find(ruleOutputSchema, w.session, "/result/structuredContent", fmt.Sprintf("tool %q declares an outputSchema but its result has no structuredContent", t.Name), "")
	case output != nil:
		v, perr := plain(res.StructuredContent)
		if perr != nil {
			return
		}
		if verr := output.Validate(v); verr != nil {
			w.c.find(ruleOutputSchema, w.session, "/result/structuredContent", fmt.Sprintf("tool %q: structuredContent does not match its outputSchema: %v", t.Name, verr), "")
		}
	}
}

func (w *walk) judgeInvalid(t *mcp.Tool, set argSet, res *mcp.CallToolResult, we *wire.Error, err error) {
	switch {
	case we != nil && we.Code == wire.CodeInvalidParams:
	case we != nil:
		w.c.find(ruleErrorCode, w.session, "/error/code", fmt.Sprintf("tool %q, arguments that break %s: answered %s, want a tool error or -32602", t.Name, set.broke, errText(we, err)), "")
	case err != nil, res == nil:
	case res.IsError != nil && *res.IsError:
	default:
		w.c.find(ruleInvalidAccepted, w.session, "/result", fmt.Sprintf("tool %q answered a success to arguments that break %s", t.Name, set.broke), "")
	}
}

// gone reports whether a tool has left the list since the walk read it
// (a notifications/tools/list_changed came, and the list now lacks it).
func (w *walk) gone(name string) bool {
	if w.toolsChanged.Load() == w.listed {
		return false
	}
	ctx, cancel := w.ctx(w.parent)
	defer cancel()
	n := 0
	for t, err := range w.s.Tools(ctx) {
		if n++; err != nil || n > maxKeys {
			return false
		}
		if t.Name == name {
			return false
		}
	}
	return true
}

// schemaMap is a tool's schema as a plain JSON object, with its "type".
func schemaMap(s any) (map[string]any, error) {
	v, err := plain(s)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m, nil
}
