package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// TestConversationFilterFeedbackAndSubmission: the dashboard's inbox keeps
// the conversations with a vote, or with a submission, of the tenant only.
func TestConversationFilterFeedbackAndSubmission(t *testing.T) {
	t.Parallel()
	f := setupConversations(t)
	ctx := context.Background()
	reply := func(c parley.Conversation) parley.Message {
		t.Helper()
		m, err := f.store.SaveTurn(ctx, parley.TurnRecord{TenantID: c.TenantID, ConversationID: c.ID, SessionID: c.SessionID, Reply: "Hi."})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := f.start(t, parley.ConversationStart{SessionID: "plain"})
	reply(plain)
	voted := f.start(t, parley.ConversationStart{SessionID: "voted"})
	if err := f.store.RecordFeedback(ctx, f.tenant.ID, reply(voted).ID, -1); err != nil {
		t.Fatal(err)
	}
	lead := f.start(t, parley.ConversationStart{SessionID: "lead"})
	reply(lead)
	if _, _, err := f.store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.tenant.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", ConversationID: &lead.ID, Input: json.RawMessage(`{"email":"a@example.com"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	// another tenant's conversation, voted and with a submission, is never listed
	theirs := f.start(t, parley.ConversationStart{TenantID: f.other.ID, SessionID: "theirs"})
	if err := f.store.RecordFeedback(ctx, f.other.ID, reply(theirs).ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.other.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", ConversationID: &theirs.ID}, nil); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		filter db.ConversationFilter
		want   []string
	}{
		{"All", db.ConversationFilter{}, []string{lead.ID, voted.ID, plain.ID}},
		{"HasFeedback", db.ConversationFilter{HasFeedback: true}, []string{voted.ID}},
		{"HasSubmission", db.ConversationFilter{HasSubmission: true}, []string{lead.ID}},
		{"Both", db.ConversationFilter{HasFeedback: true, HasSubmission: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.filter.Page, tc.filter.Limit = 1, 20
			page, err := f.store.ListConversations(ctx, f.tenant.ID, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range page.Conversations {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tc.want) || page.Total != len(tc.want) {
				t.Errorf("got %v (total %d), want %v", got, page.Total, tc.want)
			}
		})
	}

	t.Run("ConversationSubmissions", func(t *testing.T) {
		subs, err := f.store.ConversationSubmissions(ctx, f.tenant.ID, lead.ID)
		if err != nil || len(subs) != 1 || subs[0].ToolName != "contact" {
			t.Errorf("lead's submissions: %v %v", subs, err)
		}
		if subs, err := f.store.ConversationSubmissions(ctx, f.tenant.ID, theirs.ID); err != nil || len(subs) != 0 {
			t.Errorf("another tenant's conversation: %v %v", subs, err)
		}
	})

	t.Run("SubmissionsPerDay", func(t *testing.T) {
		now := time.Now().UTC()
		from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
		days, err := f.store.SubmissionsPerDay(ctx, f.tenant.ID, from, from.AddDate(0, 0, 3), "UTC")
		if err != nil || len(days) != 3 || days[0].Count != 0 || days[2].Count != 1 || days[2].Date != now.Format(time.DateOnly) {
			t.Errorf("per day: %v %v", days, err)
		}
	})
}
