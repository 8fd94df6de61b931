package tracing

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTurnSpans is the spans of one chat first message, made and
// exported as the server makes them with traces on (BENCHMARKS.md,
// "Traces"): the request's span, the public gates', three SQL round trips
// (two batches and a statement), the model call's, and the request's log
// line with the span's ids; through the SDK's batching processor to its
// in-memory exporter, emptied as it goes. Against it, the same log line
// without traces. The difference is what traces add to a turn's CPU.
//
//	go test -run '^$' -bench BenchmarkTurnSpans -benchmem ./web/tracing/
func BenchmarkTurnSpans(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		log := slog.New(LogHandler(nil, slog.NewJSONHandler(io.Discard, nil)))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			log.InfoContext(ctx, "request", "method", "POST", "path", "/chat/acme", "status", 200)
		}
	})
	b.Run("on", func(b *testing.B) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		tracer := Tracer(tp)
		sql := QueryTracer(tp)
		log := slog.New(LogHandler(tp, slog.NewJSONHandler(io.Discard, nil)))
		batch := &pgx.Batch{}
		batch.Queue("SELECT 1")
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			ctx, req := tracer.Start(context.Background(), "POST /chat/:slug", trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", "POST"), attribute.String("http.route", "/chat/:slug")))
			gctx, gates := tracer.Start(ctx, "public gates")
			qctx := sql.TraceBatchStart(gctx, nil, pgx.TraceBatchStartData{Batch: batch})
			sql.TraceBatchEnd(qctx, nil, pgx.TraceBatchEndData{})
			gates.End()
			qctx = sql.TraceBatchStart(ctx, nil, pgx.TraceBatchStartData{Batch: batch})
			sql.TraceBatchEnd(qctx, nil, pgx.TraceBatchEndData{})
			_, model := tracer.Start(ctx, "chat openai", trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
					attribute.String("gen_ai.request.model", "test-model"), attribute.String("parley.llm.source", "managed")))
			model.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", 10), attribute.Int("gen_ai.usage.output_tokens", 5),
				attribute.String("gen_ai.response.finish_reasons", "stop"))
			model.End()
			qctx = sql.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{SQL: "WITH t AS (SELECT 1) INSERT INTO x SELECT * FROM t"})
			sql.TraceQueryEnd(qctx, nil, pgx.TraceQueryEndData{})
			req.SetAttributes(attribute.Int("http.response.status_code", 200))
			log.InfoContext(ctx, "request", "method", "POST", "path", "/chat/acme", "status", 200)
			req.End()
			if n++; n%1000 == 0 {
				exp.Reset()
			}
		}
	})
}
