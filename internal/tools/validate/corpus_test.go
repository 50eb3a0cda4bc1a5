package validate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/logs")

// A corpus case is a log under testdata/logs: a file X.jsonl,
// X.jsonl.gz or X.har (golden X.har.golden), or a folder X.pair holding client.jsonl and server.jsonl (a
// stdio pair). X.golden next to it holds what `mcpstack validate` prints
// for it, then its exit status; X.args, when present, extra flags, one per
// line. Cases under valid/ must have no findings at all; each folder
// invalid/RULE holds cases on which rule RULE fires.
type corpusCase struct {
	name string   // path relative to the corpus, without extension
	args []string // the command line, relative to the corpus
}

func corpusCases(t *testing.T) []corpusCase {
	t.Helper()
	var out []corpusCase
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, p)
		rel = filepath.ToSlash(rel)
		var c corpusCase
		switch {
		case d.IsDir() && strings.HasSuffix(rel, ".pair"):
			c.name = strings.TrimSuffix(rel, ".pair")
			c.args = []string{"--client-log", rel + "/client.jsonl", "--server-log", rel + "/server.jsonl"}
		case d.IsDir() || strings.Contains(rel, ".pair/"):
			return nil
		case strings.HasSuffix(rel, ".jsonl"), strings.HasSuffix(rel, ".jsonl.gz"):
			c.name = strings.TrimSuffix(strings.TrimSuffix(rel, ".gz"), ".jsonl")
			c.args = []string{rel}
		case strings.HasSuffix(rel, ".har"):
			c.name = strings.TrimSuffix(rel, ".har") + ".har"
			c.args = []string{rel}
		default:
			return nil
		}
		if b, err := os.ReadFile(filepath.Join(corpusDir, c.name+".args")); err == nil {
			var extra []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					extra = append(extra, l)
				}
			}
			c.args = append(extra, c.args...)
		}
		out = append(out, c)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no corpus under %s", corpusDir)
	}
	return out
}

// runCommand runs `mcpstack validate` in the corpus folder, so that
// findings name files relative to it.
func runCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Command(append([]string{"--workers", "2"}, args...), &stdout, &stderr)
	if stderr.Len() > 0 && code != 2 {
		t.Errorf("validate %v: stderr: %s", args, stderr.String())
	}
	return stdout.String() + stderr.String(), code
}

// TestCorpus checks every log of the corpus against its golden file
// (go test -run TestCorpus -update rewrites them).
func TestCorpus(t *testing.T) {
	cases := corpusCases(t)
	t.Chdir(corpusDir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runCommand(t, c.args...)
			got := fmt.Sprintf("%sexit status: %d\n", out, code)
			golden := c.name + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestCorpus -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("validate %s:\n--- got\n%s--- want\n%s", strings.Join(c.args, " "), got, want)
			}
			if strings.HasPrefix(c.name, "valid/") && (code != 0 || !strings.Contains(out, ": valid\n")) {
				t.Errorf("a valid log has findings:\n%s", out)
			}
			if rule, ok := strings.CutPrefix(c.name, "invalid/"); ok {
				rule, _, _ = strings.Cut(rule, "/")
				if !strings.Contains(out, "["+rule+"]") {
					t.Errorf("rule %s does not fire on its case:\n%s", rule, out)
				}
			}
		})
	}
}

var findingRule = regexp.MustCompile(`^\S+:\d+: (?:error|warning) \[([a-z-]+)\]`)

// TestCorpusCoversRules: every rule has an invalid case, and every
// revision a valid one.
func TestCorpusCoversRules(t *testing.T) {
	cases := corpusCases(t)
	fired := map[string]bool{}
	valid := map[string]bool{}
	for _, c := range cases {
		if rev, ok := strings.CutPrefix(c.name, "valid/"); ok {
			rev, _, _ = strings.Cut(rev, "/")
			valid[rev] = true
		}
		b, err := os.ReadFile(filepath.Join(corpusDir, c.name+".golden"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if m := findingRule.FindStringSubmatch(l); m != nil && strings.HasPrefix(c.name, "invalid/"+m[1]+"/") {
				fired[m[1]] = true
			}
		}
	}
	var missing []string
	for _, r := range Rules {
		if !fired[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	for _, rev := range revisionNames() {
		if !valid[rev] {
			missing = append(missing, "valid/"+rev)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the corpus lacks cases for: %s", strings.Join(missing, ", "))
	}
}
