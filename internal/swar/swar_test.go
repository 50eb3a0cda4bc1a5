package swar

import "testing"

// FuzzWord holds High, Below and Has to the byte-by-byte answers.
func FuzzWord(f *testing.F) {
	f.Add("abcdefgh", byte(0x21), byte('"'))
	f.Add("a\x00\xff\x80 =\"\\", byte(0x20), byte('='))
	f.Add("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", byte(0x80), byte(0x7f))
	f.Fuzz(func(t *testing.T, s string, n, c byte) {
		if len(s) < 8 || n > 0x80 {
			return
		}
		w := Word(s)
		var high, below, has bool
		for i := 0; i < 8; i++ {
			high = high || s[i] >= 0x80
			below = below || s[i] < n
			has = has || s[i] == c
		}
		if (High(w) != 0) != high || (Below(w, n) != 0) != below || (Has(w, c) != 0) != has {
			t.Errorf("%q, n %#x, c %#x: High %v Below %v Has %v, want %v %v %v", s[:8], n, c, High(w) != 0, Below(w, n) != 0, Has(w, c) != 0, high, below, has)
		}
	})
}
