package db

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Slugify makes a URL-safe slug (lowercase letters, digits, hyphens; at most
// 100 characters) from a name: accents are dropped, anything else becomes a
// hyphen. An empty result becomes "segment".
func Slugify(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFD.String(strings.ToLower(name)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			hyphen = false
		case !hyphen && b.Len() > 0:
			b.WriteByte('-')
			hyphen = true
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.Trim(truncate(b.String(), 100), "-")
	if s == "" {
		return "segment"
	}
	return s
}
