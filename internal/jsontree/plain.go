package jsontree

import "github.com/mcpstack/mcpstack/internal/swar"

// plainRun returns how many bytes at the start of s are JSON string text
// that needs neither an escape nor UTF-8 decoding: printable ASCII other
// than '"' and '\\'. Most of a message's strings are all of it, so the
// bytes are tested 8 at a time (plainWord).
func plainRun(s string) int {
	i := 0
	for i+8 <= len(s) && plainWord(s[i:i+8]) {
		i += 8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// plainWord reports whether none of the 8 bytes of s is at or above 0x80,
// below 0x20, or '"' or '\\'.
func plainWord(s string) bool { return plainBits(swar.Word(s)) }

// plainBits is plainWord of the 8 bytes of w, the first in its low byte.
func plainBits(w uint64) bool {
	return swar.High(w)|swar.Below(w, 0x20)|swar.Has(w, '"')|swar.Has(w, '\\') == 0
}
