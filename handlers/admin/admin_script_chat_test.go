package admin_test

import (
	"os"
	"strings"
	"testing"

	"github.com/parley/parley/views"
	"github.com/parley/parley/web/webtest"
)

// TestAdminScriptChatPage: the embed code leads to "Script the chat", which
// gives the snippet the widget is tested with, the tenant's embed code
// without the launcher, and every call and event of window.Parley, each
// example with its Copy button.
func TestAdminScriptChatPage(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin"); p.Doc.Find(`#embed a[href="/admin/script-chat"]`).Length() != 1 {
		t.Error("the embed code card does not lead to Script the chat")
	}
	p := c.Get("/admin/script-chat")
	if p.Status != 200 || p.Text("main h1") != "Script the chat" {
		t.Fatalf("GET /admin/script-chat: %d, title %q", p.Status, p.Text("main h1"))
	}
	if got := p.Text("#script-snippet"); got != "<script>\n"+views.ParleySnippet+"\n</script>" {
		t.Errorf("snippet = %q", got)
	}
	// The README gives the same.
	if readme, err := os.ReadFile("../../README.md"); err != nil || !strings.Contains(string(readme), views.ParleySnippet) {
		t.Errorf("the README's snippet is not the dashboard's (%v)", err)
	}
	embed := p.Text("#script-embed")
	if !strings.HasPrefix(embed, `<script src="`) || !strings.Contains(embed, ` data-tenant="`+ten.Slug+`"`) ||
		!strings.HasSuffix(embed, ` data-launcher="none" async></script>`) {
		t.Errorf("embed code without the launcher = %q", embed)
	}
	methods := p.Text("#script-methods")
	for _, m := range []string{"Parley.open()", "Parley.close()", "Parley.toggle()", "Parley.send('text')", "Parley.identify({ visitorToken: '…' })",
		"Parley.on('event', fn)", "Parley.off('event', fn)", "Parley('open')"} {
		if !strings.Contains(methods, m) {
			t.Errorf("the calls do not name %s", m)
		}
	}
	events := p.Text("#script-events")
	for _, e := range []string{"open", "close", "message", "lead", "escalated", "{ text, role, id }", "submissionId"} {
		if !strings.Contains(events, e) {
			t.Errorf("the events do not name %s", e)
		}
	}
	if pres, copies := p.Doc.Find("main pre[id]").Length(), p.Doc.Find("main button[data-copy]").Length(); pres != 5 || copies != pres {
		t.Errorf("%d examples, %d Copy buttons, want 5 each", pres, copies)
	}
}
