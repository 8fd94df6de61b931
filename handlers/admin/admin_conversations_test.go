package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

func seedInbox(t *testing.T, b *webtest.Bundle) webtest.InboxFixture {
	t.Helper()
	return webtest.SeedInboxOf(t, b, b.OwnedTenant(t, "scale"))
}

// listedConversations returns the ids of the inbox's conversations, in order.
func listedConversations(p webtest.AdminPage) []string {
	var ids []string
	p.Doc.Find("#conversations li.conversation-item").Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, strings.TrimPrefix(s.AttrOr("id", ""), "conversation-"))
	})
	return ids
}

func TestAdminConversations(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	f := seedInbox(t, b)
	c := b.NewAdminClient(t)
	c.SignIn(f.Ten)

	t.Run("ListAndFilters", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []parley.Conversation
		}{
			{"", []parley.Conversation{f.Escalated, f.Ada, f.AgentConv, f.Janua}},
			{"channel=&segment=&status=&from=&to=&search=", []parley.Conversation{f.Escalated, f.Ada, f.AgentConv, f.Janua}},
			{"channel=voice", []parley.Conversation{f.Escalated}},
			{"channel=agent", []parley.Conversation{f.AgentConv}},
			{"segment=sales", []parley.Conversation{f.Ada}},
			{"status=ESCALATED", []parley.Conversation{f.Escalated}},
			{"status=BOT&channel=web", []parley.Conversation{f.Ada, f.Janua}},
			{"feedback=1", []parley.Conversation{f.Ada, f.AgentConv}},
			{"submission=1", []parley.Conversation{f.Ada}},
			{"search=+call+me+", []parley.Conversation{f.Ada}},
			{"search=STARTER", []parley.Conversation{f.AgentConv}},
			{"from=2026-01-01&to=2026-01-31", []parley.Conversation{f.Janua}},
			{"from=2026-01-16&to=2026-01-31", nil},
		} {
			t.Run(tc.query, func(t *testing.T) {
				p := c.As(t).Get("/admin/conversations?" + tc.query)
				var want []string
				for _, cv := range tc.want {
					want = append(want, cv.ID)
				}
				if got := listedConversations(p); p.Status != http.StatusOK || !slices.Equal(got, want) {
					t.Errorf("%d: got %v, want %v", p.Status, got, want)
				}
				if len(tc.want) == 0 && p.Text("#no-conversations") != "No conversation matches these filters." {
					t.Errorf("empty state %q", p.Text("#no-conversations"))
				}
			})
		}
	})

	t.Run("Row", func(t *testing.T) {
		p := c.As(t).Get("/admin/conversations")
		esc := p.Doc.Find("#conversation-" + f.Escalated.ID)
		if !esc.HasClass("escalated") || esc.Find(".badge.escalated").Length() != 1 {
			t.Errorf("the escalated conversation does not stand out: %q", esc.AttrOr("class", ""))
		}
		if p.Doc.Find("#conversation-" + f.Ada.ID).HasClass("escalated") {
			t.Error("a bot conversation marked escalated")
		}
		if esc.Find(".badge.voice").Text() != "Phone call" || p.Doc.Find("#conversations .badge.voice").Length() != 1 {
			t.Errorf("phone calls marked: %d", p.Doc.Find("#conversations .badge.voice").Length())
		}
		ada := p.Doc.Find("#conversation-" + f.Ada.ID)
		if q := ada.Find("a.conversation-question"); strings.TrimSpace(q.Text()) != "How much is the Team plan?" ||
			q.AttrOr("href", "") != "/admin/conversations/"+f.Ada.ID {
			t.Errorf("question link %q %q", q.Text(), q.AttrOr("href", ""))
		}
		meta := strings.Join(strings.Fields(ada.Find(".conversation-meta").Text()), " ")
		for _, want := range []string{"Chat widget", "Sales", "4 messages", "1 tool call", "1 helpful", "1 not helpful"} {
			if !strings.Contains(meta, want) {
				t.Errorf("meta %q lacks %q", meta, want)
			}
		}
		if got := p.Text("#conversations-total"); !strings.HasPrefix(got, "4 conversations · page 1 of 1") {
			t.Errorf("total %q", got)
		}
		if p.Doc.Find(`nav a[href="/admin/conversations"][aria-current="page"]`).Length() != 1 {
			t.Error("Conversations is not the current nav item")
		}
	})

	t.Run("InvalidFilters", func(t *testing.T) {
		for q, field := range map[string]string{"status=DONE": "status", "channel=fax": "channel", "segment=nope": "segment",
			"from=yesterday": "from", "from=2026-02-02&to=2026-01-01": "to", "search=%20x%20": "search"} {
			p := c.As(t).Get("/admin/conversations?" + q)
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+field) == "" || p.Doc.Find("#conversations").Length() != 0 {
				t.Errorf("%s: %d, error %q", q, p.Status, p.Text("#err-"+field))
			}
		}
		if p := c.As(t).Get("/admin/conversations?page=0"); p.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(p.Text("#filter-error"), "page must be") {
			t.Errorf("page=0: %d %q", p.Status, p.Text("#filter-error"))
		}
	})

	t.Run("Transcript", func(t *testing.T) {
		p := c.As(t).Get("/admin/conversations/" + f.Ada.ID)
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		if a := p.Doc.Find("#conversation-visitor a"); a.AttrOr("href", "") != "/admin/visitors/"+f.Visitor.ID || strings.TrimSpace(a.Text()) != "ada@example.com" {
			t.Errorf("visitor link %q %q", a.AttrOr("href", ""), a.Text())
		}
		if a := p.Doc.Find("#conversation-page a"); a.AttrOr("href", "") != "https://shop.example/pricing" {
			t.Errorf("page %q", a.AttrOr("href", ""))
		}
		if got := p.Text("#conversation-segment"); got != "Sales" {
			t.Errorf("segment %q", got)
		}
		var roles []string
		p.Doc.Find("#messages > li").Each(func(_ int, s *goquery.Selection) {
			roles = append(roles, strings.Fields(s.AttrOr("class", ""))[len(strings.Fields(s.AttrOr("class", "")))-1])
		})
		// the tool ran in the first turn, before its answer
		if want := []string{"user", "tool-call", "assistant", "user", "assistant"}; !slices.Equal(roles, want) {
			t.Errorf("transcript %v, want %v", roles, want)
		}
		tool := p.Doc.Find("#messages .tool-call")
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
		// what the first answer drew on (cited), linked to the entry; what it
		// was given folded below; nothing under the others
		if k := p.Doc.Find("#messages .knowledge-used").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.ParentsFiltered("details").Length() == 0
		}); k.Length() != 1 || k.Find("a").AttrOr("href", "") != "/admin/corpus/"+f.Pricing.ID ||
			k.Find("a").Text() != "Plans and prices" || !k.Parent().HasClass("assistant") {
			t.Errorf("knowledge shown: %d, %q", k.Length(), k.Text())
		}
		if g := p.Doc.Find("#messages details.knowledge-given"); g.Length() != 1 || g.Find("summary").Text() != "What the bot was given (2 entries)" ||
			g.Find("li").Length() != 2 || !strings.Contains(g.Text(), "Given, not cited") {
			t.Errorf("knowledge given: %d, %q", g.Length(), g.Text())
		}
		if up, down := p.Doc.Find("#messages .vote.up").Length(), p.Doc.Find("#messages .vote.down").Length(); up != 1 || down != 1 {
			t.Errorf("votes shown: %d up, %d down", up, down)
		}
		if a := p.Doc.Find("#conversation-submissions a"); a.AttrOr("href", "") != "/admin/submissions/"+f.Submission.ID {
			t.Errorf("submission link %q", a.AttrOr("href", ""))
		}
		if p.Doc.Find("#escalated").Length() != 0 {
			t.Error("a bot conversation marked escalated")
		}
		// and back from the submission
		s := c.As(t).Get("/admin/submissions/" + f.Submission.ID)
		if a := s.Doc.Find("#open-conversation"); a.AttrOr("href", "") != "/admin/conversations/"+f.Ada.ID {
			t.Errorf("submission → conversation link %q", a.AttrOr("href", ""))
		}
	})

	t.Run("TranscriptOfAnAgentEscalated", func(t *testing.T) {
		p := c.As(t).Get("/admin/conversations/" + f.Escalated.ID)
		if p.Status != http.StatusOK || p.Doc.Find("#escalated").Length() != 1 || p.Text("#no-submissions") == "" ||
			p.Text("#conversation-visitor") != "anonymous" || p.Text("#conversation-channel") != "Voice" {
			t.Errorf("%d, visitor %q, channel %q", p.Status, p.Text("#conversation-visitor"), p.Text("#conversation-channel"))
		}
	})

	t.Run("PhoneCall", func(t *testing.T) {
		p := c.As(t).Get("/admin/conversations/" + f.Escalated.ID)
		panel := p.Doc.Find("#phone-call")
		if p.Status != http.StatusOK || panel.Length() != 1 || panel.Find("h2").Text() != "Phone call" {
			t.Fatalf("%d, panel %q", p.Status, panel.Text())
		}
		for sel, want := range map[string]string{"#call-caller": "+33612345678", "#call-duration": "1 min 30 s",
			"#call-ended": "The caller hung up", "#call-cost": "$0.27", "#call-summary": "The caller booked a visit for Tuesday at 9."} {
			if got := p.Text(sel); got != want {
				t.Errorf("%s: %q, want %q", sel, got, want)
			}
		}
		if p.Text("#call-when") == "" {
			t.Error("no date")
		}
		if src := panel.Find("audio[controls]").AttrOr("src", ""); src != "/admin/voice/calls/call-inbox/recording" || panel.Find(".call-no-recording").Length() != 0 {
			t.Errorf("player %q", src)
		}
		if tr := panel.Find("details.call-transcript"); tr.Find("summary").Text() != "Transcript" || tr.Find("pre").Text() != "AI: Hello.\nUser: Can someone come on Tuesday?" {
			t.Errorf("transcript %q", tr.Text())
		}
		// the chat's conversation has no call
		if p := c.As(t).Get("/admin/conversations/" + f.Ada.ID); p.Status != http.StatusOK || p.Doc.Find("#phone-call").Length() != 0 {
			t.Errorf("a chat conversation shows a call: %d", p.Status)
		}
	})

	t.Run("PhoneCallWithoutRecording", func(t *testing.T) {
		// a call still going: no recording, no report yet
		ct := webtest.ConvTenant{Tenant: f.Ten}
		conv := b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns: []string{"Hello?", "Hello, how can I help?"}, Created: time.Now().Add(-3 * time.Hour)})
		if _, err := b.DB.Pool().Exec(t.Context(), `INSERT INTO voice_calls (tenant_id, call_id, conversation_id, status, started_at)
			VALUES ($1, 'call-live', $2, 'in-progress', now())`, f.Ten.ID, conv.ID); err != nil {
			t.Fatal(err)
		}
		p := c.As(t).Get("/admin/conversations/" + conv.ID)
		panel := p.Doc.Find("#phone-call")
		if p.Status != http.StatusOK || panel.Find("audio").Length() != 0 || panel.Find(".call-no-recording").Text() != "No recording of this call." ||
			p.Text("#call-caller") != "Unknown caller" || p.Text("#call-duration") != "in progress" || p.Text("#call-ended") != "not reported yet" ||
			panel.Find("#call-cost").Length() != 0 || panel.Find("details").Length() != 0 {
			t.Errorf("%d, panel %q", p.Status, strings.Join(strings.Fields(panel.Text()), " "))
		}
		// a voice conversation the orchestrator never reported
		orphan := b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns: []string{"Hi"}, Created: time.Now().Add(-4 * time.Hour)})
		if p := c.As(t).Get("/admin/conversations/" + orphan.ID); p.Text("#phone-call #no-call") == "" {
			t.Errorf("no report: %q", p.Text("#phone-call"))
		}
	})

	t.Run("AnotherTenant", func(t *testing.T) {
		other := b.NewConvTenant(t)
		theirs := b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"How much is the Team plan?", "49 EUR."}})
		theirCall := b.AddConversation(t, other, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns: []string{"Hello?"}})
		b.InsertVoiceCall(t, other.ID, "call-theirs", webtest.VoiceStr("https://recordings.example/theirs.wav"))
		b.LinkVoiceCall(t, other.ID, "call-theirs", theirCall.ID, nil)
		c.ExpectNotFound(t, []webtest.AdminCall{
			{Name: "Show", Method: "GET", Path: "/admin/conversations/" + theirs.ID, Form: nil, HX: false},
			{Name: "ShowCall", Method: "GET", Path: "/admin/conversations/" + theirCall.ID, Form: nil, HX: false},
			{Name: "NotAnID", Method: "GET", Path: "/admin/conversations/not-a-uuid", Form: nil, HX: false},
		})
		if p := c.As(t).Get("/admin/conversations/" + theirs.ID); !strings.Contains(p.Body, "Not found") && !strings.Contains(p.Body, "not found") {
			t.Errorf("not the dashboard's 404 page: %s", p.Body[:min(len(p.Body), 300)])
		}
		if p := c.As(t).Get("/admin/conversations?search=Team+plan"); slices.Contains(listedConversations(p), theirs.ID) {
			t.Error("another tenant's conversation is listed")
		}
	})
}

// TestAdminConversationsTimeZone: the inbox reads and shows dates on the
// tenant's wall clock.
func TestAdminConversationsTimeZone(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	_, err := b.DB.UpdateTenant(context.Background(), ten.ID, db.TenantPatch{Timezone: parley.Some("Pacific/Auckland")})
	webtest.MustStep(t, "setting the time zone", err)
	// 12:00 UTC on 15 January is 01:00 on the 16th in Auckland (NZDT, UTC+13)
	conv := b.AddConversation(t, webtest.ConvTenant{Tenant: ten}, webtest.SeedConversation{Turns: []string{"Kia ora"}, Created: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)})
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/conversations?from=2026-01-16&to=2026-01-16"); !slices.Equal(listedConversations(p), []string{conv.ID}) ||
		p.Text("#conversation-"+conv.ID+" .started") != "2026-01-16 01:00 NZDT" {
		t.Errorf("16 January in Auckland: %v, started %q", listedConversations(p), p.Text("#conversation-"+conv.ID+" .started"))
	}
	if p := c.Get("/admin/conversations?from=2026-01-15&to=2026-01-15"); len(listedConversations(p)) != 0 {
		t.Errorf("15 January in Auckland: %v", listedConversations(p))
	}
}

func TestAdminConversationsEmptyAndPages(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/conversations"); p.Status != http.StatusOK || !strings.HasPrefix(p.Text("#no-conversations"), "No conversations yet.") {
		t.Errorf("empty inbox: %d %q", p.Status, p.Text("#no-conversations"))
	}
	ct := webtest.ConvTenant{Tenant: ten}
	start := time.Now().UTC().Add(-time.Hour)
	for i := range 21 {
		b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{fmt.Sprintf("Question %d", i)}, Created: start.Add(time.Duration(i) * time.Minute)})
	}
	p := c.Get("/admin/conversations?channel=web")
	if n := len(listedConversations(p)); n != 20 || p.Doc.Find(`a[rel="next"]`).AttrOr("href", "") != "/admin/conversations?channel=web&page=2" {
		t.Errorf("page 1: %d rows, next %q", n, p.Doc.Find(`a[rel="next"]`).AttrOr("href", ""))
	}
	p = c.Get("/admin/conversations?channel=web&page=2")
	if ids := listedConversations(p); len(ids) != 1 || p.Doc.Find(`a[rel="prev"]`).Length() != 1 || p.Doc.Find(`a[rel="next"]`).Length() != 0 ||
		!strings.Contains(p.Doc.Find("#conversation-"+ids[0]).Text(), "Question 0") {
		t.Errorf("page 2: %v", ids)
	}
	if p := c.Get("/admin/conversations?page=3"); p.Text("#no-conversations") != "Nothing on this page; go back to the first one." {
		t.Errorf("past the end: %q", p.Text("#no-conversations"))
	}
}

func TestAdminOverviewActivity(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	f := seedInbox(t, b)
	ct := webtest.ConvTenant{Tenant: f.Ten}
	for i := range 3 {
		b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{fmt.Sprintf("Old question %d", i)}, Created: time.Now().Add(-time.Duration(48+i) * time.Hour)})
	}
	c := b.NewAdminClient(t)
	c.SignIn(f.Ten)
	p := c.Get("/admin")
	if p.Status != http.StatusOK {
		t.Fatalf("status %d", p.Status)
	}
	// what the overview already had stays
	if p.Text("#plan") == "" || p.Doc.Find("#embed").Length() == 0 {
		t.Error("the plan or the embed card is gone")
	}
	rows := p.Doc.Find("#activity-chart tbody tr")
	if rows.Length() != 30 {
		t.Fatalf("%d days, want 30", rows.Length())
	}
	today := rows.Last().Find("td")
	// ada, the agent's and the escalated conversation today (january is not in the window); ada's lead
	if got, leads := today.Eq(0).Text(), today.Eq(1).Text(); got != "3" || leads != "1" {
		t.Errorf("today: %s conversations, %s leads", got, leads)
	}
	if got := p.Doc.Find("#activity-chart .legend").Text(); !strings.Contains(got, "Conversations: 6") || !strings.Contains(got, "Leads: 1") {
		t.Errorf("legend %q", got)
	}
	if got := p.Text("#satisfaction-rate"); got != "67%" {
		t.Errorf("satisfaction %q", got)
	}
	latest := listedConversations(p)
	if len(latest) != 5 || latest[0] != f.Escalated.ID || latest[1] != f.Ada.ID {
		t.Errorf("latest %v", latest)
	}
	if href := p.Doc.Find("#latest-conversations a.conversation-question").First().AttrOr("href", ""); href != "/admin/conversations/"+f.Escalated.ID {
		t.Errorf("latest link %q", href)
	}

	empty := b.OwnedTenant(t, "starter")
	cc := b.NewAdminClient(t)
	cc.SignIn(empty)
	p = cc.Get("/admin")
	if p.Status != http.StatusOK || !strings.HasPrefix(p.Text("#latest-conversations #no-conversations"), "No conversations yet.") ||
		p.Doc.Find("#activity-chart tbody tr").Length() != 30 || p.Text("#satisfaction-rate") != "–" || p.Doc.Find("#onboarding").Length() != 1 {
		t.Errorf("empty overview: %d %q", p.Status, p.Text("#no-conversations"))
	}
}
