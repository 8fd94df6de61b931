package listing_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/listing"
)

// TestConversationResolution builds one conversation for each rule of
// "resolved by the assistant" and checks each is counted where it belongs:
// overall, by channel, by segment and in the timeline; another tenant's
// conversations and the test chat's are never counted.
func TestConversationResolution(t *testing.T) {
	t.Parallel()
	f := dbtest.SetupConversations(t)
	ctx := context.Background()
	seq := 0
	// converse stores the visitor's messages of turns, each answered by the
	// assistant when the answer is not "".
	converse := func(tenantID string, start func(*parley.ConversationStart), escalate bool, turns ...string) (parley.Conversation, []parley.Message) {
		t.Helper()
		seq++
		p := parley.ConversationStart{TenantID: tenantID, SessionID: "res-" + string(rune('a'+seq)), Limit: 1000}
		if start != nil {
			start(&p)
		}
		var conv *parley.Conversation
		var replies []parley.Message
		for i := 0; i < len(turns); i += 2 {
			c, _, _, err := f.Store.StartTurn(ctx, p, turns[i], conv)
			if err != nil {
				t.Fatal(err)
			}
			conv = &c
			if turns[i+1] == "" {
				continue
			}
			m, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: tenantID, ConversationID: c.ID, SessionID: p.SessionID,
				Reply: turns[i+1], Escalated: escalate && i+2 >= len(turns)})
			if err != nil {
				t.Fatal(err)
			}
			replies = append(replies, m)
		}
		return *conv, replies
	}
	voice := func(p *parley.ConversationStart) { p.Channel = parley.ChannelVoice }

	def, err := f.Store.Segment(ctx, f.Tenant.ID, "default")
	if err != nil {
		t.Fatal(err)
	}
	// resolved: answered twice, a vote up, different questions.
	_, r := converse(f.Tenant.ID, func(p *parley.ConversationStart) { p.SegmentID = &def.ID }, false, "What are your opening hours?", "9 to 5.", "And on Sundays too?", "Closed on Sundays.")
	if err := f.Store.RecordFeedback(ctx, f.Tenant.ID, r[0].ID, 1); err != nil {
		t.Fatal(err)
	}
	// resolved too: "thanks a lot" twice is too short to be a question asked again.
	converse(f.Tenant.ID, nil, false, "thanks a lot", "You're welcome.", "Thanks a lot!", "Anytime.")
	// escalated by the assistant.
	converse(f.Tenant.ID, voice, true, "I want to speak to someone", "Connecting you.")
	// taken over: a person replied.
	taken, _ := converse(f.Tenant.ID, nil, false, "Can I change my delivery address?", "Yes, in your account.")
	if _, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, taken.ID, parley.Holder{Name: "Jeanne"}, "I changed it for you."); err != nil {
		t.Fatal(err)
	}
	// voted down.
	_, r = converse(f.Tenant.ID, voice, false, "Do you ship to Canada?", "No.")
	if err := f.Store.RecordFeedback(ctx, f.Tenant.ID, r[0].ID, -1); err != nil {
		t.Fatal(err)
	}
	// the question asked again, worded nearly the same.
	repeated, _ := converse(f.Tenant.ID, nil, false, "How do I reset my password?", "Use the link.", "how do i reset my password??", "Use the link.")
	// a near repeat: one letter apart, trigram-similar.
	near, _ := converse(f.Tenant.ID, nil, false, "How can I cancel my subscription", "In settings.", "How can I cancel my subscriptions", "In settings.")
	// never answered.
	converse(f.Tenant.ID, nil, false, "Hello?", "")
	// the test chat's and another tenant's: not counted.
	converse(f.Tenant.ID, func(p *parley.ConversationStart) { p.Test = true }, false, "Test question", "Test answer.")
	converse(f.Other.ID, nil, false, "What are your opening hours?", "9 to 5.")

	for _, c := range []parley.Conversation{repeated, near} {
		var flagged bool
		if err := f.Store.Pool().QueryRow(ctx, `SELECT repeated_question FROM conversations WHERE id = $1`, c.ID).Scan(&flagged); err != nil || !flagged {
			t.Errorf("conversation %s: repeated_question %v, %v", *c.FirstUserMessage, flagged, err)
		}
	}

	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	q := listing.StatsQuery{Filter: listing.ConversationFilter{From: today.AddDate(0, 0, -2), To: today.AddDate(0, 0, 1)},
		Granularity: "day", Location: "UTC"}
	st, err := f.Store.ConversationStats(ctx, f.Tenant.ID, q)
	if err != nil {
		t.Fatal(err)
	}
	res := st.Resolution
	if got, want := jsonOf(res.ResolutionCounts), `{"conversations":8,"resolved":2,"resolvedRate":0.25,"handedOff":2,"handedOffRate":0.25,"votesUp":1,"votesDown":1,"votesUpRate":0.5}`; got != want {
		t.Errorf("resolution %s, want %s", got, want)
	}
	if len(res.Timeline) != 3 || res.Timeline[2].Date != today.Format(time.DateOnly) || res.Timeline[2].Resolved != 2 ||
		res.Timeline[0].Conversations != 0 || res.Timeline[0].ResolvedRate != nil {
		t.Errorf("timeline %s", jsonOf(res.Timeline))
	}
	if got, want := jsonOf(res.ByChannel), `[{"channel":"web","conversations":6,"resolved":2,"resolvedRate":0.3333,"handedOff":1,"handedOffRate":0.1667,"votesUp":1,"votesDown":0,"votesUpRate":1},`+
		`{"channel":"agent","conversations":0,"resolved":0,"resolvedRate":null,"handedOff":0,"handedOffRate":null,"votesUp":0,"votesDown":0,"votesUpRate":null},`+
		`{"channel":"voice","conversations":2,"resolved":0,"resolvedRate":0,"handedOff":1,"handedOffRate":0.5,"votesUp":0,"votesDown":1,"votesUpRate":0},`+
		`{"channel":"api","conversations":0,"resolved":0,"resolvedRate":null,"handedOff":0,"handedOffRate":null,"votesUp":0,"votesDown":0,"votesUpRate":null}]`; got != want {
		t.Errorf("by channel %s\nwant %s", got, want)
	}
	if len(res.BySegment) != 2 || res.BySegment[0].Segment != "default" || res.BySegment[0].Conversations != 1 || res.BySegment[0].Resolved != 1 ||
		res.BySegment[1].Segment != listing.NoSegment || res.BySegment[1].Conversations != 7 || res.BySegment[1].Resolved != 1 {
		t.Errorf("by segment %s", jsonOf(res.BySegment))
	}

	// Filtered to the voice channel: the escalated and the voted down.
	q.Filter.Channel = parley.ChannelVoice
	if st, err = f.Store.ConversationStats(ctx, f.Tenant.ID, q); err != nil {
		t.Fatal(err)
	}
	if r := st.Resolution; r.Conversations != 2 || r.Resolved != 0 || r.HandedOff != 1 || r.VotesDown != 1 {
		t.Errorf("voice %s", jsonOf(r.ResolutionCounts))
	}

	// The other tenant's one conversation, resolved.
	q.Filter.Channel = ""
	if st, err = f.Store.ConversationStats(ctx, f.Other.ID, q); err != nil {
		t.Fatal(err)
	}
	if r := st.Resolution; r.Conversations != 1 || r.Resolved != 1 || r.HandedOff != 0 {
		t.Errorf("other tenant %s", jsonOf(r.ResolutionCounts))
	}
}

// jsonOf re-encodes v compactly, for comparing parts of an answer.
func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
