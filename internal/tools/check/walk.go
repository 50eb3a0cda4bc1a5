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
	resources, _, ok, abort := listed(ctx, w, mcp.MethodListResources, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := w.s.ListResources(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	}, func(r *mcp.Resource) string { return r.URI }, nil)
	if abort != nil {
		return abort
	}
	if ok {
		for _, r := range resources {
			if err := w.read(ctx, r.URI, "listed"); err != nil {
				return err
			}
		}
	}
	templates, _, ok, abort := listed(ctx, w, mcp.MethodListResourceTemplates, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := w.s.ListResourceTemplates(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	}, func(t *mcp.ResourceTemplate) string { return t.URITemplate }, nil)
	if abort != nil {
		return abort
	}
	if ok {
		for _, t := range templates {
			if err := w.template(ctx, t); err != nil {
				return err
			}
		}
	}
	if w.caps.Resources.Subscribe != nil && *w.caps.Resources.Subscribe && len(resources) > 0 && w.has(mcp.MethodSubscribe) {
		return w.subscribe(ctx, resources[0].URI)
	}
	return nil
}

func (w *walk) read(ctx context.Context, uri, how string) error {
	return w.request(ctx, ruleRead, fmt.Sprintf("resources/read of the %s URI %q", how, clip(uri)), missing, func(ctx context.Context) error {
		_, err := w.s.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: uri})
		return err
	})
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
	err := w.request(ctx, ruleSubscribe, fmt.Sprintf("resources/subscribe of %q", clip(uri)), missing, func(ctx context.Context) error {
		_, err := w.s.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri})
		return err
	})
	if err != nil {
		return err
	}
	return w.request(ctx, ruleSubscribe, fmt.Sprintf("resources/unsubscribe of %q", clip(uri)), missing, func(ctx context.Context) error {
		_, err := w.s.Unsubscribe(ctx, &mcp.UnsubscribeRequestParams{URI: uri})
		return err
	})
}

// missing reports whether an error says the method is not there: a
// server that declares a capability serves its methods. Any other error
// is the server's to give (a resource gone, a value it does not know, a
// capability the check's client lacks): no finding.
func missing(we *wire.Error) bool { return we != nil && we.Code == wire.CodeMethodNotFound }

// anyError makes every failure of a request a finding (missing: only a
// method not found).
func anyError(*wire.Error) bool { return true }

// prompts lists the prompts and gets each with the arguments it requires,
// filled from completion/complete where the server declares completions.
func (w *walk) prompts(ctx context.Context) error {
	if w.caps.Prompts == nil {
		return nil
	}
	prompts, _, ok, abort := listed(ctx, w, mcp.MethodListPrompts, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := w.s.ListPrompts(ctx, &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	}, func(p *mcp.Prompt) string { return p.Name }, nil)
	if abort != nil || !ok {
		return abort
	}
	for _, p := range prompts {
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
		err := w.request(ctx, rulePrompt, fmt.Sprintf("prompts/get %q with its required arguments", p.Name), missing, func(ctx context.Context) error {
			_, err := w.s.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: p.Name, Arguments: args})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// request sends one request within its wait and makes a finding of r
// when it fails in a way finding says is one (a hang, a crash and a
// protocol violation are outcome's to judge).
func (w *walk) request(ctx context.Context, r rule, what string, finding func(*wire.Error) bool, send func(context.Context) error) error {
	rctx, cancel := w.ctx(ctx)
	err := send(rctx)
	cancel()
	we, judged, abort := w.outcome(err)
	if abort != nil {
		return abort
	}
	if err != nil && !judged && finding(we) {
		w.c.find(r, w.session, "", what+" failed: "+errText(we, err), "")
	}
	return nil
}

// listed walks a list to its end (pages) and keeps its first --max-items
// items, leaving out the null ones the recording's validation reports;
// each, when not nil, sees every item listed; more counts those not kept.
func listed[T comparable](ctx context.Context, w *walk, method string, page func(context.Context, string) ([]T, string, error),
	key func(T) string, each func(T)) (kept []T, more int, ok bool, abort error) {
	var zero T
	ok, abort = w.pages(ctx, method, func(ctx context.Context, cursor string) ([]string, string, error) {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		keys := make([]string, 0, len(items))
		for _, it := range items {
			if it == zero {
				continue
			}
			keys = append(keys, key(it))
			if each != nil {
				each(it)
			}
			if len(kept) < w.c.cfg.MaxItems {
				kept = append(kept, it)
			} else {
				more++
			}
		}
		return keys, next, nil
	})
	return kept, more, ok, abort
}
