package rank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
)

func rankEntry(id, title, content string, priority int) parley.CorpusEntry {
	return parley.CorpusEntry{ID: id, Title: title, Content: content, Priority: priority}
}

// The turn's knowledge follows the question: the entry it is about first,
// reworded, misspelt or asked earlier in the conversation; priority
// weighs but does not wall; the order does not depend on the input's.
func TestRankCorpus(t *testing.T) {
	t.Parallel()
	corpus := []parley.CorpusEntry{
		rankEntry("1", "Opening hours", "The workshop is open from nine to six, Monday to Saturday. Closed on Sundays and public holidays.", 5),
		rankEntry("2", "Puncture repair", "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros.", 5),
		rankEntry("3", "Chain replacement", "A worn chain is replaced and the gears adjusted; the price depends on the drivetrain.", 5),
		rankEntry("4", "Delivery", "Bikes bought online are delivered within three working days, assembled and ready to ride.", 5),
		rankEntry("5", "Company news", "We are proud of our workshop team and our customers. Bikes, bikes, bikes.", 50),
	}
	for _, tc := range []struct {
		messages []string
		want     string
	}{
		{[]string{"How much does a puncture repair cost?"}, "Puncture repair"},
		{[]string{"my tyre is flat, can you fix it while I wait"}, "Puncture repair"},
		{[]string{"are you open on saturdays?"}, "Opening hours"},
		{[]string{"how long does delivry take"}, "Delivery"},                 // typo
		{[]string{"what about the chian?"}, "Chain replacement"},             // transposition
		{[]string{"and how much?", "my chain is worn"}, "Chain replacement"}, // an earlier message
	} {
		got := rankOnly(tc.messages, corpus, "")
		if got[0].Title != tc.want {
			t.Errorf("%q: first %q, want %q", tc.messages, got[0].Title, tc.want)
		}
	}
	// Nothing matches: priority order, then title.
	got := rankOnly([]string{"zzz qqq"}, corpus, "")
	if got[0].Title != "Company news" || got[1].Title != "Chain replacement" {
		t.Errorf("no match: %q", rankTitles(got))
	}
	// Deterministic whatever the input order.
	want := rankTitles(rankOnly([]string{"bike workshop"}, corpus, ""))
	for i := range 20 {
		shuffled := slices.Clone(corpus)
		rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := rankTitles(rankOnly([]string{"bike workshop"}, shuffled, "")); !slices.Equal(got, want) {
			t.Fatalf("order %q, then %q", want, got)
		}
	}
	// The input is not changed.
	if corpus[0].Title != "Opening hours" {
		t.Error("Corpus reordered its input")
	}
}

func rankTitles(es []parley.CorpusEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Title
	}
	return out
}

// BenchmarkRankCorpus ranks the prompt's 200 candidates of about 150 words
// for one question: the cost a turn adds.
func BenchmarkRankCorpus(b *testing.B) {
	words := strings.Fields("bike repair tyre chain brake gear saddle wheel frame delivery order price warranty " +
		"service check tune light battery motor charge battery cable pedal helmet lock rack basket mudguard")
	r := rand.New(rand.NewPCG(1, 2))
	var corpus []parley.CorpusEntry
	for i := range 200 { // agent.PromptCorpusLimit
		var sb strings.Builder
		for range 150 {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		corpus = append(corpus, rankEntry(fmt.Sprint(i), fmt.Sprintf("Entry %d %s", i, words[i%len(words)]), sb.String(), 5))
	}
	b.ReportAllocs()
	for b.Loop() {
		rankOnly([]string{"How much does a new chian for my e-bike cost?"}, corpus, "")
	}
}

// An entry in another language than the visitor's counts half: equal
// matches put the visitor's language first, a clearly better one in
// another language still comes first. A locale's form does not matter.
func TestRankCorpusLanguage(t *testing.T) {
	t.Parallel()
	loc := func(e parley.CorpusEntry, l string) parley.CorpusEntry { e.Locale = &l; return e }
	corpus := []parley.CorpusEntry{
		loc(rankEntry("1", "Garantie e-bike", "batterie garantie deux ans", 5), "en"),
		loc(rankEntry("2", "Garantie e-bike", "batterie garantie deux ans", 5), "fr_CA"),
	}
	if got := rankOnly([]string{"garantie batterie"}, corpus, "fr"); got[0].ID != "2" {
		t.Errorf("equal matches: %v first, want the visitor's language", got[0].Locale)
	}
	if got := rankOnly([]string{"garantie batterie"}, corpus, ""); got[0].ID != "1" {
		t.Errorf("no language: ties fall to the id, got %s", got[0].ID)
	}
	if OtherLanguage(corpus[1], parley.LocaleLanguage("FR-ca")) || !OtherLanguage(corpus[0], "fr") {
		t.Error("OtherLanguage reads locales by their language part")
	}
}

// Two entries with the same words score the same to the last bit, so that
// their tie falls to the title on every turn (a sum in a map's random order
// did not).
func TestRankCorpusEqualScoresStable(t *testing.T) {
	t.Parallel()
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango")
	text := strings.Join(words, " ")
	corpus := []parley.CorpusEntry{
		{ID: "2", Title: "Second", Content: text + " " + strings.Join(words[:7], " ")},
		{ID: "1", Title: "First", Content: text + " " + strings.Join(words[:7], " ")},
		{ID: "3", Title: "Other", Content: "nothing in common"},
	}
	question := text + " " + strings.Join(words[3:9], " ")
	for range 300 {
		if got := rankTitles(rankOnly([]string{question, "golf hotel"}, corpus, "")); got[0] != "First" || got[1] != "Second" {
			t.Fatalf("equal scores ranked %q", got)
		}
	}
}

// Corpus counts the entries matching a word, which it ranks first: the
// lexical hits the fusion with meaning takes.
func TestRankCorpusMatched(t *testing.T) {
	t.Parallel()
	corpus := []parley.CorpusEntry{
		{ID: "1", Title: "Opening hours", Content: "Open nine to six."},
		{ID: "2", Title: "Delivery", Content: "We deliver in two days.", Priority: 9},
		{ID: "3", Title: "Returns", Content: "Returns within thirty days."},
	}
	ranked, matched := Corpus([]string{"how many days for returns?"}, corpus, "")
	if matched != 2 || ranked[0].ID != "3" || ranked[1].ID != "2" {
		t.Errorf("matched %d, order %q", matched, rankTitles(ranked))
	}
	if _, matched := Corpus([]string{"xylophone"}, corpus, ""); matched != 0 {
		t.Errorf("no word in common: matched %d", matched)
	}
}

// rankOnly is Corpus's order alone.
func rankOnly(messages []string, corpus []parley.CorpusEntry, lang string) []parley.CorpusEntry {
	ranked, _ := Corpus(messages, corpus, lang)
	return ranked
}

// Questions worded alike share a key: case, punctuation, word order,
// repeats, plurals and stop words aside.
func TestQuestionKey(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"What are your opening hours?":  "hour opening",
		"Opening hours, hours!!":        "hour opening",
		"hours opening":                 "hour opening",
		"Is it?":                        "",
		"Livrez-vous au Canada ?":       "canada livrez",
		"Do you ship to Canada or USA?": "canada ship usa",
	} {
		if got := QuestionKey(q); got != want {
			t.Errorf("QuestionKey(%q) = %q, want %q", q, got, want)
		}
	}
}
