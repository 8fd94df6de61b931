package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/tools/toolstest"
)

// scheduledJobs records the takeover checks an engine schedules.
type scheduledJobs struct {
	mu    sync.Mutex
	convs []string
}

func (s *scheduledJobs) ScheduleTakeoverJob(_ context.Context, _, conversationID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.convs = append(s.convs, conversationID)
	return nil
}

// Nobody there (issue 36): the tenant's hours for a person and its wait.
func TestTeamHours(t *testing.T) {
	t.Parallel()
	// Monday to Friday 09:00 to 18:00 in Paris (UTC+1 in winter).
	weekdays := parley.OfficeHours{}
	for _, d := range parley.Weekdays[:5] {
		weekdays[d] = parley.DayHours{Start: "09:00", End: "18:00"}
	}
	hours := parley.HumanHours{Mode: parley.HoursWeekly, Days: weekdays}
	sunday := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	mondayOpen := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)    // 09:00 in Paris
	mondayClosed := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC) // 18:00 in Paris
	escalate := llmtest.Turn{Text: []string{"Let me get someone from the team."},
		ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "talk_to_a_human", Arguments: []string{`{"reason":"wants to talk about a refund"}`}}}}
	escalator := toolstest.Tool(t, "Talk to a human", parley.ToolEscalateToHuman, parley.EscalateConfig{})

	turn := func(t *testing.T, now time.Time, tl []parley.Tool, turns ...llmtest.Turn) (*TurnOutput, *memStore, *scheduledJobs, int, []string) {
		t.Helper()
		srv, p := engineFixture(t, turns...)
		store := &memStore{tools: tl}
		jobs := &scheduledJobs{}
		e := testEngine(store, p)
		e.Now, e.Takeover = func() time.Time { return now }, jobs
		in := testInput(parley.ChannelWeb)
		in.Tenant.HumanHours, in.Tenant.Timezone = hours, "Europe/Paris"
		var texts []string
		out, err := e.Reply(context.Background(), in, func(ev llm.Event) {
			if ev.Kind == llm.EventText {
				texts = append(texts, ev.Text)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, store, jobs, len(srv.Requests()), texts
	}

	for _, tc := range []struct {
		name  string
		now   time.Time
		tools []parley.Tool
		want  string
	}{
		{"on a Sunday, the lead form is offered", sunday, []parley.Tool{escalator, toolstest.ContactForm(t)},
			"Nobody from the team is available right now. Leave your details here (Full name, Email, Phone) and someone will write back to you by email."},
		{"at closing time, without a lead form, an email address is asked", mondayClosed, []parley.Tool{escalator},
			"Nobody from the team is available right now. Tell me your email address and someone will reply to you by email."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, store, jobs, calls, texts := turn(t, tc.now, tc.tools, escalate)
			// The turn ends with the notice: the model is not called again,
			// nothing is escalated, nobody is left waiting.
			want := "Let me get someone from the team.\n\n" + tc.want
			if out.Result.Text != want || strings.Join(texts, "") != want {
				t.Fatalf("answer %q, streamed %q", out.Result.Text, strings.Join(texts, ""))
			}
			if calls != 1 {
				t.Errorf("%d model calls, want 1", calls)
			}
			if out.Status != parley.StatusBot || out.Result.Escalated() || len(jobs.convs) != 0 {
				t.Errorf("status %s, escalated %v, jobs %v", out.Status, out.Result.Escalated(), jobs.convs)
			}
			rec := store.saved[0]
			if rec.Escalated || rec.Reply != want || len(rec.ToolRuns) != 1 || rec.ToolRuns[0].Submission != nil {
				t.Fatalf("record %+v", rec)
			}
			if res := string(rec.ToolRuns[0].Call.Result); !strings.Contains(res, `"teamAvailable":false`) {
				t.Errorf("tool history %s", res)
			}
		})
	}

	t.Run("in the hours, the conversation waits and its wait is scheduled", func(t *testing.T) {
		t.Parallel()
		out, store, jobs, calls, _ := turn(t, mondayOpen, []parley.Tool{escalator, toolstest.ContactForm(t)},
			escalate, llmtest.Turn{Text: []string{"Someone will be with you shortly."}})
		if out.Status != parley.StatusEscalated || !store.saved[0].Escalated || calls != 2 {
			t.Fatalf("status %s, record %+v, %d calls", out.Status, store.saved[0], calls)
		}
		if len(jobs.convs) != 1 || jobs.convs[0] != "conv-1" {
			t.Errorf("jobs %v", jobs.convs)
		}
	})

	t.Run("the tenant's wait decides when the assistant answers again", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		for _, tc := range []struct {
			ago     time.Duration
			answers bool
		}{{29 * time.Second, false}, {30 * time.Second, true}} {
			srv, p := engineFixture(t, llmtest.Turn{Text: []string{"Hello"}})
			at := now.Add(-tc.ago)
			store := &memStore{opens: true, conv: &parley.Conversation{ID: "conv-1", Status: parley.StatusEscalated, EscalatedAt: &at}}
			e := testEngine(store, p)
			e.Now = func() time.Time { return now }
			in := testInput(parley.ChannelWeb)
			in.Tenant.HumanWaitSeconds = 30
			if _, err := e.Reply(context.Background(), in, func(llm.Event) {}); err != nil {
				t.Fatal(err)
			}
			if got := len(srv.Requests()) > 0; got != tc.answers {
				t.Errorf("escalated %v ago: answered %v", tc.ago, got)
			}
		}
	})
}

func TestOpenAt(t *testing.T) {
	t.Parallel()
	hours := parley.OfficeHours{"monday": {Start: "09:00", End: "24:00"}}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Time
		open bool
	}{
		{time.Date(2026, 11, 30, 8, 59, 0, 0, paris), false},
		{time.Date(2026, 11, 30, 9, 0, 0, 0, paris), true},
		{time.Date(2026, 11, 30, 23, 59, 0, 0, paris), true},
		{time.Date(2026, 12, 1, 0, 0, 0, 0, paris), false},
	} {
		if got := openAt(hours, tc.at); got != tc.open {
			t.Errorf("%v: open %v, want %v", tc.at, got, tc.open)
		}
	}
}
