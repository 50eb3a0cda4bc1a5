// Package clientcmd is `mcpstack client`: one request to an MCP server,
// with every message the server sends checked against the protocol.
package clientcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Exit codes.
const (
	exitOK        = 0
	exitRPCError  = 1 // a JSON-RPC error, or no connection
	exitUsage     = 2
	exitViolation = 3 // the server broke the protocol
	exitToolError = 4 // tools/call answered a result with isError: true
)

const usage = `Usage: mcpstack client URL [flags]
       mcpstack client [flags] -- CMD ARGS...

Connect to an MCP server, send one request, print its result as JSON on
stdout. Every message the server sends is checked against the schema of the
negotiated revision; each violation is printed on stderr with its rule and
JSON pointer (the first 100; the rest are counted). Exit status: 0 success,
1 a JSON-RPC error (or no connection), 2 usage, 3 the server broke the
protocol, 4 the tool reported an error (a tools/call result with isError:
true, printed as any result).

Examples:
  mcpstack client http://127.0.0.1:8000/mcp --token "$TOKEN"
  mcpstack client http://127.0.0.1:8000/mcp --method tools/call --tool chat --arg query=hello
  mcpstack client http://127.0.0.1:8000/sse --transport sse --method resources/list
  mcpstack client http://127.0.0.1:8000/mcp --method tools/call --tool chat --arg query=hello --task
  mcpstack client --method prompts/get --prompt code_review --arg code='x := 1' -- mcpstack serve --stdio
  mcpstack client ws://127.0.0.1:8000/mcp/ws --method completion/complete --args '{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"g"}}'

Flags:
`

type config struct {
	method, tool, uri, prompt string
	args                      string
	kv                        multi
	headers                   multi
	token                     string
	proto                     string
	transport                 string
	timeout                   time.Duration
	task                      bool
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ", ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// Command runs `mcpstack client`.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("client", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var c config
	fl.StringVar(&c.method, "method", "tools/list", "the request to send")
	fl.StringVar(&c.tool, "tool", "", "tools/call: the tool `NAME`")
	fl.StringVar(&c.uri, "uri", "", "resources/read, resources/subscribe: the resource `URI`")
	fl.StringVar(&c.prompt, "prompt", "", "prompts/get: the prompt `NAME`")
	fl.Var(&c.kv, "arg", "an argument `k=v` of tools/call (v as JSON where it parses) or prompts/get; repeatable")
	fl.StringVar(&c.args, "args", "", "tools/call: the arguments as a JSON object; any other method: its params")
	fl.Var(&c.headers, "header", "an HTTP header `K: V` for every request; repeatable")
	fl.StringVar(&c.token, "token", "", "a bearer `TOKEN` (default: $MCPSTACK_TOKEN)")
	fl.StringVar(&c.proto, "proto", "", "the protocol `REVISION` to ask for (default: the newest with sessions; "+strings.Join(revisions(), ", ")+")")
	fl.StringVar(&c.transport, "transport", "", "http, sse, ws or stdio (default: ws for ws:// URLs, stdio after --, else http)")
	fl.DurationVar(&c.timeout, "timeout", 30*time.Second, "bound on connecting and the request")
	fl.BoolVar(&c.task, "task", false, "tools/call: run the call as a task (2025-11-25) and wait for its result (tasks/result)")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fl.SetOutput(stdout)
			fl.Usage()
			return exitOK
		}
	}
	// The URL may come first: flags after it are flags too.
	var url string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		url, args = args[0], args[1:]
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpstack client: unexpected arguments %q\n", fl.Args())
		return exitUsage
	}
	t, err := c.open(url, command, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack client:", err)
		return exitUsage
	}
	params, err := c.params()
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack client:", err)
		return exitUsage
	}
	return c.run(t, params, stdout, stderr)
}

func revisions() []string {
	var out []string
	for _, s := range generated.Specs {
		out = append(out, s.Revision)
	}
	return out
}

// open picks the transport.
func (c *config) open(url string, command []string, stderr io.Writer) (client.Transport, error) {
	header := http.Header{}
	for _, h := range c.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q is not K: V", h)
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	token := c.token
	if token == "" {
		token = os.Getenv("MCPSTACK_TOKEN")
	}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	kind := c.transport
	switch {
	case kind != "":
	case len(command) > 0:
		kind = "stdio"
	case strings.HasPrefix(url, "ws://"), strings.HasPrefix(url, "wss://"):
		kind = "ws"
	default:
		kind = "http"
	}
	if kind == "stdio" {
		if len(command) == 0 || url != "" {
			return nil, errors.New("stdio: give the server's command after --, and no URL")
		}
		return &client.Command{Cmd: exec.Command(command[0], command[1:]...), Stderr: stderr}, nil
	}
	if url == "" || len(command) > 0 {
		return nil, errors.New("give the server's URL (or, for stdio, its command after --)")
	}
	switch kind {
	case "http":
		return &client.StreamableHTTP{URL: url, Header: header, NoListen: true}, nil
	case "sse":
		return &client.SSE{URL: url, Header: header}, nil
	case "ws":
		return &client.WebSocket{URL: url, Header: header}, nil
	}
	return nil, fmt.Errorf("--transport must be http, sse, ws or stdio, not %q", kind)
}

// params builds the request's params tree from the flags.
func (c *config) params() (map[string]any, error) {
	var args map[string]any
	if c.args != "" {
		tree, err := jsontree.Parse([]byte(c.args))
		if err != nil {
			return nil, fmt.Errorf("--args: %w", err)
		}
		obj, ok := tree.(map[string]any)
		if !ok {
			return nil, errors.New("--args must be a JSON object")
		}
		args = obj
	}
	kv := map[string]any{}
	for _, a := range c.kv {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q is not k=v", a)
		}
		kv[k] = v
		if c.method == mcp.MethodCallTool {
			if tree, err := jsontree.Parse([]byte(v)); err == nil {
				kv[k] = tree // a number, a boolean, an object...
			}
		}
	}
	switch c.method {
	case mcp.MethodCallTool:
		if c.tool == "" {
			return nil, errors.New("tools/call needs --tool")
		}
		if args == nil {
			args = map[string]any{}
		}
		for k, v := range kv {
			args[k] = v
		}
		return map[string]any{"name": c.tool, "arguments": args}, nil
	case mcp.MethodGetPrompt:
		if c.prompt == "" {
			return nil, errors.New("prompts/get needs --prompt")
		}
		return map[string]any{"name": c.prompt, "arguments": kv}, nil
	case mcp.MethodReadResource, mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		if c.uri == "" {
			return nil, fmt.Errorf("%s needs --uri", c.method)
		}
		return map[string]any{"uri": c.uri}, nil
	}
	if len(kv) > 0 {
		return nil, fmt.Errorf("--arg is for tools/call and prompts/get; %s takes --args", c.method)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// run connects, sends the request, and prints.
func (c *config) run(t client.Transport, params map[string]any, stdout, stderr io.Writer) int {
	var violations violationLog
	opts := []client.Option{client.WithViolationHandler(violations.add)}
	if c.proto != "" {
		opts = append(opts, client.WithProtocolVersion(c.proto))
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	code := exitOK
	s, err := client.New("mcpstack-client", "dev", opts...).Connect(ctx, t)
	if err == nil {
		code = c.request(ctx, s, params, stdout, stderr)
		s.Close()
	} else {
		fmt.Fprintln(stderr, "mcpstack client:", err)
		code = exitRPCError
	}
	n := violations.print(stderr)
	var v *client.Violation
	if n > 0 || errors.As(err, &v) {
		return exitViolation
	}
	return code
}

// maxViolations is how many violations a run keeps to print; the rest are
// counted. A hostile server can send violations as fast as it can write
// until the timeout, and each is kept until the end.
const maxViolations = 100

// violationLog keeps the first maxViolations violations of a run (each
// cut to client.MaxExcerpt by the client) and counts the others, so that
// what a run keeps is bounded whatever the server sends.
type violationLog struct {
	mu      sync.Mutex
	kept    []*client.Violation
	dropped int
}

func (l *violationLog) add(v *client.Violation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.kept) < maxViolations {
		l.kept = append(l.kept, v)
	} else {
		l.dropped++
	}
}

// oneLine is s as it prints on one line: quoted, escapes and all, when it
// holds a line break or another control character. What a server sends
// (a method name, a value in a reason) must not write lines of its own
// into a log that a CI system reads for commands.
func oneLine(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}

// print writes the violations kept, one a line, and how many more there
// were; it returns how many there were in all.
func (l *violationLog) print(w io.Writer) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.kept {
		at := v.Pointer
		if at == "" {
			at = "/"
		}
		fmt.Fprintf(w, "violation [%s] %s at %s: %s\n", v.Rule, oneLine(v.Method), oneLine(at), oneLine(v.Reason))
	}
	if l.dropped > 0 {
		fmt.Fprintf(w, "violation: and %d more (only the first %d are kept)\n", l.dropped, maxViolations)
	}
	return len(l.kept) + l.dropped
}

func (c *config) request(ctx context.Context, s *client.Session, params map[string]any, stdout, stderr io.Writer) int {
	spec := generated.Lookup(s.Revision())
	var p wire.Encoder
	if len(params) > 0 || c.method != mcp.MethodPing {
		decoded, err := mcp.DecodeParams(c.method, params, spec.Index)
		if err != nil && !errors.Is(err, wire.ErrMethodNotFound) {
			fmt.Fprintf(stderr, "mcpstack client: the params of %s: %v\n", c.method, err)
			return exitUsage
		}
		p = decoded
	}
	var res wire.Encoder
	var err error
	if c.task {
		res, err = c.runTask(ctx, s, p, stderr)
	} else {
		res, err = s.Request(ctx, c.method, p)
	}
	var we *wire.Error
	var v *client.Violation
	switch {
	case errors.As(err, &v):
		return exitViolation // printed with the others
	case errors.As(err, &we):
		b, _ := json.Marshal(map[string]any{"code": we.Code, "message": we.Message, "data": we.Data})
		fmt.Fprintf(stderr, "mcpstack client: %s: JSON-RPC error %s\n", c.method, b)
		return exitRPCError
	case err != nil:
		fmt.Fprintf(stderr, "mcpstack client: %s: %v\n", c.method, err)
		return exitRPCError
	}
	tree := spec.Project(res)
	b, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack client:", err)
		return exitRPCError
	}
	fmt.Fprintf(stdout, "%s\n", b)
	if m, _ := tree.(map[string]any); m["isError"] == true {
		fmt.Fprintf(stderr, "mcpstack client: tool %q reported an error (isError: true)\n", c.tool)
		return exitToolError
	}
	return exitOK
}

// runTask starts a tools/call as a task and waits for its result.
func (c *config) runTask(ctx context.Context, s *client.Session, p wire.Encoder, stderr io.Writer) (wire.Encoder, error) {
	params, ok := p.(*mcp.CallToolRequestParams)
	if !ok || c.method != mcp.MethodCallTool {
		return nil, errors.New("--task is for tools/call")
	}
	task, err := s.StartTool(ctx, params, 0)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "mcpstack client: task %s %s\n", task.TaskID, task.Status)
	return s.ToolResult(ctx, task.TaskID)
}
