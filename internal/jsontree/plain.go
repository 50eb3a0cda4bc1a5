package jsontree

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
func plainWord(s string) bool {
	_ = s[7]
	return plainBits(uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56)
}

// plainBits is plainWord of the 8 bytes of w, the first in its low byte.
func plainBits(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte of w below 0x20, or equal to '"' or '\\' (a zero byte of w^c:
	// below 1); (v - ones*n) &^ v & highs finds a byte of v below n <= 128.
	return w&highs|(w-ones*0x20)&^w&highs|(w^(ones*'"')-ones)&^(w^(ones*'"'))&highs|(w^(ones*'\\')-ones)&^(w^(ones*'\\'))&highs == 0
}
