package clip

import "testing"

func TestHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 8, "short"},
		{"exactly8", 8, "exactly8"},
		{"longer than eight", 8, "longer t..."},
		{"héllo", 2, "h..."}, // é is 2 bytes: not cut in half
	} {
		if got := Head(c.s, c.n); got != c.want {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
