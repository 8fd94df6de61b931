package parley

import "unicode/utf8"

// Clip cuts s to at most n characters (runes, never splitting one), for
// values stored or shown with a length limit.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
