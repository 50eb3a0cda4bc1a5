// Package token is `mcpstack token`: it mints the HS256 bearer tokens that
// `mcpstack serve --auth hs256` accepts, signed with the same secret.
package token

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/authtoken"
)

// Exit codes of Command.
const (
	ExitOK    = 0
	ExitError = 1 // signing failed
	ExitUsage = 2 // usage error, or no usable secret
)

const usage = `Usage: mcpstack token --sub NAME [--scope "a b"] [--ttl 24h] [--secret-file FILE] [--aud URL] [--iss NAME]

Print an HS256 JWT for a server run with --auth hs256. The secret is read
from --secret-file, else $MCPSTACK_AUTH_SECRET_FILE, else
$MCPSTACK_AUTH_SECRET: the same one the server uses. It must be at least
32 bytes; make one with

  head -c 32 /dev/urandom | base64 > secret && chmod 600 secret

Examples:
  export MCPSTACK_AUTH_SECRET="$(cat secret)"
  TOKEN=$(mcpstack token --sub alice --scope "mcp conversations:write")
  curl -H "Authorization: Bearer $TOKEN" ... http://127.0.0.1:8000/mcp

A server with --auth-audience or --auth-issuer only accepts tokens with
the same --aud or --iss.

Flags:
`

// Command runs "mcpstack token" with the arguments that follow the
// subcommand name, and returns the process exit code.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("token", flag.ContinueOnError)
	fl.SetOutput(stderr)
	sub := fl.String("sub", "", "the subject: who the token speaks for (required)")
	var scopes []string
	fl.Func("scope", "`scopes`, space-separated; may be repeated", func(s string) error {
		scopes = append(scopes, strings.Fields(s)...)
		return nil
	})
	ttl := fl.Duration("ttl", 24*time.Hour, "how long the token is valid")
	secretFile := fl.String("secret-file", "", "read the secret from `FILE` (default: $MCPSTACK_AUTH_SECRET_FILE, then $"+authtoken.EnvSecret+")")
	var aud []string
	fl.Func("aud", "audience `URL`: the server's --auth-audience; may be repeated", func(s string) error {
		aud = append(aud, s)
		return nil
	})
	iss := fl.String("iss", "", "issuer `NAME`: the server's --auth-issuer")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	if wantsHelp(args) { // the usage goes to stdout, once
		fl.SetOutput(stdout)
		fl.Usage()
		return ExitOK
	}
	if err := fl.Parse(args); err != nil {
		return ExitUsage // flag has printed the error and the usage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpstack token: unexpected argument %q\n", fl.Arg(0))
		return ExitUsage
	}
	if *sub == "" {
		fmt.Fprintln(stderr, "mcpstack token: --sub is required (who the token speaks for)")
		return ExitUsage
	}
	if *ttl <= 0 {
		fmt.Fprintf(stderr, "mcpstack token: --ttl must be positive, not %s\n", *ttl)
		return ExitUsage
	}
	file := *secretFile
	if file == "" {
		file = os.Getenv("MCPSTACK_AUTH_SECRET_FILE")
	}
	secret, err := authtoken.LoadSecret(file)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack token:", err)
		return ExitUsage
	}
	tok, err := authtoken.MintHS256(secret, authtoken.Mint{Subject: *sub, Scopes: scopes, Audience: aud, Issuer: *iss, TTL: *ttl})
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack token:", err)
		return ExitError
	}
	fmt.Fprintln(stdout, tok)
	return ExitOK
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "-h=true", "--help=true":
			return true
		}
	}
	return false
}
