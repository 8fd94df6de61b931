package listing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/listing"
)

// TestConversationFilterFeedbackAndSubmission: the dashboard's inbox keeps
// the conversations with a vote, or with a submission, of the tenant only.
func TestConversationFilterFeedbackAndSubmission(t *testing.T) {
	t.Parallel()
	f := dbtest.SetupConversations(t)
	ctx := context.Background()
	reply := func(c parley.Conversation) parley.Message {
		t.Helper()
		m, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: c.TenantID, ConversationID: c.ID, SessionID: c.SessionID, Reply: "Hi."})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := f.Start(t, parley.ConversationStart{SessionID: "plain"})
	reply(plain)
	voted := f.Start(t, parley.ConversationStart{SessionID: "voted"})
	if err := f.Store.RecordFeedback(ctx, f.Tenant.ID, reply(voted).ID, -1); err != nil {
		t.Fatal(err)
	}
	lead := f.Start(t, parley.ConversationStart{SessionID: "lead"})
	reply(lead)
	if _, _, err := f.Store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.Tenant.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", ConversationID: &lead.ID, Input: json.RawMessage(`{"email":"a@example.com"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	// another tenant's conversation, voted and with a submission, is never listed
	theirs := f.Start(t, parley.ConversationStart{TenantID: f.Other.ID, SessionID: "theirs"})
	if err := f.Store.RecordFeedback(ctx, f.Other.ID, reply(theirs).ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.Other.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", ConversationID: &theirs.ID}, nil); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		filter listing.ConversationFilter
		want   []string
	}{
		{"All", listing.ConversationFilter{}, []string{lead.ID, voted.ID, plain.ID}},
		{"HasFeedback", listing.ConversationFilter{HasFeedback: true}, []string{voted.ID}},
		{"HasSubmission", listing.ConversationFilter{HasSubmission: true}, []string{lead.ID}},
		{"Both", listing.ConversationFilter{HasFeedback: true, HasSubmission: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.filter.Page, tc.filter.Limit = 1, 20
			page, err := f.Store.ListConversations(ctx, f.Tenant.ID, tc.filter)
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
		subs, err := f.Store.ConversationSubmissions(ctx, f.Tenant.ID, lead.ID)
		if err != nil || len(subs) != 1 || subs[0].ToolName != "contact" {
			t.Errorf("lead's submissions: %v %v", subs, err)
		}
		if subs, err := f.Store.ConversationSubmissions(ctx, f.Tenant.ID, theirs.ID); err != nil || len(subs) != 0 {
			t.Errorf("another tenant's conversation: %v %v", subs, err)
		}
	})

	t.Run("SubmissionsPerDay", func(t *testing.T) {
		now := time.Now().UTC()
		from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
		// A hand-over to a person is a submission, not a lead: not counted.
		if _, _, err := f.Store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.Tenant.ID, ToolType: parley.ToolEscalateToHuman,
			ToolName: "Hand over", Channel: parley.ChannelWeb, Input: json.RawMessage(`{"reason":"angry"}`)}, nil); err != nil {
			t.Fatal(err)
		}
		days, err := f.Store.SubmissionsPerDay(ctx, f.Tenant.ID, from, from.AddDate(0, 0, 3), "UTC")
		if err != nil || len(days) != 3 || days[0].Count != 0 || days[2].Count != 1 || days[2].Date != now.Format(time.DateOnly) {
			t.Errorf("per day: %v %v, want the one lead today and no hand-over", days, err)
		}
	})
}

// TestConversationSearchTotalCapped: a search counts its matches up to
// SearchTotalCap, and says when it stopped there; the pages past it can
// still be read.
func TestConversationSearchTotalCapped(t *testing.T) {
	t.Parallel()
	f := dbtest.SetupConversations(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	var convs []db.SeedConversation
	for i := range listing.SearchTotalCap + 5 { // 502 ship, 3 refund
		c := db.SeedConversation{SessionID: fmt.Sprintf("s%d", i), Channel: "web", Status: "BOT", VisitorType: "human",
			FirstUserMessage: "Do you ship abroad?", CreatedAt: now.Add(-time.Duration(i) * time.Minute),
			Messages: []db.SeedMessage{{Role: "user", Content: "Do you ship abroad?", CreatedAt: now}}}
		if i < 3 {
			c.Messages[0].Content = "What is the refund policy?"
		}
		c.ID[0], c.ID[1], c.ID[6], c.ID[8] = byte(i>>8), byte(i), 0x40, 0x80
		convs = append(convs, c)
	}
	if _, err := f.Store.CopySeedConversations(ctx, f.Tenant.ID, convs); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.Pool().Exec(ctx, "ANALYZE messages"); err != nil { // the estimates the search goes by
		t.Fatal(err)
	}
	// A search of few messages reads them off the trigram index and counts
	// every match; one of many walks the conversations and counts up to the
	// cap (here the first way is taken up to 100 matching messages).
	f.Store.SetSearchIndexFirstMax(100)
	for _, tc := range []struct {
		search, first string
		total         int
		capped        bool
	}{{"refund", "s0", 3, false}, {"SHIP", "s3", listing.SearchTotalCap, true}, {"nowhere", "", 0, false}, {"fund", "s0", 3, false},
		{"ip a", "s3", listing.SearchTotalCap, true}} {
		t.Run(tc.search, func(t *testing.T) {
			page, err := f.Store.ListConversations(ctx, f.Tenant.ID, listing.ConversationFilter{Search: tc.search, Page: 1, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != tc.total || page.TotalCapped != tc.capped || len(page.Conversations) != min(20, tc.total) {
				t.Errorf("total %d, capped %v, %d on the page; want %d, %v", page.Total, page.TotalCapped, len(page.Conversations), tc.total, tc.capped)
			}
			if tc.total > 0 && page.Conversations[0].SessionID != tc.first {
				t.Errorf("first %s, want the newest, %s", page.Conversations[0].SessionID, tc.first)
			}
		})
	}
	// Past the cap, the pages past the counted ones still list the matches.
	for _, p := range []struct{ page, want int }{{25, 20}, {26, 2}, {27, 0}} {
		page, err := f.Store.ListConversations(ctx, f.Tenant.ID, listing.ConversationFilter{Search: "ship", Page: p.page, Limit: 20})
		if err != nil || len(page.Conversations) != p.want {
			t.Errorf("page %d: %d conversations, %v; want %d", p.page, len(page.Conversations), err, p.want)
		}
	}
	// With room for them all, the 502 are read off the index: counted
	// exactly, the same pages, and the other filters still apply.
	f.Store.SetSearchIndexFirstMax(10000)
	page, err := f.Store.ListConversations(ctx, f.Tenant.ID, listing.ConversationFilter{Search: "SHIP", Page: 26, Limit: 20})
	if err != nil || page.Total != listing.SearchTotalCap+2 || page.TotalCapped || len(page.Conversations) != 2 || page.Conversations[1].SessionID != "s504" {
		t.Errorf("index first: total %d, capped %v, %d on the last page, %v", page.Total, page.TotalCapped, len(page.Conversations), err)
	}
	page, err = f.Store.ListConversations(ctx, f.Tenant.ID, listing.ConversationFilter{Search: "ship", Page: 1, Limit: 20,
		From: now.Add(-10 * time.Minute).Add(time.Second)})
	if err != nil || page.Total != 7 || page.Conversations[0].SessionID != "s3" { // s3 to s9 ship, within ten minutes
		t.Errorf("index first with a window: total %d, %v", page.Total, err)
	}
	// Another tenant's search finds none of them, whichever the way.
	for _, most := range []int{-1, 10000} {
		f.Store.SetSearchIndexFirstMax(most)
		if page, err := f.Store.ListConversations(ctx, f.Other.ID, listing.ConversationFilter{Search: "ship", Page: 1, Limit: 20}); err != nil || page.Total != 0 {
			t.Errorf("another tenant (%d): total %d, %v", most, page.Total, err)
		}
	}
	// Without a search, every conversation is counted.
	if page, err := f.Store.ListConversations(ctx, f.Tenant.ID, listing.ConversationFilter{Page: 1, Limit: 20}); err != nil || page.Total != listing.SearchTotalCap+5 || page.TotalCapped {
		t.Errorf("unfiltered: total %d, capped %v, %v", page.Total, page.TotalCapped, err)
	}
}
