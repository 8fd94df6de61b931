package rank

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/parley/parley"
)

// OtherLanguage reports whether the entry is in a language other than lang
// (an entry without locale is in every language).
func OtherLanguage(e parley.CorpusEntry, lang string) bool {
	return lang != "" && e.Locale != nil && parley.LocaleLanguage(*e.Locale) != lang
}

// Merge is a new list: corpus, then the entries of found it lacks.
func Merge(corpus, found []parley.CorpusEntry) []parley.CorpusEntry {
	out := make([]parley.CorpusEntry, 0, len(corpus)+len(found))
	seen := make(map[string]bool, len(corpus)+len(found))
	for _, list := range [][]parley.CorpusEntry{corpus, found} {
		for _, c := range list {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Corpus orders the candidate entries for one turn: those sharing the
// most telling words with the visitor's messages first, so that the
// prompt's caps fill with what the turn is about (issue 34). messages are
// the visitor's, the current one first; a word of the current message
// counts fully, one of an earlier message half. lang is the visitor's
// language (parley.LocaleLanguage; "" unknown): an entry in another
// language counts half, so that it comes first only when it matches
// clearly better than the entries in the visitor's language.
//
// The score is a BM25-like sum over the query's words (terms: lower
// case, stop words dropped, a plural's s dropped): each word found weighs
// its rarity among the candidates (inverse document frequency), more in a
// title (3) than in a summary or tags (2) or the content (1), the content's
// weight saturating with its count and discounted for long entries. A word
// of five letters or more found in no candidate is read as the nearest word
// of the candidates' vocabulary one edit away (two for nine letters or
// more): a typo. The entry's priority is a weight, not a wall: the score is
// multiplied by 1 + priority/10, so a priority-10 entry needs a third less
// match than a priority-5 one, and entries matching nothing come after
// every match, by priority.
//
// The order is deterministic, whatever order the candidates came in: equal
// scores fall to priority, then title, then content, then id (the
// database's order of the candidates, promptOrder, is of the same kind).
//
// It returns the ranked entries and how many of those it ranked first
// match a word of the messages (the others come after them all).
func Corpus(messages []string, corpus []parley.CorpusEntry, lang string) ([]parley.CorpusEntry, int) {
	score := Scores(messages, corpus, lang)
	order := make([]int, len(corpus))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := cmp.Compare(score[j], score[i]); c != 0 {
			return c
		}
		a, b := &corpus[i], &corpus[j]
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		if c := strings.Compare(a.Title, b.Title); c != 0 {
			return c
		}
		if c := strings.Compare(a.Content, b.Content); c != 0 {
			return c
		}
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	out := make([]parley.CorpusEntry, len(corpus))
	matched := 0
	for k, i := range order {
		out[k] = corpus[i]
		if score[i] > 0 {
			matched++
		}
	}
	return out, matched
}

// Scores is Corpus's score of each entry of corpus, 0 for one
// matching none of the messages' words.
func Scores(messages []string, corpus []parley.CorpusEntry, lang string) []float64 {
	docs, df, totalLen := rankIndexOf(corpus)
	query := rankQuery(messages, df)
	score := make([]float64, len(corpus))
	if len(query) > 0 && len(corpus) > 0 {
		n := float64(len(corpus))
		avgLen := max(float64(totalLen)/n, 1)
		// The words in one order: a sum of floats in a map's random order
		// differs in its last bits from one turn to the next, and two
		// entries' equal scores would then fall either way.
		words := slices.Sorted(maps.Keys(query))
		idf := make(map[string]float64, len(query))
		for _, w := range words {
			idf[w] = math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
		}
		for i, d := range docs {
			s := 0.0
			for _, w := range words {
				qw := query[w]
				f, ok := d.words[w]
				if !ok {
					continue
				}
				// BM25's saturation of the content's count (k1 1.2, b 0.75)
				tf := float64(f.content) * 2.2 / (float64(f.content) + 1.2*(0.25+0.75*float64(d.length)/avgLen))
				s += qw * idf[w] * (3*b2f(f.title) + 2*b2f(f.summary) + tf)
			}
			if s > 0 {
				score[i] = s * (1 + float64(corpus[i].Priority)/10)
				if OtherLanguage(corpus[i], lang) {
					score[i] /= 2
				}
			}
		}
	}
	return score
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// rankDoc is an entry's words: where each stands, and the content's length.
type rankDoc struct {
	words  map[string]rankHits
	length int // words of the content
}

type rankHits struct {
	title, summary bool
	content        int
}

func newRankDoc(e parley.CorpusEntry) rankDoc {
	d := rankDoc{words: map[string]rankHits{}}
	for w := range terms(e.Title) {
		h := d.words[w]
		h.title = true
		d.words[w] = h
	}
	extra := deref(e.Summary) + " " + strings.Join(e.Tags, " ")
	for w := range terms(extra) {
		h := d.words[w]
		h.summary = true
		d.words[w] = h
	}
	for _, w := range wordsOf(e.Content) {
		h := d.words[w]
		h.content++
		d.words[w] = h
		d.length++
	}
	return d
}

// rankQuery is the weighted words of the visitor's messages (the current
// one first): each word's weight, 1 from the current message, 0.5 from an
// earlier one; a word no candidate holds is replaced by the nearest one of
// their vocabulary (df) when it is a likely typo of it.
func rankQuery(messages []string, df map[string]int) map[string]float64 {
	q := map[string]float64{}
	for i, m := range messages {
		weight := 1.0
		if i > 0 {
			weight = 0.5
		}
		for w := range terms(m) {
			if _, ok := df[w]; !ok {
				if near, ok := nearestWord(w, df); ok {
					w = near
				}
			}
			q[w] = max(q[w], weight)
		}
	}
	return q
}

// nearestWord is the word of vocab at the least edit distance from w,
// within parley.TypoEdits, the more frequent on a tie, then the first in
// order.
func nearestWord(w string, vocab map[string]int) (string, bool) {
	r := []rune(w)
	limit := parley.TypoEdits(w)
	if limit == 0 {
		return "", false
	}
	best, bestDist, bestDF := "", limit+1, 0
	for v, n := range vocab {
		vr := []rune(v)
		if d := len(vr) - len(r); d > limit || -d > limit {
			continue
		}
		dist := parley.EditDistance(r, vr, limit)
		if dist > limit {
			continue
		}
		if dist < bestDist || dist == bestDist && (n > bestDF || n == bestDF && v < best) {
			best, bestDist, bestDF = v, dist, n
		}
	}
	return best, best != ""
}

// The words of the candidates are kept between turns: the chat's
// candidates come from its configuration cache, the same for a tenant's
// turns until its corpus changes, and reading 200 entries' words again
// each turn cost about 9 ms (BenchmarkRankCorpus). docs holds each
// entry's words by a hash of its text, sets the document frequencies of
// one list of candidates; each is dropped whole when full.
var rankCache = struct {
	sync.Mutex
	docs map[rankDocKey]*rankDoc
	sets map[uint64]*rankSet
}{docs: map[rankDocKey]*rankDoc{}, sets: map[uint64]*rankSet{}}

const (
	rankCacheDocs = 50_000
	rankCacheSets = 1_000
)

// rankDocKey names an entry's text: a hash of its id, title, summary,
// tags and content, so that any change of what is ranked (through the API
// or plain SQL) is another key.
type rankDocKey uint64

func rankDocKeyOf(e parley.CorpusEntry) rankDocKey {
	var h maphash.Hash
	h.SetSeed(rankSeed)
	for _, s := range []string{e.ID, e.Title, deref(e.Summary), e.Content} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	for _, t := range e.Tags {
		h.WriteString(t)
		h.WriteByte(1)
	}
	return rankDocKey(h.Sum64())
}

type rankSet struct {
	df       map[string]int
	totalLen int
}

var rankSeed = maphash.MakeSeed()

// rankIndexOf is the words of each candidate, their document frequencies
// and the candidates' total length, from the cache where it has them.
func rankIndexOf(corpus []parley.CorpusEntry) ([]*rankDoc, map[string]int, int) {
	keys := make([]rankDocKey, len(corpus))
	var h maphash.Hash
	h.SetSeed(rankSeed)
	var buf [8]byte
	for i, e := range corpus {
		keys[i] = rankDocKeyOf(e)
		binary.LittleEndian.PutUint64(buf[:], uint64(keys[i]))
		h.Write(buf[:])
	}
	setKey := h.Sum64()
	docs := make([]*rankDoc, len(corpus))
	rankCache.Lock()
	var missing []int
	for i := range corpus {
		if d, ok := rankCache.docs[keys[i]]; ok {
			docs[i] = d
		} else {
			missing = append(missing, i)
		}
	}
	set := rankCache.sets[setKey]
	rankCache.Unlock()
	for _, i := range missing {
		d := newRankDoc(corpus[i])
		docs[i] = &d
	}
	if set == nil {
		set = &rankSet{df: map[string]int{}}
		for _, d := range docs {
			set.totalLen += d.length
			for w := range d.words {
				set.df[w]++
			}
		}
	}
	rankCache.Lock()
	defer rankCache.Unlock()
	if len(rankCache.docs)+len(missing) > rankCacheDocs {
		rankCache.docs = map[rankDocKey]*rankDoc{}
	}
	for _, i := range missing {
		rankCache.docs[keys[i]] = docs[i]
	}
	if _, ok := rankCache.sets[setKey]; !ok {
		if len(rankCache.sets) >= rankCacheSets {
			rankCache.sets = map[uint64]*rankSet{}
		}
		rankCache.sets[setKey] = set
	}
	return docs, set.df, set.totalLen
}

// deref is the string s points to, "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
