package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFromEnv: traces are off unless the OTEL_* variables ask for OTLP,
// and a value Parley cannot honour stops the start, naming its variable.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env     map[string]string
		on      bool
		sampler string
		err     string
	}{
		{env: nil, on: false},
		{env: map[string]string{"OTEL_SERVICE_NAME": "chat"}, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, on: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
			on: true, sampler: "traceidratio"},
		{env: map[string]string{"OTEL_TRACES_SAMPLER": "always_off", "OTEL_TRACES_SAMPLER_ARG": "junk"}, sampler: "always_off"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, err: "OTEL_TRACES_EXPORTER: \"jaeger\" is not otlp or none"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, err: "OTEL_TRACES_EXPORTER"},
		{env: map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, err: "OTEL_TRACES_SAMPLER: \"sometimes\" is not one of always_on"},
		{env: map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, err: "OTEL_TRACES_SAMPLER"},
		{env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"}, err: "OTEL_TRACES_SAMPLER_ARG: \"1.5\""},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT: \"collector:4318\" is not an absolute http(s) URL"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL: \"grpc\" is not supported"},
		{env: map[string]string{"OTEL_SDK_DISABLED": "yes"}, err: "OTEL_SDK_DISABLED"},
		{env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_always_off"}, sampler: "parentbased_always_off"},
	} {
		s, err := FromEnv(env(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one containing %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || s.On != c.on || s.SamplerFunc() == nil || s.Sampler != c.sampler {
			t.Errorf("%v: on %v sampler %q (%v), want on %v sampler %q", c.env, s.On, s.Sampler, err, c.on, c.sampler)
		}
	}
}

// TestOff: traces off build nothing that costs.
func TestOff(t *testing.T) {
	t.Parallel()
	p, err := New(context.Background(), Settings{})
	if err != nil || p.TracerProvider() != nil || p.Shutdown(context.Background()) != nil {
		t.Fatalf("off: %v %v", p.TracerProvider(), err)
	}
	if Middleware(nil) != nil || QueryTracer(nil) != nil || JobMiddleware(nil) != nil || Transport(nil, nil) != nil {
		t.Error("off: something to run")
	}
}

func TestVerb(t *testing.T) {
	t.Parallel()
	for sql, want := range map[string]string{
		"SELECT 1": "SELECT", "\n\t  with x AS (SELECT 1) SELECT * FROM x": "WITH", "-- a note\nINSERT INTO t VALUES ($1)": "INSERT",
		"(SELECT 1) UNION (SELECT 2)": "SELECT", "begin": "BEGIN", "select_secret('ada@example.com')": "SQL", "": "SQL",
		"'ada@example.com'": "SQL", "VACUUM": "SQL",
	} {
		if got := verb(sql); got != want {
			t.Errorf("verb(%q) = %q, want %q", sql, got, want)
		}
	}
}

// TestLogHandler: a line logged with a span's context carries its ids,
// one without carries none.
func TestLogHandler(t *testing.T) {
	t.Parallel()
	p := NewWithExporter(tracetest.NewInMemoryExporter(), false)
	var buf bytes.Buffer
	log := slog.New(LogHandler(p.TracerProvider(), slog.NewJSONHandler(&buf, nil))).With("request_id", "r1")
	ctx, span := Tracer(p.TracerProvider()).Start(context.Background(), "test")
	log.InfoContext(ctx, "with")
	log.Info("without")
	span.End()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var with, without map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &with)
	_ = json.Unmarshal([]byte(lines[1]), &without)
	if with["trace_id"] != span.SpanContext().TraceID().String() || with["span_id"] != span.SpanContext().SpanID().String() || with["request_id"] != "r1" {
		t.Errorf("line with a span: %v", with)
	}
	if _, ok := without["trace_id"]; ok {
		t.Errorf("line without a span: %v", without)
	}
}

// TestJobMetadata: a job inserted within a span carries its traceparent
// beside the metadata it had; its work continues the trace.
func TestJobMetadata(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	p := NewWithExporter(exp, false)
	mw := JobMiddleware(p.TracerProvider())[0].(*jobMiddleware)
	ctx, span := Tracer(p.TracerProvider()).Start(context.Background(), "request")
	params := []*rivertype.JobInsertParams{{Kind: "k", Metadata: []byte(`{"kept":1}`)}, {Kind: "k"}}
	if _, err := mw.InsertMany(ctx, params, func(context.Context) ([]*rivertype.JobInsertResult, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	span.End()
	var meta map[string]any
	if err := json.Unmarshal(params[0].Metadata, &meta); err != nil || meta["kept"] != float64(1) {
		t.Fatalf("metadata %s lost what it had (%v)", params[0].Metadata, err)
	}
	for _, prm := range params {
		job := &rivertype.JobRow{ID: 7, Kind: "k", Queue: "q", Metadata: prm.Metadata}
		if err := mw.Work(context.Background(), job, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	spans := exp.GetSpans()
	if len(spans) != 3 || spans[1].Name != "job k" || spans[1].SpanContext.TraceID() != span.SpanContext().TraceID() ||
		spans[1].Parent.SpanID() != span.SpanContext().SpanID() || spans[2].SpanContext.TraceID() != span.SpanContext().TraceID() {
		t.Errorf("spans %v: the jobs' work does not continue the request's trace", spans)
	}
	// Outside any span, nothing is added.
	plain := []*rivertype.JobInsertParams{{Kind: "k"}}
	_, _ = mw.InsertMany(context.Background(), plain, func(context.Context) ([]*rivertype.JobInsertResult, error) { return nil, nil })
	if plain[0].Metadata != nil {
		t.Errorf("metadata %s outside a span", plain[0].Metadata)
	}
}
