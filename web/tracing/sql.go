package tracing

import (
	"context"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// QueryTracer is the pgx pool's tracer (db.WithQueryTracer): a client span
// per statement ("SELECT", "INSERT", ...: the statement's first word) and
// one per batch ("BATCH", with its size), never the statement's text or its
// arguments. Only statements run within a span (a request's, a job's) get
// one: the pool's own traffic (River's polling, the live hub's LISTEN, the
// session store's clean-up) stays out of the traces. nil when tp is nil.
func QueryTracer(tp trace.TracerProvider) *SQLTracer {
	if tp == nil {
		return nil
	}
	return &SQLTracer{tracer: Tracer(tp)}
}

// SQLTracer implements pgx.QueryTracer and pgx.BatchTracer.
type SQLTracer struct {
	tracer trace.Tracer
}

var (
	_ pgx.QueryTracer = (*SQLTracer)(nil)
	_ pgx.BatchTracer = (*SQLTracer)(nil)
)

// sqlSpanKey marks the context of a statement the tracer gave a span, so
// that its end does not end its parent's.
type sqlSpanKey struct{}

var dbSystem = attribute.String("db.system.name", "postgresql")

func (t *SQLTracer) start(ctx context.Context, name string, attrs ...attribute.KeyValue) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, sqlSpanKey{}, span)
}

func (t *SQLTracer) end(ctx context.Context, err error) {
	span, ok := ctx.Value(sqlSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if err != nil && err != pgx.ErrNoRows {
		errorStatus(span, err)
	}
	span.End()
}

// TraceQueryStart starts a statement's span.
func (t *SQLTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	v := verb(data.SQL)
	return t.start(ctx, v, dbSystem, attribute.String("db.operation.name", v))
}

// TraceQueryEnd ends it.
func (t *SQLTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.end(ctx, data.Err)
}

// TraceBatchStart starts a batch's span.
func (t *SQLTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	n := 0
	if data.Batch != nil {
		n = data.Batch.Len()
	}
	return t.start(ctx, "BATCH", dbSystem, attribute.String("db.operation.name", "BATCH"),
		attribute.Int("db.operation.batch.size", n))
}

// TraceBatchQuery is each statement of a batch: within the batch's span.
func (t *SQLTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd ends the batch's span.
func (t *SQLTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	t.end(ctx, data.Err)
}
