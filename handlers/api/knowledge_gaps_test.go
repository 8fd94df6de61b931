package api_test

import (
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// The knowledge gaps through the API: visitors' questions the assistant
// (the local provider, with an empty knowledge base) could not answer
// group by wording with their signs and examples; the filters' bad values
// are 400s in the spec's shape; a group is dismissed and answered by key;
// another tenant's group is 404; the scopes hold.
func TestKnowledgeGapsAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	for i, q := range []string{"What are your opening hours?", "Opening hours?", "Do you deliver to Canada?"} {
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": q, "sessionId": "gap-api-" + string(rune('a'+i)), "stream": false}, nil)
		if r.Status != 200 {
			t.Fatalf("chat: %d %v", r.Status, r.Body)
		}
	}
	if r := b.Chat(t, "/chat/"+other.Slug, map[string]any{"message": "A secret of the other tenant", "sessionId": "gap-api-o", "stream": false}, nil); r.Status != 200 {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	path := "/tenants/" + ten.Slug + "/knowledge-gaps"
	body := b.MustDo(t, 200, "GET", path, ten.Token, nil)
	list := body["knowledgeGaps"].([]any)
	if len(list) != 2 {
		t.Fatalf("groups %v, want hours and Canada", list)
	}
	hours := list[0].(map[string]any)
	if hours["key"] != "hour opening" || hours["count"] != float64(2) || hours["question"] != "Opening hours?" || hours["state"] != "open" {
		t.Errorf("the first group %v", hours)
	}
	if s := hours["signals"].([]any); len(s) != 2 || s[0] != "noMatch" || s[1] != "notKnown" {
		t.Errorf("signals %v, want noMatch and notKnown (the local provider found nothing)", s)
	}
	if ex := hours["examples"].([]any); len(ex) != 2 || ex[0].(map[string]any)["conversationId"] == "" {
		t.Errorf("examples %v", ex)
	}
	if p := body["pagination"].(map[string]any); p["total"] != float64(2) || p["pages"] != float64(1) {
		t.Errorf("pagination %v", p)
	}
	// Filters: another channel has none; the largest page is taken; bad
	// values are 400s naming them.
	if p := b.MustDo(t, 200, "GET", path+"?limit=100", ten.Token, nil)["pagination"].(map[string]any); p["limit"] != float64(100) {
		t.Errorf("limit=100: pagination %v", p)
	}
	if l := b.MustDo(t, 200, "GET", path+"?channel=voice", ten.Token, nil)["knowledgeGaps"].([]any); len(l) != 0 {
		t.Errorf("voice: %v", l)
	}
	for q, field := range map[string]string{"state=closed": "state", "channel=fax": "channel", "from=yesterday": "from",
		"limit=0": "limit", "limit=101": "limit", "segment=nope": "segment", "from=2030-01-02&to=2030-01-01": "to"} {
		st, res := b.Do(t, "GET", path+"?"+q, ten.Token, nil)
		if d, _ := res["details"].(map[string]any); st != 400 || d[field] == nil {
			t.Errorf("%s: %d %v, want 400 naming %s", q, st, res, field)
		}
	}
	// Marks: dismissed, then listed apart; another tenant's key and a
	// bad state; the scopes.
	mark := path + "/state"
	if got := b.MustDo(t, 200, "POST", mark, ten.Token, map[string]any{"key": "canada deliver", "state": "dismissed"}); got["state"] != "dismissed" {
		t.Errorf("dismissed: %v", got)
	}
	if l := b.MustDo(t, 200, "GET", path, ten.Token, nil)["knowledgeGaps"].([]any); len(l) != 1 {
		t.Errorf("open after the dismissal: %v", l)
	}
	if l := b.MustDo(t, 200, "GET", path+"?state=dismissed", ten.Token, nil)["knowledgeGaps"].([]any); len(l) != 1 || l[0].(map[string]any)["state"] != "dismissed" {
		t.Errorf("dismissed: %v", l)
	}
	if st, res := b.Do(t, "POST", mark, ten.Token, map[string]any{"key": "other secret tenant", "state": "dismissed"}); st != 404 {
		t.Errorf("another tenant's group: %d %v", st, res)
	}
	if st, res := b.Do(t, "POST", "/tenants/"+other.Slug+"/knowledge-gaps/state", other.Token, map[string]any{"key": "hour opening", "state": "answered"}); st != 404 {
		t.Errorf("this tenant's group from the other: %d %v", st, res)
	}
	if st, res := b.Do(t, "POST", mark, ten.Token, map[string]any{"key": "hour opening", "state": "done"}); st != 400 || res["details"].(map[string]any)["state"] == nil {
		t.Errorf("a bad state: %d %v", st, res)
	}
	if st, res := b.Do(t, "POST", mark, ten.Token, map[string]any{"key": "hour opening", "state": "answered", "entryId": "7b1f0c2e-9a4d-4c3e-8f5a-2d6b8e0c1a3f"}); st != 404 {
		t.Errorf("an entry of none of the tenant's: %d %v", st, res)
	}
	if st, _ := b.Do(t, "GET", path, b.Token(t, ten.ID, auth.ScopeCorpusRead), nil); st != 403 {
		t.Errorf("without conversations:read: %d", st)
	}
	if st, _ := b.Do(t, "POST", mark, b.Token(t, ten.ID, auth.ScopeConversationsRead), map[string]any{"key": "hour opening", "state": "dismissed"}); st != 403 {
		t.Errorf("without corpus:write: %d", st)
	}
	if st, _ := b.Do(t, "GET", path, other.Token, nil); st != 404 {
		t.Errorf("another tenant's token: %d", st)
	}
}
