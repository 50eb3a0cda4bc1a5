package clip

import "testing"

func TestString(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven byte", 10, "eleven byt…"},
		{"héllo", 2, "h…"}, // not inside é
	} {
		if got := String(tt.s, tt.max); got != tt.want {
			t.Errorf("String(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}
