package agent

import (
	"cmp"
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// TraceScope is the instrumentation scope of the engine's spans.
const TraceScope = "github.com/parley/parley/agent"

// tracer is the engine's tracer, nil when the engine traces nothing
// (Engine.Tracer nil). The provider's tracer is looked up once (a lookup
// under the provider's lock) and kept with the provider it came from.
func (e *Engine) tracer() trace.Tracer {
	if e == nil || e.Tracer == nil {
		return nil
	}
	if c := e.tracerCache.Load(); c != nil && c.provider == e.Tracer {
		return c.tracer
	}
	t := e.Tracer.Tracer(TraceScope)
	e.tracerCache.Store(&cachedTracer{provider: e.Tracer, tracer: t})
	return t
}

// cachedTracer is Engine.Tracer's tracer, with the provider it came from.
type cachedTracer struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
}

// StartSpan starts a span named name within ctx's trace, for a step of a
// turn's channel (the public chat's gates); the span does nothing when the
// engine traces nothing. End it with EndSpan.
func (e *Engine) StartSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	t := e.tracer()
	if t == nil {
		return ctx, noop.Span{}
	}
	return t.Start(ctx, name)
}

// EndSpan ends span, noting err: a refusal (a *parley.Error of a client's
// kind) as its error.type, any other error as the span's failure.
func EndSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		var pe *parley.Error
		if errors.As(err, &pe) && pe.Kind != parley.KindInternal {
			span.SetAttributes(attribute.String("error.type", cmp.Or(pe.Code, "refused")))
		} else {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// tracedModel is provider with a span around each model call: from the
// request until the stream's last event (or the caller stops reading it),
// with the provider's kind, the model and the tokens used. provider itself
// when the engine traces nothing.
func (e *Engine) tracedModel(provider llm.Provider, source string) llm.Provider {
	t := e.tracer()
	if t == nil {
		return provider
	}
	return tracedModel{Provider: provider, tracer: t, source: source}
}

type tracedModel struct {
	llm.Provider
	tracer trace.Tracer
	source string
}

func (m tracedModel) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	ctx, span := m.tracer.Start(ctx, "chat "+m.Name(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", m.Name()),
			attribute.String("gen_ai.request.model", m.Model()),
			attribute.String("parley.llm.source", m.source)))
	stream, err := m.Provider.Stream(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return nil, err
	}
	return func(yield func(llm.Event, error) bool) {
		defer span.End()
		for ev, err := range stream {
			if err != nil {
				span.SetStatus(codes.Error, err.Error())
			} else if ev.Kind == llm.EventDone {
				span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", ev.Usage.InputTokens),
					attribute.Int("gen_ai.usage.output_tokens", ev.Usage.OutputTokens),
					attribute.String("gen_ai.response.finish_reasons", ev.StopReason))
			}
			if !yield(ev, err) {
				return
			}
		}
	}, nil
}
