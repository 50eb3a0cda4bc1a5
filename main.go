// Command mcpstack is the one binary of the project: an MCP server whose
// protocol layer is generated from JSON Schema, and the tools around it.
//
//	mcpstack serve [--http ADDR | --stdio] [--profile chat|conformance|bench]
//	mcpstack client URL [--method M ...] | mcpstack client [flags] -- CMD ARGS
//	mcpstack token --sub NAME --scope "..."
//	mcpstack bench --url URL | --stdio "CMD ARGS"
//	mcpstack validate [--output text|json|github|junit] LOG...
//	mcpstack check [flags] URL | mcpstack check [flags] -- CMD ARGS
//	mcpstack schemadiff --official FILE --revision REV
//	mcpstack version
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/internal/generated"
	benchtool "github.com/mcpstack/mcpstack/internal/tools/bench"
	"github.com/mcpstack/mcpstack/internal/tools/check"
	"github.com/mcpstack/mcpstack/internal/tools/clientcmd"
	"github.com/mcpstack/mcpstack/internal/tools/proxy"
	"github.com/mcpstack/mcpstack/internal/tools/revision"
	"github.com/mcpstack/mcpstack/internal/tools/schemadiff"
	"github.com/mcpstack/mcpstack/internal/tools/token"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
)

// command is one subcommand: it gets the arguments after its name and
// returns the exit code.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"bench":      {"load an MCP server (HTTP URL or stdio command): calls/s, latency, errors", benchtool.Command},
		"check":      {"test a live MCP server against the schemas of every revision it accepts: lists, resources, prompts, its tools with arguments made from their schemas, the transport", check.Command},
		"client":     {"send one request to an MCP server and check everything it answers against the protocol", clientcmd.Command},
		"proxy":      {"record and check the messages between any MCP client and server (stdio or HTTP)", proxy.Command},
		"revision":   {"start adopting a new MCP revision: revision new REV copies the newest schemas to schema/REV", revision.Command},
		"schemadiff": {"compare our schemas of a revision with an official schema.json, or two of ours (--from, --to)", schemadiff.Command},
		"serve":      {"serve MCP over Streamable HTTP, HTTP+SSE, WebSocket or stdio", serveCommand},
		"token":      {"mint an HS256 bearer token for serve --auth hs256", token.Command},
		"validate":   {"check MCP message logs (recordings, stdio captures) against the protocol", validate.Command},
		"version":    {"print the version and the supported MCP revisions", version},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 2 && args[0] == "help" {
		c, ok := cmds[args[1]]
		if !ok {
			fmt.Fprintf(stderr, "mcpstack: unknown command %q\n\n", args[1])
			usage(stderr, cmds)
			return 2
		}
		return c.run([]string{"--help"}, stdout, stderr) // mcpstack help serve: serve --help
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mcpstack: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: mcpstack COMMAND [flags]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'mcpstack COMMAND --help' for the flags of a command.")
}

func version(args []string, stdout, stderr io.Writer) int {
	const usage = "Usage: mcpstack version\n\nPrint the version of mcpstack and the MCP revisions it supports.\n"
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "version: unexpected arguments %q\n%s", args, usage)
		return 2
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	var revs []string
	for _, s := range generated.Specs {
		revs = append(revs, s.Revision)
	}
	fmt.Fprintf(stdout, "mcpstack %s\nMCP revisions: %s\n", v, strings.Join(revs, ", "))
	return 0
}
