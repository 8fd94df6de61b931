package agent

import (
	"context"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// draftTimeout bounds the model call of a draft.
const draftTimeout = time.Minute

// draftInstructions ends the prompt of a draft: what the person who holds
// the conversation gets is a summary line and a reply they may edit.
const draftInstructions = `

## A person of the team has taken over

A person of the business's team now answers this visitor in your place. Write for them:
- on the first line, "SUMMARY: " then one sentence (at most 25 words) saying what the visitor wants and where the conversation stands;
- then, from the next line, a draft of the person's next reply to the visitor, in the visitor's language, drawn from the knowledge above and the conversation so far, ready to send. Write it as the person, not as the assistant; do not sign it; invent nothing the knowledge does not say.`

// Draft is what the assistant suggests to the person who holds a
// conversation: a one-line Summary of it ("" when the model gave none) and
// a Reply they may edit and send, or ignore. Model names the model that
// wrote them.
type Draft struct {
	Summary string
	Reply   string
	Model   string
}

// DraftReply drafts the next reply of a person to the visitor of one of the
// tenant's conversations (in segment seg), from the knowledge base and the
// conversation so far, with the managed model (the local provider, which
// quotes the knowledge base, without one). Nothing is stored.
func (e *Engine) DraftReply(ctx context.Context, t parley.Tenant, seg parley.Segment, conversationID, locale string) (Draft, error) {
	turns, err := e.Store.RecentTurns(ctx, t.ID, conversationID, HistoryTurns)
	if err != nil {
		return Draft{}, err
	}
	if !hasVisitorTurn(turns) {
		return Draft{}, parley.Errorf(parley.KindInvalid, "The visitor has not written yet: there is nothing to answer")
	}
	data, err := e.Store.PromptData(ctx, t.ID, seg.ID, locale, "", PromptCorpusLimit)
	if err != nil {
		return Draft{}, err
	}
	in := &TurnInput{Tenant: t, Segment: seg, Locale: locale, Channel: parley.ChannelWeb}
	query := recentUserMessages(turns, rankMessages)
	corpus, _, err := e.turnCorpus(ctx, in, query, data.Corpus, data.Synonyms)
	if err != nil {
		return Draft{}, err
	}
	prompt := BuildPrompt(PromptInput{Tenant: t, Segment: seg, Corpus: corpus, Ranked: len(query) > 0, Locale: locale,
		Channel: parley.ChannelWeb, Now: e.now(), Logger: e.Logger})
	req := llm.Request{System: prompt.System + draftInstructions, Whole: true}
	for _, m := range turns {
		req.Messages = append(req.Messages, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
	}
	req.Passages = prompt.passages(corpus)
	provider := e.LLM
	if provider == nil {
		provider = NewLocal()
	}
	ctx, cancel := context.WithTimeout(ctx, draftTimeout)
	defer cancel()
	stream, err := provider.Stream(ctx, req)
	if err != nil {
		return Draft{}, err
	}
	// The prompt asks for citation markers: the draft goes without them.
	var text strings.Builder
	cite := newCiteFilter(passageRefs(req.Passages))
	for ev, err := range stream {
		if err != nil {
			return Draft{}, err
		}
		if ev.Kind == llm.EventText {
			text.WriteString(cite.write(ev.Text))
		}
	}
	text.WriteString(cite.flush())
	d := splitDraft(text.String())
	d.Model = provider.Model()
	if d.Reply == "" {
		return Draft{}, &parley.Error{Kind: parley.KindUpstream, Code: "LLM_ERROR", Message: "The model wrote no draft; try again"}
	}
	return d, nil
}

// hasVisitorTurn reports whether the visitor wrote in turns.
func hasVisitorTurn(turns []parley.Turn) bool {
	for _, t := range turns {
		if t.Role == "user" {
			return true
		}
	}
	return false
}

// splitDraft reads a model's draft: its "SUMMARY: " line, when it starts
// with one, and the reply after it.
func splitDraft(text string) Draft {
	text = strings.TrimSpace(text)
	first, rest, _ := strings.Cut(text, "\n")
	if summary, ok := strings.CutPrefix(strings.TrimSpace(first), "SUMMARY:"); ok {
		return Draft{Summary: strings.TrimSpace(summary), Reply: strings.TrimSpace(rest)}
	}
	return Draft{Reply: text}
}
