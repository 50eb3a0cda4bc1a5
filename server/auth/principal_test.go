package auth_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/server/auth"
)

// TestOwnerKeys holds the keys stored records are filed under: those of
// ordinary principals never change (a change would orphan every stored
// session, task and conversation), and those a '#' would have made
// ambiguous are told apart.
func TestOwnerKeys(t *testing.T) {
	for _, tc := range []struct {
		iss, sub, want string
	}{
		{"", "alice", "alice"},
		{"https://as.example", "alice", "https://as.example#alice"},
		{"https://as.example", "a#b", "https://as.example#a#b"},
		{"", "a#b", "##a%23b"},
		{"a", "b", "a#b"},
		{"a#b", "c", "#a%23b#c"},
		{"a", "b#c", "a#b#c"},
		{"", "%23", "%23"},
		{"#", "x", "#%23#x"},
	} {
		p := &auth.Principal{Issuer: tc.iss, Subject: tc.sub}
		if got := p.Owner(); got != tc.want {
			t.Errorf("{iss %q, sub %q}: owner %q, want %q", tc.iss, tc.sub, got, tc.want)
		}
	}
}

// FuzzOwner holds Owner to one key per principal: two principals that
// differ in issuer or subject never share one.
func FuzzOwner(f *testing.F) {
	f.Add("a", "b", "", "a#b")
	f.Add("a#b", "c", "a", "b#c")
	f.Add("#", "x", "", "#%23#x")
	f.Add("", "##a%23b", "", "#a#b")
	f.Fuzz(func(t *testing.T, iss1, sub1, iss2, sub2 string) {
		if sub1 == "" || sub2 == "" || iss1 == iss2 && sub1 == sub2 {
			return // a verified principal always has a subject
		}
		p1, p2 := &auth.Principal{Issuer: iss1, Subject: sub1}, &auth.Principal{Issuer: iss2, Subject: sub2}
		if p1.Owner() == p2.Owner() {
			t.Fatalf("{iss %q, sub %q} and {iss %q, sub %q} share the owner %q", iss1, sub1, iss2, sub2, p1.Owner())
		}
	})
}
