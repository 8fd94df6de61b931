package agent

import (
	"context"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// judgeTimeout bounds one verdict of the judge.
const judgeTimeout = time.Minute

// judgeSystem is the judge's instructions: one strict yes or no.
const judgeSystem = `You check a support assistant's answer against one fact. Reply with exactly one word: YES if the answer states the fact (in any wording or language), NO otherwise. Nothing else.`

// ErrNoJudge is the judge's refusal when no language model is configured:
// the local provider, which quotes the knowledge base, cannot judge.
var ErrNoJudge = parley.Errorf(parley.KindUnavailable, "No language model is configured to judge the answers")

// Judge asks the tenant's model (the managed one; the tenant's reply
// endpoint answers visitors, not questions about them) whether answer, to
// question, states fact: a strict yes or no. An answer that is neither is
// an error, as is a model that fails.
func (e *Engine) Judge(ctx context.Context, t parley.Tenant, question, answer, fact string) (bool, error) {
	if e.LLM == nil || e.LLM.Name() == NewLocal().Name() {
		return false, ErrNoJudge
	}
	ctx, cancel := context.WithTimeout(ctx, judgeTimeout)
	defer cancel()
	stream, err := e.LLM.Stream(ctx, llm.Request{System: judgeSystem, MaxTokens: 5, Whole: true, Messages: []llm.Message{{Role: llm.RoleUser,
		Content: "Question: " + question + "\n\nAnswer: " + answer + "\n\nFact: " + fact + "\n\nDoes the answer state the fact? YES or NO."}}})
	if err != nil {
		return false, err
	}
	var text strings.Builder
	for ev, err := range stream {
		if err != nil {
			return false, err
		}
		if ev.Kind == llm.EventText {
			text.WriteString(ev.Text)
		}
	}
	verdict := strings.ToUpper(strings.Trim(strings.TrimSpace(text.String()), ".!\"'` "))
	switch {
	case strings.HasPrefix(verdict, "YES"):
		return true, nil
	case strings.HasPrefix(verdict, "NO"):
		return false, nil
	}
	return false, parley.Errorf(parley.KindUpstream, "The model's verdict was neither yes nor no: %q", parley.Clip(text.String(), 80))
}
