// Package swar tests 8 bytes at once in a uint64 ("SIMD within a
// register"): the scans of JSON strings (jsontree) and of log values
// (logfmt) look for the few bytes that need care, and most of what they
// scan is plain ASCII.
package swar

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Word is the 8 bytes of s from s[0], s[0] in the low byte (s has at
// least 8: []byte callers use binary.LittleEndian.Uint64).
func Word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// High is non-zero when a byte of w is 0x80 or above (a byte of a
// multi-byte character, or invalid UTF-8).
func High(w uint64) uint64 { return w & highs }

// Below is non-zero when a byte of w is below n (n at most 0x80): exact
// for that question, since a borrow starts only at a byte below n.
func Below(w uint64, n byte) uint64 { return (w - ones*uint64(n)) &^ w & highs }

// Has is non-zero when a byte of w is c.
func Has(w uint64, c byte) uint64 { return Below(w^(ones*uint64(c)), 1) }
