package parley

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Synonym limits: a tenant holds at most MaxSynonymGroups groups, each of
// MinSynonymTerms to MaxSynonymTerms terms of at most MaxSynonymTermChars
// characters.
const (
	MaxSynonymGroups    = 500
	MinSynonymTerms     = 2
	MaxSynonymTerms     = 20
	MaxSynonymTermChars = 60
)

// SynonymGroup is words or phrases a tenant's visitors use for the same
// thing: a question holding one of them is searched and ranked as if it
// held the others too (ExpandSynonyms).
type SynonymGroup struct {
	ID        string    `json:"id" db:"id"`
	Terms     []string  `json:"terms" db:"terms"`
	CreatedAt time.Time `json:"createdAt" db:"created_at"`
	UpdatedAt time.Time `json:"updatedAt" db:"updated_at"`
}

// CleanSynonymTerms checks a group's terms and returns them cleaned: spaces
// trimmed and runs of spaces made one, in their order. A term must hold a
// letter or digit, be at most MaxSynonymTermChars characters, and appear
// once (letter case aside); a group has MinSynonymTerms to MaxSynonymTerms
// terms. Errors are KindInvalid, naming the field "terms".
func CleanSynonymTerms(terms []string) ([]string, error) {
	invalid := func(msg string) error { return FieldErrors{"terms": msg}.Err() }
	if len(terms) < MinSynonymTerms || len(terms) > MaxSynonymTerms {
		return nil, invalid(fmt.Sprintf("must hold %d to %d words or phrases", MinSynonymTerms, MaxSynonymTerms))
	}
	out := make([]string, 0, len(terms))
	seen := map[string]bool{}
	for _, t := range terms {
		t = strings.Join(strings.Fields(t), " ")
		switch {
		case !strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }):
			return nil, invalid("must each hold a letter or a digit")
		case utf8.RuneCountInString(t) > MaxSynonymTermChars:
			return nil, invalid(fmt.Sprintf("must each be at most %d characters", MaxSynonymTermChars))
		case seen[strings.ToLower(t)]:
			return nil, invalid(fmt.Sprintf("must differ from each other (%q is there twice)", t))
		}
		seen[strings.ToLower(t)] = true
		out = append(out, t)
	}
	return out, nil
}

// SynonymsOf is the other terms of every group one of whose terms text
// holds: as whole words, letter case and a plural's s aside ("bike" is in
// "My Bikes' chains" but not in "bikers"), in the groups' order. None when
// no group applies.
func SynonymsOf(text string, groups [][]string) []string {
	if len(groups) == 0 {
		return nil
	}
	words := " " + synonymWords(text) + " "
	var extra []string
	for _, g := range groups {
		held := -1
		for i, t := range g {
			if tw := synonymWords(t); tw != "" && strings.Contains(words, " "+tw+" ") {
				held = i
				break
			}
		}
		if held < 0 {
			continue
		}
		for i, t := range g {
			if i != held {
				extra = append(extra, t)
			}
		}
	}
	return extra
}

// ExpandSynonyms is text followed by its SynonymsOf, one a line; text as
// it is when no group applies.
func ExpandSynonyms(text string, groups [][]string) string {
	extra := SynonymsOf(text, groups)
	if len(extra) == 0 {
		return text
	}
	return text + "\n" + strings.Join(extra, "\n")
}

// synonymWords is s's words in lower case, a plural's s dropped from words
// of four letters or more, one space between them.
func synonymWords(s string) string {
	words := Words(s)
	for i, w := range words {
		if utf8.RuneCountInString(w) >= 4 {
			words[i] = strings.TrimSuffix(w, "s")
		}
	}
	return strings.Join(words, " ")
}
