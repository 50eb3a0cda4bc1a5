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
package conformance

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/peer"
)

// Fixtures is the conformance profile's mcp.Handler. It is safe for
// concurrent use by any number of sessions.
type Fixtures struct {
	base.Lifecycle

	pager      base.Paginator
	step       time.Duration
	info       mcp.Implementation
	cacheScope string
	ttl        time.Duration

	tools      []*tool
	toolByName map[string]*tool
	prompts    []*prompt
	promptMap  map[string]*prompt

	listChanged func(method string)

	mu   sync.Mutex
	subs map[string]map[string]struct{} // session id -> subscribed URIs

	listMu    sync.Mutex
	dynTool   bool // test_trigger_tool_change has added test_dynamic_tool
	dynPrompt bool // test_trigger_prompt_change has added test_dynamic_prompt
}

var _ mcp.Handler = (*Fixtures)(nil)

// Option configures Fixtures.
type Option func(*Fixtures)

// WithPageSize sets the page size of the list methods (default
// base.DefaultPageSize, which lists every fixture in one page).
func WithPageSize(n int) Option { return func(f *Fixtures) { f.pager.PageSize = n } }

// WithStepDelay sets the pause between the notifications of
// test_tool_with_logging and test_tool_with_progress, and around the stream
// closing of test_reconnection (default 50ms, as the suite describes).
func WithStepDelay(d time.Duration) Option { return func(f *Fixtures) { f.step = d } }

// WithServerInfo sets the name and version announced in initialize and
// server/discover (default "mcpstack-conformance", "dev").
func WithServerInfo(name, version string) Option {
	return func(f *Fixtures) { f.info.Name, f.info.Version = name, version }
}

// WithCache sets the cacheScope ("public" or "private") and ttlMs that the
// list, read and discover results carry for 2026-07-28 clients (default
// "public" and 0: every client sees the same fixtures, but may not keep
// them). Older revisions never see these members.
func WithCache(scope string, ttl time.Duration) Option {
	return func(f *Fixtures) { f.cacheScope, f.ttl = scope, ttl }
}

// WithListChanged sets what test_trigger_tool_change and
// test_trigger_prompt_change call after they change the tool or prompt list:
// fn gets mcp.MethodToolListChanged or mcp.MethodPromptListChanged, and is
// where a server tells its sessions and listen streams (Server.Broadcast).
// It is called synchronously, before the trigger answers, and never with a
// lock held. Default: nothing is told.
func WithListChanged(fn func(method string)) Option {
	return func(f *Fixtures) { f.listChanged = fn }
}

// New returns the fixtures.
func New(opts ...Option) *Fixtures {
	f := &Fixtures{
		step:        50 * time.Millisecond,
		info:        mcp.Implementation{Name: "mcpstack-conformance", Title: "mcpstack conformance fixtures", Version: "dev"},
		cacheScope:  "public",
		subs:        map[string]map[string]struct{}{},
		listChanged: func(string) {},
	}
	for _, o := range opts {
		o(f)
	}
	if f.listChanged == nil {
		f.listChanged = func(string) {}
	}
	f.tools = tools()
	f.toolByName = make(map[string]*tool, len(f.tools))
	for _, t := range f.tools {
		f.toolByName[t.def.Name] = t
	}
	f.prompts = prompts()
	f.promptMap = make(map[string]*prompt, len(f.prompts))
	for _, p := range f.prompts {
		f.promptMap[p.def.Name] = p
	}
	return f
}

// Instructions is what initialize and server/discover tell the client.
const Instructions = "mcpstack conformance fixtures: the test_* tools, test:// resources and test_* prompts " +
	"that the MCP conformance suite exercises. They have no use beyond testing."

func (f *Fixtures) capabilities() mcp.ServerCapabilities {
	yes := func() *bool { b := true; return &b }
	return mcp.ServerCapabilities{
		Tools:       &mcp.ServerCapabilitiesTools{ListChanged: yes()},
		Resources:   &mcp.ServerCapabilitiesResources{Subscribe: yes(), ListChanged: yes()},
		Prompts:     &mcp.ServerCapabilitiesPrompts{ListChanged: yes()},
		Logging:     mcp.JSONObject{},
		Completions: mcp.JSONObject{},
	}
}

func (f *Fixtures) serverInfo() *mcp.Implementation {
	info := f.info
	info.Icons = append([]*mcp.Icon(nil), f.info.Icons...)
	return &info
}

// cache returns the cacheScope and ttlMs of cacheable results.
func (f *Fixtures) cache() (string, *int64) {
	ms := f.ttl.Milliseconds()
	return f.cacheScope, &ms
}

// Initialize declares the capabilities the fixtures need. The server
// negotiates and fills protocolVersion.
func (f *Fixtures) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return &mcp.InitializeResult{
		Capabilities: f.capabilities(),
		ServerInfo:   *f.serverInfo(),
		Instructions: Instructions,
	}, nil
}

// Discover (2026-07-28) describes the same server as Initialize; the server
// info travels in _meta. supportedVersions is left to the server, which
// knows the revisions it serves (as it fills protocolVersion in initialize).
func (f *Fixtures) Discover(context.Context, *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	scope, ttl := f.cache()
	return &mcp.DiscoverResult{
		Meta:         &mcp.ResultMetaObject{ServerInfo: f.serverInfo()},
		Capabilities: f.capabilities(),
		Instructions: Instructions,
		ResultType:   "complete",
		CacheScope:   scope,
		TTLMs:        *ttl,
	}, nil
}

// Subscribe records that the calling session wants
// notifications/resources/updated for a resource. Known resources and URIs
// of the resource template can be subscribed to; anything else is -32002.
func (f *Fixtures) Subscribe(ctx context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	if !knownResource(p.URI) {
		return nil, resourceNotFound(p.URI)
	}
	sid := sessionID(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.subs[sid]
	if set == nil {
		set = map[string]struct{}{}
		f.subs[sid] = set
	}
	set[p.URI] = struct{}{}
	return &mcp.EmptyResult{}, nil
}

// Unsubscribe forgets a subscription of the calling session. Unsubscribing
// from something not subscribed to is not an error.
func (f *Fixtures) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	sid := sessionID(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if set := f.subs[sid]; set != nil {
		delete(set, p.URI)
		if len(set) == 0 {
			delete(f.subs, sid)
		}
	}
	return &mcp.EmptyResult{}, nil
}

// Subscribers lists, sorted, the sessions subscribed to uri: where a server
// sends notifications/resources/updated when the resource changes.
func (f *Fixtures) Subscribers(uri string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for sid, set := range f.subs {
		if _, ok := set[uri]; ok {
			out = append(out, sid)
		}
	}
	sort.Strings(out)
	return out
}

// EndSession drops the subscriptions of a session that has ended.
func (f *Fixtures) EndSession(sessionID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, sessionID)
}

func sessionID(ctx context.Context) string {
	if p := peer.From(ctx); p != nil {
		return p.SessionID()
	}
	return ""
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
