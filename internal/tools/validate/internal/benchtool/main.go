// Command benchtool is what internal/tools/validate/bench.sh runs: "gen" writes a
// synthetic recorded log, "validate" is `mcpstack validate` (the same
// Command), built on its own so the benchmark does not depend on the main
// binary's wiring.
//
//	benchtool gen -size 100MB -o FILE
//	benchtool validate [flags] LOG...
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/internal/tools/validate/internal/loggen"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchtool gen|validate ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "gen":
		os.Exit(gen(os.Args[2:], os.Stdout, os.Stderr))
	case "validate":
		os.Exit(validate.Command(os.Args[2:], os.Stdout, os.Stderr))
	}
	fmt.Fprintf(os.Stderr, "benchtool: unknown command %q\n", os.Args[1])
	os.Exit(2)
}

func gen(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	size := fl.String("size", "100MB", "about this many bytes (KB, MB, GB suffixes)")
	out := fl.String("o", "-", "output file")
	seed := fl.Uint64("seed", 1, "seed")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(stderr, "benchtool gen:", err)
		return 2
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(stderr, "benchtool gen:", err)
			return 2
		}
		defer f.Close()
		w = f
	}
	st, err := loggen.Write(w, loggen.Options{Size: n, Seed: *seed})
	if err != nil {
		fmt.Fprintln(stderr, "benchtool gen:", err)
		return 1
	}
	fmt.Fprintf(stderr, "benchtool gen: %d bytes, %d lines, %d sessions\n", st.Bytes, st.Lines, st.Sessions)
	return 0
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if strings.HasSuffix(strings.ToUpper(s), u.suffix) {
			mult, s = u.m, s[:len(s)-len(u.suffix)]
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
