package pgdb

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzSchemaName holds validSchemaName to the rule as a regexp.
func FuzzSchemaName(f *testing.F) {
	rule := regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	for _, s := range []string{"", "mcp", "_x9", "9x", "Mcp", "a-b", "a b", "é", strings.Repeat("a", 63), strings.Repeat("a", 64), "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validSchemaName(s), rule.MatchString(s); got != want {
			t.Fatalf("validSchemaName(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
