package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestCorrectAnswer improves an answer through the REST API: the right
// answer becomes an entry titled with the question, a second correction
// of the same question updates it, and the next visitor asking it in near
// words gets an answer from the real engine and the scripted model whose
// prompt holds the entry first ([1]) and whose answer cites it, as the
// conversation and the chat's sources say. Then the refusals: bad bodies
// (the content limit at N and N+1), a message that is not an answer,
// another tenant's ids, a token without corpus:write; and the audit log.
func TestCorrectAnswer(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil,
		llmtest.Turn{Text: []string{"I am not sure we go that far."}},
		llmtest.Turn{Text: []string{"Yes: we deliver to Lyon on Thursdays, for 35 euros [1]."}},
		llmtest.Turn{Text: []string{"On Thursdays [1]."}},
		llmtest.Turn{Text: []string{"Same here."}})
	ten := b.NewTenant(t, "scale")
	other := b.NewTenant(t, "scale")
	for _, e := range []map[string]any{
		{"title": "Delivery", "content": "We deliver bikes assembled within 25 km of the shop for 20 euros."},
		{"title": "Opening hours", "content": "Open Tuesday to Saturday, 9:00 to 18:30."},
		{"title": "Returns", "content": "Unused items can be returned within 30 days."},
	} {
		b.MustDo(t, http.StatusCreated, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, e)
	}
	ask := func(session, message string) webtest.ChatResponse {
		t.Helper()
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": message, "sessionId": session},
			map[string]string{"X-Agent-Model": "corrections-test"})
		if r.Status != http.StatusOK {
			t.Fatalf("chat %q: %d %v", message, r.Status, r.Body)
		}
		return r
	}
	first := ask("fix-1", "Do you deliver to Lyon?")
	conv := first.Body["conversationId"].(string)
	answer := first.Body["messageId"].(string)
	base := "/tenants/" + ten.Slug + "/conversations/" + conv + "/messages/"
	right := "We deliver to Lyon on Thursdays, for 35 euros."

	created := b.MustDo(t, http.StatusCreated, "POST", base+answer+"/correction", ten.Token, map[string]any{"answer": right})
	entry := webtest.Obj(created["corpus"])
	if created["created"] != true || entry["title"] != "Do you deliver to Lyon?" || entry["content"] != right ||
		entry["source"] != "correction" || entry["isActive"] != true {
		t.Fatalf("the correction's entry: %v", created)
	}
	id := entry["id"].(string)

	// Again, of the same answer: the same entry, updated.
	right = "We deliver to Lyon on Thursdays, for 35 euros, assembled."
	again := b.MustDo(t, http.StatusOK, "POST", base+answer+"/correction", ten.Token, map[string]any{"answer": right})
	if e := webtest.Obj(again["corpus"]); again["created"] != false || e["id"] != id || e["content"] != right {
		t.Fatalf("a second correction: %v, want entry %s updated", again, id)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 4 {
		t.Errorf("%d entries, want 4: a second correction adds none", n)
	}

	// The question asked again in near words: the entry comes first and is cited.
	next := ask("fix-2", "do you deliver to lyon")
	reqs := llm.Requests()
	system := string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	firstEntry := regexp.MustCompile(`<entry ref="\[1\]"[^>]*>\n# ([^\n]*)\n`).FindStringSubmatch(webtest.KnowledgeBlocks(system))
	if firstEntry == nil || firstEntry[1] != "Do you deliver to Lyon?" {
		t.Fatalf("the prompt's first entry: %q, want the correction's; knowledge:\n%s", firstEntry, webtest.KnowledgeBlocks(system))
	}
	if !strings.Contains(system, right) {
		t.Errorf("the prompt does not hold the corrected answer")
	}
	if msg := next.Body["message"].(string); strings.Contains(msg, "[1]") || !strings.Contains(msg, "Thursdays") {
		t.Errorf("the visitor's answer: %q", msg)
	}
	// The visitor's sources list the cited entries that have an address
	// (issue 38); a correction has none, so the visitor sees no link.
	if src := webtest.List(next.Body["sources"]); len(src) != 0 {
		t.Errorf("the visitor's sources: %v, want none (the entry has no address)", src)
	}
	_, detail := b.Do(t, "GET", "/tenants/"+ten.Slug+"/conversations/"+next.Body["conversationId"].(string), ten.Token, nil)
	msgs := webtest.List(webtest.Obj(detail["conversation"])["messages"])
	if len(msgs) == 0 {
		msgs = webtest.List(detail["messages"])
	}
	cited := false
	for _, m := range msgs {
		for _, s := range webtest.List(webtest.Obj(m)["sources"]) {
			cited = cited || webtest.Obj(s)["id"] == id
		}
	}
	if !cited {
		t.Errorf("the answer does not cite entry %s: %v", id, detail)
	}

	// Other words for the same question: the entry still comes first.
	ask("fix-near", "Could you deliver my new bike in Lyon?")
	reqs = llm.Requests()
	near := regexp.MustCompile(`<entry ref="\[1\]"[^>]*>\n# ([^\n]*)\n`).FindStringSubmatch(webtest.KnowledgeBlocks(string(reqs[len(reqs)-1].Chat.Messages[0].Content)))
	if near == nil || near[1] != "Do you deliver to Lyon?" {
		t.Errorf("near words: the prompt's first entry is %q, want the correction's", near)
	}

	// The same words in another conversation: the entry again, not a new one.
	third := ask("fix-3", "Do you  deliver to Lyon")
	byWords := b.MustDo(t, http.StatusOK, "POST", base[:len(base)-len(conv)-len("/messages/")]+third.Body["conversationId"].(string)+
		"/messages/"+third.Body["messageId"].(string)+"/correction", ten.Token, map[string]any{"answer": right, "title": "Delivery to Lyon"})
	if e := webtest.Obj(byWords["corpus"]); e["id"] != id || e["title"] != "Delivery to Lyon" {
		t.Errorf("the same question elsewhere: %v, want entry %s retitled", byWords, id)
	}

	// Refusals.
	userMessage := ""
	for _, m := range msgs {
		if webtest.Obj(m)["role"] == "user" {
			userMessage = webtest.Obj(m)["id"].(string)
		}
	}
	nextBase := "/tenants/" + ten.Slug + "/conversations/" + next.Body["conversationId"].(string) + "/messages/"
	for _, c := range []struct {
		name, path string
		body       any
		field      string
	}{
		{"no answer", base + answer, map[string]any{}, "answer"},
		{"empty answer", base + answer, map[string]any{"answer": "  "}, "answer"},
		{"answer not a string", base + answer, map[string]any{"answer": 3}, "answer"},
		{"answer too long", base + answer, map[string]any{"answer": strings.Repeat("a", parley.MaxCorpusContent+1)}, "answer"},
		{"title too long", base + answer, map[string]any{"answer": "ok", "title": strings.Repeat("t", parley.MaxCorpusTitle+1)}, "title"},
		{"a visitor's message", nextBase + userMessage, map[string]any{"answer": "ok"}, "messageId"},
	} {
		status, body := b.Do(t, "POST", c.path+"/correction", ten.Token, c.body)
		if status != http.StatusBadRequest || webtest.ErrorDetails(body)[c.field] == nil {
			t.Errorf("%s: %d %v, want 400 naming %s", c.name, status, body, c.field)
		}
	}
	// At the limit exactly: accepted.
	limit := b.MustDo(t, http.StatusOK, "POST", base+answer+"/correction", ten.Token, map[string]any{"answer": strings.Repeat("a", parley.MaxCorpusContent)})
	if n := len(webtest.Obj(limit["corpus"])["content"].(string)); n != parley.MaxCorpusContent {
		t.Errorf("an answer of %d characters saved as %d", parley.MaxCorpusContent, n)
	}
	for name, path := range map[string]string{
		"unknown message":         base + "5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
		"not a uuid":              base + "nope",
		"message of another conv": nextBase + answer,
	} {
		if status, body := b.Do(t, "POST", path+"/correction", ten.Token, map[string]any{"answer": "ok"}); status != http.StatusNotFound {
			t.Errorf("%s: %d %v, want 404", name, status, body)
		}
	}
	otherPath := "/tenants/" + other.Slug + "/conversations/" + conv + "/messages/" + answer + "/correction"
	if status, body := b.Do(t, "POST", otherPath, other.Token, map[string]any{"answer": "stolen"}); status != http.StatusNotFound {
		t.Errorf("another tenant's conversation: %d %v, want 404", status, body)
	}
	agentLike := b.Token(t, ten.ID, auth.ScopeConversationsRead, auth.ScopeConversationsWrite)
	if status, body := b.Do(t, "POST", base+answer+"/correction", agentLike, map[string]any{"answer": "ok"}); status != http.StatusForbidden {
		t.Errorf("a token without corpus:write: %d %v, want 403", status, body)
	}

	// The audit log: each saved correction, naming the entry.
	if n := b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'knowledge.answer_corrected' AND target_id = $2`, ten.ID, id); n != 4 {
		t.Errorf("%d audit entries of the corrections, want 4", n)
	}
	// Deleting the entry removes the link: the next correction creates anew.
	b.MustDo(t, http.StatusOK, "DELETE", "/tenants/"+ten.Slug+"/corpus/"+id, ten.Token, nil)
	if n := b.Count(t, `SELECT count(*) FROM corrections WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d corrections left after deleting the entry", n)
	}
	b.MustDo(t, http.StatusCreated, "POST", base+answer+"/correction", ten.Token, map[string]any{"answer": right})
}
