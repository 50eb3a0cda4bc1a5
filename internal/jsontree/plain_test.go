package jsontree

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzPlainRun holds the 8-bytes-at-once scan to the byte-by-byte rule.
func FuzzPlainRun(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefghi\"", "tools/call", "0123456\\89", "abcdefg\x1f", "abcdefgh\x80", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f!", "        #", "ab\u2028cdefgh", "abc\xffdefgh", "\x80bcdefgh", "abcdefg\x1fij", "abcd\"fghij", "abc\\efghij"} {
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

// TestParsePlainStrings: strings of every length around the 8-byte step,
// with a byte the scan must stop at in every place, parse as encoding/json
// parses them (a control character is refused by both).
func TestParsePlainStrings(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for at := -1; at < n; at++ {
			for _, c := range []string{`\"`, `\\`, `\n`, "é", "\u2028", "\xff", "\x01"} {
				b := []byte(`["`)
				for i := 0; i < n; i++ {
					if i == at {
						b = append(b, c...)
					} else {
						b = append(b, 'a'+byte(i%26))
					}
				}
				b = append(b, `"]`...)
				got, err := Parse(b)
				var back []any
				jerr := json.Unmarshal(b, &back)
				if (err == nil) != (jerr == nil) {
					t.Fatalf("%q: Parse error %v, encoding/json error %v", b, err, jerr)
				}
				if err == nil && !reflect.DeepEqual(got, back) {
					t.Errorf("%q parsed to %q, encoding/json to %q", b, got, back)
				}
			}
		}
	}
}
