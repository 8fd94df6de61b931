package metrics

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley/agent"
)

// samples gathers m's registry: each sample by its name and labels
// (name{label=value,...}, labels sorted by name), histograms by their count.
func samples(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case s.Counter != nil:
				out[key] = s.Counter.GetValue()
			case s.Gauge != nil:
				out[key] = s.Gauge.GetValue()
			case s.Histogram != nil:
				out[key] = float64(s.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

// TestLabelsBounded checks that values outside a label's known set are
// counted as other, and that the tenant's slug labels turns only when
// asked.
func TestLabelsBounded(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	m.TurnDone(agent.TurnStats{Tenant: "acme", Channel: "carrier pigeon", Outcome: agent.TurnAnswered, Duration: time.Second, FirstText: time.Millisecond})
	m.TurnDone(agent.TurnStats{Tenant: "acme", Channel: "web", Outcome: agent.TurnLimitReached, Duration: time.Millisecond})
	m.ModelCall(agent.ModelCallStats{Provider: "https://llm.example.com/v1", Outcome: agent.ModelTimeout, Duration: time.Second})
	m.ToolCall("DROP TABLE", true)
	m.ToolCall("SUBMIT_FORM", false)
	m.DeliveryAttempt("delivered")
	m.Refused(LimitMonthly)
	got := samples(t, m)
	for key, want := range map[string]float64{
		"parley_chat_turns_total{channel=other,outcome=answered}":              1,
		"parley_chat_turns_total{channel=web,outcome=limit_reached}":           1,
		"parley_chat_turn_duration_seconds{channel=other}":                     1,
		"parley_chat_turn_duration_seconds{channel=web}":                       0, // a refused turn has no time
		"parley_chat_time_to_first_token_seconds{channel=other}":               1,
		"parley_model_calls_total{provider=other,result=timeout}":              1,
		"parley_tool_calls_total{outcome=success,tool_type=other}":             1,
		"parley_tool_calls_total{outcome=failure,tool_type=SUBMIT_FORM}":       1,
		"parley_webhook_delivery_attempts_total{outcome=delivered}":            1,
		"parley_limit_refusals_total{limit=monthly_conversations}":             1,
		"parley_limit_refusals_total{limit=per_address}":                       0,
		"parley_model_tokens_total{direction=input,provider=openai}":           0,
		"parley_webhook_delivery_attempts_total{outcome=failed}":               0,
		"parley_chat_turns_total{channel=voice,outcome=client_gone}":           0,
		"parley_model_call_duration_seconds{provider=anthropic}":               0,
		"parley_tool_calls_total{outcome=failure,tool_type=ESCALATE_TO_HUMAN}": 0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	for key := range got {
		for _, leak := range []string{"acme", "pigeon", "example.com", "DROP"} {
			if strings.Contains(key, leak) {
				t.Errorf("%s holds %q", key, leak)
			}
		}
	}

	tenants := New(Options{TenantLabel: true})
	tenants.TurnDone(agent.TurnStats{Tenant: "acme", Channel: "web", Outcome: agent.TurnAnswered})
	if got := samples(t, tenants)["parley_chat_turns_total{channel=web,outcome=answered,tenant=acme}"]; got != 1 {
		t.Errorf("with the tenant label: %v", slices.Sorted(maps.Keys(samples(t, tenants))))
	}
}

// TestObserveJobs times River's job events by kind, queue and outcome.
func TestObserveJobs(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	events := make(chan *river.Event, 4)
	stats := &river.JobStatistics{RunDuration: 20 * time.Millisecond, QueueWaitDuration: time.Second}
	events <- &river.Event{Kind: river.EventKindJobCompleted, Job: &rivertype.JobRow{Kind: "webhook_delivery", Queue: "webhooks", State: rivertype.JobStateCompleted}, JobStats: stats}
	events <- &river.Event{Kind: river.EventKindJobFailed, Job: &rivertype.JobRow{Kind: "webhook_delivery", Queue: "webhooks", State: rivertype.JobStateRetryable}, JobStats: stats}
	events <- &river.Event{Kind: river.EventKindJobSnoozed, Job: &rivertype.JobRow{Kind: "embed", Queue: "embed", State: rivertype.JobStateScheduled}, JobStats: stats}
	events <- &river.Event{Kind: river.EventKindJobCompleted} // no job: skipped
	close(events)
	m.ObserveJobs(events)
	got := samples(t, m)
	for _, key := range []string{
		"parley_job_duration_seconds{kind=webhook_delivery,outcome=completed,queue=webhooks}",
		"parley_job_duration_seconds{kind=webhook_delivery,outcome=retryable,queue=webhooks}",
		"parley_job_duration_seconds{kind=embed,outcome=snoozed,queue=embed}",
		"parley_job_queue_wait_seconds{kind=embed,queue=embed}",
	} {
		if got[key] != 1 {
			t.Errorf("%s = %v, want 1", key, got[key])
		}
	}
	if got["parley_job_queue_wait_seconds{kind=webhook_delivery,queue=webhooks}"] != 2 {
		t.Errorf("queue waits: %v", got)
	}
}

// BenchmarkRequest is what the middleware adds to a request of a route of
// the table (its series at hand) and of a path of none (looked up by
// label).
//
//	go test -run '^$' -bench . -benchmem ./web/metrics/
func BenchmarkRequest(b *testing.B) {
	e := echo.New()
	answer := func(c echo.Context) error { c.Response().Status = http.StatusOK; return nil }
	e.POST("/chat/:slug", answer)
	m := New(Options{})
	m.Routes(e.Routes())
	h := m.Middleware(answer)
	for _, path := range []string{"/chat/:slug", "/no/route"} {
		b.Run(strings.Trim(strings.ReplaceAll(path, "/", "_"), "_"), func(b *testing.B) {
			c := e.NewContext(httptest.NewRequest("POST", "/chat/acme", nil), httptest.NewRecorder())
			c.SetPath(path)
			b.ReportAllocs()
			for b.Loop() {
				_ = h(c)
			}
		})
	}
	b.Run("turn", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.TurnDone(agent.TurnStats{Channel: "web", Outcome: agent.TurnAnswered, Duration: time.Second, FirstText: time.Millisecond})
			m.ModelCall(agent.ModelCallStats{Provider: "openai", Outcome: agent.ModelOK, Duration: time.Second, InputTokens: 10, OutputTokens: 5})
		}
	})
}
