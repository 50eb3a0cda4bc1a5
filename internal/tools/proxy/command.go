// Package proxy is `mcpstack proxy`: it sits between any MCP client and
// any server, passes every byte unchanged, records the messages in the
// recording format (mcpstack validate reads it) and, with --check,
// validates them as they flow, so that a CI pipeline can hold
// implementations nobody here wrote to the protocol.
package proxy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpstack/mcpstack/internal/tools/validate"
)

const usage = `Usage: mcpstack proxy [--record FILE] [--check] [--fail-on error|warning] [--redact NAMES] -- CMD ARGS...
       mcpstack proxy --upstream URL --http ADDR [--addr-file FILE] [--allow-remote]
                      [--body-timeout D] [--body-deadline D] [--body-memory MiB] [--record FILE] [--check] [--fail-on error|warning] [--redact NAMES]

Between an MCP client and a server, pass every byte unchanged and record
each message (with its direction, time and session) in the format mcpstack
validate reads; --check validates them as they go by and prints each
finding on stderr, then a summary at the end.

stdio: start CMD as the server; the client talks to this process's stdin
and stdout, the server's stderr passes through. A drop-in for a client's
server command, e.g. in Claude Desktop's config:
  "command": "mcpstack", "args": ["proxy", "--record", "f.jsonl", "--", "npx", "some-server"]
The -- may be left out when CMD follows the flags (flags stop at the first
word that is not one): under the MCP Inspector, whose parser eats --, run
  mcpstack proxy --record f.jsonl npx some-server

HTTP: a reverse proxy at ADDR for the Streamable HTTP (and HTTP+SSE)
server at URL: event streams pass through as they flow. Authorization and
cookies are never recorded; --redact masks the values of the JSON members
and headers it names, also inside strings that carry JSON (a tool's text
content carrying its result, JSON Lines, a JSON string literal), failing
closed: a string that names such a member ("name" between quotes, any
case, escapes undone) but does not read as JSON (text around JSON, a
fenced block) is masked whole. A member named "blob" at any depth (a
resource's base64 blob: resources/read, a resource embedded in a tool's
result) whose bytes are text, whatever its mimeType says, is decoded
(white space dropped), masked the same way and encoded again; one that is
not base64 is masked whole; binary blobs (images, audio, archives) are
recorded as they came. The live check sees
the masked recording too. The recording is created readable by its owner
only (0600; an existing one is narrowed to that).

The HTTP proxy has no authentication: it listens on loopback only (and
answers 403 to a request whose Host is not a loopback name or address,
against DNS rebinding) unless --allow-remote. It holds each POST body to
record it, taking memory as the bytes come (not as a Content-Length
claims; past 1 MiB by a quarter at a time, at least 1 MiB, so a body
holds at most a quarter or 1 MiB more than its bytes) and giving it back
once it is recorded and forwarded:
at most 32 MiB each, or --body-memory if less (else 413), and
--body-memory MiB together (else 503).
A request body that sends nothing for --body-timeout, or is not in whole
--body-deadline after its headers, is cut (408). Answers are held to be
recorded within as much memory again (each at most 64 MiB, or
--body-memory if less): one beyond
passes unrecorded, with a warning; a client that reads nothing of an
answer for --body-timeout is cut. With --allow-remote, one client (a
remote address: its IP, whatever the port) holds at most a quarter of
each budget, and one body or answer no more: past that its POST gets 503
with Retry-After at once and its answers pass unrecorded, while other
clients' still pass (on loopback every client is this machine, and
shares the whole). Headers must come within 10s; a kept-alive connection
idle for 2m is closed; answers and event streams stream for as long as
they go.

Over HTTP the recording keeps, with each message the client POSTs, the
facts of its exchange that the HTTP rules read: status, session, protocol
version, method and name headers, content types.

Exit status: the server's (stdio), 0 (HTTP, once interrupted); with
--fail-on, 1 when the check found errors (or warnings, too).

Afterwards: mcpstack validate FILE (--output text, json, github, junit or
html) judges the recording again, with every option of validate.

Flags:
`

// Command runs "mcpstack proxy" with the arguments after its name.
func Command(args []string, stdout, stderr io.Writer) int {
	// The server's stderr, the live findings and the summary share it,
	// from their own goroutines. A file (the terminal) is the server's
	// own, as without the proxy: exec copies anything else, through a
	// goroutine, which must take the lock too.
	serverErr := stderr
	stderr = &lockedWriter{w: stderr}
	if _, isFile := serverErr.(*os.File); !isFile {
		serverErr = stderr
	}
	fl := flag.NewFlagSet("proxy", flag.ContinueOnError)
	recordTo := fl.String("record", "", "append the messages to `FILE` (the recording format)")
	check := fl.Bool("check", false, "validate the messages as they go by; findings on stderr")
	failOn := fl.String("fail-on", "", "with --check, exit 1 when the check found an `error` (or a warning)")
	upstream := fl.String("upstream", "", "HTTP: the MCP server's `URL` (e.g. http://127.0.0.1:8000/mcp)")
	httpAddr := fl.String("http", "", "HTTP: listen at `ADDR` (e.g. 127.0.0.1:9000; port 0 picks a free one)")
	addrFile := fl.String("addr-file", "", "HTTP: write the bound host:port to `FILE` once listening")
	allowRemote := fl.Bool("allow-remote", false, "HTTP: listen on an address that is not loopback (the proxy has no authentication: whoever reaches it reaches the upstream, as if from this machine)")
	bodyTimeout := fl.Duration("body-timeout", defaultLimits.bodyIdle, "HTTP: cut a request body that sends nothing (408), or an answer the client reads nothing of, for this `duration`")
	bodyDeadline := fl.Duration("body-deadline", defaultLimits.bodyDeadline, "HTTP: cut (408) a request body not in whole this `duration` after its headers")
	bodyMemory := fl.Int("body-memory", int(defaultLimits.bodyMemory>>20), "HTTP: the POST bodies held to be recorded hold at most these `MiB` together (a POST beyond gets 503), and the answers as much again (one beyond passes unrecorded); with --allow-remote, one client (remote address) at most a quarter of each")
	redact := fl.String("redact", "", "mask in the recording the values of the JSON members and headers with these `NAMES` (comma-separated, any case), e.g. apiKey,password,Mcp-Session-Id (a session id becomes a digest)")
	fl.Usage = func() { fmt.Fprint(fl.Output(), usage); fl.PrintDefaults() }
	fl.SetOutput(io.Discard) // parse errors are reported below, once
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			fl.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "mcpstack proxy: %v\nRun 'mcpstack proxy --help' for usage.\n", err)
		return 2
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var sev validate.Severity
	switch *failOn {
	case "":
	case "error":
		sev = validate.Error
	case "warning":
		sev = validate.Warning
	default:
		fmt.Fprintf(stderr, "mcpstack proxy: --fail-on must be error or warning, not %q\n", *failOn)
		return 2
	}
	if sev != "" && !*check {
		fmt.Fprintln(stderr, "mcpstack proxy: --fail-on needs --check")
		return 2
	}
	var w io.Writer
	if *recordTo != "" {
		f, err := openRecording(*recordTo)
		if err != nil {
			fmt.Fprintln(stderr, "mcpstack proxy: --record:", err)
			return 2
		}
		defer f.Close()
		w = f
	}
	var names []string
	for _, n := range strings.Split(*redact, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	t, err := newTap(w, *check, stderr, names...)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack proxy:", err)
		return 2
	}
	var code int
	switch {
	case *upstream != "" || *httpAddr != "":
		if *upstream == "" || *httpAddr == "" || fl.NArg() > 0 {
			fmt.Fprintln(stderr, "mcpstack proxy: HTTP takes --upstream URL and --http ADDR, and no command")
			return 2
		}
		if *bodyTimeout <= 0 || *bodyDeadline <= 0 || *bodyMemory <= 0 || *bodyMemory > 1<<20 {
			fmt.Fprintln(stderr, "mcpstack proxy: --body-timeout and --body-deadline must be positive, --body-memory from 1 to 1048576 (MiB)")
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		code = serveHTTP(ctx, httpConfig{upstream: *upstream, addr: *httpAddr, addrFile: *addrFile, allowRemote: *allowRemote,
			limits: httpLimits{bodyIdle: *bodyTimeout, bodyDeadline: *bodyDeadline, bodyMemory: int64(*bodyMemory) << 20, shareOf: shareFor(*httpAddr)}}, t, stderr)
	case *addrFile != "" || *allowRemote || set["body-timeout"] || set["body-deadline"] || set["body-memory"]:
		fmt.Fprintln(stderr, "mcpstack proxy: --addr-file, --allow-remote, --body-timeout, --body-deadline and --body-memory are for HTTP (--upstream and --http)")
		return 2
	case fl.NArg() == 0:
		fmt.Fprint(stderr, "mcpstack proxy: give the server command after --, or --upstream and --http\n")
		return 2
	default:
		code = runStdio(fl.Args(), os.Stdin, stdout, stderr, serverErr, t)
	}
	rep, err := t.end()
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack proxy: recording:", err)
		if code == 0 {
			code = 1
		}
	}
	if rep != nil {
		fmt.Fprintln(stderr, "mcpstack proxy:", validate.Summary(rep))
		if sev != "" && rep.Failed(sev) && code == 0 {
			code = 1
		}
	}
	return code
}

// openRecording opens path for appending. A recording holds what users
// and servers said (arguments, results, perhaps secrets --redact did not
// name), so, as serve's, it is readable by its owner only: created 0600,
// and an existing file open to others is narrowed to 0600 rather than
// refused, as serve narrows its own: appending to one's own file is what
// was asked, and the narrowing takes nothing from its owner.
func openRecording(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("narrowing %s to 0600: %w", path, err)
	}
	return f, nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
