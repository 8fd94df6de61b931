package agent

import (
	"context"
	"errors"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// Observer is told what the engine's turns did, for the operator's metrics
// (web/metrics implements it; Engine.Observer nil observes nothing). Its
// methods run on the turn's path: they must be quick and never block.
type Observer interface {
	// TurnDone is called once per Reply, however it ended.
	TurnDone(TurnStats)
	// ModelCall is called once per model call of a turn (a turn with tools
	// calls the model more than once).
	ModelCall(ModelCallStats)
	// ToolCall is called once per tool the model ran.
	ToolCall(toolType string, success bool)
}

// TurnStats is one turn as the observer sees it. Tenant is the tenant's
// slug; the observer decides whether to use it.
type TurnStats struct {
	Tenant, Channel string
	// Outcome is one of the Turn* outcomes.
	Outcome string
	// Duration is the whole turn's; FirstText the time to the first piece
	// of the answer, 0 when nothing was said.
	Duration, FirstText time.Duration
}

// ModelCallStats is one model call: the provider's kind (llm.Provider's
// Name: openai, anthropic, webhook, local), how it ended (one of the
// Model* outcomes), how long it took to its last event, and the tokens the
// provider reported (0 when it reports none).
type ModelCallStats struct {
	Provider, Outcome         string
	Duration                  time.Duration
	InputTokens, OutputTokens int
}

// How a turn ended (TurnStats.Outcome).
const (
	TurnAnswered     = "answered"       // answered and stored
	TurnEscalated    = "escalated"      // answered, and handed to a person
	TurnLeftToPerson = "left_to_person" // a person holds the conversation: the model was not called
	TurnLimitReached = "limit_reached"  // refused: the tenant's monthly limit
	TurnBusy         = "busy"           // refused: the session's previous message was still being answered
	TurnClientGone   = "client_gone"    // the caller went away
	TurnModelError   = "model_error"    // the model failed (what was said is stored)
	TurnNotStored    = "not_stored"     // answered, but the store failed
	TurnFailed       = "failed"         // failed before the model was called
)

// How a model call ended (ModelCallStats.Outcome): ModelOK, or the
// llm.Error's kind.
const (
	ModelOK          = "ok"
	ModelAuth        = "auth"
	ModelRateLimited = "rate_limited"
	ModelTimeout     = "timeout"
	ModelUpstream    = "upstream"
	ModelBadRequest  = "bad_request"
	ModelUnreachable = "unreachable"
	ModelCanceled    = "canceled"
	ModelError       = "error"
)

// TurnOutcomes and ModelOutcomes are every outcome, for an observer that
// prepares its series.
var (
	TurnOutcomes = []string{TurnAnswered, TurnEscalated, TurnLeftToPerson, TurnLimitReached, TurnBusy,
		TurnClientGone, TurnModelError, TurnNotStored, TurnFailed}
	ModelOutcomes = []string{ModelOK, ModelAuth, ModelRateLimited, ModelTimeout, ModelUpstream,
		ModelBadRequest, ModelUnreachable, ModelCanceled, ModelError}
)

// observedReply is Reply with the turn told to the observer: its outcome,
// its duration and the time to its first text.
func (e *Engine) observedReply(ctx context.Context, in *TurnInput, emit func(llm.Event)) (*TurnOutput, error) {
	start := time.Now()
	var first time.Duration
	out, err := e.reply(ctx, in, func(ev llm.Event) {
		if first == 0 && ev.Kind == llm.EventText && ev.Text != "" {
			first = time.Since(start)
		}
		emit(ev)
	})
	if errors.Is(err, ErrNotAdmitted) {
		return out, err // not a turn: the caller refuses the request or runs it again
	}
	e.Observer.TurnDone(TurnStats{Tenant: in.Tenant.Slug, Channel: in.Channel, Outcome: turnOutcome(ctx, out, err),
		Duration: time.Since(start), FirstText: first})
	return out, err
}

// turnOutcome says how a Reply ended.
func turnOutcome(ctx context.Context, out *TurnOutput, err error) string {
	switch {
	case err == nil && out != nil && out.Result.Escalated():
		return TurnEscalated
	case err == nil && out != nil && out.Result.Calls == 0 && out.MessageID == "":
		return TurnLeftToPerson
	case err == nil:
		return TurnAnswered
	case errors.Is(err, ErrNotStored):
		return TurnNotStored
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return TurnClientGone
	case errors.Is(err, ErrSessionBusy):
		return TurnBusy
	case parley.ErrorKind(err) == parley.KindRateLimited:
		return TurnLimitReached
	case out != nil:
		return TurnModelError
	}
	return TurnFailed
}

// observedProvider is a turn's model with each call told to the observer.
type observedProvider struct {
	llm.Provider
	obs Observer
}

// Stream times the call from its start to its last event (or its failure)
// and adds up the tokens the provider reports.
func (p observedProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	start := time.Now()
	stream, err := p.Provider.Stream(ctx, req)
	if err != nil {
		p.done(ctx, start, err, llm.Usage{})
		return nil, err
	}
	return func(yield func(llm.Event, error) bool) {
		var usage llm.Usage
		var failed error
		defer func() { p.done(ctx, start, failed, usage) }()
		for ev, err := range stream {
			if err != nil {
				failed = err
			} else if ev.Kind == llm.EventDone {
				usage.InputTokens += ev.Usage.InputTokens
				usage.OutputTokens += ev.Usage.OutputTokens
			}
			if !yield(ev, err) {
				return
			}
		}
	}, nil
}

func (p observedProvider) done(ctx context.Context, start time.Time, err error, usage llm.Usage) {
	p.obs.ModelCall(ModelCallStats{Provider: p.Name(), Outcome: modelOutcome(ctx, err), Duration: time.Since(start),
		InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens})
}

// modelOutcome names how a model call ended.
func modelOutcome(ctx context.Context, err error) string {
	if err == nil {
		return ModelOK
	}
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case llm.Auth:
			return ModelAuth
		case llm.RateLimited:
			return ModelRateLimited
		case llm.Timeout:
			return ModelTimeout
		case llm.Upstream:
			return ModelUpstream
		case llm.BadRequest:
			return ModelBadRequest
		case llm.Unreachable:
			return ModelUnreachable
		}
	}
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return ModelCanceled
	}
	return ModelError
}
