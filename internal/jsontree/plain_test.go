package jsontree

import "testing"

// FuzzPlainRun holds the 8-bytes-at-once scan to the byte-by-byte rule.
func FuzzPlainRun(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefghi\"", "tools/call", "0123456\\89", "abcdefg\x1f", "abcdefgh\x80", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f!", "        #"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s)
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				want = i
				break
			}
		}
		if got := plainRun(s); got != want {
			t.Errorf("plainRun(%q) = %d, want %d", s, got, want)
		}
		if len(s) >= 8 {
			if got, want := plainWord(s[:8]), want >= 8; got != want {
				t.Errorf("plainWord(%q) = %v, want %v", s[:8], got, want)
			}
		}
	})
}
