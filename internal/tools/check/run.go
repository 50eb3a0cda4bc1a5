package check

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/client"
	clipx "github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Config is what a check does; the command fills it from its flags.
type Config struct {
	URL       string   // a Streamable HTTP endpoint, or
	Command   []string // a stdio server to start (once per revision and probe)
	Header    http.Header
	Revisions []string // the revisions to try (default: every one mcpstack knows)
	Call      []string // tools to call whatever their hints
	Skip      []string // tools never to call
	CallAll   bool     // call every tool but the destructive ones
	DryRun    bool     // print the tool calls instead of making them
	Timeout   time.Duration
	Rate      float64   // requests per second
	MaxItems  int       // per revision: tools, resources, templates and prompts tried
	MaxPages  int       // pages of one list
	Log       io.Writer // progress and statuses
	DryRunOut io.Writer // --dry-run: the tool calls that would be made
	ServerLog io.Writer // a stdio server's stderr
}

// checker runs the check of one server.
type checker struct {
	cfg      Config
	rec      *recording
	file     string // the recording's name, which findings point into
	findings []validate.Finding
	statuses []string // what became of each revision
	ran      int      // revisions checked
	cut      bool     // --max-time (or an interrupt) ended the check before its end
}

// errAbort ends a revision's walk: the server is gone (crash) or the time is up.
var errAbort = errors.New("check: the revision's walk ended")

func (c *checker) logf(format string, a ...any) {
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, format+"\n", a...)
	}
}

// find records a finding about the last exchange of session.
func (c *checker) find(r rule, session, pointer, reason, spec string) {
	if spec == "" {
		spec = r.Spec
	}
	c.findings = append(c.findings, validate.Finding{File: c.file, Line: c.rec.at(session), Session: session, Side: "server",
		Rule: r.ID, Severity: r.Severity, Pointer: pointer, Reason: reason + " [spec: " + spec + "]"})
}

func (c *checker) transport(session string) client.Transport {
	var t client.Transport
	if c.cfg.URL != "" {
		t = &client.StreamableHTTP{URL: c.cfg.URL, Header: c.cfg.Header.Clone()}
	} else {
		cmd := exec.Command(c.cfg.Command[0], c.cfg.Command[1:]...)
		t = &client.Command{Cmd: cmd, Stderr: c.cfg.ServerLog}
	}
	return &tapped{Transport: t, rec: c.rec, session: session}
}

// run checks every revision of the configuration, one after the other:
// the walk, then (for a revision the server accepted) the probes.
func (c *checker) run(ctx context.Context) {
	defer func() { c.cut = ctx.Err() != nil }()
	for _, rev := range c.cfg.Revisions {
		if ctx.Err() != nil {
			c.statuses = append(c.statuses, rev+": not checked: --max-time")
			continue
		}
		if !c.revision(ctx, rev) || c.cfg.DryRun {
			continue
		}
		if spec := generated.Lookup(rev); c.cfg.URL != "" {
			c.probeHTTP(ctx, spec)
		} else {
			c.probeStdio(ctx, spec)
		}
	}
}

// revision checks the server under one revision: negotiate it, then walk
// what the server declares and call its tools; ok is false when the
// server did not accept the revision.
func (c *checker) revision(ctx context.Context, rev string) (ok bool) {
	session := "check " + rev
	// The client declares what a server may ask of it, and answers
	// harmlessly: no roots, every elicitation declined, no sampling.
	w := &walk{c: c, session: session, rev: generated.Lookup(rev)}
	cl := client.New("mcpstack-check", "1", client.WithProtocolVersion(rev),
		client.WithNotificationHandler(func(_ context.Context, method string, _ wire.Encoder) {
			switch method {
			case mcp.MethodToolListChanged:
				w.toolsChanged.Add(1)
				w.listsChanged.Add(1)
			case mcp.MethodResourceListChanged, mcp.MethodPromptListChanged:
				w.listsChanged.Add(1)
			}
		}),
		// The recording's validation reports what broke the protocol; a
		// result that did is not judged again (it may be half decoded).
		client.WithViolationHandler(func(*client.Violation) { w.violated.Store(true) }),
		client.WithLogHandler(func(context.Context, *mcp.LoggingMessageNotificationParams) {}),
		client.WithRoots(func(context.Context) ([]*mcp.Root, error) { return []*mcp.Root{}, nil }),
		client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}),
		client.WithSampling(func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return nil, wire.NewError(wire.CodeInvalidRequest, "mcpstack check does not sample")
		}))
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	s, err := cl.Connect(cctx, c.transport(session))
	cancel()
	if err != nil {
		c.statuses = append(c.statuses, fmt.Sprintf("%s: not negotiated: %v", rev, err))
		return false
	}
	defer s.Close()
	if got := s.Revision(); got != rev {
		c.statuses = append(c.statuses, fmt.Sprintf("%s: not accepted (the server answered %s)", rev, got))
		return false
	}
	c.ran++
	start := time.Now()
	before := len(c.findings)
	w.s = s
	err = w.run(ctx)
	status := fmt.Sprintf("%s: checked in %v, %d findings", rev, time.Since(start).Round(time.Millisecond), len(c.findings)-before)
	switch {
	case err != nil && !errors.Is(err, errAbort):
		status += " (" + err.Error() + ")"
	case ctx.Err() != nil:
		status += " (cut short: --max-time)"
	}
	c.statuses = append(c.statuses, status)
	return true
}

// walk is one revision's session and what was learnt of it.
type walk struct {
	c       *checker
	s       *client.Session
	session string
	rev     *protocol.Spec
	caps    *mcp.ServerCapabilities
	parent  context.Context // the check's: its end is no finding
	wait    *wait           // the request in flight's
	// violated is set when a message broke the protocol since the
	// request in flight was sent.
	violated atomic.Bool
	// toolsChanged counts notifications/tools/list_changed: a tool
	// refused after the list changed may just be gone; listsChanged
	// counts every list's, so that an item listed again while a list
	// changed is no loop.
	toolsChanged, listsChanged atomic.Int64
	listed                     int64 // toolsChanged when the tools were listed
}

// wait is a request's wait for its answer.
type wait struct {
	timer *time.Timer
	hung  atomic.Bool // the wait ran out
	done  atomic.Bool // the request is over: progress no longer counts
}

func (w *walk) run(ctx context.Context) error {
	w.parent = ctx
	w.caps = w.s.ServerCapabilities()
	if w.caps == nil {
		w.caps = &mcp.ServerCapabilities{}
	}
	steps := []func(context.Context) error{w.tools, w.resources, w.prompts, w.logging}
	if w.has(mcp.MethodPing) { // first, and last: the walk left the server answering
		steps = append(append([]func(context.Context) error{w.ping}, steps...), w.ping)
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("--max-time: %w", err)
		}
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// outcome classifies a request's error: nil and a JSON-RPC error are the
// step's to judge; no answer in time is a hang, a connection gone a
// crash (and the walk ends); a violation is the recording's to report.
func (w *walk) outcome(err error) (rpc *wire.Error, judged bool, abort error) {
	var we *wire.Error
	var v *client.Violation
	var he *client.HTTPError
	switch {
	case err == nil && w.violated.Load():
		return nil, true, nil // the answer broke the protocol: validate's to report
	case err == nil:
		return nil, false, nil
	case errors.As(err, &we) && we.Code == wire.CodeMissingRequiredClientCapability:
		return we, true, nil // what the check's client does not do (sampling): not the server's fault
	case errors.As(err, &v):
		return nil, true, nil
	case errors.As(err, &we):
		return we, false, nil
	case w.parent.Err() != nil:
		return nil, true, errAbort // --max-time or an interrupt: no finding
	case errors.Is(err, context.Canceled) && w.wait != nil && w.wait.hung.Load():
		w.c.find(ruleHang, w.session, "", fmt.Sprintf("no answer within %v", w.c.cfg.Timeout), "")
		return nil, true, nil
	case errors.Is(err, client.ErrSessionEnded):
		// A server MAY end a session (404): the walk ends, no finding.
		w.c.logf("%s: the server ended the session: the walk stops", w.session)
		return nil, true, errAbort
	case errors.Is(err, client.ErrClosed) || w.s.Err() != nil:
		w.c.find(ruleCrash, w.session, "", "the connection ended: "+err.Error(), "")
		return nil, true, errAbort
	case errors.As(err, &he) && he.Status >= 500:
		w.c.find(ruleCrash, w.session, "", fmt.Sprintf("answered HTTP %d and no JSON-RPC answer", he.Status), "")
		return nil, true, nil
	}
	return nil, false, nil // another failure (a transport error): the step says what it was
}

// has reports whether the revision has a request method: the walk asks
// only what the revision's table lists.
func (w *walk) has(method string) bool {
	_, ok := w.rev.Method(method)
	return ok
}

// ctx is a request's context: it ends after --timeout without a word
// from the server about the request. Each progress notification of the
// request starts the wait again: a long call that says how it goes is
// slow, not hung.
func (w *walk) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	wt := &wait{}
	wt.timer = time.AfterFunc(w.c.cfg.Timeout, func() {
		wt.hung.Store(true)
		cancel()
	})
	w.wait = wt
	w.violated.Store(false)
	ctx = client.WithProgress(ctx, func(*mcp.ProgressNotificationParams) {
		if !wt.done.Load() {
			wt.timer.Reset(w.c.cfg.Timeout)
		}
	})
	return ctx, func() {
		wt.done.Store(true)
		wt.timer.Stop()
		cancel()
	}
}

func (w *walk) ping(ctx context.Context) error {
	return w.request(ctx, rulePing, "ping", anyError, func(ctx context.Context) error {
		_, err := w.s.Ping(ctx, &mcp.RequestParams{})
		return err
	})
}

func (w *walk) logging(ctx context.Context) error {
	if w.caps.Logging == nil || !w.has(mcp.MethodSetLevel) {
		return nil
	}
	return w.request(ctx, ruleSetLevel, "logging/setLevel info", anyError, func(ctx context.Context) error {
		_, err := w.s.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevel("info")})
		return err
	})
}

func errText(we *wire.Error, err error) string {
	if we != nil {
		return fmt.Sprintf("error %d %q", we.Code, we.Message)
	}
	return err.Error()
}

// pages walks a list to its last page, with what each page gave (its
// items' keys and the next cursor); a cursor given twice, an item listed
// twice or more than --max-pages pages is a finding. ok is false when a
// page failed (the step has said why) or the walk must end.
func (w *walk) pages(ctx context.Context, method string, page func(ctx context.Context, cursor string) (keys []string, next string, err error)) (ok bool, abort error) {
	cursors := map[[sha256.Size]byte]bool{} // digests: a cursor may be megabytes, each page a new one
	keys := map[string]bool{}
	cursor := ""
	changes := w.listsChanged.Load()
	for n := 1; ; n++ {
		if n > w.c.cfg.MaxPages || len(keys) > maxKeys {
			w.c.find(ruleLongList, w.session, "/result/nextCursor", fmt.Sprintf("%s did not end within %d pages (--max-pages) or %d items", method, w.c.cfg.MaxPages, maxKeys), "")
			return true, nil
		}
		rctx, cancel := w.ctx(ctx)
		got, next, err := page(rctx, cursor)
		cancel()
		we, judged, abort := w.outcome(err)
		if abort != nil {
			return false, abort
		}
		if err != nil {
			if !judged {
				w.c.find(ruleList, w.session, "", fmt.Sprintf("%s (page %d) failed: %s", method, n, errText(we, err)), "")
			}
			return false, nil
		}
		for _, k := range got {
			if keys[k] && w.listsChanged.Load() == changes { // a list that changed may list an item again
				w.c.find(rulePagination, w.session, "/result", fmt.Sprintf("%s listed %q again on page %d", method, k, n), "")
				return true, nil
			}
			keys[k] = true
		}
		if next == "" {
			return true, nil
		}
		digest := sha256.Sum256([]byte(next))
		if cursors[digest] || next == cursor {
			w.c.find(rulePagination, w.session, "/result/nextCursor", fmt.Sprintf("%s gave the cursor %q again on page %d: the walk would loop", method, clip(next), n), "")
			return true, nil
		}
		cursors[digest] = true
		cursor = next
	}
}

// maxKeys bounds the items of one list the walk remembers.
const maxKeys = 100_000

// plain is v as encoding/json gives a JSON value (float64 numbers, maps).
func plain(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// clip shortens s for a finding, on a character boundary.
func clip(s string) string { return clipx.String(s, 80) }

// revisions is the revisions a check tries: those named, or every one.
func revisions(names []string) ([]string, error) {
	var all []string
	for _, s := range generated.Specs {
		all = append(all, s.Revision)
	}
	if len(names) == 0 {
		return all, nil
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("unknown revision %q (known: %s)", n, strings.Join(all, ", "))
		}
	}
	return names, nil
}
