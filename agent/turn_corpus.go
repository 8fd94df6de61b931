package agent

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/rank"
)

// rankMessages is how many of the visitor's messages choose the turn's
// knowledge (the current one and the two before), and rankSearchLimit how
// many entries the search for the question adds to the candidates.
const (
	rankMessages    = 3
	rankSearchLimit = 20
)

// recentUserMessages is the content of the last n user turns of history,
// the newest first.
func recentUserMessages(history []parley.Turn, n int) []string {
	var out []string
	for i := len(history) - 1; i >= 0 && len(out) < n; i-- {
		if history[i].Role == "user" && strings.TrimSpace(history[i].Content) != "" {
			out = append(out, history[i].Content)
		}
	}
	return out
}

// turnCorpus is the prompt's candidates in the turn's order: ranked for
// the visitor's messages (query, the current one first; none: the
// candidates as they are, for BuildPrompt's priority order), a message
// holding a term of one of the tenant's synonym groups counting as if it
// held the others too, and fused with their order by meaning when an
// embedding endpoint is configured (rankByMeaning), before the language
// rule below, so that an entry of another language the question means
// can come first.
//
// A tenant whose candidates filled the load (PromptCorpusLimit, by
// priority) may hold the entries the question is about beyond them: a
// search for the question adds its best matches, one round trip for those
// tenants only. The candidates are in the visitor's language when the
// request names one (the spec's scope); the search then looks in every
// language too, and another language's matches join only when one of
// them, at half weight, ranks above everything in the visitor's language:
// nothing there answers. The model still answers in the visitor's language
// (the prompt's Language section). One round trip more, for requests
// naming a locale.
//
// noMatch says that no candidate shares a word with the visitor's messages
// (synonyms and typos counted): the knowledge base had nothing for the
// question, a knowledge gap's sign (parley.GapNoMatch).
func (e *Engine) turnCorpus(ctx context.Context, in *TurnInput, query []string, candidates []parley.CorpusEntry, synonyms [][]string) (_ []parley.CorpusEntry, noMatch bool, _ error) {
	if len(query) == 0 {
		return candidates, false, nil
	}
	messages := query
	if len(synonyms) > 0 {
		messages = make([]string, len(query))
		for i, m := range query {
			messages[i] = parley.ExpandSynonyms(m, synonyms)
		}
	}
	lang := parley.LocaleLanguage(in.Locale)
	if len(candidates) >= PromptCorpusLimit || lang != "" {
		found, err := e.Store.ExploreCorpus(ctx, in.Tenant.ID, in.Segment.ID, "", query[0], synonyms, rankSearchLimit)
		if err != nil {
			return nil, false, err
		}
		candidates = rank.Merge(candidates, found)
	}
	ranked, matched := rank.Corpus(messages, candidates, lang)
	ranked = e.rankByMeaning(ctx, in, query[0], ranked, matched)
	if len(ranked) == 0 || !rank.OtherLanguage(ranked[0], lang) {
		// the visitor's language answers: the other languages' matches stay out
		ranked = slices.DeleteFunc(ranked, func(c parley.CorpusEntry) bool { return rank.OtherLanguage(c, lang) })
	}
	return ranked, matched == 0, nil
}

// Meaning in the turn's ranking, when an embedding endpoint is configured
// (Engine.Embeddings, issue 34).
const (
	// questionEmbedTimeout bounds the turn's wait for the question's vector
	// (and the candidates' stored ones, read meanwhile): past it the turn
	// keeps the lexical order, as on any failure of the endpoint.
	questionEmbedTimeout = 2 * time.Second
)

// rankByMeaning is ranked, the candidates in their lexical order
// (turnCorpus), fused with their order by meaning: the cosine of the
// visitor's current message and each candidate's stored vector. One call to
// the endpoint and one read of the candidates' vectors, at once; on any
// failure or past questionEmbedTimeout the lexical order is kept and the
// failure logged: the endpoint never fails a turn. The endpoint is the
// tenant's own when it set one, else the operator's (llm.EmbedderFor); without
// either, or a question, ranked as it is, with no call and no read.
//
// question is the visitor's current message; the first matched entries of
// ranked are the lexical ranking's hits (rank.Corpus), which match a word
// of the visitor's messages.
func (e *Engine) rankByMeaning(ctx context.Context, in *TurnInput, question string, ranked []parley.CorpusEntry, matched int) []parley.CorpusEntry {
	if question == "" || len(ranked) < 2 {
		return ranked
	}
	emb, err := llm.EmbedderFor(in.Tenant, e.Embeddings, e.Secrets, e.Outbound)
	if err != nil {
		in.logger(e).Warn("the tenant's embedding endpoint: lexical ranking only", "err", err)
		return ranked
	}
	if emb == nil {
		return ranked
	}
	ctx, cancel := context.WithTimeout(ctx, questionEmbedTimeout)
	defer cancel()
	ids := make([]string, len(ranked))
	for i, c := range ranked {
		ids[i] = c.ID
	}
	type read struct {
		vectors []parley.CorpusVector
		err     error
	}
	stored := make(chan read, 1)
	go func() {
		vs, err := e.Store.CorpusVectors(ctx, in.Tenant.ID, emb.Model(), ids)
		stored <- read{vs, err}
	}()
	q, err := emb.EmbedOne(ctx, question)
	r := <-stored
	if err != nil {
		in.logger(e).Warn("embedding the question failed: lexical ranking only", "err", err)
		return ranked
	}
	if r.err != nil {
		in.logger(e).Warn("reading the knowledge's vectors failed: lexical ranking only", "err", r.err)
		return ranked
	}
	byID := make(map[string]parley.CorpusVector, len(r.vectors))
	for _, v := range r.vectors {
		byID[v.EntryID] = v
	}
	sim := make(map[string]float64, len(r.vectors))
	for _, c := range ranked {
		v, ok := byID[c.ID]
		// A vector of an older text of the entry (the job has not caught up
		// with an edit yet) or of another length is no vector.
		if !ok || len(v.Vector) != len(q) || !bytes.Equal(v.TextHash, parley.EmbeddingHash(c)) {
			continue
		}
		sim[c.ID] = rank.Dot(q, v.Vector)
	}
	return rank.Fuse(ranked, matched, sim, emb.Rerank)
}
