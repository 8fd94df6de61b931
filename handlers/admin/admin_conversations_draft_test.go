package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestConversationDraft has the assistant draft a person's reply from the
// conversation page: the reply box comes back holding the draft, under the
// conversation in one line, and nothing is stored or sent.
func TestConversationDraft(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil,
		llmtest.Turn{Text: []string{"SUMMARY: Asks whether the order ships today.\n", "Yes, it leaves our warehouse this afternoon."}})
	ten := b.OwnedTenant(t, "scale")
	conv := escalatedChat(t, b, ten, "Does my order ship today?")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	page := "/admin/conversations/" + conv.ID

	if p := c.Get(page); p.Doc.Find("#draft-reply").Length() != 1 {
		t.Fatalf("no Suggest a reply button on the page of an escalated conversation")
	}
	p := hx(c, page+"/draft", url.Values{"content": {"half-typed"}})
	if p.Status != http.StatusOK {
		t.Fatalf("draft: %d %s", p.Status, p.Body)
	}
	if got := p.Doc.Find("textarea#reply").Text(); got != "Yes, it leaves our warehouse this afternoon." {
		t.Errorf("the reply box holds %q", got)
	}
	if got := p.Text("#draft-summary"); got != "In short: Asks whether the order ships today." {
		t.Errorf("summary %q", got)
	}
	if n := len(llm.Requests()); n != 1 {
		t.Fatalf("%d model calls, want 1", n)
	}
	if sys := string(llm.Requests()[0].Chat.Messages[0].Content); !strings.Contains(sys, "A person of the team has taken over") {
		t.Errorf("the draft's prompt: %.200q", sys)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1`, conv.ID); n != 2 {
		t.Errorf("%d messages after the draft, want 2: nothing is stored", n)
	}

	// The model fails: the box keeps what was typed, with the reason.
	p = hx(c, page+"/draft", url.Values{"content": {"half-typed"}})
	if p.Status != http.StatusBadGateway || p.Doc.Find("textarea#reply").Text() != "half-typed" ||
		!strings.HasPrefix(p.Text("#reply-error"), "The assistant could not draft a reply") {
		t.Errorf("a failed draft: %d %q %q", p.Status, p.Doc.Find("textarea#reply").Text(), p.Text("#reply-error"))
	}

	// Another tenant's conversation, and a missing CSRF token.
	other := b.OwnedTenant(t, "scale")
	oc := b.NewAdminClient(t)
	oc.SignIn(other)
	if p := hx(oc, page+"/draft", nil); p.Status != http.StatusNotFound {
		t.Errorf("another tenant's draft: %d", p.Status)
	}
	if p := c.Do("POST", page+"/draft", url.Values{}, map[string]string{"HX-Request": "true"}); p.Status != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", p.Status)
	}
}
