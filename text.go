package parley

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip cuts s to at most n characters (runes, never splitting one), for
// values stored or shown with a length limit.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// StorableText is s as PostgreSQL can store it: invalid UTF-8 and NUL
// replaced with U+FFFD (the stores' text parameters, db's StorableKey).
func StorableText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// EditDistance is the Damerau-Levenshtein (optimal string alignment)
// distance of a and b, or limit+1 once it is sure to exceed limit: how
// far a word typed is from a word known, for reading typos.
func EditDistance(a, b []rune, limit int) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// TypoEdits is how many edits (EditDistance) a typed word may be from a
// known word to be read as a typo of it: one for words of five to eight
// letters, two from nine, none below five (too short to tell a typo from
// another word). The turn's ranking and the corpus searches read typos
// alike.
func TypoEdits(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

// Words is s's words in lower case: its runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
