package agent

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
)

func TestStepAside(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	jeanne := "Jeanne"
	cases := []struct {
		name      string
		channel   string
		status    string
		escalated *time.Time
		answers   bool     // the model is called
		moves     []string // the state changes asked
		status2   string   // the output's status
	}{
		{"a person holds it: stored, announced, not answered", parley.ChannelWeb, parley.StatusHuman, nil, false, nil, parley.StatusHuman},
		{"waiting for a person", parley.ChannelWeb, parley.StatusEscalated, ago(DefaultPersonWait - time.Second), false, nil, parley.StatusEscalated},
		{"waited too long: the assistant answers", parley.ChannelWeb, parley.StatusEscalated, ago(DefaultPersonWait), true, []string{parley.StatusBot}, parley.StatusBot},
		{"closed: reopened to the assistant", parley.ChannelAPI, parley.StatusClosed, nil, true, []string{parley.StatusBot}, parley.StatusBot},
		{"the assistant's", parley.ChannelWeb, parley.StatusBot, nil, true, nil, parley.StatusBot},
		{"a call stays the assistant's", parley.ChannelVoice, parley.StatusHuman, nil, true, nil, parley.StatusHuman},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p := engineFixture(t, llmtest.Turn{Text: []string{"Hello"}})
			store := &memStore{opens: true, conv: &parley.Conversation{ID: "conv-1", Status: tc.status, EscalatedAt: tc.escalated, MessageCount: 4}}
			if tc.status == parley.StatusHuman {
				store.conv.Assignee = &jeanne
			}
			e := testEngine(store, p)
			e.Now = func() time.Time { return now }
			var ev events
			out, err := e.Reply(context.Background(), testInput(tc.channel), ev.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(srv.Requests()) > 0; got != tc.answers {
				t.Fatalf("model called: %v, want %v", got, tc.answers)
			}
			if len(ev.kinds) == 0 || ev.kinds[0] != EventReady {
				t.Errorf("events %v: want EventReady first", ev.kinds)
			}
			if len(store.moves) != len(tc.moves) || (len(tc.moves) > 0 && store.moves[0] != tc.moves[0]) {
				t.Errorf("moves %v, want %v", store.moves, tc.moves)
			}
			if out.Status != tc.status2 {
				t.Errorf("status %q, want %q", out.Status, tc.status2)
			}
			if store.holder != "" {
				t.Errorf("the lease is still held by %q", store.holder)
			}
			if tc.answers {
				if len(store.announced) != 0 {
					t.Errorf("an answered turn announced %v as left to a person", store.announced)
				}
				return
			}
			if out.Result.Text != "" || out.MessageID != "" || len(store.saved) != 0 || out.MessageCount != 5 ||
				len(store.announced) != 1 || store.announced[0] != "msg-user" {
				t.Errorf("a held turn: output %+v, %d saves, announced %v", out, len(store.saved), store.announced)
			}
			if tc.status == parley.StatusHuman && (out.Assignee == nil || *out.Assignee != jeanne) {
				t.Errorf("assignee %v", out.Assignee)
			}
			for _, k := range ev.kinds {
				if k == llm.EventText {
					t.Errorf("a held turn emitted text")
				}
			}
		})
	}
}
