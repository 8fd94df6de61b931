package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

// personTyping is the name stored with the conversation's signal of a
// person typing, "" when there is none.
func personTyping(t *testing.T, b *webtest.Bundle, conversationID string) string {
	t.Helper()
	var name string
	err := b.DB.Pool().QueryRow(context.Background(), `SELECT COALESCE(max(name), '') FROM conversation_typing
		WHERE conversation_id = $1 AND party = $2`, conversationID, db.PartyPerson).Scan(&name)
	webtest.MustStep(t, "reading the typing signal", err)
	return name
}

// TestAdminTyping: the open conversation's poll shows "The visitor is
// typing…" (out of band, into the page's live region) while the widget's
// signal holds and not after it ends or the visitor's message comes, and
// answers 204 while that does not change; the reply box's signal is kept
// only for the person who holds the conversation, wants the CSRF token,
// and is 404 for another tenant's conversation.
func TestAdminTyping(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	b.Srv.Base.Now = time.Now // the database's clock (see TestAdminTakeover)
	ctx := context.Background()
	ten := b.OwnedTenant(t, "scale")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	bob := secondPerson(t, b, ten)
	owner := strings.Split(ten.OwnerEmail, "@")[0]

	t.Run("VisitorTyping", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Can someone check my invoice?")
		cc := c.As(t)
		page := cc.Get("/admin/conversations/" + conv.ID)
		line := page.Doc.Find("#visitor-typing")
		if line.Length() != 1 || line.AttrOr("aria-live", "") != "polite" || strings.TrimSpace(line.Text()) != "" {
			t.Fatalf("the typing line: %d %q", line.Length(), page.Text("#visitor-typing"))
		}
		poll := page.Doc.Find("#conversation-live").AttrOr("hx-get", "")
		if p := cc.Get(poll); p.Status != http.StatusNoContent {
			t.Fatalf("idle poll: %d", p.Status)
		}

		recorded, err := b.DB.SignalVisitorTyping(ctx, ten.ID, conv.SessionID)
		if err != nil || !recorded {
			t.Fatalf("the widget's signal: %v, %v", recorded, err)
		}
		p := cc.Get(poll)
		oob := p.Doc.Find("#visitor-typing")
		if p.Status != http.StatusOK || strings.TrimSpace(oob.Text()) != "The visitor is typing…" || oob.AttrOr("hx-swap-oob", "") != "innerHTML" {
			t.Fatalf("poll while the visitor types: %d %q", p.Status, p.Body)
		}
		poll = p.Doc.Find("#conversation-live").AttrOr("hx-get", "")
		if p := cc.Get(poll); p.Status != http.StatusNoContent {
			t.Errorf("poll while the visitor still types: %d", p.Status)
		}
		if p := cc.Get("/admin/conversations/" + conv.ID); p.Text("#visitor-typing") != "The visitor is typing…" {
			t.Errorf("the page while the visitor types: %q", p.Text("#visitor-typing"))
		}

		// The signal ends (5 s after it came): the line empties.
		_, err = b.DB.Pool().Exec(ctx, `UPDATE conversation_typing SET until = now() - interval '1 second' WHERE conversation_id = $1`, conv.ID)
		webtest.MustStep(t, "ending the signal", err)
		p = cc.Get(poll)
		if p.Status != http.StatusOK || p.Doc.Find("#visitor-typing").Length() != 1 || strings.TrimSpace(p.Text("#visitor-typing")) != "" {
			t.Fatalf("poll after the signal ended: %d %q", p.Status, p.Text("#visitor-typing"))
		}
		poll = p.Doc.Find("#conversation-live").AttrOr("hx-get", "")

		// Typing again, then the message: the message, no typing.
		_, err = b.DB.Pool().Exec(ctx, `UPDATE conversation_typing SET until = now() + interval '1 second' WHERE conversation_id = $1`, conv.ID)
		webtest.MustStep(t, "ageing the signal", err)
		if recorded, err := b.DB.SignalVisitorTyping(ctx, ten.ID, conv.SessionID); err != nil || !recorded {
			t.Fatalf("the widget's next signal: %v, %v", recorded, err)
		}
		visitorSays(t, b, ten, conv, "It is invoice 1042")
		p = cc.Get(poll)
		if p.Status != http.StatusOK || !strings.Contains(p.Text("#messages"), "It is invoice 1042") || strings.TrimSpace(p.Text("#visitor-typing")) != "" {
			t.Errorf("poll after the visitor's message: %d typing %q", p.Status, p.Text("#visitor-typing"))
		}
	})

	t.Run("PersonTyping", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Is anyone there?")
		path := "/admin/conversations/" + conv.ID
		cc := c.As(t)
		cc.Get(path)
		// Nobody holds it yet: accepted, not kept (a reply takes it over).
		if p := hx(cc, path+"/typing", nil); p.Status != http.StatusNoContent {
			t.Fatalf("typing in a waiting conversation: %d %q", p.Status, p.Body)
		}
		if name := personTyping(t, b, conv.ID); name != "" {
			t.Errorf("a signal was kept for a conversation nobody holds: %q", name)
		}
		if p := hx(cc, path+"/state", url.Values{"status": {"HUMAN"}}); p.Status != http.StatusOK {
			t.Fatalf("taking over: %d", p.Status)
		}
		if p := cc.Get(path); p.Doc.Find("#conversation-live[data-mine]").Length() != 1 || p.Doc.Find("#reply[data-typing='"+path+"/typing']").Length() != 1 {
			t.Errorf("the page does not let the reply box signal typing")
		}
		// Bob does not hold it: accepted, not kept.
		bb := bob.As(t)
		bb.Get(path)
		if p := hx(bb, path+"/typing", nil); p.Status != http.StatusNoContent {
			t.Fatalf("bob typing: %d", p.Status)
		}
		if name := personTyping(t, b, conv.ID); name != "" {
			t.Errorf("the signal of someone who does not hold it was kept: %q", name)
		}
		if p := hx(cc, path+"/typing", nil); p.Status != http.StatusNoContent {
			t.Fatalf("the holder typing: %d", p.Status)
		}
		if name := personTyping(t, b, conv.ID); name != owner {
			t.Errorf("the holder's signal: %q, want %q", name, owner)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		conv := escalatedChat(t, b, ten, "Forged typing?")
		path := "/admin/conversations/" + conv.ID
		if p := hx(c.As(t), path+"/state", url.Values{"status": {"HUMAN"}}); p.Status != http.StatusOK {
			t.Fatalf("taking over: %d", p.Status)
		}
		if p := c.As(t).Post(path+"/typing", url.Values{}); p.Status != http.StatusForbidden {
			t.Errorf("typing without the CSRF token: %d", p.Status)
		}
		if name := personTyping(t, b, conv.ID); name != "" {
			t.Errorf("a forged signal was kept: %q", name)
		}
	})

	t.Run("AnotherTenant", func(t *testing.T) {
		other := b.OwnedTenant(t, "scale")
		theirs := escalatedChat(t, b, other, "Theirs")
		c.As(t).Get("/admin/conversations")
		c.ExpectNotFound(t, []webtest.AdminCall{
			{Name: "Typing", Method: "POST", Path: "/admin/conversations/" + theirs.ID + "/typing", Form: url.Values{}, HX: true},
			{Name: "NotAnID", Method: "POST", Path: "/admin/conversations/nope/typing", Form: url.Values{}, HX: true},
		})
	})
}
