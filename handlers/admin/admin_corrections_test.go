package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestAdminCorrections is "Improve this answer" in the dashboard: the
// link under an answer (not under the visitor's message, not for an
// agent), the form on its page and as an htmx fragment, its refusals
// re-rendered beside the field, the save by a plain form (303 back to the
// answer, or to the test chat) and by htmx (a line naming the entry), and
// then the test chat asking the question again, whose answer cites the
// entry among its sources.
func TestAdminCorrections(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"I am not sure we go that far."}})
	ten := b.OwnedTenant(t, "scale")
	other := b.OwnedTenant(t, "scale")
	b.MustDo(t, http.StatusCreated, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token,
		map[string]any{"title": "Delivery", "content": "We deliver bikes assembled within 25 km of the shop."})
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Do you deliver to Lyon?", "sessionId": "fix-admin"},
		map[string]string{"X-Agent-Model": "corrections-test"})
	if r.Status != http.StatusOK {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	conv, answer := r.Body["conversationId"].(string), r.Body["messageId"].(string)
	form := "/admin/conversations/" + conv + "/messages/" + answer + "/correction"

	c := b.NewAdminClient(t)
	c.SignIn(ten)
	page := c.Get("/admin/conversations/" + conv)
	if page.Status != http.StatusOK {
		t.Fatalf("conversation page: %d", page.Status)
	}
	links := page.Doc.Find(".transcript .correction a")
	if links.Length() != 1 {
		t.Fatalf("%d \"Improve this answer\" links, want 1 (the answer's only)", links.Length())
	}
	if href, _ := links.Attr("href"); href != form || page.Doc.Find("#message-"+answer+" #correction-"+answer).Length() != 1 {
		t.Errorf("the link: %q under %d items, want %q under the answer", href, page.Doc.Find("#message-"+answer).Length(), form)
	}
	if hx, _ := links.Attr("hx-get"); hx != form {
		t.Errorf("the link's hx-get: %q", hx)
	}

	// The form, on its page and as a fragment.
	p := c.Get(form)
	if p.Status != http.StatusOK || p.Text("#correction-question-"+answer) != "Do you deliver to Lyon?" ||
		p.Text("#answer-"+answer) != "I am not sure we go that far." || !strings.Contains(p.Body, "<html") {
		t.Fatalf("the form's page: %d question %q answer %q", p.Status, p.Text("#correction-question-"+answer), p.Text("#answer-"+answer))
	}
	hx := c.Do("GET", form, nil, map[string]string{"HX-Request": "true"})
	if hx.Status != http.StatusOK || strings.Contains(hx.Body, "<html") || hx.Doc.Find("form.correction-form[data-holds-poll]").Length() != 1 {
		t.Fatalf("the form's fragment: %d %s", hx.Status, hx.Body)
	}

	// Refusals, re-rendered beside the field, nothing saved.
	for _, tc := range []struct {
		name, answer, title, field string
	}{
		{"empty", "   ", "", "answer"},
		{"too long", strings.Repeat("a", parley.MaxCorpusContent+1), "", "answer"},
		{"title too long", "ok", strings.Repeat("t", parley.MaxCorpusTitle+1), "title"},
	} {
		for _, htmx := range []bool{false, true} {
			header := map[string]string{}
			if htmx {
				header["HX-Request"] = "true"
			}
			p := c.Do("POST", form, url.Values{"_csrf": {c.CSRF}, "answer": {tc.answer}, "title": {tc.title}}, header)
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+tc.field+"-"+answer) == "" {
				t.Errorf("%s (htmx %v): %d, error %q", tc.name, htmx, p.Status, p.Text("#err-"+tc.field+"-"+answer))
			}
		}
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 1 {
		t.Fatalf("%d entries after refusals, want 1", n)
	}

	// A plain form: 303 back to the answer, the flash naming the entry.
	right := "We deliver to Lyon on Thursdays, for 35 euros."
	saved := c.Submit(form, url.Values{"answer": {right}, "title": {""}})
	if saved.Status != http.StatusSeeOther || saved.Location() != "/admin/conversations/"+conv+"#message-"+answer {
		t.Fatalf("save: %d to %q", saved.Status, saved.Location())
	}
	if flash := c.Get("/admin/conversations/" + conv).Text(".flash.ok"); !strings.Contains(flash, "Saved to your knowledge base: Do you deliver to Lyon?") {
		t.Errorf("flash %q", flash)
	}
	var id string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT id FROM corpus_entries WHERE tenant_id = $1 AND title = 'Do you deliver to Lyon?' AND content = $2`,
		ten.ID, right).Scan(&id); err != nil {
		t.Fatalf("the entry: %v", err)
	}
	// The form again: the entry's answer, and saving updates it.
	if p := c.Get(form + "?back=test-chat"); p.Text("#answer-"+answer) != right || !strings.Contains(p.Text("#answer-hint-"+answer), "already has an entry") {
		t.Errorf("the form of a corrected question: %q, hint %q", p.Text("#answer-"+answer), p.Text("#answer-hint-"+answer))
	}
	right += " Assembled."
	up := c.Do("POST", form, url.Values{"_csrf": {c.CSRF}, "answer": {right}, "back": {"test-chat"}}, map[string]string{"HX-Request": "true"})
	if href, _ := up.Doc.Find(".correction-saved a").Attr("href"); up.Status != http.StatusOK || href != "/admin/corpus/"+id ||
		!strings.Contains(up.Text(".correction-saved"), "Updated in your knowledge base") {
		t.Fatalf("htmx save: %d %s", up.Status, up.Body)
	}
	if back := c.Submit(form, url.Values{"answer": {right}, "back": {"test-chat"}}); back.Location() != "/admin/test-chat" {
		t.Errorf("from the test chat: back to %q", back.Location())
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 2 {
		t.Errorf("%d entries, want 2: the corrections of one question make one", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'knowledge.answer_corrected' AND target_id = $2
		AND details->>'via' = 'dashboard'`, ten.ID, id); n != 3 {
		t.Errorf("%d audit entries, want 3 (refusals record none)", n)
	}

	// The test chat: the question again, answered from the entry, cited.
	llm.Push(llmtest.Turn{Text: []string{"Yes, on Thursdays [1]."}})
	c.Get("/admin/test-chat")
	tr := c.TestChat(map[string]any{"message": "do you deliver to Lyon", "sessionId": "test-fix"}, false)
	if tr.Status != http.StatusOK || len(tr.Events) == 0 {
		t.Fatalf("test chat: %d %v", tr.Status, tr.Events)
	}
	done := tr.Events[len(tr.Events)-1]
	src := webtest.List(done["sources"])
	if len(src) != 1 || webtest.Obj(src[0])["title"] != "Do you deliver to Lyon?" || done["message"] != "Yes, on Thursdays." {
		t.Errorf("the test chat's answer %q cites %v, want the correction", done["message"], src)
	}
	if k := webtest.List(done["knowledge"]); len(k) == 0 || webtest.Obj(k[0])["id"] != id || webtest.Obj(k[0])["cited"] != true {
		t.Errorf("the prompt's knowledge: %v, want entry %s first and cited", done["knowledge"], id)
	}

	// An agent sees no link and is refused the form; another tenant's
	// conversation is not found.
	agent := b.NewAdminClient(t)
	agent.SignInAs(b.AddMember(t, ten, auth.RoleAgent))
	if p := agent.Get("/admin/conversations/" + conv); p.Status != http.StatusOK || p.Doc.Find(".correction").Length() != 0 {
		t.Errorf("an agent's conversation page: %d with %d links", p.Status, p.Doc.Find(".correction").Length())
	}
	if p := agent.Get(form); p.Status != http.StatusForbidden {
		t.Errorf("an agent's form: %d, want 403", p.Status)
	}
	outsider := b.NewAdminClient(t)
	outsider.SignIn(other)
	outsider.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "FormOfAnother", Method: "GET", Path: form},
		{Name: "SaveOfAnother", Method: "POST", Path: form, Form: url.Values{"answer": {"stolen"}}},
		{Name: "SaveOfAnotherHX", Method: "POST", Path: form, Form: url.Values{"answer": {"stolen"}}, HX: true},
	})
}
