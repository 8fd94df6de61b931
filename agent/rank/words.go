package rank

import (
	"slices"
	"strings"
	"unicode"
)

// terms returns the distinct words of s that carry meaning: lower case,
// a plural's s dropped, stop words and one-letter words left out.
func terms(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range wordsOf(s) {
		set[w] = true
	}
	return set
}

// wordsOf is terms' words in order, repeats kept.
func wordsOf(s string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		words = append(words, w)
	}
	return words
}

// stopWords are English and French words too common to say what a
// question is about.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do does for from has have how i in is it
		me my of on or our so than that the their there this to us was we what when where which who why
		will with you your
		au aux avec ce ces dans de des du en est et il je la le les leur mais me mes ne nous on ou où par
		pas pour qu que qui sa se ses son sur ta te tes ton tu un une vos votre vous`) {
		m[w] = true
	}
	return m
}()

// QuestionKey is a question's wording as a key, the same for questions that
// differ only in case, punctuation, word order, repeats, plurals or stop
// words: its meaningful words (terms), distinct and sorted, separated by a
// space. The knowledge gaps group the questions by it (migration 00055);
// "" for a question with no meaningful word.
func QuestionKey(question string) string {
	words := wordsOf(question)
	slices.Sort(words)
	return strings.Join(slices.Compact(words), " ")
}
