package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/tracing"
	"github.com/parley/parley/web/webtest"
)

// TestTraces: one chat turn through the real server, with traces to the
// SDK's in-memory exporter, is one trace continuing the caller's
// traceparent: the request's span, the public gates, SQL statements, the
// model call and the tool, and the webhook delivery job the tool's
// submission enqueued, worked by River, with its outgoing call carrying the
// trace to the receiver. The request's log lines carry its trace id.
//
// Not parallel: it works the delivery queue with a River client, which must
// not take the jobs of tests running beside it.
func TestTraces(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := tracing.NewWithExporter(exp, false)
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	model := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "contact_form",
			Arguments: []string{`{"full_name":"Ada Lovelace","email":"ada@example.com"}`}}}},
		llmtest.Turn{Text: []string{"Thanks Ada, we will be in touch."}})
	dbtest.New(t)
	cfg := webtest.Config(t, webtest.ChatEnv(model.URL))
	cfg.Traces = tp.TracerProvider()
	store, err := db.Open(ctx, dbtest.URL(), 4, cfg.DBOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var logs webtest.LogBuffer
	srv, err := web.NewServer(cfg, store, slog.New(cfg.LogHandler(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.NewBundle(t, srv, store)

	received := make(chan http.Header, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case received <- r.Header.Clone():
		default:
		}
	}))
	t.Cleanup(hook.Close)
	ten := b.NewTenant(t, "scale")
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Contact form", "description": "Collect a lead", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{
			map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true},
			map[string]any{"name": "email", "label": "Email", "type": "email", "required": true},
		}}}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/webhooks", ten.Token,
		map[string]any{"url": hook.URL + "/hook", "events": []string{"submission.created"}}); st != 201 {
		t.Fatalf("webhook: %d %v", st, body)
	}
	// The set-up's requests were traces of their own.
	exp.Reset()

	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "I am Ada, ada@example.com", "sessionId": "traces-1"},
		map[string]string{"X-Agent-Model": "test-agent", "traceparent": "00-" + callerTrace + "-00f067aa0ba902b7-01"})
	if r.Status != 200 || r.Body["contactSubmitted"] != true {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}

	river, err := srv.NewJobClient(jobs.Timing{})
	if err != nil {
		t.Fatal(err)
	}
	if err := river.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = river.Stop(ctx) })
	var hookHeader http.Header
	select {
	case hookHeader = <-received:
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook delivery was not made")
	}
	if tp := hookHeader.Get("traceparent"); !strings.HasPrefix(tp, "00-"+callerTrace+"-") {
		t.Errorf("the delivery's traceparent %q does not continue the request's trace", tp)
	}

	// The request's span ends once its answer is written, the job's once
	// River has the worker's result: wait for both.
	var spans tracetest.SpanStubs
	deadline := time.Now().Add(webtest.Patience)
	for {
		spans = exp.GetSpans()
		if spanNamed(spans, "POST /chat/:slug") != nil && spanNamed(spans, "job webhook_delivery") != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans so far: %v", spanNames(spans))
		}
		time.Sleep(10 * time.Millisecond)
	}
	req := spanNamed(spans, "POST /chat/:slug")
	if req.SpanContext.TraceID().String() != callerTrace || req.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the request's span %s (parent %s) does not continue the caller's traceparent", req.SpanContext.TraceID(), req.Parent.SpanID())
	}
	if req.SpanKind != trace.SpanKindServer || !hasAttr(*req, "http.route", "/chat/:slug") || !hasAttr(*req, "http.response.status_code", "200") {
		t.Errorf("request span: kind %v, attributes %v", req.SpanKind, req.Attributes)
	}
	inTrace := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() == callerTrace {
			inTrace[s.Name] = append(inTrace[s.Name], s)
		}
	}
	for _, name := range []string{"public gates", "chat openai", "tool SUBMIT_FORM", "job webhook_delivery", "POST"} {
		if len(inTrace[name]) == 0 {
			t.Errorf("no %q span in the request's trace; it has %v", name, spanNames(spans))
		}
	}
	if g := inTrace["public gates"]; len(g) == 1 && g[0].Parent.SpanID() != req.SpanContext.SpanID() {
		t.Errorf("the gates' span is not the request's child")
	}
	sql := 0
	for _, s := range spans {
		if s.SpanContext.TraceID().String() == callerTrace && hasAttr(s, "db.system.name", "postgresql") {
			sql++
			if s.SpanKind != trace.SpanKindClient || len(s.Name) > 12 || strings.Contains(s.Name, " ") {
				t.Errorf("SQL span %q (%v): a statement's span is named by its first word", s.Name, s.SpanKind)
			}
			for _, a := range s.Attributes {
				if strings.Contains(a.Value.String(), "ada@example.com") {
					t.Errorf("SQL span %q carries a parameter: %v", s.Name, a)
				}
			}
		}
	}
	if sql < 3 {
		t.Errorf("%d SQL spans in the request's trace, want the turn's statements", sql)
	}
	if job := inTrace["job webhook_delivery"]; len(job) == 1 {
		if job[0].SpanKind != trace.SpanKindConsumer {
			t.Errorf("job span kind %v", job[0].SpanKind)
		}
		post := inTrace["POST"]
		if len(post) == 0 || post[0].Parent.SpanID() != job[0].SpanContext.SpanID() {
			t.Errorf("the delivery's outgoing call is not the job's child")
		}
	}

	lines := logs.Lines(t, "request")
	found := false
	for _, l := range lines {
		if l["path"] == "/chat/"+ten.Slug {
			found = true
			if l["trace_id"] != callerTrace || l["span_id"] != req.SpanContext.SpanID().String() {
				t.Errorf("the chat's request line %v does not carry its span's ids", l)
			}
		}
	}
	if !found {
		t.Errorf("no request line for the chat in %d lines", len(lines))
	}
}

func spanNamed(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, a := range s.Attributes {
		if string(a.Key) == key && a.Value.String() == value {
			return true
		}
	}
	return false
}

// TestTracesOff: with no OTEL_* variable the server traces nothing: no
// provider, no middleware, the log handler as it was.
func TestTracesOff(t *testing.T) {
	t.Parallel()
	cfg := webtest.Config(t)
	if cfg.Tracing.On {
		t.Fatal("traces on without any OTEL_* variable")
	}
	stop, err := web.OpenTraces(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Traces != nil || len(cfg.DBOptions()) != 0 || stop(context.Background()) != nil {
		t.Errorf("traces off: provider %v, %d database options", cfg.Traces, len(cfg.DBOptions()))
	}
	h := slog.NewJSONHandler(io.Discard, nil)
	if cfg.LogHandler(h) != slog.Handler(h) {
		t.Error("traces off wrap the log handler")
	}
	if tracing.Middleware(nil) != nil {
		t.Error("traces off: a middleware")
	}
}

// TestTracesConfig: a bad OTEL_* value stops the start with an error
// naming it, as bad PARLEY_* values do.
func TestTracesConfig(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://localhost/parley"}
	for name, value := range map[string]string{"OTEL_TRACES_SAMPLER": "sometimes", "OTEL_TRACES_EXPORTER": "zipkin",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_SAMPLER_ARG": "2"} {
		env := map[string]string{name: value, "OTEL_TRACES_SAMPLER": "traceidratio"}
		if name == "OTEL_TRACES_SAMPLER" {
			env[name] = value
		}
		for k, v := range base {
			env[k] = v
		}
		_, err := web.LoadConfig(func(k string) string { return env[k] }, nil)
		if err == nil || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s=%s: error %v, want one naming the variable", name, value, err)
		}
	}
	cfg, err := web.LoadConfig(func(k string) string {
		return map[string]string{"DATABASE_URL": "postgres://localhost/parley", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}[k]
	}, nil)
	if err != nil || !cfg.Tracing.On {
		t.Fatalf("an OTLP endpoint: on %v, %v", cfg.Tracing.On, err)
	}
	stop, err := web.OpenTraces(context.Background(), &cfg)
	if err != nil || cfg.Traces == nil {
		t.Fatalf("OpenTraces: %v %v", cfg.Traces, err)
	}
	// Nothing was sent, so nothing waits for the collector.
	if err := stop(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
