package check

import (
	"context"
	"fmt"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// resources lists the resources and templates, reads what it listed (and
// what the templates give, expanded from their completions), and
// subscribes to one resource where the server declares subscriptions.
func (w *walk) resources(ctx context.Context) error {
	if w.caps.Resources == nil {
		return nil
	}
	var uris []string
	ok, abort := w.pages(ctx, "resources/list", func(ctx context.Context, cursor string) ([]string, string, error) {
		res, err := w.s.ListResources(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		keys := make([]string, 0, len(res.Resources))
		for _, r := range res.Resources {
			if r == nil {
				continue
			}
			keys = append(keys, r.URI)
			if len(uris) < w.c.cfg.MaxItems {
				uris = append(uris, r.URI)
			}
		}
		return keys, res.NextCursor, nil
	})
	if abort != nil {
		return abort
	}
	if ok {
		for i, uri := range uris {
			if i >= w.c.cfg.MaxItems {
				break
			}
			if err := w.read(ctx, uri, "listed"); err != nil {
				return err
			}
		}
	}
	var templates []*mcp.ResourceTemplate
	ok, abort = w.pages(ctx, "resources/templates/list", func(ctx context.Context, cursor string) ([]string, string, error) {
		res, err := w.s.ListResourceTemplates(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		keys := make([]string, 0, len(res.ResourceTemplates))
		for _, t := range res.ResourceTemplates {
			if t == nil {
				continue
			}
			keys = append(keys, t.URITemplate)
			if len(templates) < w.c.cfg.MaxItems {
				templates = append(templates, t)
			}
		}
		return keys, res.NextCursor, nil
	})
	if abort != nil {
		return abort
	}
	if ok {
		for i, t := range templates {
			if i >= w.c.cfg.MaxItems {
				break
			}
			if err := w.template(ctx, t); err != nil {
				return err
			}
		}
	}
	if w.caps.Resources.Subscribe != nil && *w.caps.Resources.Subscribe && len(uris) > 0 && w.has(mcp.MethodSubscribe) {
		return w.subscribe(ctx, uris[0])
	}
	return nil
}

func (w *walk) read(ctx context.Context, uri, how string) error {
	rctx, cancel := w.ctx(ctx)
	defer cancel()
	_, err := w.s.ReadResource(rctx, &mcp.ReadResourceRequestParams{URI: uri})
	we, judged, abort := w.outcome(err)
	if abort != nil {
		return abort
	}
	if missing(we) && !judged {
		w.c.find(ruleRead, w.session, "", fmt.Sprintf("resources/read of the %s URI %q failed: %s", how, clip(uri), errText(we, err)), "")
	}
	return nil
}

// template reads a template's resource with its variables filled from
// completion/complete, where the server declares completions; without
// them there is nothing to fill it with that the server would know.
func (w *walk) template(ctx context.Context, t *mcp.ResourceTemplate) error {
	tpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return nil // the recording's validation judges the template itself
	}
	if w.caps.Completions == nil {
		w.c.logf("%s: template %q not read: the server declares no completions to fill it from", w.session, t.URITemplate)
		return nil
	}
	values := uritemplate.Values{}
	for _, name := range tpl.Varnames() {
		v, err := w.complete(ctx, &mcp.ResourceTemplateReference{URI: t.URITemplate}, name)
		if err != nil {
			return err
		}
		if v == "" {
			w.c.logf("%s: template %q not read: no completion for %q", w.session, t.URITemplate, name)
			return nil
		}
		values.Set(name, uritemplate.String(v))
	}
	uri, err := tpl.Expand(values)
	if err != nil {
		return nil
	}
	return w.read(ctx, uri, "template's")
}

// complete asks for the values of an argument; "" when there are none.
func (w *walk) complete(ctx context.Context, ref mcp.CompleteRequestParamsRef, name string) (string, error) {
	rctx, cancel := w.ctx(ctx)
	defer cancel()
	res, err := w.s.Complete(rctx, &mcp.CompleteRequestParams{Ref: ref, Argument: mcp.CompleteRequestParamsArgument{Name: name}})
	we, judged, abort := w.outcome(err)
	if abort != nil {
		return "", abort
	}
	if err != nil {
		if missing(we) && !judged {
			w.c.find(ruleComplete, w.session, "", fmt.Sprintf("completion/complete of %q failed: %s", name, errText(we, err)), "")
		}
		return "", nil
	}
	if len(res.Completion.Values) == 0 {
		return "", nil
	}
	return res.Completion.Values[0], nil
}

func (w *walk) subscribe(ctx context.Context, uri string) error {
	for _, sub := range []bool{true, false} {
		rctx, cancel := w.ctx(ctx)
		var err error
		method := "resources/subscribe"
		if sub {
			_, err = w.s.Subscribe(rctx, &mcp.SubscribeRequestParams{URI: uri})
		} else {
			method = "resources/unsubscribe"
			_, err = w.s.Unsubscribe(rctx, &mcp.UnsubscribeRequestParams{URI: uri})
		}
		cancel()
		we, judged, abort := w.outcome(err)
		if abort != nil {
			return abort
		}
		if missing(we) && !judged {
			w.c.find(ruleSubscribe, w.session, "", fmt.Sprintf("%s of %q failed: %s", method, clip(uri), errText(we, err)), "")
		}
	}
	return nil
}

// missing reports whether an error says the method is not there: a
// server that declares a capability serves its methods. Any other error
// is the server's to give (a resource gone, a value it does not know, a
// capability the check's client lacks): no finding.
func missing(we *wire.Error) bool { return we != nil && we.Code == wire.CodeMethodNotFound }

// prompts lists the prompts and gets each with the arguments it requires,
// filled from completion/complete where the server declares completions.
func (w *walk) prompts(ctx context.Context) error {
	if w.caps.Prompts == nil {
		return nil
	}
	var prompts []*mcp.Prompt
	ok, abort := w.pages(ctx, "prompts/list", func(ctx context.Context, cursor string) ([]string, string, error) {
		res, err := w.s.ListPrompts(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		keys := make([]string, 0, len(res.Prompts))
		for _, p := range res.Prompts {
			if p == nil {
				continue
			}
			keys = append(keys, p.Name)
			if len(prompts) < w.c.cfg.MaxItems {
				prompts = append(prompts, p)
			}
		}
		return keys, res.NextCursor, nil
	})
	if abort != nil || !ok {
		return abort
	}
	for i, p := range prompts {
		if i >= w.c.cfg.MaxItems {
			break
		}
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a == nil || a.Required == nil || !*a.Required {
				continue
			}
			v := "example"
			if w.caps.Completions != nil {
				got, err := w.complete(ctx, &mcp.PromptReference{Name: p.Name}, a.Name)
				if err != nil {
					return err
				}
				if got != "" {
					v = got
				}
			}
			args[a.Name] = v
		}
		rctx, cancel := w.ctx(ctx)
		_, err := w.s.GetPrompt(rctx, &mcp.GetPromptRequestParams{Name: p.Name, Arguments: args})
		cancel()
		we, judged, abort := w.outcome(err)
		if abort != nil {
			return abort
		}
		if missing(we) && !judged {
			w.c.find(rulePrompt, w.session, "", fmt.Sprintf("prompts/get %q with its required arguments failed: %s", p.Name, errText(we, err)), "")
		}
	}
	return nil
}
