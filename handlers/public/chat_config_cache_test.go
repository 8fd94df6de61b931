package public_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// The chat keeps its tenant's configuration between messages (db's chat
// configuration cache) and never answers from one that has changed: a
// change made through the API or straight in the database reaches the very
// next message, whether it is the tenant row (the bot's name, the widget
// key), a segment or the knowledge base.
func TestChatFollowsConfigChanges(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	seq := 0
	send := func(t *testing.T, body map[string]any) webtest.ChatResponse {
		t.Helper()
		seq++
		body["message"], body["sessionId"] = "Hello", "cfg-"+string(rune('a'+seq))
		return b.Chat(t, path, body, webtest.AgentHeaders)
	}
	answered := func(t *testing.T, body map[string]any) string {
		t.Helper()
		llm.Push(llmtest.Turn{Text: []string{"OK."}})
		if r := send(t, body); r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		reqs := llm.Requests()
		return string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	}

	if s := answered(t, map[string]any{}); strings.Contains(s, "Zephyrine") {
		t.Fatalf("the first prompt already names Zephyrine: %q", s)
	}
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Zephyrine"})
	if s := answered(t, map[string]any{}); !strings.Contains(s, "Zephyrine") {
		t.Errorf("after the API renamed the bot, the prompt does not name it: %q", s)
	}

	b.Exec(t, `UPDATE segments SET system_prompt = 'Speak like a lighthouse keeper.' WHERE tenant_id = $1 AND is_default`, ten.ID)
	if s := answered(t, map[string]any{}); !strings.Contains(s, "Speak like a lighthouse keeper.") {
		t.Errorf("after the segment's prompt changed in the database, the prompt lacks it: %q", s)
	}

	b.Exec(t, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'Opening hours', 'We open at 7 on Sundays.')`, ten.ID)
	for i := range 2 { // the first renews the tenant, the second the prompt data
		if s := answered(t, map[string]any{}); !strings.Contains(s, "We open at 7 on Sundays.") {
			t.Errorf("message %d after a corpus entry was added: not in the prompt: %q", i+1, s)
		}
	}

	// The widget key: the cache's key neither lets the old one in nor
	// keeps the new one out.
	b.Exec(t, `UPDATE tenants SET widget_key = 'wk-1' WHERE id = $1`, ten.ID)
	answered(t, map[string]any{"widgetKey": "wk-1"})
	b.Exec(t, `UPDATE tenants SET widget_key = 'wk-2' WHERE id = $1`, ten.ID)
	if r := send(t, map[string]any{"widgetKey": "wk-1"}); r.Status != 403 {
		t.Errorf("the rotated-out key: got %d %v, want 403", r.Status, r.Body)
	}
	answered(t, map[string]any{"widgetKey": "wk-2"})

	// Deactivated: the plan no longer has the widget.
	b.Exec(t, `UPDATE tenants SET plan = 'free' WHERE id = $1`, ten.ID)
	if r := send(t, map[string]any{"widgetKey": "wk-2"}); r.Status != 402 {
		t.Errorf("after the plan lost the widget: got %d %v, want 402", r.Status, r.Body)
	}
}

// setupKeptChat is a chat server on a stopped clock (so that the counts
// stay in one minute's window) and a tenant: its chat path.
func setupKeptChat(t *testing.T) (*webtest.Bundle, *llmtest.OpenAI, webtest.Tenant, string) {
	t.Helper()
	b, llm := webtest.SetupChat(t, nil)
	webtest.ManualClock(b)
	ten := b.NewTenant(t, "starter")
	return b, llm, ten, "/chat/" + ten.Slug
}

// A message to a tenant the chat keeps is counted against its address's
// limit at the limit's place in the gates, whose statement also proves the
// kept configuration current: at the limit it answers 429 with Retry-After
// and stores nothing, the model not called; a configuration changed since
// it was kept sends the message through the gates again, on the current
// configuration, whose refusal comes before the limit's; and once past
// them it is answered, counted once.
func TestChatCountedAtItsPlace(t *testing.T) {
	t.Parallel()
	b, llm, ten, path := setupKeptChat(t)
	addr := webtest.NewChatAddr()
	from := map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test"}
	minute := func() int {
		return b.Count(t, `SELECT coalesce(sum(count), 0)::int FROM rate_counters WHERE key = $1`, "chat:ip:min:"+addr)
	}
	sessions := func(session string) int {
		return b.Count(t, `SELECT count(*)::int FROM conversations WHERE tenant_id = $1 AND session_id = $2`, ten.ID, session)
	}
	// The first message keeps the tenant; the second is served from it.
	for i, session := range []string{"h-1", "h-2"} {
		llm.Push(llmtest.Turn{Text: []string{"Hi."}})
		if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": session}, from); r.Status != 200 || sessions(session) != 1 {
			t.Fatalf("message %d: %d %v, %d conversations", i+1, r.Status, r.Body, sessions(session))
		}
	}
	if minute() != 2 {
		t.Fatalf("after two messages the minute's count is %d, want 2", minute())
	}
	// Every request counts, whatever it is answered: one not sent as JSON
	// (415) and one that is not a JSON object (400) as well.
	plain := map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test", "Content-Type": "text/plain"}
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "h-x"}, plain); r.Status != 415 {
		t.Fatalf("a text/plain body: %d %v, want 415", r.Status, r.Body)
	}
	if r := b.Chat(t, path, "[1]", from); r.Status != 400 {
		t.Fatalf("a JSON array: %d %v, want 400", r.Status, r.Body)
	}
	if minute() != 4 {
		t.Fatalf("after two refused requests the minute's count is %d, want 4", minute())
	}
	b.Exec(t, `UPDATE rate_counters SET count = 2 WHERE key = $1`, "chat:ip:min:"+addr)

	// At the limit: 429, nothing stored, the model not asked.
	b.Exec(t, `UPDATE rate_counters SET count = 20 WHERE key = $1`, "chat:ip:min:"+addr)
	calls := len(llm.Requests())
	r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "h-3"}, from)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("at the limit: %d %v (Retry-After %q), want 429", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if sessions("h-3") != 0 || len(llm.Requests()) != calls || minute() != 20 {
		t.Fatalf("at the limit: %d conversations, %d model calls, minute count %d; want 0, 0, 20 (a refusal counts nothing)",
			sessions("h-3"), len(llm.Requests())-calls, minute())
	}
	// The count was made with the turn's lease, which it did not let be taken.
	if n := b.Count(t, `SELECT count(*)::int FROM session_leases WHERE tenant_id = $1 AND session_id = 'h-3'`, ten.ID); n != 0 {
		t.Fatalf("at the limit: %d session leases taken, want none", n)
	}

	// The owner restricts the origins, straight in the database: the kept
	// configuration lets the message through its gates, the count finds it
	// changed, and the current one refuses the origin before the limit.
	b.Exec(t, `UPDATE tenants SET allowed_domains = '{shop.example.com}' WHERE id = $1`, ten.ID)
	evil := map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test", "Origin": "https://evil.example"}
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "h-4"}, evil); r.Status != 403 || r.Header.Get("Retry-After") != "" {
		t.Fatalf("a refused origin on the changed configuration: %d %v (Retry-After %q), want 403", r.Status, r.Body, r.Header.Get("Retry-After"))
	}

	// The other way round: the kept configuration refuses the origin, the
	// current one lets it in. The refusal finds the configuration changed,
	// and the message is answered on the current one.
	b.Exec(t, `UPDATE rate_counters SET count = 5 WHERE key = $1`, "chat:ip:min:"+addr)
	b.Exec(t, `UPDATE tenants SET allowed_domains = '{shop.example.com,evil.example}' WHERE id = $1`, ten.ID)
	llm.Push(llmtest.Turn{Text: []string{"Welcome."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "h-4b"}, evil); r.Status != 200 || sessions("h-4b") != 1 {
		t.Fatalf("an origin the current configuration allows: %d %v, %d conversations", r.Status, r.Body, sessions("h-4b"))
	}
	if minute() != 6 {
		t.Fatalf("minute count %d after a refusal the current configuration overturned, want 6: counted once", minute())
	}

	// Under the limit again, with the configuration changed once more: the
	// message passes the gates a second time and is answered, counted once.
	b.Exec(t, `UPDATE rate_counters SET count = 5 WHERE key = $1`, "chat:ip:min:"+addr)
	b.Exec(t, `UPDATE tenants SET allowed_domains = '{}', bot_name = 'Quillon' WHERE id = $1`, ten.ID)
	llm.Push(llmtest.Turn{Text: []string{"Hi again."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "h-5"}, from); r.Status != 200 || sessions("h-5") != 1 {
		t.Fatalf("after a change: %d %v, %d conversations", r.Status, r.Body, sessions("h-5"))
	}
	reqs := llm.Requests()
	if s := string(reqs[len(reqs)-1].Chat.Messages[0].Content); !strings.Contains(s, "Quillon") {
		t.Errorf("the answer's prompt is not the current configuration's: %q", s)
	}
	if minute() != 6 {
		t.Errorf("minute count %d after the rerun, want 6: counted once", minute())
	}
}

// Messages racing from one address cannot pass the limit together: of 30
// at once (the minute's count at 0), 20 are answered and stored, 10 get 429
// and leave nothing behind.
func TestChatCountsRace(t *testing.T) {
	t.Parallel()
	b, llm, ten, path := setupKeptChat(t)
	// Another address's message keeps the tenant, so that the racing ones
	// are served from the chat's configuration cache.
	llm.Push(llmtest.Turn{Text: []string{"Hi."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "race-0"}, map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}); r.Status != 200 {
		t.Fatalf("first message: %d %v", r.Status, r.Body)
	}
	for range 30 {
		llm.Push(llmtest.Turn{Text: []string{"Hi."}})
	}
	addr := webtest.NewChatAddr()
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", b.TS.URL+path, strings.NewReader(fmt.Sprintf(`{"message":"Hello","sessionId":"race-%d"}`, i+1)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", addr)
			req.Header.Set("X-Agent-Model", "claude-test")
			resp, err := b.TS.Client().Do(req)
			if err != nil {
				t.Errorf("message %d: %v", i+1, err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	byStatus := map[int]int{}
	for _, s := range statuses {
		byStatus[s]++
	}
	stored := b.Count(t, `SELECT count(*)::int FROM conversations WHERE tenant_id = $1 AND session_id LIKE 'race-%' AND session_id <> 'race-0'`, ten.ID)
	if byStatus[200] != 20 || byStatus[429] != 10 || stored != 20 {
		t.Fatalf("30 racing messages: statuses %v, %d conversations stored; want 20 answered and stored, 10 refused", byStatus, stored)
	}
}

// A message with no visitor to resolve has its count made in its turn's
// first round trip, with the session's lease: the gates after the limit's
// place run before the count is made, and the limit's refusal still wins
// over theirs; an address refused lately is counted before its turns, with
// the same answers; and a configuration changed since it was kept, found
// so by the count made with the turn, is read again, the message counted
// once.
func TestChatCountedWithItsTurn(t *testing.T) {
	t.Parallel()
	b, llm, ten, path := setupKeptChat(t)
	headers := func(addr string) map[string]string {
		return map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test"}
	}
	minute := func(addr string) int {
		return b.Count(t, `SELECT coalesce(sum(count), 0)::int FROM rate_counters WHERE key = $1`, "chat:ip:min:"+addr)
	}
	answered := func(addr, session string) string {
		t.Helper()
		llm.Push(llmtest.Turn{Text: []string{"Hi."}})
		if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": session}, headers(addr)); r.Status != 200 {
			t.Fatalf("%s: %d %v", session, r.Status, r.Body)
		}
		reqs := llm.Requests()
		return string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	}

	// At the limit, a locale too long: that gate comes after the limit's,
	// and its refusal yields to the limit's.
	addr := webtest.NewChatAddr()
	answered(addr, "t-1")
	b.Exec(t, `UPDATE rate_counters SET count = 20 WHERE key = $1`, "chat:ip:min:"+addr)
	long := map[string]any{"message": "Hello", "sessionId": "t-2", "locale": strings.Repeat("x", 36)}
	if r := b.Chat(t, path, long, headers(addr)); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a locale too long at the limit: %d %v, want 429 with Retry-After", r.Status, r.Body)
	}
	// Refused lately: counted before the turn, refused alike.
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "t-3"}, headers(addr)); r.Status != 429 {
		t.Fatalf("an address refused lately, at the limit: %d %v, want 429", r.Status, r.Body)
	}
	if n := b.Count(t, `SELECT count(*)::int FROM conversations WHERE tenant_id = $1 AND session_id IN ('t-2', 't-3')`, ten.ID); n != 0 || minute(addr) != 20 {
		t.Fatalf("refused messages: %d conversations, minute count %d; want 0 and 20", n, minute(addr))
	}
	// Under the limit the locale's own refusal stands.
	b.Exec(t, `UPDATE rate_counters SET count = 5 WHERE key = $1`, "chat:ip:min:"+addr)
	if r := b.Chat(t, path, long, headers(addr)); r.Status != 400 {
		t.Fatalf("a locale too long under the limit: %d %v, want 400", r.Status, r.Body)
	}
	answered(addr, "t-4")
	if minute(addr) != 7 {
		t.Fatalf("minute count %d after two more messages, want 7", minute(addr))
	}

	// The bot renamed straight in the database: the kept configuration
	// lets a new address's message in, the count made with its turn finds
	// it changed, and the message is answered on the current one.
	other := webtest.NewChatAddr()
	b.Exec(t, `UPDATE tenants SET bot_name = 'Marisol' WHERE id = $1`, ten.ID)
	if s := answered(other, "t-5"); !strings.Contains(s, "Marisol") {
		t.Errorf("the answer's prompt is not the current configuration's: %q", s)
	}
	if minute(other) != 1 {
		t.Errorf("minute count %d for a message run again on the current configuration, want 1: counted once", minute(other))
	}
}
