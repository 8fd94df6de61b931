package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/llmtest"
)

// testChat posts a test chat message as the signed-in client c, with the
// CSRF token of the last page it read unless noCSRF, and reads the answer.
func (c *adminClient) testChat(body map[string]any, noCSRF bool) chatResponse {
	c.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.b.ts.URL+"/admin/test-chat", strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Forwarded-For", c.ip)
	if !noCSRF {
		if c.csrf == "" {
			c.t.Fatal("no CSRF token read yet")
		}
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return readChatResponse(c.t, resp)
}

// testChatTenant is a signed-in owner whose tenant has a knowledge entry
// and a quote tool, on a server whose model is scripted.
type testChatTenant struct {
	b      *bundle
	llm    *llmtest.OpenAI
	ten    tenant
	c      *adminClient
	hours  string // the knowledge entry's id
	usedAt func() int
}

func setupTestChat(t *testing.T) *testChatTenant {
	t.Helper()
	b, llm := setupChat(t, nil)
	ten := b.ownedTenant(t, "starter")
	st, entry := b.do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Opening hours", "content": "The shop opens at 9 and closes at 18, Monday to Saturday."})
	if st != 201 {
		t.Fatalf("corpus: %d %v", st, entry)
	}
	if st, body := b.do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Quote", "description": "Price an order", "type": "GENERATE_QUOTE", "config": map[string]any{
			"currency": "EUR", "taxRate": 20, "validityDays": 30,
			"items": []any{map[string]any{"name": "Widget", "unitPrice": 12.5, "currency": "EUR"}}}}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	c := b.newAdminClient(t)
	c.signIn(ten)
	if p := c.get("/admin/test-chat"); p.status != http.StatusOK {
		t.Fatalf("GET /admin/test-chat: %d", p.status)
	}
	return &testChatTenant{b: b, llm: llm, ten: ten, c: c, hours: entry["corpus"].(map[string]any)["id"].(string), usedAt: func() int {
		return b.count(t, `SELECT coalesce(sum(count), 0) FROM conversation_usage WHERE tenant_id = $1`, ten.ID)
	}}
}

func TestAdminTestChat(t *testing.T) {
	t.Parallel()

	t.Run("AnswersWithWhatItUsed", func(t *testing.T) {
		t.Parallel()
		f := setupTestChat(t)
		f.llm.Push(
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_q", Name: "quote", Arguments: []string{`{"items":[{"name":"Widget","quantity":4}]}`}}}},
			llmtest.Turn{Text: []string{"That is ", "60 EUR."}},
		)
		r := f.c.testChat(map[string]any{"message": "Price 4 widgets", "sessionId": "test-a1"}, false)
		if r.status != 200 || len(r.events) < 2 {
			t.Fatalf("got %d %v", r.status, r.events)
		}
		var text string
		for _, ev := range r.events[:len(r.events)-1] {
			checkChatSchema(t, "chunk", "ChatStreamChunk", ev)
			text += ev["text"].(string)
		}
		done := r.events[len(r.events)-1]
		if text != "That is 60 EUR." || done["done"] != true || done["message"] != "That is 60 EUR." || done["sessionId"] != "test-a1" {
			t.Fatalf("streamed %q, then %v", text, done)
		}
		knowledge, _ := done["knowledge"].([]any)
		if len(knowledge) != 1 {
			t.Fatalf("knowledge = %v", done["knowledge"])
		}
		if k := knowledge[0].(map[string]any); k["id"] != f.hours || k["title"] != "Opening hours" || k["summarized"] != false {
			t.Errorf("knowledge entry = %v", k)
		}
		tools, _ := done["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("tools = %v", done["tools"])
		}
		tool := tools[0].(map[string]any)
		input, _ := tool["input"].(map[string]any)
		result, _ := tool["result"].(map[string]any)
		if tool["name"] != "Quote" || tool["type"] != "GENERATE_QUOTE" || tool["success"] != true || input["items"] == nil ||
			!strings.Contains(tool["summary"].(string), "60.00 EUR") || len(result) == 0 {
			t.Errorf("tool = %v", tool)
		}
		// The rest of the event is chat's done event.
		chat := make(map[string]any, len(done))
		for k, v := range done {
			if k != "knowledge" && k != "tools" {
				chat[k] = v
			}
		}
		checkChatSchema(t, "done event", "ChatReply", chat)

		var test bool
		var channel string
		if err := f.b.db.Pool().QueryRow(context.Background(), `SELECT is_test, channel FROM conversations WHERE tenant_id = $1 AND session_id = 'test-a1'`,
			f.ten.ID).Scan(&test, &channel); err != nil || !test || channel != "web" {
			t.Errorf("stored conversation: is_test %v, channel %q (%v)", test, channel, err)
		}
		if n := f.usedAt(); n != 0 {
			t.Errorf("usage %d after a test, want 0", n)
		}
		// The conversation goes on in its session.
		f.llm.Push(llmtest.Turn{Text: []string{"You are welcome."}})
		r = f.c.testChat(map[string]any{"message": "Thanks", "sessionId": "test-a1"}, false)
		if last := r.events[len(r.events)-1]; r.status != 200 || last["messageCount"] != float64(4) {
			t.Errorf("second message: %d %v", r.status, r.events)
		}
	})

	t.Run("AtTheMonthlyLimit", func(t *testing.T) {
		t.Parallel()
		f := setupTestChat(t)
		tn := f.b.tenantNow(t, f.ten.Slug)
		limit := tn.ConversationsLimit()
		f.b.exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, $2)`,
			f.ten.ID, limit)
		if r := f.b.chat(t, "/chat/"+f.ten.Slug, map[string]any{"message": "Hi", "sessionId": "visitor-1"}, nil); r.status != 429 {
			t.Fatalf("a visitor at the limit: %d, want 429", r.status)
		}
		f.llm.Push(llmtest.Turn{Text: []string{"Hello owner."}})
		r := f.c.testChat(map[string]any{"message": "Hi", "sessionId": "test-limit"}, false)
		if r.status != 200 || r.events[len(r.events)-1]["message"] != "Hello owner." {
			t.Fatalf("test at the limit: %d %v", r.status, r.events)
		}
		if n := f.usedAt(); n != limit {
			t.Errorf("usage %d, want %d unchanged", n, limit)
		}
	})

	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		f := setupTestChat(t)
		other := f.b.newTenant(t, "starter")
		if st, body := f.b.do(t, "POST", "/tenants/"+other.Slug+"/segments", other.Token, map[string]any{"name": "Theirs", "slug": "theirs-" + other.Slug, "systemPrompt": "Help."}); st != 201 {
			t.Fatalf("segment: %d %v", st, body)
		}
		// A visitor's session whose id looks like a test's.
		f.llm.Push(llmtest.Turn{Text: []string{"Hello visitor."}})
		if r := f.b.chat(t, "/chat/"+f.ten.Slug, map[string]any{"message": "Hi", "sessionId": "test-visitor"}, nil); r.status != 200 {
			t.Fatalf("visitor: %d %v", r.status, r.body)
		}
		cases := []struct {
			name   string
			body   map[string]any
			noCSRF bool
			status int
			err    string
		}{
			{"NoCSRF", map[string]any{"message": "Hi", "sessionId": "test-x"}, true, 403, msgCSRF},
			{"NotATestSession", map[string]any{"message": "Hi", "sessionId": "visitor-session"}, false, 400, "A test chat's sessionId starts with test-"},
			{"NoMessage", map[string]any{"sessionId": "test-x"}, false, 400, "message and sessionId are required"},
			{"OtherTenantsSegment", map[string]any{"message": "Hi", "sessionId": "test-x", "segment": "theirs-" + other.Slug}, false, 400,
				`Unknown or inactive segment: "theirs-` + other.Slug + `"`},
			{"VisitorsSession", map[string]any{"message": "Hi", "sessionId": "test-visitor"}, false, 409,
				"This session id is a visitor's conversation; a test chat starts its own"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := f.c.as(t).testChat(tc.body, tc.noCSRF)
				if r.status != tc.status || r.body["error"] != tc.err {
					t.Errorf("got %d %v, want %d %q", r.status, r.body, tc.status, tc.err)
				}
			})
		}
		if n := f.b.count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND is_test`, f.ten.ID); n != 0 {
			t.Errorf("%d test conversations stored by refused messages", n)
		}
		if n := f.b.count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE c.tenant_id = $1 AND c.session_id = 'test-visitor'`, f.ten.ID); n != 2 {
			t.Errorf("the visitor's conversation has %d messages, want its own 2", n)
		}
		if got := len(f.llm.Requests()); got != 1 {
			t.Errorf("%d model calls, want the visitor's 1", got)
		}

		t.Run("SignedOut", func(t *testing.T) {
			c := f.b.newAdminClient(t)
			c.get("/admin/login") // a CSRF token, but no session
			r := c.testChat(map[string]any{"message": "Hi", "sessionId": "test-x"}, false)
			if r.status != 401 || r.body["error"] != "You are signed out: sign in again" {
				t.Errorf("got %d %v", r.status, r.body)
			}
		})

		t.Run("PlanWithoutChat", func(t *testing.T) {
			free := f.b.ownedTenant(t, "free")
			c := f.b.newAdminClient(t)
			c.signIn(free)
			if p := c.get("/admin/test-chat"); p.status != 200 || p.doc.Find("#test-chat-plan").Length() != 1 {
				t.Errorf("page: %d, plan notice shown: %v", p.status, p.doc.Find("#test-chat-plan").Length() == 1)
			}
			r := c.testChat(map[string]any{"message": "Hi", "sessionId": "test-x"}, false)
			if r.status != 402 || r.body["code"] != "NOT_ACTIVATED" {
				t.Errorf("got %d %v", r.status, r.body)
			}
		})
	})
}

// TestAdminTestChatPage: the page says plainly when no language model is
// configured, and offers the segments when there are several.
func TestAdminTestChatPage(t *testing.T) {
	t.Parallel()
	local := setupAdmin(t, nil)
	ten := local.ownedTenant(t, "starter")
	c := local.newAdminClient(t)
	c.signIn(ten)
	p := c.get("/admin/test-chat")
	notice := p.text("#test-chat-no-model")
	if p.status != 200 || !strings.Contains(notice, "No language model is configured") || !strings.Contains(notice, "PARLEY_LLM_PROVIDER") ||
		p.doc.Find(`#test-chat-no-model a[href="/admin/settings/developer#llmWebhookUrl"]`).Length() != 1 {
		t.Errorf("local model: %d, notice %q", p.status, notice)
	}
	if p.doc.Find(`nav a[href="/admin/test-chat"][aria-current="page"]`).Length() != 1 {
		t.Error("the navigation does not lead to the test chat")
	}
	if p.doc.Find("#test-chat-segment").Length() != 0 {
		t.Error("a segment choice with one segment")
	}
	if p.doc.Find(`label[for="test-chat-message"]`).Length() != 1 || p.doc.Find(`#test-chat-log[role="log"]`).Length() != 1 {
		t.Error("the message box has no label or the conversation no live region")
	}

	// A reply endpoint is a model.
	local.exec(t, `UPDATE tenants SET llm_webhook_url = 'https://bot.example/reply' WHERE id = $1`, ten.ID)
	if st, body := local.do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Support", "slug": "support", "systemPrompt": "Help."}); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	p = c.get("/admin/test-chat")
	if p.doc.Find("#test-chat-no-model").Length() != 0 {
		t.Error("no-model notice shown with a reply endpoint")
	}
	if opts := p.doc.Find("#test-chat-segment option"); opts.Length() != 2 || opts.Last().AttrOr("value", "") != "support" {
		t.Errorf("segment options: %d", opts.Length())
	}

	managed, _ := setupChat(t, nil)
	mt := managed.ownedTenant(t, "starter")
	mc := managed.newAdminClient(t)
	mc.signIn(mt)
	if p := mc.get("/admin/test-chat"); p.status != 200 || p.doc.Find("#test-chat-no-model").Length() != 0 {
		t.Errorf("managed model: %d, notice shown %v", p.status, p.doc.Find("#test-chat-no-model").Length() != 0)
	}
}

// TestAdminTestChatBrowser drives the test chat in Chromium on a phone's
// screen: an answer shown as it streams, a model that stops answering
// reported, an answer with what the bot used (the knowledge entry, linked,
// and the tool with its result), a new conversation on "Start over", and no
// serious accessibility violation (axe-core).
func TestAdminTestChatBrowser(t *testing.T) {
	t.Parallel()
	axe, err := os.ReadFile("../widget/testdata/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	f := setupTestChat(t)
	b := f.b
	// The stalled answer below ends at the turn's time limit.
	b.srv.Base.Engine.TurnTimeout = 3 * time.Second
	ctx := browserTab(t)
	mustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)))
	openSignedIn(ctx, t, b, f.ten, "/admin")
	mustStep(t, "opening the test chat", chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.menu-toggle`)), chromedp.Click(chromedp.CSS(`nav a[href="/admin/test-chat"]`)), chromedp.WaitVisible(chromedp.ID("test-chat-message"))))
	if got := mustRunStep(ctx, t, "width", chromedp.Evaluate[string](`document.documentElement.scrollWidth + ' ' + window.innerWidth + ' ' +
		Math.round(document.getElementById('test-chat-message').getBoundingClientRect().width)`)); !fitsScreen(got) {
		t.Errorf("page width, screen width, message box width = %s: the page does not fit the phone", got)
	}
	str := func(step, js string) string {
		t.Helper()
		return mustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	ask := func(text string) {
		t.Helper()
		mustStep(t, "asking "+text, chromedp.Do(ctx, keyIn(chromedp.ID("test-chat-message"), text),
			chromedp.Click(chromedp.ID("test-chat-send"))))
	}
	const lastBot = `[...document.querySelectorAll('.test-chat-msg.bot')].pop()`

	// Streamed: the first words show while the model is still answering.
	f.llm.Push(llmtest.Turn{Text: []string{"Let me think"}, Stall: true})
	ask("Are you there?")
	waitUntil(ctx, t, "the first words", lastBot+`?.getAttribute('aria-busy') === 'true' && `+lastBot+`.innerText.includes('Let me think')`)
	waitUntil(ctx, t, "the time-out", lastBot+`.querySelector('[role=alert]')?.innerText === 'the openai model provider did not answer in time'`)

	f.llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_q", Name: "quote", Arguments: []string{`{"items":[{"name":"Widget","quantity":4}]}`}}}},
		llmtest.Turn{Text: []string{"That is ", "60 EUR."}},
	)
	ask("Price 4 widgets")
	waitUntil(ctx, t, "the answer and what the bot used", `!!`+lastBot+`?.querySelector('details.test-chat-used')`)
	if got := str("answer", lastBot+`.querySelector('.test-chat-text').innerText`); got != "That is 60 EUR." {
		t.Errorf("answer = %q", got)
	}
	mustStep(t, "opening what the bot used", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.test-chat-msg.bot:last-child details.test-chat-used > summary`))))
	if got := str("knowledge", lastBot+`.querySelector('.test-chat-knowledge a')?.getAttribute('href') + ' ' + `+lastBot+`.querySelector('.test-chat-knowledge a')?.innerText`); got != "/admin/corpus/"+f.hours+" Opening hours" {
		t.Errorf("knowledge link = %q", got)
	}
	if got := str("tool", lastBot+`.querySelector('.test-chat-tools li')?.innerText || ''`); !strings.Contains(got, "Quote") || !strings.Contains(got, "worked") || !strings.Contains(got, "60.00 EUR") {
		t.Errorf("tool = %q", got)
	}
	if got := str("tool result", lastBot+`.querySelector('.test-chat-tool-result')?.textContent || ''`); !strings.Contains(got, "60") {
		t.Errorf("tool result = %q", got)
	}

	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](string(axe)))
	mustStep(t, "loading axe-core", err)
	found := mustRunStep(ctx, t, "axe", chromedp.Evaluate[[]string](`axe.run(document.querySelector('main'), { resultTypes: ['violations'] })
		.then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.id + ': ' + v.help + ' (' + v.nodes.map(n => n.target.join(' ')).join(', ') + ')'))`, chromedp.EvalAwaitPromise))
	for _, v := range found {
		t.Errorf("axe: %s", v)
	}

	// Start over: a new conversation, in a session of its own.
	mustStep(t, "starting over", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-chat-reset"))))
	if n := str("messages left", `String(document.querySelectorAll('.test-chat-msg').length)`); n != "0" {
		t.Errorf("%s messages left after starting over", n)
	}
	f.llm.Push(llmtest.Turn{Text: []string{"Hello again."}})
	ask("Hello")
	waitUntil(ctx, t, "the new answer", `!!`+lastBot+`?.querySelector('details.test-chat-used')`)
	rows, err := b.db.Pool().Query(context.Background(), `SELECT session_id, message_count FROM conversations WHERE tenant_id = $1 AND is_test ORDER BY created_at`, f.ten.ID)
	mustStep(t, "reading the conversations", err)
	var got []string
	for rows.Next() {
		var s string
		var n int
		mustStep(t, "scanning", rows.Scan(&s, &n))
		got = append(got, fmt.Sprintf("%t:%d", strings.HasPrefix(s, "test-") && len(s) > 20, n))
	}
	if strings.Join(got, " ") != "true:4 true:2" {
		t.Errorf("test conversations (random test- session, messages) = %v, want one of 4 messages then one of 2", got)
	}
	if n := f.usedAt(); n != 0 {
		t.Errorf("usage %d after test chats, want 0", n)
	}
}

// fitsScreen reads "page width, screen width, message box width" and
// reports whether nothing sticks out of the screen and the message box takes
// most of its width.
func fitsScreen(s string) bool {
	var page, screen, box int
	if _, err := fmt.Sscan(s, &page, &screen, &box); err != nil {
		return false
	}
	return page <= screen && box*4 >= screen*3
}
