package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/webtest"
)

// escalatedChat is a chat conversation of ten the assistant handed to a
// person: the visitor asked, the assistant said someone would come.
func escalatedChat(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, question string) parley.Conversation {
	t.Helper()
	conv := b.AddConversation(t, webtest.ConvTenant{Tenant: ten}, webtest.SeedConversation{
		Turns: []string{question, "I am asking someone from the team to join."}})
	_, err := b.DB.MoveConversation(context.Background(), ten.ID, conv.ID, parley.StatusEscalated, parley.Holder{})
	webtest.MustStep(t, "escalating", err)
	return conv
}

// visitorSays sends the visitor's message through the public chat, in the
// conversation's session.
func visitorSays(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, conv parley.Conversation, text string) {
	t.Helper()
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": text, "sessionId": conv.SessionID}, nil); r.Status != http.StatusOK {
		t.Fatalf("the visitor's message: %d %v", r.Status, r.Body)
	}
}

// secondPerson signs in another owner of ten, whose name is bob.
func secondPerson(t *testing.T, b *webtest.Bundle, ten webtest.Tenant) *webtest.AdminClient {
	t.Helper()
	hash, err := b.Srv.Base.Passwords.Hash("bob's password 1")
	webtest.MustStep(t, "hashing", err)
	email := "bob@" + ten.Slug + ".test"
	webtest.MustStep(t, "adding bob", b.DB.AddOwner(context.Background(), ten.ID, email, hash, false))
	c := b.NewAdminClient(t)
	if p := c.Login(email, "bob's password 1", ""); p.Status != http.StatusSeeOther {
		t.Fatalf("bob signs in: %d", p.Status)
	}
	return c
}

// hx sends the form as htmx does, with the client's CSRF token.
func hx(c *webtest.AdminClient, path string, form url.Values) webtest.AdminPage {
	c.T.Helper()
	f := url.Values{"_csrf": {c.CSRF}}
	for k, v := range form {
		f[k] = v
	}
	return c.Do("POST", path, f, map[string]string{"HX-Request": "true"})
}

// storedMessages is the conversation's messages as stored: role, author, content.
func storedMessages(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, id string) []parley.Message {
	t.Helper()
	d, err := b.DB.ConversationDetail(context.Background(), ten.ID, id)
	webtest.MustStep(t, "reading the conversation", err)
	return d.Messages
}

func TestAdminTakeover(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	// The database's clock: an escalated conversation waits for a person
	// (agent.DefaultPersonWait) from escalated_at, which the database sets,
	// and SetupAdmin's clock runs up to 7.5 minutes off it.
	b.Srv.Base.Now = time.Now
	ten := b.OwnedTenant(t, "scale")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	bob := secondPerson(t, b, ten)
	owner := strings.Split(ten.OwnerEmail, "@")[0]

	t.Run("InboxTop", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Can I speak to a person about my order?")
		visitorSays(t, b, ten, conv, "Hello? Anyone there?")
		p := c.As(t).Get("/admin/conversations")
		row := p.Doc.Find("#waiting #inbox-" + conv.ID)
		if p.Status != http.StatusOK || row.Length() != 1 {
			t.Fatalf("%d: not waiting on top: %q", p.Status, p.Text("#inbox-top"))
		}
		if got := row.Find(".badge.state").Text(); got != "Waiting for a person" {
			t.Errorf("state %q", got)
		}
		// the question before the assistant's answer is answered; the one after is not
		if got := row.Find(".badge.unanswered").Text(); got != "1 new message" {
			t.Errorf("unanswered %q", got)
		}
		if got := row.Find(".conversation-preview").Text(); got != "Hello? Anyone there?" {
			t.Errorf("preview %q", got)
		}
		// the rest of the list is still all of them
		if p.Doc.Find("#conversations #conversation-"+conv.ID).Length() != 1 {
			t.Error("the waiting conversation is missing from the list of all conversations")
		}
		// the status filter has every state, in the owner's words
		var labels []string
		p.Doc.Find("#status option").Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
		if got := strings.Join(labels, "|"); got != "Any status|Answered by the assistant|Waiting for a person|With your team|Closed" {
			t.Errorf("status filter %q", got)
		}
	})

	t.Run("PollsAnswerNothingWhileNothingChanged", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Is there a human?")
		cc := c.As(t)
		poll := cc.Get("/admin/conversations").Doc.Find("#inbox-top").AttrOr("hx-get", "")
		if !strings.HasPrefix(poll, "/admin/conversations/attention?v=") {
			t.Fatalf("the top section polls %q", poll)
		}
		if p := cc.Get(poll); p.Status != http.StatusNoContent || p.Body != "" {
			t.Errorf("idle poll: %d %q", p.Status, p.Body)
		}
		nav := cc.Get("/admin/conversations/waiting")
		badge := nav.Doc.Find("#nav-waiting")
		if nav.Status != http.StatusOK || badge.AttrOr("data-waiting", "") == "0" || badge.AttrOr("data-latest", "0") == "0" {
			t.Fatalf("navigation count: %d %q", nav.Status, nav.Body)
		}
		if p := cc.Get(badge.AttrOr("hx-get", "")); p.Status != http.StatusNoContent {
			t.Errorf("idle navigation poll: %d", p.Status)
		}
		live := cc.Get("/admin/conversations/"+conv.ID).Doc.Find("#conversation-live").AttrOr("hx-get", "")
		if p := cc.Get(live); p.Status != http.StatusNoContent {
			t.Errorf("idle conversation poll: %d", p.Status)
		}
		// the visitor writes: every poll has news
		visitorSays(t, b, ten, conv, "Still waiting for someone")
		if p := cc.Get(poll); p.Status != http.StatusOK || p.Doc.Find("#inbox-"+conv.ID+" .badge.unanswered").Text() != "1 new message" {
			t.Errorf("top section after a message: %d %q", p.Status, p.Text("#inbox-"+conv.ID))
		}
		p := cc.Get(live)
		if p.Status != http.StatusOK || !strings.Contains(p.Text("#messages"), "Still waiting for someone") {
			t.Errorf("transcript after a message: %d %q", p.Status, p.Text("#messages"))
		}
		if next := p.Doc.Find("#conversation-live").AttrOr("hx-get", ""); next == live || cc.Get(next).Status != http.StatusNoContent {
			t.Errorf("the new version %q is not quiet", next)
		}
	})

	t.Run("PollsLeaveTheSessionAlone", func(t *testing.T) {
		// a page load writes the session back (its idle timeout moves); a
		// poll does not: it is not the owner's activity, and a write racing
		// a form's would undo the form's change to the session
		cookie := b.Srv.Sessions.Cookie.Name
		if p := c.As(t).Get("/admin/conversations"); p.Cookie(cookie) == nil {
			t.Fatal("a page load did not write the session: the check below proves nothing")
		}
		for _, path := range []string{"/admin/conversations/waiting", "/admin/conversations/attention"} {
			if p := c.As(t).Get(path); p.Status != http.StatusOK || p.Cookie(cookie) != nil {
				t.Errorf("%s: %d, session written: %v", path, p.Status, p.Cookie(cookie) != nil)
			}
		}
		// signed out meanwhile: htmx goes to the sign-in page, then back to the page that polled
		out := b.NewAdminClient(t)
		p := out.Do("GET", "/admin/conversations/waiting?v=1-2", nil, map[string]string{"HX-Request": "true",
			"HX-Current-URL": b.TS.URL + "/admin/conversations?status=HUMAN"})
		if p.Status != http.StatusUnauthorized || p.Header.Get("HX-Redirect") != "/admin/login?next=%2Fadmin%2Fconversations%3Fstatus%3DHUMAN" {
			t.Errorf("signed out: %d to %q", p.Status, p.Header.Get("HX-Redirect"))
		}
		if p := out.Get("/admin/conversations/attention"); p.Status != http.StatusSeeOther || p.Location() != "/admin/login" {
			t.Errorf("signed out, not htmx: %d to %q", p.Status, p.Location())
		}
	})

	t.Run("TakeReplyHandBackClose", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "I want a refund")
		cc := c.As(t)
		page := "/admin/conversations/" + conv.ID
		p := cc.Get(page)
		if p.Doc.Find("#take-over").Length() != 1 || p.Doc.Find("#hand-back").Length() != 1 || p.Doc.Find("#reply").Length() != 1 {
			t.Fatalf("buttons of a waiting conversation: %q", p.Text(".takeover-actions"))
		}
		if p.Doc.Find("#reply").AttrOr("data-max", "") != "15000" {
			t.Error("the reply box has no counter")
		}
		// take over, as a plain form
		p = cc.Submit(page+"/state", url.Values{"status": {"HUMAN"}})
		if p.Status != http.StatusSeeOther || p.Location() != page {
			t.Fatalf("take over: %d to %q", p.Status, p.Location())
		}
		p = cc.Get(page)
		if p.Text(".flash.ok") == "" || p.Text("#conversation-state .badge") != "With you" || p.Doc.Find("#take-over").Length() != 0 {
			t.Errorf("after taking: flash %q, state %q", p.Text(".flash.ok"), p.Text("#conversation-state"))
		}
		// the inbox shows who holds it
		if got := cc.Get("/admin/conversations").Doc.Find("#held #inbox-" + conv.ID + " .badge.state").Text(); got != "With "+owner {
			t.Errorf("held by %q", got)
		}
		// reply, as htmx: the box comes back empty, the transcript beside it
		p = hx(cc, page+"/reply", url.Values{"content": {"  Hello, I am looking at your order now.  "}})
		if p.Status != http.StatusOK || p.Doc.Find("#reply").Text() != "" || p.Doc.Find(`#conversation-live[hx-swap-oob="true"]`).Length() != 1 {
			t.Fatalf("reply: %d %s", p.Status, p.Body)
		}
		human := p.Doc.Find("#messages li.message.human")
		if human.Length() != 1 || !strings.Contains(human.Find(".who").Text(), owner) || human.Find(".content").Text() != "Hello, I am looking at your order now." {
			t.Errorf("the reply in the transcript: %q", human.Text())
		}
		msgs := storedMessages(t, b, ten, conv.ID)
		last := msgs[len(msgs)-1]
		if last.Role != parley.RoleHuman || webtest.StrOrEmpty(last.AuthorName) != owner || last.Content != "Hello, I am looking at your order now." {
			t.Errorf("stored %s by %q: %q", last.Role, webtest.StrOrEmpty(last.AuthorName), last.Content)
		}
		// hand back, then close, as htmx
		p = hx(cc, page+"/state", url.Values{"status": {"BOT"}})
		if p.Status != http.StatusOK || p.Text("#conversation-state .badge") != "Answered by the assistant" || p.Doc.Find("#take-over").Length() != 1 {
			t.Errorf("hand back: %d %q", p.Status, p.Text("#conversation-state"))
		}
		p = hx(cc, page+"/state", url.Values{"status": {"CLOSED"}})
		if p.Status != http.StatusOK || p.Text("#conversation-state .badge") != "Closed" || p.Doc.Find("#close-conversation").Length() != 0 {
			t.Errorf("close: %d %q", p.Status, p.Text("#conversation-state"))
		}
		cv, err := b.DB.Conversation(context.Background(), ten.ID, conv.ID)
		webtest.MustStep(t, "reading", err)
		if cv.Status != parley.StatusClosed || cv.Assignee != nil {
			t.Errorf("stored as %s held by %v", cv.Status, cv.Assignee)
		}
	})

	t.Run("ReplyTakesOver", func(t *testing.T) {
		conv := b.AddConversation(t, webtest.ConvTenant{Tenant: ten}, webtest.SeedConversation{Turns: []string{"Do you ship to Norway?", "Yes."}})
		p := c.As(t).Submit("/admin/conversations/"+conv.ID+"/reply", url.Values{"content": {"And shipping is free."}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("reply: %d", p.Status)
		}
		cv, err := b.DB.Conversation(context.Background(), ten.ID, conv.ID)
		webtest.MustStep(t, "reading", err)
		if cv.Status != parley.StatusHuman || webtest.StrOrEmpty(cv.Assignee) != owner {
			t.Errorf("after a reply: %s held by %q", cv.Status, webtest.StrOrEmpty(cv.Assignee))
		}
	})

	t.Run("ReplyRefused", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Long story")
		long := strings.Repeat("é", manage.MaxReplyMessage+1)
		p := hx(c.As(t), "/admin/conversations/"+conv.ID+"/reply", url.Values{"content": {long}})
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-content") != "Your reply is too long: at most 15,000 characters." ||
			p.Doc.Find("#reply").Text() != long || p.Doc.Find("#reply").AttrOr("aria-invalid", "") != "true" {
			t.Errorf("too long: %d %q", p.Status, p.Text("#err-content"))
		}
		// a plain form gets the page again, the text kept
		p = c.As(t).Submit("/admin/conversations/"+conv.ID+"/reply", url.Values{"content": {long}})
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-content") == "" || p.Doc.Find("#reply").Text() != long || p.Text("main h1") != "Conversation" {
			t.Errorf("too long, plain: %d %q", p.Status, p.Text("#err-content"))
		}
		p = hx(c.As(t), "/admin/conversations/"+conv.ID+"/reply", url.Values{"content": {"   "}})
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-content") != "Write a reply before sending it." {
			t.Errorf("empty: %d %q", p.Status, p.Text("#err-content"))
		}
		if n := len(storedMessages(t, b, ten, conv.ID)); n != 2 {
			t.Errorf("%d messages stored, want the 2 of before", n)
		}
		if p := hx(c.As(t), "/admin/conversations/"+conv.ID+"/state", url.Values{"status": {"NOPE"}}); p.Status != http.StatusBadRequest {
			t.Errorf("an unknown state: %d", p.Status)
		}
	})

	t.Run("Conflict", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Who is there?")
		page := "/admin/conversations/" + conv.ID
		if p := hx(bob.As(t), page+"/state", url.Values{"status": {"HUMAN"}}); p.Status != http.StatusOK {
			t.Fatalf("bob takes it: %d", p.Status)
		}
		cc := c.As(t)
		if got := cc.Get(page).Text("#conversation-state .badge"); got != "With bob" {
			t.Errorf("the owner sees %q", got)
		}
		p := hx(cc, page+"/state", url.Values{"status": {"HUMAN"}})
		if p.Status != http.StatusConflict || p.Text("#takeover-error") != "This conversation is already taken by bob" || p.Text("#conversation-state .badge") != "With bob" {
			t.Errorf("take a taken one: %d %q", p.Status, p.Text("#takeover-error"))
		}
		p = cc.Submit(page+"/state", url.Values{"status": {"HUMAN"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("plain: %d", p.Status)
		}
		if got := cc.Get(page).Text(".flash.error"); got != "This conversation is already taken by bob" {
			t.Errorf("plain take of a taken one: %q", got)
		}
		p = hx(cc, page+"/reply", url.Values{"content": {"Let me help"}})
		if p.Status != http.StatusConflict || p.Text("#reply-error") != "This conversation is already taken by bob" || p.Doc.Find("#reply").Text() != "Let me help" {
			t.Errorf("reply to a taken one: %d %q", p.Status, p.Text("#reply-error"))
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Forged?")
		for _, path := range []string{"/state", "/reply"} {
			if p := c.As(t).Post("/admin/conversations/"+conv.ID+path, url.Values{"status": {"HUMAN"}, "content": {"forged"}}); p.Status != http.StatusForbidden {
				t.Errorf("%s without the CSRF token: %d", path, p.Status)
			}
		}
		if cv, _ := b.DB.Conversation(context.Background(), ten.ID, conv.ID); cv.Status != parley.StatusEscalated {
			t.Errorf("a forged request moved it to %s", cv.Status)
		}
	})

	t.Run("AnotherTenant", func(t *testing.T) {
		other := b.OwnedTenant(t, "scale")
		theirs := escalatedChat(t, b, other, "Theirs")
		path := "/admin/conversations/" + theirs.ID
		c.As(t).Get("/admin/conversations")
		c.ExpectNotFound(t, []webtest.AdminCall{
			{Name: "Live", Method: "GET", Path: path + "/live?v=x"},
			{Name: "Take", Method: "POST", Path: path + "/state", Form: url.Values{"status": {"HUMAN"}}, HX: true},
			{Name: "Reply", Method: "POST", Path: path + "/reply", Form: url.Values{"content": {"Hi"}}, HX: true},
			{Name: "ReplyPlain", Method: "POST", Path: path + "/reply", Form: url.Values{"content": {"Hi"}}},
			{Name: "NotAnID", Method: "POST", Path: "/admin/conversations/nope/state", Form: url.Values{"status": {"CLOSED"}}},
		})
		if cv, _ := b.DB.Conversation(context.Background(), other.ID, theirs.ID); cv.Status != parley.StatusEscalated || cv.MessageCount != 2 {
			t.Errorf("another tenant's conversation changed: %s, %d messages", cv.Status, cv.MessageCount)
		}
		if p := c.As(t).Get("/admin/conversations"); p.Doc.Find("#inbox-"+theirs.ID).Length() != 0 {
			t.Error("another tenant's conversation waits in this inbox")
		}
	})

	t.Run("PhoneCallsStayTheAssistants", func(t *testing.T) {
		call := b.AddConversation(t, webtest.ConvTenant{Tenant: ten}, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.Channel = "voice" }, Turns: []string{"Hello?"}})
		if p := c.As(t).Get("/admin/conversations/" + call.ID); p.Doc.Find("#take-over, #reply-form, #close-conversation").Length() != 0 {
			t.Error("a phone call offers to take over")
		}
		// A caller who asked for a person waits for a call back, which the
		// owner marks handled: the call leaves the waiting ones.
		_, err := b.DB.MoveConversation(context.Background(), ten.ID, call.ID, parley.StatusEscalated, parley.Holder{})
		webtest.MustStep(t, "escalating the call", err)
		p := c.As(t).Get("/admin/conversations/" + call.ID)
		if p.Doc.Find("#take-over, #reply-form").Length() != 0 || strings.TrimSpace(p.Doc.Find("#close-conversation").Text()) != "Mark as handled" {
			t.Fatalf("an escalated call's page: take over %d, mark handled %q", p.Doc.Find("#take-over, #reply-form").Length(), p.Doc.Find("#close-conversation").Text())
		}
		if p := hx(c, "/admin/conversations/"+call.ID+"/state", url.Values{"status": {"CLOSED"}}); p.Status != http.StatusOK {
			t.Fatalf("marking handled: %d", p.Status)
		}
		if got, _ := b.DB.Conversation(context.Background(), ten.ID, call.ID); got.Status != parley.StatusClosed {
			t.Errorf("the call is %s, want CLOSED", got.Status)
		}
	})
}
