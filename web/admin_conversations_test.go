package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// inboxFixture is an owned tenant with a few conversations of every kind.
type inboxFixture struct {
	ten                              tenant
	ada, agentConv, escalated, janua parley.Conversation
	pricing                          parley.CorpusEntry // the knowledge ada's first answer drew on
	visitor                          db.VisitorDetail
	submission                       parley.Submission
}

func seedInbox(t *testing.T, b *bundle) inboxFixture {
	t.Helper()
	return seedInboxOf(t, b, b.ownedTenant(t, "scale"))
}

// seedInboxOf gives ten the conversations of an inboxFixture.
func seedInboxOf(t *testing.T, b *bundle, ten tenant) inboxFixture {
	t.Helper()
	ctx := context.Background()
	ct := convTenant{tenant: ten}
	sales, err := b.db.CreateSegment(ctx, ten.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
		SystemPrompt: parley.Some("You sell.")})
	mustStep(t, "creating a segment", err)
	visitor, err := b.db.CreateVisitor(ctx, ten.ID, db.VisitorWrite{Email: parley.Some("ada@example.com")})
	mustStep(t, "creating a visitor", err)
	now := time.Now().UTC()
	page := "https://shop.example/pricing"
	f := inboxFixture{ten: ten, visitor: visitor}
	f.pricing, _, err = b.db.UpsertCorpus(ctx, ten.ID, 100, db.CorpusWrite{Title: parley.Some("Plans and prices"),
		Content: parley.Some("Starter is free; Team is 49 EUR a month.")})
	mustStep(t, "adding a knowledge entry", err)
	f.ada = b.addConversation(t, ct, seedConversation{
		start: func(p *parley.ConversationStart) { p.VisitorID, p.PageURL, p.SegmentID = &visitor.ID, &page, &sales.ID },
		turns: []string{"How much is the Team plan?", "It is 49 EUR a month.", "Can someone call me?", "Of course, we will call you."},
		tools: []parley.ToolCall{{ToolName: "contact_form", ToolType: "SUBMIT_FORM",
			Input:  json.RawMessage(`{"email":"ada@example.com","message":"Call me\nin the morning"}`),
			Result: json.RawMessage(`{"success":true,"message":"Thanks"}`)}},
		votes:     []int{1, -1},
		created:   earlierToday(now, 2*time.Hour, time.Hour),
		knowledge: []parley.KnowledgeRef{{ID: f.pricing.ID, Title: f.pricing.Title}},
	})
	f.agentConv = b.addConversation(t, ct, seedConversation{
		start: func(p *parley.ConversationStart) { p.Channel, p.VisitorType = "agent", "agent" },
		turns: []string{"List your plans", "Starter and Team."}, votes: []int{1}, created: earlierToday(now, 2*time.Hour, 2*time.Hour),
	})
	f.escalated = b.addConversation(t, ct, seedConversation{
		start: func(p *parley.ConversationStart) { p.Channel = "voice" },
		turns: []string{"I want a human", "Connecting you."}, escalate: true, created: earlierToday(now, 2*time.Hour, 30*time.Minute),
	})
	f.janua = b.addConversation(t, ct, seedConversation{turns: []string{"Bonjour"}, created: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)})
	b.insertVoiceCall(t, ten.ID, "call-inbox", voiceStr("https://recordings.example/call-inbox.wav"))
	b.linkVoiceCall(t, ten.ID, "call-inbox", f.escalated.ID, voiceCost(0.27))
	f.submission = inboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"ada@example.com","name":"Ada"}`,
		time.Time{}, func(ns *parley.NewSubmission) { ns.ConversationID = &f.ada.ID })
	return f
}

func voiceCost(c float64) *float64 { return &c }

// linkVoiceCall makes the tenant's call callID (see insertVoiceCall) the
// call of the conversation convID, at cost (nil: not known).
func (b *bundle) linkVoiceCall(t *testing.T, tenantID, callID, convID string, cost *float64) {
	t.Helper()
	if _, err := b.db.Pool().Exec(t.Context(), `UPDATE voice_calls SET conversation_id = $3, cost = $4
		WHERE tenant_id = $1 AND call_id = $2`, tenantID, callID, convID, cost); err != nil {
		t.Fatal(err)
	}
}

// listedConversations returns the ids of the inbox's conversations, in order.
func listedConversations(p adminPage) []string {
	var ids []string
	p.doc.Find("#conversations li.conversation-item").Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, strings.TrimPrefix(s.AttrOr("id", ""), "conversation-"))
	})
	return ids
}

func TestAdminConversations(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	f := seedInbox(t, b)
	c := b.newAdminClient(t)
	c.signIn(f.ten)

	t.Run("ListAndFilters", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []parley.Conversation
		}{
			{"", []parley.Conversation{f.escalated, f.ada, f.agentConv, f.janua}},
			{"channel=&segment=&status=&from=&to=&search=", []parley.Conversation{f.escalated, f.ada, f.agentConv, f.janua}},
			{"channel=voice", []parley.Conversation{f.escalated}},
			{"channel=agent", []parley.Conversation{f.agentConv}},
			{"segment=sales", []parley.Conversation{f.ada}},
			{"status=ESCALATED", []parley.Conversation{f.escalated}},
			{"status=BOT&channel=web", []parley.Conversation{f.ada, f.janua}},
			{"feedback=1", []parley.Conversation{f.ada, f.agentConv}},
			{"submission=1", []parley.Conversation{f.ada}},
			{"search=+call+me+", []parley.Conversation{f.ada}},
			{"search=STARTER", []parley.Conversation{f.agentConv}},
			{"from=2026-01-01&to=2026-01-31", []parley.Conversation{f.janua}},
			{"from=2026-01-16&to=2026-01-31", nil},
		} {
			t.Run(tc.query, func(t *testing.T) {
				p := c.as(t).get("/admin/conversations?" + tc.query)
				var want []string
				for _, cv := range tc.want {
					want = append(want, cv.ID)
				}
				if got := listedConversations(p); p.status != http.StatusOK || !slices.Equal(got, want) {
					t.Errorf("%d: got %v, want %v", p.status, got, want)
				}
				if len(tc.want) == 0 && p.text("#no-conversations") != "No conversation matches these filters." {
					t.Errorf("empty state %q", p.text("#no-conversations"))
				}
			})
		}
	})

	t.Run("Row", func(t *testing.T) {
		p := c.as(t).get("/admin/conversations")
		esc := p.doc.Find("#conversation-" + f.escalated.ID)
		if !esc.HasClass("escalated") || esc.Find(".badge.escalated").Length() != 1 {
			t.Errorf("the escalated conversation does not stand out: %q", esc.AttrOr("class", ""))
		}
		if p.doc.Find("#conversation-" + f.ada.ID).HasClass("escalated") {
			t.Error("a bot conversation marked escalated")
		}
		if esc.Find(".badge.voice").Text() != "Phone call" || p.doc.Find("#conversations .badge.voice").Length() != 1 {
			t.Errorf("phone calls marked: %d", p.doc.Find("#conversations .badge.voice").Length())
		}
		ada := p.doc.Find("#conversation-" + f.ada.ID)
		if q := ada.Find("a.conversation-question"); strings.TrimSpace(q.Text()) != "How much is the Team plan?" ||
			q.AttrOr("href", "") != "/admin/conversations/"+f.ada.ID {
			t.Errorf("question link %q %q", q.Text(), q.AttrOr("href", ""))
		}
		meta := strings.Join(strings.Fields(ada.Find(".conversation-meta").Text()), " ")
		for _, want := range []string{"Chat widget", "Sales", "4 messages", "1 tool call", "1 helpful", "1 not helpful"} {
			if !strings.Contains(meta, want) {
				t.Errorf("meta %q lacks %q", meta, want)
			}
		}
		if got := p.text("#conversations-total"); !strings.HasPrefix(got, "4 conversations · page 1 of 1") {
			t.Errorf("total %q", got)
		}
		if p.doc.Find(`nav a[href="/admin/conversations"][aria-current="page"]`).Length() != 1 {
			t.Error("Conversations is not the current nav item")
		}
	})

	t.Run("InvalidFilters", func(t *testing.T) {
		for q, field := range map[string]string{"status=DONE": "status", "channel=fax": "channel", "segment=nope": "segment",
			"from=yesterday": "from", "from=2026-02-02&to=2026-01-01": "to", "search=%20x%20": "search"} {
			p := c.as(t).get("/admin/conversations?" + q)
			if p.status != http.StatusUnprocessableEntity || p.text("#err-"+field) == "" || p.doc.Find("#conversations").Length() != 0 {
				t.Errorf("%s: %d, error %q", q, p.status, p.text("#err-"+field))
			}
		}
		if p := c.as(t).get("/admin/conversations?page=0"); p.status != http.StatusUnprocessableEntity || !strings.HasPrefix(p.text("#filter-error"), "page must be") {
			t.Errorf("page=0: %d %q", p.status, p.text("#filter-error"))
		}
	})

	t.Run("Transcript", func(t *testing.T) {
		p := c.as(t).get("/admin/conversations/" + f.ada.ID)
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		if a := p.doc.Find("#conversation-visitor a"); a.AttrOr("href", "") != "/admin/visitors/"+f.visitor.ID || strings.TrimSpace(a.Text()) != "ada@example.com" {
			t.Errorf("visitor link %q %q", a.AttrOr("href", ""), a.Text())
		}
		if a := p.doc.Find("#conversation-page a"); a.AttrOr("href", "") != "https://shop.example/pricing" {
			t.Errorf("page %q", a.AttrOr("href", ""))
		}
		if got := p.text("#conversation-segment"); got != "Sales" {
			t.Errorf("segment %q", got)
		}
		var roles []string
		p.doc.Find("#messages > li").Each(func(_ int, s *goquery.Selection) {
			roles = append(roles, strings.Fields(s.AttrOr("class", ""))[len(strings.Fields(s.AttrOr("class", "")))-1])
		})
		// the tool ran in the first turn, before its answer
		if want := []string{"user", "tool-call", "assistant", "user", "assistant"}; !slices.Equal(roles, want) {
			t.Errorf("transcript %v, want %v", roles, want)
		}
		tool := p.doc.Find("#messages .tool-call")
		if got := tool.Find("strong").Text(); got != "contact_form" {
			t.Errorf("tool name %q", got)
		}
		fields := map[string]string{}
		tool.Find("dt").Each(func(_ int, s *goquery.Selection) { fields[s.Text()] = s.Next().Text() })
		if fields["email"] != "ada@example.com" || fields["message"] != "Thanks" || fields["success"] != "Yes" {
			t.Errorf("tool fields %v", fields)
		}
		if strings.Contains(tool.Text(), `{"email"`) {
			t.Error("the tool input is shown as raw JSON")
		}
		if pre := tool.Find("pre").Text(); pre != "Call me\nin the morning" {
			t.Errorf("a value of several lines is not a block: %q", pre)
		}
		// what the first answer drew on, linked to the entry; nothing under the others
		if k := p.doc.Find("#messages .knowledge-used"); k.Length() != 1 || k.Find("a").AttrOr("href", "") != "/admin/corpus/"+f.pricing.ID ||
			k.Find("a").Text() != "Plans and prices" || !k.Parent().HasClass("assistant") {
			t.Errorf("knowledge shown: %d, %q", k.Length(), k.Text())
		}
		if up, down := p.doc.Find("#messages .vote.up").Length(), p.doc.Find("#messages .vote.down").Length(); up != 1 || down != 1 {
			t.Errorf("votes shown: %d up, %d down", up, down)
		}
		if a := p.doc.Find("#conversation-submissions a"); a.AttrOr("href", "") != "/admin/submissions/"+f.submission.ID {
			t.Errorf("submission link %q", a.AttrOr("href", ""))
		}
		if p.doc.Find("#escalated").Length() != 0 {
			t.Error("a bot conversation marked escalated")
		}
		// and back from the submission
		s := c.as(t).get("/admin/submissions/" + f.submission.ID)
		if a := s.doc.Find("#open-conversation"); a.AttrOr("href", "") != "/admin/conversations/"+f.ada.ID {
			t.Errorf("submission → conversation link %q", a.AttrOr("href", ""))
		}
	})

	t.Run("TranscriptOfAnAgentEscalated", func(t *testing.T) {
		p := c.as(t).get("/admin/conversations/" + f.escalated.ID)
		if p.status != http.StatusOK || p.doc.Find("#escalated").Length() != 1 || p.text("#no-submissions") == "" ||
			p.text("#conversation-visitor") != "anonymous" || p.text("#conversation-channel") != "Voice" {
			t.Errorf("%d, visitor %q, channel %q", p.status, p.text("#conversation-visitor"), p.text("#conversation-channel"))
		}
	})

	t.Run("PhoneCall", func(t *testing.T) {
		p := c.as(t).get("/admin/conversations/" + f.escalated.ID)
		panel := p.doc.Find("#phone-call")
		if p.status != http.StatusOK || panel.Length() != 1 || panel.Find("h2").Text() != "Phone call" {
			t.Fatalf("%d, panel %q", p.status, panel.Text())
		}
		for sel, want := range map[string]string{"#call-caller": "+33612345678", "#call-duration": "1 min 30 s",
			"#call-ended": "The caller hung up", "#call-cost": "$0.27", "#call-summary": "The caller booked a visit for Tuesday at 9."} {
			if got := p.text(sel); got != want {
				t.Errorf("%s: %q, want %q", sel, got, want)
			}
		}
		if p.text("#call-when") == "" {
			t.Error("no date")
		}
		if src := panel.Find("audio[controls]").AttrOr("src", ""); src != "/admin/voice/calls/call-inbox/recording" || panel.Find(".call-no-recording").Length() != 0 {
			t.Errorf("player %q", src)
		}
		if tr := panel.Find("details.call-transcript"); tr.Find("summary").Text() != "Transcript" || tr.Find("pre").Text() != "AI: Hello.\nUser: Can someone come on Tuesday?" {
			t.Errorf("transcript %q", tr.Text())
		}
		// the chat's conversation has no call
		if p := c.as(t).get("/admin/conversations/" + f.ada.ID); p.status != http.StatusOK || p.doc.Find("#phone-call").Length() != 0 {
			t.Errorf("a chat conversation shows a call: %d", p.status)
		}
	})

	t.Run("PhoneCallWithoutRecording", func(t *testing.T) {
		// a call still going: no recording, no report yet
		ct := convTenant{tenant: f.ten}
		conv := b.addConversation(t, ct, seedConversation{start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			turns: []string{"Hello?", "Hello, how can I help?"}, created: time.Now().Add(-3 * time.Hour)})
		if _, err := b.db.Pool().Exec(t.Context(), `INSERT INTO voice_calls (tenant_id, call_id, conversation_id, status, started_at)
			VALUES ($1, 'call-live', $2, 'in-progress', now())`, f.ten.ID, conv.ID); err != nil {
			t.Fatal(err)
		}
		p := c.as(t).get("/admin/conversations/" + conv.ID)
		panel := p.doc.Find("#phone-call")
		if p.status != http.StatusOK || panel.Find("audio").Length() != 0 || panel.Find(".call-no-recording").Text() != "No recording of this call." ||
			p.text("#call-caller") != "Unknown caller" || p.text("#call-duration") != "in progress" || p.text("#call-ended") != "not reported yet" ||
			panel.Find("#call-cost").Length() != 0 || panel.Find("details").Length() != 0 {
			t.Errorf("%d, panel %q", p.status, strings.Join(strings.Fields(panel.Text()), " "))
		}
		// a voice conversation the orchestrator never reported
		orphan := b.addConversation(t, ct, seedConversation{start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			turns: []string{"Hi"}, created: time.Now().Add(-4 * time.Hour)})
		if p := c.as(t).get("/admin/conversations/" + orphan.ID); p.text("#phone-call #no-call") == "" {
			t.Errorf("no report: %q", p.text("#phone-call"))
		}
	})

	t.Run("AnotherTenant", func(t *testing.T) {
		other := b.newConvTenant(t)
		theirs := b.addConversation(t, other, seedConversation{turns: []string{"How much is the Team plan?", "49 EUR."}})
		theirCall := b.addConversation(t, other, seedConversation{start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			turns: []string{"Hello?"}})
		b.insertVoiceCall(t, other.ID, "call-theirs", voiceStr("https://recordings.example/theirs.wav"))
		b.linkVoiceCall(t, other.ID, "call-theirs", theirCall.ID, nil)
		c.expectNotFound(t, []adminCall{
			{"Show", "GET", "/admin/conversations/" + theirs.ID, nil, false},
			{"ShowCall", "GET", "/admin/conversations/" + theirCall.ID, nil, false},
			{"NotAnID", "GET", "/admin/conversations/not-a-uuid", nil, false},
		})
		if p := c.as(t).get("/admin/conversations/" + theirs.ID); !strings.Contains(p.body, "Not found") && !strings.Contains(p.body, "not found") {
			t.Errorf("not the dashboard's 404 page: %s", p.body[:min(len(p.body), 300)])
		}
		if p := c.as(t).get("/admin/conversations?search=Team+plan"); slices.Contains(listedConversations(p), theirs.ID) {
			t.Error("another tenant's conversation is listed")
		}
	})
}

// TestAdminConversationsTimeZone: the inbox reads and shows dates on the
// tenant's wall clock.
func TestAdminConversationsTimeZone(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "scale")
	_, err := b.db.UpdateTenant(context.Background(), ten.ID, db.TenantPatch{Timezone: parley.Some("Pacific/Auckland")})
	mustStep(t, "setting the time zone", err)
	// 12:00 UTC on 15 January is 01:00 on the 16th in Auckland (NZDT, UTC+13)
	conv := b.addConversation(t, convTenant{tenant: ten}, seedConversation{turns: []string{"Kia ora"}, created: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)})
	c := b.newAdminClient(t)
	c.signIn(ten)
	if p := c.get("/admin/conversations?from=2026-01-16&to=2026-01-16"); !slices.Equal(listedConversations(p), []string{conv.ID}) ||
		p.text("#conversation-"+conv.ID+" .started") != "2026-01-16 01:00 NZDT" {
		t.Errorf("16 January in Auckland: %v, started %q", listedConversations(p), p.text("#conversation-"+conv.ID+" .started"))
	}
	if p := c.get("/admin/conversations?from=2026-01-15&to=2026-01-15"); len(listedConversations(p)) != 0 {
		t.Errorf("15 January in Auckland: %v", listedConversations(p))
	}
}

func TestAdminConversationsEmptyAndPages(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "scale")
	c := b.newAdminClient(t)
	c.signIn(ten)
	if p := c.get("/admin/conversations"); p.status != http.StatusOK || !strings.HasPrefix(p.text("#no-conversations"), "No conversations yet.") {
		t.Errorf("empty inbox: %d %q", p.status, p.text("#no-conversations"))
	}
	ct := convTenant{tenant: ten}
	start := time.Now().UTC().Add(-time.Hour)
	for i := range 21 {
		b.addConversation(t, ct, seedConversation{turns: []string{fmt.Sprintf("Question %d", i)}, created: start.Add(time.Duration(i) * time.Minute)})
	}
	p := c.get("/admin/conversations?channel=web")
	if n := len(listedConversations(p)); n != 20 || p.doc.Find(`a[rel="next"]`).AttrOr("href", "") != "/admin/conversations?channel=web&page=2" {
		t.Errorf("page 1: %d rows, next %q", n, p.doc.Find(`a[rel="next"]`).AttrOr("href", ""))
	}
	p = c.get("/admin/conversations?channel=web&page=2")
	if ids := listedConversations(p); len(ids) != 1 || p.doc.Find(`a[rel="prev"]`).Length() != 1 || p.doc.Find(`a[rel="next"]`).Length() != 0 ||
		!strings.Contains(p.doc.Find("#conversation-"+ids[0]).Text(), "Question 0") {
		t.Errorf("page 2: %v", ids)
	}
	if p := c.get("/admin/conversations?page=3"); p.text("#no-conversations") != "Nothing on this page; go back to the first one." {
		t.Errorf("past the end: %q", p.text("#no-conversations"))
	}
}

func TestAdminOverviewActivity(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	f := seedInbox(t, b)
	ct := convTenant{tenant: f.ten}
	for i := range 3 {
		b.addConversation(t, ct, seedConversation{turns: []string{fmt.Sprintf("Old question %d", i)}, created: time.Now().Add(-time.Duration(48+i) * time.Hour)})
	}
	c := b.newAdminClient(t)
	c.signIn(f.ten)
	p := c.get("/admin")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	// what the overview already had stays
	if p.text("#plan") == "" || p.doc.Find("#embed").Length() == 0 {
		t.Error("the plan or the embed card is gone")
	}
	rows := p.doc.Find("#activity-chart tbody tr")
	if rows.Length() != 30 {
		t.Fatalf("%d days, want 30", rows.Length())
	}
	today := rows.Last().Find("td")
	// ada, the agent's and the escalated conversation today (january is not in the window); ada's lead
	if got, leads := today.Eq(0).Text(), today.Eq(1).Text(); got != "3" || leads != "1" {
		t.Errorf("today: %s conversations, %s leads", got, leads)
	}
	if got := p.doc.Find("#activity-chart .legend").Text(); !strings.Contains(got, "Conversations: 6") || !strings.Contains(got, "Leads: 1") {
		t.Errorf("legend %q", got)
	}
	if got := p.text("#satisfaction-rate"); got != "67%" {
		t.Errorf("satisfaction %q", got)
	}
	latest := listedConversations(p)
	if len(latest) != 5 || latest[0] != f.escalated.ID || latest[1] != f.ada.ID {
		t.Errorf("latest %v", latest)
	}
	if href := p.doc.Find("#latest-conversations a.conversation-question").First().AttrOr("href", ""); href != "/admin/conversations/"+f.escalated.ID {
		t.Errorf("latest link %q", href)
	}

	empty := b.ownedTenant(t, "starter")
	cc := b.newAdminClient(t)
	cc.signIn(empty)
	p = cc.get("/admin")
	if p.status != http.StatusOK || !strings.HasPrefix(p.text("#latest-conversations #no-conversations"), "No conversations yet.") ||
		p.doc.Find("#activity-chart tbody tr").Length() != 30 || p.text("#satisfaction-rate") != "–" || p.doc.Find("#onboarding").Length() != 1 {
		t.Errorf("empty overview: %d %q", p.status, p.text("#no-conversations"))
	}
}
