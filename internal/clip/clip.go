// Package clip shortens what a client or a file sent before an error or a
// log quotes it: a hostile or broken input is never echoed whole.
package clip

import "unicode/utf8"

// Head is s's first n bytes at most, cut at a character boundary, with
// "..." where it was cut.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}
