package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// testChatTenant is a signed-in owner whose tenant has a knowledge entry
// and a quote tool, on a server whose model is scripted.
type testChatTenant struct {
	b      *webtest.Bundle
	llm    *llmtest.OpenAI
	ten    webtest.Tenant
	c      *webtest.AdminClient
	hours  string // the knowledge entry's id
	usedAt func() int
}

func setupTestChat(t *testing.T) *testChatTenant {
	t.Helper()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.OwnedTenant(t, "starter")
	st, entry := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Opening hours", "content": "The shop opens at 9 and closes at 18, Monday to Saturday."})
	if st != 201 {
		t.Fatalf("corpus: %d %v", st, entry)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Quote", "description": "Price an order", "type": "GENERATE_QUOTE", "config": map[string]any{
			"currency": "EUR", "taxRate": 20, "validityDays": 30,
			"items": []any{map[string]any{"name": "Widget", "unitPrice": 12.5, "currency": "EUR"}}}}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/test-chat"); p.Status != http.StatusOK {
		t.Fatalf("GET /admin/test-chat: %d", p.Status)
	}
	return &testChatTenant{b: b, llm: llm, ten: ten, c: c, hours: entry["corpus"].(map[string]any)["id"].(string), usedAt: func() int {
		return b.Count(t, `SELECT coalesce(sum(count), 0) FROM conversation_usage WHERE tenant_id = $1`, ten.ID)
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
		r := f.c.TestChat(map[string]any{"message": "Price 4 widgets", "sessionId": "test-a1"}, false)
		if r.Status != 200 || len(r.Events) < 2 {
			t.Fatalf("got %d %v", r.Status, r.Events)
		}
		var text string
		for _, ev := range r.Events[:len(r.Events)-1] {
			webtest.CheckChatSchema(t, "chunk", "ChatStreamChunk", ev)
			text += ev["text"].(string)
		}
		done := r.Events[len(r.Events)-1]
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
		webtest.CheckChatSchema(t, "done event", "ChatReply", chat)

		var test bool
		var channel string
		if err := f.b.DB.Pool().QueryRow(context.Background(), `SELECT is_test, channel FROM conversations WHERE tenant_id = $1 AND session_id = 'test-a1'`,
			f.ten.ID).Scan(&test, &channel); err != nil || !test || channel != "web" {
			t.Errorf("stored conversation: is_test %v, channel %q (%v)", test, channel, err)
		}
		if n := f.usedAt(); n != 0 {
			t.Errorf("usage %d after a test, want 0", n)
		}
		// The conversation goes on in its session.
		f.llm.Push(llmtest.Turn{Text: []string{"You are welcome."}})
		r = f.c.TestChat(map[string]any{"message": "Thanks", "sessionId": "test-a1"}, false)
		if last := r.Events[len(r.Events)-1]; r.Status != 200 || last["messageCount"] != float64(4) {
			t.Errorf("second message: %d %v", r.Status, r.Events)
		}
	})

	t.Run("AtTheMonthlyLimit", func(t *testing.T) {
		t.Parallel()
		f := setupTestChat(t)
		tn := f.b.TenantNow(t, f.ten.Slug)
		limit := tn.ConversationsLimit()
		f.b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, $2)`,
			f.ten.ID, limit)
		if r := f.b.Chat(t, "/chat/"+f.ten.Slug, map[string]any{"message": "Hi", "sessionId": "visitor-1"}, nil); r.Status != 429 {
			t.Fatalf("a visitor at the limit: %d, want 429", r.Status)
		}
		f.llm.Push(llmtest.Turn{Text: []string{"Hello owner."}})
		r := f.c.TestChat(map[string]any{"message": "Hi", "sessionId": "test-limit"}, false)
		if r.Status != 200 || r.Events[len(r.Events)-1]["message"] != "Hello owner." {
			t.Fatalf("test at the limit: %d %v", r.Status, r.Events)
		}
		if n := f.usedAt(); n != limit {
			t.Errorf("usage %d, want %d unchanged", n, limit)
		}
	})

	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		f := setupTestChat(t)
		other := f.b.NewTenant(t, "starter")
		if st, body := f.b.Do(t, "POST", "/tenants/"+other.Slug+"/segments", other.Token, map[string]any{"name": "Theirs", "slug": "theirs-" + other.Slug, "systemPrompt": "Help."}); st != 201 {
			t.Fatalf("segment: %d %v", st, body)
		}
		// A visitor's session whose id looks like a test's.
		f.llm.Push(llmtest.Turn{Text: []string{"Hello visitor."}})
		if r := f.b.Chat(t, "/chat/"+f.ten.Slug, map[string]any{"message": "Hi", "sessionId": "test-visitor"}, nil); r.Status != 200 {
			t.Fatalf("visitor: %d %v", r.Status, r.Body)
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
				r := f.c.As(t).TestChat(tc.body, tc.noCSRF)
				if r.Status != tc.status || r.Body["error"] != tc.err {
					t.Errorf("got %d %v, want %d %q", r.Status, r.Body, tc.status, tc.err)
				}
			})
		}
		if n := f.b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND is_test`, f.ten.ID); n != 0 {
			t.Errorf("%d test conversations stored by refused messages", n)
		}
		if n := f.b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE c.tenant_id = $1 AND c.session_id = 'test-visitor'`, f.ten.ID); n != 2 {
			t.Errorf("the visitor's conversation has %d messages, want its own 2", n)
		}
		if got := len(f.llm.Requests()); got != 1 {
			t.Errorf("%d model calls, want the visitor's 1", got)
		}

		t.Run("SignedOut", func(t *testing.T) {
			c := f.b.NewAdminClient(t)
			c.Get("/admin/login") // a CSRF token, but no session
			r := c.TestChat(map[string]any{"message": "Hi", "sessionId": "test-x"}, false)
			if r.Status != 401 || r.Body["error"] != "You are signed out: sign in again" {
				t.Errorf("got %d %v", r.Status, r.Body)
			}
		})

		t.Run("PlanWithoutChat", func(t *testing.T) {
			free := f.b.OwnedTenant(t, "free")
			c := f.b.NewAdminClient(t)
			c.SignIn(free)
			if p := c.Get("/admin/test-chat"); p.Status != 200 || p.Doc.Find("#test-chat-plan").Length() != 1 {
				t.Errorf("page: %d, plan notice shown: %v", p.Status, p.Doc.Find("#test-chat-plan").Length() == 1)
			}
			r := c.TestChat(map[string]any{"message": "Hi", "sessionId": "test-x"}, false)
			if r.Status != 402 || r.Body["code"] != "NOT_ACTIVATED" {
				t.Errorf("got %d %v", r.Status, r.Body)
			}
		})
	})
}

// TestAdminTestChatPage: the page says plainly when no language model is
// configured, and offers the segments when there are several.
func TestAdminTestChatPage(t *testing.T) {
	t.Parallel()
	local := webtest.SetupAdmin(t, nil)
	ten := local.OwnedTenant(t, "starter")
	c := local.NewAdminClient(t)
	c.SignIn(ten)
	p := c.Get("/admin/test-chat")
	notice := p.Text("#test-chat-no-model")
	if p.Status != 200 || !strings.Contains(notice, "No language model is configured") || !strings.Contains(notice, "PARLEY_LLM_PROVIDER") ||
		p.Doc.Find(`#test-chat-no-model a[href="/admin/settings/developer#llmWebhookUrl"]`).Length() != 1 {
		t.Errorf("local model: %d, notice %q", p.Status, notice)
	}
	if p.Doc.Find(`nav a[href="/admin/test-chat"][aria-current="page"]`).Length() != 1 {
		t.Error("the navigation does not lead to the test chat")
	}
	if p.Doc.Find("#test-chat-segment").Length() != 0 {
		t.Error("a segment choice with one segment")
	}
	// The chat is the widget, drawn inline from the default segment's
	// settings, sending to the test chat's endpoint with the page's token.
	box := p.Doc.Find(`#test-chat[data-mode="inline"][data-test-chat="/admin/test-chat"][data-session-prefix="test-"]`)
	if box.Length() != 1 || box.AttrOr("data-csrf", "") == "" || !strings.Contains(box.AttrOr("data-settings", ""), `"slug":"default"`) ||
		p.Doc.Find(`script[src="/widget.js"][data-preview="test-chat"][data-tenant="`+ten.Slug+`"][data-segment="default"]`).Length() != 1 {
		t.Error("no inline widget for the default segment in the page")
	}

	// A reply endpoint is a model.
	local.Exec(t, `UPDATE tenants SET llm_webhook_url = 'https://bot.example/reply' WHERE id = $1`, ten.ID)
	if st, body := local.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Support", "slug": "support", "systemPrompt": "Help."}); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	p = c.Get("/admin/test-chat")
	if p.Doc.Find("#test-chat-no-model").Length() != 0 {
		t.Error("no-model notice shown with a reply endpoint")
	}
	if opts := p.Doc.Find("#test-chat-segment option"); opts.Length() != 2 || opts.Last().AttrOr("value", "") != "support" {
		t.Errorf("segment options: %d", opts.Length())
	}
	// The segment chosen is the one shown, and selected.
	p = c.Get("/admin/test-chat?segment=support")
	if p.Doc.Find(`#test-chat-segment option[value="support"][selected]`).Length() != 1 ||
		p.Doc.Find(`script[data-preview="test-chat"][data-segment="support"]`).Length() != 1 {
		t.Error("?segment=support does not show the support segment")
	}

	managed, _ := webtest.SetupChat(t, nil)
	mt := managed.OwnedTenant(t, "starter")
	mc := managed.NewAdminClient(t)
	mc.SignIn(mt)
	if p := mc.Get("/admin/test-chat"); p.Status != 200 || p.Doc.Find("#test-chat-no-model").Length() != 0 {
		t.Errorf("managed model: %d, notice shown %v", p.Status, p.Doc.Find("#test-chat-no-model").Length() != 0)
	}
}

// TestAdminTestChatBrowser drives the test chat, the real widget drawn in
// the page, in Chromium on a phone's screen: an answer shown as it
// streams, a model that stops answering reported, an answer with what the
// bot used (the knowledge entry, linked, and the tool with its result), a
// new conversation on "Start over", and no serious accessibility violation
// (axe-core).
func TestAdminTestChatBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	f := setupTestChat(t)
	b := f.b
	// The stalled answer below ends at the turn's time limit.
	b.Srv.Base.Engine.TurnTimeout = 3 * time.Second
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)))
	webtest.OpenSignedIn(ctx, t, b, f.ten, "/admin")
	const sr = `document.querySelector('#test-chat parley-widget').shadowRoot`
	webtest.MustStep(t, "opening the test chat", chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.menu-toggle`)), chromedp.Click(chromedp.CSS(`nav a[href="/admin/test-chat"]`))))
	webtest.WaitUntil(ctx, t, "the chat", `!!document.querySelector('#test-chat parley-widget')?.shadowRoot?.querySelector('textarea')`)
	if got := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[string](`document.documentElement.scrollWidth + ' ' + window.innerWidth + ' ' +
		Math.round(`+sr+`.querySelector('.panel').getBoundingClientRect().width)`)); !fitsScreen(got) {
		t.Errorf("page width, screen width, chat width = %s: the page does not fit the phone", got)
	}
	str := func(step, js string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	ask := func(text string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+sr+`.querySelector('textarea').value = `+webtest.JSString(text)+`;
			`+sr+`.querySelector('form.compose button').click(); })()`))
		webtest.MustStep(t, "asking "+text, err)
	}
	const lastBot = `[...` + sr + `.querySelectorAll('.msg.bot')].pop()`

	// Streamed: the first words show while the model is still answering.
	f.llm.Push(llmtest.Turn{Text: []string{"Let me think"}, Stall: true})
	ask("Are you there?")
	webtest.WaitUntil(ctx, t, "the first words", sr+`.querySelector('form.compose button').disabled && `+lastBot+`.innerText.includes('Let me think')`)
	webtest.WaitUntil(ctx, t, "the time-out", `[...`+sr+`.querySelectorAll('.msg.error[role=alert]')].some(m => m.innerText.includes('the openai model provider did not answer in time'))`)

	f.llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_q", Name: "quote", Arguments: []string{`{"items":[{"name":"Widget","quantity":4}]}`}}}},
		llmtest.Turn{Text: []string{"That is ", "60 EUR."}},
	)
	ask("Price 4 widgets")
	webtest.WaitUntil(ctx, t, "the answer and what the bot used", `!!`+lastBot+`?.querySelector('details.used')`)
	if got := str("answer", lastBot+`.querySelector('p').innerText`); got != "That is 60 EUR." {
		t.Errorf("answer = %q", got)
	}
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](lastBot+`.querySelector('details.used > summary').click()`))
	webtest.MustStep(t, "opening what the bot used", err)
	if got := str("knowledge", lastBot+`.querySelector('details.used a')?.getAttribute('href') + ' ' + `+lastBot+`.querySelector('details.used a')?.innerText`); got != b.TS.URL+"/admin/corpus/"+f.hours+" Opening hours" {
		t.Errorf("knowledge link = %q", got)
	}
	if got := str("tool", lastBot+`.querySelector('details.used li:has(pre)')?.innerText || ''`); !strings.Contains(got, "Quote") || !strings.Contains(got, "worked") || !strings.Contains(got, "60.00 EUR") {
		t.Errorf("tool = %q", got)
	}
	if got := str("tool result", `[...`+lastBot+`.querySelectorAll('details.used pre')].pop()?.textContent || ''`); !strings.Contains(got, "60") {
		t.Errorf("tool result = %q", got)
	}

	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("axe: %s", v)
	}

	// Start over: a new conversation, in a session of its own.
	webtest.MustStep(t, "starting over", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-chat-reset"))))
	if n := str("messages left", `String(`+sr+`.querySelectorAll('.msg.me').length)`); n != "0" {
		t.Errorf("%s messages left after starting over", n)
	}
	f.llm.Push(llmtest.Turn{Text: []string{"Hello again."}})
	ask("Hello")
	webtest.WaitUntil(ctx, t, "the new answer", `!!`+lastBot+`?.querySelector('details.used')`)
	rows, err := b.DB.Pool().Query(context.Background(), `SELECT session_id, message_count FROM conversations WHERE tenant_id = $1 AND is_test ORDER BY created_at`, f.ten.ID)
	webtest.MustStep(t, "reading the conversations", err)
	var got []string
	for rows.Next() {
		var s string
		var n int
		webtest.MustStep(t, "scanning", rows.Scan(&s, &n))
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
