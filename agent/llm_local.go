package agent

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/rank"
)

// LocalNotice opens every answer of the local provider.
const LocalNotice = "No language model is configured for this agent yet, so this answer quotes its knowledge base directly."

// LocalNoMatch is the local provider's answer when no passage shares a word
// with the question.
const LocalNoMatch = "Nothing in the knowledge base matches the question."

// localMaxPassages and localMaxChars bound the local provider's answer.
const (
	localMaxPassages = 3
	localMaxChars    = 800
)

// Local is the provider that needs no network: it answers with the request's
// passages that best match the last user message, says plainly that no
// language model is configured, and never calls tools. A new install works
// with it before any key is set.
type Local struct{}

// NewLocal builds the local provider.
func NewLocal() *Local { return &Local{} }

// Name returns "local".
func (*Local) Name() string { return "local" }

// Model returns "corpus": the answer is the corpus itself.
func (*Local) Model() string { return "corpus" }

// Stream answers from req.Passages: the notice, then each best passage, one
// chunk apiece.
func (*Local) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var question string
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == llm.RoleUser {
			question = m.Content
			break
		}
	}
	best := LocalRank(question, req.Passages)
	chunks := []string{LocalNotice}
	if len(best) == 0 {
		chunks = append(chunks, "\n\n"+LocalNoMatch)
	}
	for _, p := range best[:min(len(best), localMaxPassages)] {
		text := "\n\n"
		if p.Title != "" {
			text += p.Title + "\n"
		}
		chunks = append(chunks, text+localClip(strings.TrimSpace(p.Content), localMaxChars))
	}
	return func(yield func(llm.Event, error) bool) {
		for _, c := range chunks {
			if err := ctx.Err(); err != nil {
				yield(llm.Event{}, err)
				return
			}
			if !yield(llm.Event{Kind: llm.EventText, Text: c}, nil) {
				return
			}
		}
		yield(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEnd}, nil)
	}, nil
}

// LocalRank orders passages for the question with the turn's ranking
// (rank.Scores: rare words count most, a title more than content,
// typos read as the nearest word of the passages) and drops those sharing
// no word with it. Ties keep the passages' order, which is the turn's.
func LocalRank(question string, passages []llm.Passage) []llm.Passage {
	corpus := make([]parley.CorpusEntry, len(passages))
	for i, p := range passages {
		corpus[i] = parley.CorpusEntry{Title: p.Title, Content: p.Content}
	}
	score := rank.Scores([]string{question}, corpus, "")
	var order []int
	for i, s := range score {
		if s > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(score[j], score[i]) })
	out := make([]llm.Passage, len(order))
	for k, i := range order {
		out[k] = passages[i]
	}
	return out
}

// localClip shortens s to at most n bytes, at a word boundary.
func localClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexFunc(s[:n], unicode.IsSpace)
	if cut <= 0 {
		cut = n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimSpace(s[:cut]) + " …"
}
