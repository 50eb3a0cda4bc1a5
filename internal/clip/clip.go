// Package clip cuts what a client or a peer wrote to the length a log line
// or a span keeps of it.
package clip

import "unicode/utf8"

// String cuts s to at most max bytes at a rune boundary, marked with "…"
// when cut.
func String(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
