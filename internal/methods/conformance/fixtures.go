// Package conformance implements the fixtures that the official MCP
// conformance suite (@modelcontextprotocol/conformance, server scenarios)
// expects of the server under test: the test_* tools, the test:// resources
// and resource template, the test_* prompts, completion, logging, progress,
// sampling and elicitation, and the diagnostic tools of the 2026-07-28
// scenarios (input-required results, missing capabilities, list changes). It
// is the handler of the conformance profile (`mcpstack serve --profile
// conformance`, `make conformance`).
//
// The texts, names and shapes follow the scenario descriptions of the suite
// (0.1.16, and 0.2.0 for 2026-07-28); where the suite only checks shapes,
// the values are the ones its descriptions show, so the project's own tests
// can check content.
//
// Every fixture is written once for every revision: the ones that need the
// client's input ask through peer.Ask, which sends requests over a session
// and answers with an input-required result under 2026-07-28.
//
// The fixtures are registrations on an app.App (the registration layer):
// listing, pagination, argument validation against each tool's
// inputSchema, subscriptions, completion and capabilities are the layer's.
package conformance

import (
	"context"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
)

// Fixtures is the conformance profile's mcp.Handler. It is safe for
// concurrent use by any number of sessions. Serve it with server.New,
// which attaches it, so that its list changes and resource updates reach
// the clients.
type Fixtures struct {
	*app.App // registration
	handler  // its methods

	step time.Duration

	mu        sync.Mutex
	dynTool   bool // test_trigger_tool_change has added test_dynamic_tool
	dynPrompt bool // test_trigger_prompt_change has added test_dynamic_prompt
}

var _ mcp.Handler = (*Fixtures)(nil)

// handler is the app's mcp.Handler, embedded unexported: the fixtures
// are served as a whole.
type handler = app.Handler

type config struct {
	pageSize      int
	step          time.Duration
	name, version string
	scope         string
	ttl           time.Duration
}

// Option configures Fixtures.
type Option func(*config)

// WithPageSize sets the page size of the list methods (default: the
// layer's, which lists every fixture in one page).
func WithPageSize(n int) Option { return func(c *config) { c.pageSize = n } }

// WithStepDelay sets the pause between the notifications of
// test_tool_with_logging and test_tool_with_progress, and around the stream
// closing of test_reconnection (default 50ms, as the suite describes).
func WithStepDelay(d time.Duration) Option { return func(c *config) { c.step = d } }

// WithServerInfo sets the name and version announced in initialize and
// server/discover (default "mcpstack-conformance", "dev").
func WithServerInfo(name, version string) Option {
	return func(c *config) { c.name, c.version = name, version }
}

// WithCache sets the cacheScope ("public" or "private") and ttlMs that the
// list, read and discover results carry for 2026-07-28 clients (default
// "public" and 0: every client sees the same fixtures, but may not keep
// them). Older revisions never see these members.
func WithCache(scope string, ttl time.Duration) Option {
	return func(c *config) { c.scope, c.ttl = scope, ttl }
}

// Instructions is what initialize and server/discover tell the client.
const Instructions = "mcpstack conformance fixtures: the test_* tools, test:// resources and test_* prompts " +
	"that the MCP conformance suite exercises. They have no use beyond testing."

// cached are the methods whose results carry the cache hint.
var cached = []string{
	mcp.MethodListTools, mcp.MethodListPrompts, mcp.MethodListResources, mcp.MethodListResourceTemplates,
	mcp.MethodReadResource, mcp.MethodDiscover,
}

// New returns the fixtures.
func New(opts ...Option) *Fixtures {
	c := config{step: 50 * time.Millisecond, name: "mcpstack-conformance", version: "dev", scope: "public"}
	for _, o := range opts {
		o(&c)
	}
	aopts := []app.Option{app.WithTitle("mcpstack conformance fixtures"), app.WithInstructions(Instructions), app.WithPageSize(c.pageSize)}
	for _, m := range cached {
		aopts = append(aopts, app.WithCacheHint(m, c.scope, c.ttl))
	}
	f := &Fixtures{App: app.New(c.name, c.version, aopts...), step: c.step}
	f.handler = f.App.Handler()
	for _, t := range tools() {
		f.addTool(t)
	}
	addResources(f.App)
	addPrompts(f.App)
	return f
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
