package tracing

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// JobMiddleware is River's middleware of traces, for the insert-only
// clients of db (db.WithJobMiddleware) and the working client of jobs: a
// job inserted within a span carries its traceparent in its metadata, and
// working a job is a consumer span ("job " and its kind) continuing that
// trace, or starting one for a job inserted outside any (a periodic job).
// Nil when tp is nil.
func JobMiddleware(tp trace.TracerProvider) []rivertype.Middleware {
	if tp == nil {
		return nil
	}
	return []rivertype.Middleware{&jobMiddleware{tracer: Tracer(tp)}}
}

type jobMiddleware struct {
	river.MiddlewareDefaults
	tracer trace.Tracer
}

var (
	_ rivertype.JobInsertMiddleware = (*jobMiddleware)(nil)
	_ rivertype.WorkerMiddleware    = (*jobMiddleware)(nil)
)

// metadataKey is the job metadata's member holding the W3C traceparent
// (and tracestate's, when there is one).
const metadataKey = "otel"

// InsertMany writes the inserting span's context into each job's metadata.
func (m *jobMiddleware) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		carrier := propagation.MapCarrier{}
		propagator.Inject(ctx, carrier)
		for _, p := range params {
			meta := map[string]json.RawMessage{}
			if len(p.Metadata) > 0 {
				if err := json.Unmarshal(p.Metadata, &meta); err != nil {
					continue // not an object: left as it is
				}
			}
			b, _ := json.Marshal(carrier)
			meta[metadataKey] = b
			if out, err := json.Marshal(meta); err == nil {
				p.Metadata = out
			}
		}
	}
	return doInner(ctx)
}

// Work runs the job within its span.
func (m *jobMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var meta struct {
		Otel propagation.MapCarrier `json:"otel"`
	}
	if len(job.Metadata) > 0 && json.Unmarshal(job.Metadata, &meta) == nil && meta.Otel != nil {
		ctx = propagator.Extract(ctx, meta.Otel)
	}
	ctx, span := m.tracer.Start(ctx, "job "+job.Kind, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.system", "river"),
			attribute.String("messaging.destination.name", job.Queue),
			attribute.String("messaging.message.id", strconv.FormatInt(job.ID, 10)),
			attribute.Int("river.attempt", job.Attempt)))
	defer span.End()
	err := doInner(ctx)
	if err != nil {
		errorStatus(span, err)
	}
	return err
}
