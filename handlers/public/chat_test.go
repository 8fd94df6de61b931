package public_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

func TestChatGates(t *testing.T) {
	t.Parallel()
	verify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"success": %t}`, r.PostForm.Get("response") == "good-token")
	}))
	t.Cleanup(verify.Close)
	b, llm := webtest.SetupChat(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL})
	// The per-address limits count in fixed windows (a minute, an hour): a
	// clock that starts in the middle of both keeps the limited requests
	// and the one refused in one window, whenever the test runs (the 21st
	// message once passed, the window having turned between).
	webtest.MidWindowClock(&b.Srv.Base.Now, time.Hour)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	ok := map[string]any{"message": "Hello", "sessionId": "s-1"}

	cases := []struct {
		name    string
		path    string
		body    any
		headers map[string]string
		status  int
		err     string
		code    string
	}{
		{"MissingMessage", path, map[string]any{"sessionId": "s"}, nil, 400, "message and sessionId are required", ""},
		{"BlankMessage", path, map[string]any{"message": "  ", "sessionId": "s"}, nil, 400, "message and sessionId are required", ""},
		{"MissingSession", path, map[string]any{"message": "hi"}, nil, 400, "message and sessionId are required", ""},
		{"MessageTooLong", path, map[string]any{"message": strings.Repeat("é", 15001), "sessionId": "s"}, nil, 400, "Message too long (max 15000 chars)", ""},
		{"SessionTooLong", path, map[string]any{"message": "hi", "sessionId": strings.Repeat("s", 101)}, nil, 400, "sessionId too long (max 100 chars)", ""},
		{"NotJSON", path, "nope", nil, 400, "Request body must be a JSON object", ""},
		{"UnknownTenant", "/chat/no-such-tenant", ok, nil, 404, "Tenant not found", ""},
		{"UnknownSegment", path + "?segment=nope", ok, nil, 400, `Unknown or inactive segment: "nope"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Chat(t, tc.path, tc.body, tc.headers)
			if r.Status != tc.status || r.Body["error"] != tc.err || tc.code != "" && r.Body["code"] != tc.code {
				t.Errorf("got %d %v, want %d %q", r.Status, r.Body, tc.status, tc.err)
			}
		})
	}

	t.Run("MessageOf15000", func(t *testing.T) {
		// Validation passes; the gate of a free plan answers next.
		free := b.NewTenant(t, "free")
		r := b.Chat(t, "/chat/"+free.Slug, map[string]any{"message": strings.Repeat("é", 15000), "sessionId": strings.Repeat("s", 100)}, nil)
		if r.Status != 402 || r.Body["code"] != "NOT_ACTIVATED" {
			t.Errorf("got %d %v, want 402 NOT_ACTIVATED", r.Status, r.Body)
		}
	})

	t.Run("Origin", func(t *testing.T) {
		o := b.NewTenant(t, "starter")
		b.Exec(t, `UPDATE tenants SET allowed_domains = '{example.com}' WHERE id = $1`, o.ID)
		r := b.Chat(t, "/chat/"+o.Slug, ok, map[string]string{"Origin": "https://evil.test"})
		if r.Status != 403 || r.Body["error"] != "Origin not allowed" {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
		r = b.Chat(t, "/chat/"+o.Slug+"?segment=nope", ok, map[string]string{"Origin": "https://www.example.com"})
		if r.Status != 400 {
			t.Errorf("allowed origin: got %d %v, want the segment's 400", r.Status, r.Body)
		}
	})

	t.Run("WidgetKey", func(t *testing.T) {
		w := b.NewTenant(t, "starter")
		b.Exec(t, `UPDATE tenants SET widget_key = 'wk-123' WHERE id = $1`, w.ID)
		for _, h := range []map[string]string{nil, {"X-Widget-Key": "wrong"}} {
			r := b.Chat(t, "/chat/"+w.Slug, ok, h)
			if r.Status != 403 || r.Body["error"] != "Invalid or missing widget key" {
				t.Errorf("key %v: got %d %v", h, r.Status, r.Body)
			}
		}
		r := b.Chat(t, "/chat/"+w.Slug+"?segment=nope", map[string]any{"message": "hi", "sessionId": "s", "widgetKey": "wk-123"}, nil)
		if r.Status != 400 {
			t.Errorf("body key: got %d %v, want the segment's 400", r.Status, r.Body)
		}
	})

	t.Run("Captcha", func(t *testing.T) {
		cp := b.NewTenant(t, "starter")
		b.Exec(t, `UPDATE tenants SET captcha_enabled = true, captcha_site_key = 'site', captcha_secret_key = $2 WHERE id = $1`,
			cp.ID, b.Box.Seal([]byte("secret")))
		r := b.Chat(t, "/chat/"+cp.Slug, ok, nil)
		if r.Status != 403 || r.Body["code"] != "CAPTCHA_REQUIRED" {
			t.Errorf("no token: got %d %v", r.Status, r.Body)
		}
		r = b.Chat(t, "/chat/"+cp.Slug, map[string]any{"message": "hi", "sessionId": "s", "captchaToken": "bad-token"}, nil)
		if r.Status != 403 || r.Body["code"] != "CAPTCHA_FAILED" {
			t.Errorf("bad token: got %d %v", r.Status, r.Body)
		}
		r = b.Chat(t, "/chat/"+cp.Slug+"?segment=nope", map[string]any{"message": "hi", "sessionId": "s", "captchaToken": "good-token"}, nil)
		if r.Status != 400 {
			t.Errorf("good token: got %d %v, want the segment's 400", r.Status, r.Body)
		}
	})

	t.Run("RateLimit", func(t *testing.T) {
		addr := map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}
		for i := range 20 {
			if r := b.Chat(t, path+"?segment=nope", ok, addr); r.Status != 400 {
				t.Fatalf("message %d: got %d %v", i+1, r.Status, r.Body)
			}
		}
		r := b.Chat(t, path, ok, addr)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Body["error"].(string), "Too many messages") {
			t.Errorf("21st message: got %d %v (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	})

	t.Run("RateLimitAfterEarlierGates", func(t *testing.T) {
		// Every request to the public surface is counted, whatever it is
		// answered; a gate placed before the limit still answers its own
		// error, with no Retry-After, and the limit answers once they pass.
		addr := map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}
		strict := b.NewTenant(t, "starter")
		if st, body := b.Do(t, "PUT", "/tenants/"+strict.Slug, strict.Token, map[string]any{"allowedDomains": []string{"shop.example.com"}}); st != 200 {
			t.Fatalf("allowedDomains: %d %v", st, body)
		}
		refused := map[string]string{"X-Forwarded-For": addr["X-Forwarded-For"], "Origin": "https://evil.example"}
		for i := range 20 {
			if r := b.Chat(t, "/chat/"+strict.Slug, ok, refused); r.Status != 403 {
				t.Fatalf("request %d from a refused origin: got %d %v", i+1, r.Status, r.Body)
			}
		}
		r := b.Chat(t, "/chat/"+strict.Slug, ok, refused)
		if r.Status != 403 || r.Header.Get("Retry-After") != "" {
			t.Errorf("21st request from a refused origin: got %d (Retry-After %q), want the origin's 403", r.Status, r.Header.Get("Retry-After"))
		}
		r = b.Chat(t, path, ok, addr)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("first accepted request after 21 refused ones: got %d %v, want 429", r.Status, r.Body)
		}
		fb := b.Chat(t, path+"/feedback", map[string]any{"sessionId": "s", "messageId": "m", "value": "up"}, addr)
		if fb.Status == 429 {
			t.Errorf("a vote from the same address: got %d %v, votes count apart from messages", fb.Status, fb.Body)
		}
	})

	t.Run("RateLimitPerKind", func(t *testing.T) {
		// Votes and form posts have counters of their own: voting on every
		// answer does not use up a visitor's messages, and the other way round.
		addr := map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}
		vote := map[string]any{"sessionId": "s", "messageId": "00000000-0000-0000-0000-000000000000", "value": "up"}
		for i := range 60 {
			if r := b.Chat(t, path+"/feedback", vote, addr); r.Status == 429 {
				t.Fatalf("vote %d: 429 %v", i+1, r.Body)
			}
		}
		r := b.Chat(t, path+"/feedback", vote, addr)
		if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Body["error"].(string), "Too many votes: at most 60 a minute and 600 an hour") {
			t.Errorf("61st vote: got %d %v", r.Status, r.Body)
		}
		for i := range 20 {
			if r := b.Chat(t, path+"?segment=nope", ok, addr); r.Status != 400 {
				t.Fatalf("message %d after 61 votes: got %d %v", i+1, r.Status, r.Body)
			}
		}
		if r := b.Chat(t, path, ok, addr); r.Status != 429 || !strings.Contains(r.Body["error"].(string), "Too many messages") {
			t.Errorf("21st message: got %d %v", r.Status, r.Body)
		}

		addr = map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}
		form := "/form/" + ten.Slug + "?segment=nope"
		for i := range 10 {
			if r := b.Chat(t, form, map[string]any{"fields": map[string]any{"email": "a@example.com"}}, addr); r.Status == 429 {
				t.Fatalf("form post %d: 429 %v", i+1, r.Body)
			}
		}
		r = b.Chat(t, form, map[string]any{"fields": map[string]any{"email": "a@example.com"}}, addr)
		if r.Status != 429 || !strings.Contains(r.Body["error"].(string), "Too many form posts: at most 10 a minute and 100 an hour") {
			t.Errorf("11th form post: got %d %v", r.Status, r.Body)
		}
		if r := b.Chat(t, path+"?segment=nope", ok, addr); r.Status != 400 {
			t.Errorf("a message after 11 form posts: got %d %v", r.Status, r.Body)
		}
	})

	t.Run("OtherTenantsSegment", func(t *testing.T) {
		other := b.NewTenant(t, "starter")
		st, seg := b.Do(t, "POST", "/tenants/"+other.Slug+"/segments", other.Token,
			map[string]any{"name": "Theirs", "systemPrompt": "Not yours."})
		if st != 201 {
			t.Fatalf("segment: %d %v", st, seg)
		}
		r := b.Chat(t, path, map[string]any{"message": "hi", "sessionId": "s", "segment": seg["slug"]}, nil)
		if r.Status != 400 {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
		inactive := b.NewTenant(t, "starter")
		st, seg = b.Do(t, "POST", "/tenants/"+inactive.Slug+"/segments", inactive.Token,
			map[string]any{"name": "Paused", "systemPrompt": "Paused."})
		if st != 201 {
			t.Fatalf("segment: %d %v", st, seg)
		}
		if st, _ := b.Do(t, "PUT", "/tenants/"+inactive.Slug+"/segments/"+seg["id"].(string), inactive.Token, map[string]any{"isActive": false}); st != 200 {
			t.Fatalf("deactivating: %d", st)
		}
		r = b.Chat(t, "/chat/"+inactive.Slug, map[string]any{"message": "hi", "sessionId": "s", "segment": seg["slug"]}, nil)
		if r.Status != 400 {
			t.Errorf("inactive: got %d %v", r.Status, r.Body)
		}
	})

	t.Run("MonthlyLimit", func(t *testing.T) {
		full := b.NewTenant(t, "starter")
		b.Exec(t, `INSERT INTO conversations (tenant_id, session_id) SELECT $1, 'old-' || g FROM generate_series(1, 1000) g`, full.ID)
		b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1000)`, full.ID)
		r := b.Chat(t, "/chat/"+full.Slug, ok, webtest.AgentHeaders)
		if r.Status != 429 || r.Body["error"] == nil || r.Body["current"] != float64(1000) || r.Body["limit"] != float64(1000) || r.Body["nextResetAt"] == nil {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
		webtest.CheckChatSchema(t, "limit", "ChatLimitError", r.Body)
		if _, nested := r.Body["details"]; nested {
			t.Errorf("counts must be top level: %v", r.Body)
		}
		// An existing session still continues.
		llm.Push(llmtest.Turn{Text: []string{"Still here."}})
		r = b.Chat(t, "/chat/"+full.Slug, map[string]any{"message": "again", "sessionId": "old-7"}, webtest.AgentHeaders)
		if r.Status != 200 || r.Body["message"] != "Still here." {
			t.Errorf("existing session: got %d %v", r.Status, r.Body)
		}
	})
}

func TestChatEnvelope(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Hello ", "agent."}})
	ten := b.NewTenant(t, "starter")
	model := strings.Repeat("m", 150)
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Who are you?", "sessionId": "env-1"},
		map[string]string{"X-Agent-Model": model})
	if r.Status != 200 || r.Header.Get("X-AI-Generated") != "true" {
		t.Fatalf("got %d %v %v", r.Status, r.Header, r.Body)
	}
	want := map[string]any{
		"message": "Hello agent.", "sessionId": "env-1", "messageCount": float64(2), "visitorType": "agent",
		"agentModel": strings.Repeat("m", 100), "contactSubmitted": false, "llmSource": "managed",
		"llmProvider": "openai", "llmModel": "test-model", "status": "bot",
	}
	for k, v := range want {
		if r.Body[k] != v {
			t.Errorf("%s = %v, want %v", k, r.Body[k], v)
		}
	}
	webtest.CheckChatSchema(t, "envelope", "ChatReply", r.Body)
	if ex, ok := r.Body["toolExecutions"].([]any); !ok || len(ex) != 0 {
		t.Errorf("toolExecutions = %v", r.Body["toolExecutions"])
	}
	if tr, ok := r.Body["toolResults"].(map[string]any); !ok || len(tr) != 0 {
		t.Errorf("toolResults = %v", r.Body["toolResults"])
	}
	convID, _ := r.Body["conversationId"].(string)
	var channel, visitorType, agentModel string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT channel, visitor_type, agent_model FROM conversations WHERE id = $1 AND tenant_id = $2`,
		convID, ten.ID).Scan(&channel, &visitorType, &agentModel); err != nil {
		t.Fatal(err)
	}
	if channel != "agent" || visitorType != "agent" || agentModel != strings.Repeat("m", 100) {
		t.Errorf("stored conversation: %s %s %s", channel, visitorType, agentModel)
	}
	if got := llm.Requests(); len(got) != 1 || got[0].Chat.Messages[len(got[0].Chat.Messages)-1].Content != "Who are you?" {
		t.Errorf("model received %v", got)
	} else if got[0].Chat.Stream {
		t.Error("the envelope's model call was streamed: the answer is taken whole, so it is asked for whole")
	}

	t.Run("SecondTurnContinues", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Again."}})
		r2 := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "And now?", "sessionId": "env-1"}, webtest.AgentHeaders)
		if r2.Status != 200 || r2.Body["conversationId"] != convID || r2.Body["messageCount"] != float64(4) {
			t.Fatalf("got %d %v", r2.Status, r2.Body)
		}
		reqs := llm.Requests()
		msgs := reqs[len(reqs)-1].Chat.Messages
		var roles []string
		for _, m := range msgs {
			roles = append(roles, m.Role+":"+string(m.Content))
		}
		joined := strings.Join(roles, "|")
		if !strings.Contains(joined, "user:Who are you?|assistant:Hello agent.|user:And now?") {
			t.Errorf("history sent: %s", joined)
		}
	})

	t.Run("AgentPrefix", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Hi."}})
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "[AGENT: gpt-x] hello", "sessionId": "prefix-1", "stream": false}, nil)
		if r.Status != 200 || r.Body["visitorType"] != "agent" || r.Body["agentModel"] != "gpt-x" {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
		var channel string
		_ = b.DB.Pool().QueryRow(context.Background(), `SELECT channel FROM conversations WHERE id = $1`, r.Body["conversationId"]).Scan(&channel)
		if channel != "web" {
			t.Errorf("channel %q, want web (no X-Agent-Model)", channel)
		}
	})

	t.Run("UpstreamFailure", func(t *testing.T) {
		llm.Push(llmtest.Turn{Status: 500, ErrorMessage: "boom"})
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "fail-1"}, webtest.AgentHeaders)
		if r.Status != 502 || r.Body["code"] == nil || r.Body["error"] == nil {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
	})
}

func TestChatStream(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"One ", "two ", "three."}})
	ten := b.NewTenant(t, "starter")
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Count", "sessionId": "sse-1",
		"pageUrl": "https://example.com/pricing"}, map[string]string{"X-Visitor-Id": "crm-42"})
	if r.Status != 200 || len(r.Events) != 4 {
		t.Fatalf("got %d %v", r.Status, r.Events)
	}
	for i, want := range []string{"One ", "two ", "three."} {
		if r.Events[i]["text"] != want {
			t.Errorf("chunk %d = %v, want %q", i, r.Events[i], want)
		}
	}
	done := r.Events[3]
	for k, v := range map[string]any{"done": true, "sessionId": "sse-1", "messageCount": float64(2), "visitorType": "human",
		"llmSource": "managed", "llmProvider": "openai", "llmModel": "test-model", "message": "One two three.", "contactSubmitted": false} {
		if done[k] != v {
			t.Errorf("done %s = %v, want %v", k, done[k], v)
		}
	}
	webtest.CheckChatSchema(t, "done event", "ChatReply", done)
	for _, chunk := range r.Events[:3] {
		webtest.CheckChatSchema(t, "chunk", "ChatStreamChunk", chunk)
	}
	if done["conversationId"] == nil || done["messageId"] == nil || done["toolExecutions"] == nil {
		t.Errorf("done event: %v", done)
	}
	var channel, visitorType, page, externalID string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT c.channel, c.visitor_type, c.page_url, v.external_id
		FROM conversations c JOIN visitors v ON v.id = c.visitor_id WHERE c.id = $1`, done["conversationId"]).Scan(&channel, &visitorType, &page, &externalID); err != nil {
		t.Fatal(err)
	}
	if channel != "web" || visitorType != "human" || page != "https://example.com/pricing" || externalID != "crm-42" {
		t.Errorf("stored: %s %s %s %s", channel, visitorType, page, externalID)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND content = 'One two three.'`, done["conversationId"]); n != 1 {
		t.Errorf("assistant messages stored: %d", n)
	}

	t.Run("UpstreamFailure", func(t *testing.T) {
		llm.Push(llmtest.Turn{Status: 401, ErrorMessage: "bad key"})
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "sse-fail"}, nil)
		last := r.Events[len(r.Events)-1]
		if r.Status != 200 || last["error"] == nil || last["code"] != "LLM_AUTH" {
			t.Errorf("got %d %v", r.Status, r.Events)
		}
		webtest.CheckChatSchema(t, "error event", "ChatStreamError", last)
	})

	t.Run("DisconnectKeepsWhatWasSaid", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Partial answer"}, Stall: true})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", b.TS.URL+"/chat/"+ten.Slug,
			strings.NewReader(`{"message":"Tell me everything","sessionId":"sse-gone"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", webtest.NewChatAddr())
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || !strings.Contains(line, "Partial answer") {
			t.Fatalf("first chunk %q: %v", line, err)
		}
		cancel()
		resp.Body.Close()
		deadline := time.Now().Add(webtest.Patience)
		for {
			n := b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
				WHERE c.tenant_id = $1 AND c.session_id = 'sse-gone' AND m.role = 'assistant' AND m.content = 'Partial answer'`, ten.ID)
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the partial answer was not stored after the visitor left")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("AgentAskingForStream", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Streamed."}})
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "sse-agent", "stream": true}, webtest.AgentHeaders)
		if r.Status != 200 || len(r.Events) != 2 || r.Events[1]["visitorType"] != "agent" || r.Events[1]["done"] != true {
			t.Errorf("got %d %v", r.Status, r.Events)
		}
	})
}

func TestChatTools(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	st, seg := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token,
		map[string]any{"name": "Sales", "systemPrompt": "You sell blue widgets to companies."})
	if st != 201 {
		t.Fatalf("segment: %d %v", st, seg)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Shipping", "content": "Widgets ship within 3 business days."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Contact form", "description": "Collect a lead", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{
			map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true},
			map[string]any{"name": "email", "label": "Email", "type": "email", "required": true},
		}}}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "contact_form",
			Arguments: []string{`{"full_name":"Ada`, ` Lovelace","email":"ada@example.com"}`}}}},
		llmtest.Turn{Text: []string{"Thanks Ada, we will be in touch."}},
	)
	r := b.Chat(t, "/chat/"+ten.Slug+"?segment="+seg["slug"].(string),
		map[string]any{"message": "I want widgets, I am Ada Lovelace, ada@example.com", "sessionId": "tools-1"}, webtest.AgentHeaders)
	if r.Status != 200 || r.Body["contactSubmitted"] != true || r.Body["message"] != "Thanks Ada, we will be in touch." {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if tr, _ := r.Body["toolResults"].(map[string]any); tr["Contact form"] != true {
		t.Errorf("toolResults = %v", r.Body["toolResults"])
	}
	ex, _ := r.Body["toolExecutions"].([]any)
	if len(ex) != 1 {
		t.Fatalf("toolExecutions = %v", r.Body["toolExecutions"])
	}
	webtest.CheckChatSchema(t, "tools envelope", "ChatReply", r.Body)
	e := ex[0].(map[string]any)
	if e["name"] != "Contact form" || e["type"] != "SUBMIT_FORM" || e["success"] != true || e["summary"] == nil || e["timestamp"] == nil {
		t.Errorf("execution = %v", e)
	}
	if _, raw := e["input"]; raw {
		t.Errorf("raw input leaked: %v", e)
	}

	convID := r.Body["conversationId"]
	var channel, name, email, toolType string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT channel, input->>'full_name', input->>'email', tool_type FROM submissions
		WHERE tenant_id = $1 AND conversation_id = $2`, ten.ID, convID).Scan(&channel, &name, &email, &toolType); err != nil {
		t.Fatalf("submission: %v", err)
	}
	if channel != "api" || name != "Ada Lovelace" || email != "ada@example.com" || toolType != "SUBMIT_FORM" {
		t.Errorf("submission: %s %s %s %s", channel, name, email, toolType)
	}
	if n := b.Count(t, `SELECT count(*) FROM events WHERE tenant_id = $1 AND type = 'submission.created'`, ten.ID); n != 1 {
		t.Errorf("events: %d", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM tool_history WHERE conversation_id = $1 AND tool_name = 'contact_form'
		AND tool_display_name = 'Contact form'`, convID); n != 1 {
		t.Errorf("tool history: %d", n)
	}

	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls: %d", len(reqs))
	}
	first := reqs[0].Chat
	system := string(first.Messages[0].Content)
	if first.Messages[0].Role != "system" || !strings.Contains(system, "You sell blue widgets to companies.") ||
		!strings.Contains(system, "Widgets ship within 3 business days.") {
		t.Errorf("system prompt: %q", system)
	}
	if len(first.Tools) != 1 || first.Tools[0].Function.Name != "contact_form" || !strings.Contains(string(first.Tools[0].Function.Parameters), "full_name") {
		t.Errorf("tools offered: %+v", first.Tools)
	}
	second := reqs[1].Chat.Messages
	if last := second[len(second)-1]; last.Role != "tool" || last.ToolCallID != "call_1" || !strings.Contains(string(last.Content), `"success":true`) {
		t.Errorf("tool result sent back: %+v", last)
	}
}

func TestChatLocalProvider(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Opening hours", "content": "The shop opens at nine every weekday.", "sourceUrl": "https://shop.example/hours"})
	if st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Returns", "content": "Returns are free for 30 days."})
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "What are the opening hours?", "sessionId": "local-1"}, webtest.AgentHeaders)
	msg, _ := r.Body["message"].(string)
	// The answer in plain words: the entry, without its marker or a word
	// about the configuration, and the entry it rests on as its source.
	if r.Status != 200 || msg != "**Opening hours**\nThe shop opens at nine every weekday." ||
		r.Body["llmProvider"] != "local" || r.Body["llmModel"] != "corpus" {
		t.Errorf("got %d %v", r.Status, r.Body)
	}
	if src, _ := json.Marshal(r.Body["sources"]); string(src) != `[{"title":"Opening hours","url":"https://shop.example/hours"}]` {
		t.Errorf("sources = %s", src)
	}
	_, detail := b.Do(t, "GET", "/tenants/"+ten.Slug+"/conversations/"+r.Body["conversationId"].(string), ten.Token, nil)
	msgs, _ := detail["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v", detail["messages"])
	}
	answer := msgs[1].(map[string]any)
	sources, _ := answer["sources"].([]any)
	given, _ := answer["knowledge"].([]any)
	if len(sources) != 1 || sources[0].(map[string]any)["id"] != body["corpus"].(map[string]any)["id"] ||
		sources[0].(map[string]any)["sourceUrl"] != "https://shop.example/hours" || len(given) != 2 {
		t.Errorf("the answer's sources %v of knowledge given %v", sources, given)
	}

	// The conversation shows among the tenant's recent ones, with its counts.
	_, show := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	recent, _ := show["recentConversations"].([]any)
	if len(recent) != 1 {
		t.Fatalf("recentConversations = %v", show["recentConversations"])
	}
	rc := recent[0].(map[string]any)
	if rc["id"] != r.Body["conversationId"] || rc["sessionId"] != "local-1" || rc["messageCount"] != float64(2) ||
		rc["firstUserMessage"] != "What are the opening hours?" || rc["visitorType"] != "agent" || rc["status"] != "BOT" {
		t.Errorf("recent conversation = %v", rc)
	}
	if stats := show["stats"].(map[string]any); stats["conversationsUsed"] != float64(1) {
		t.Errorf("conversationsUsed = %v", stats["conversationsUsed"])
	}

	// A tenant that hides sources shows visitors none; the API keeps them.
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"showSources": false})
	r = b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "opening hours?", "sessionId": "local-2"}, webtest.AgentHeaders)
	if src, _ := r.Body["sources"].([]any); r.Status != 200 || src == nil || len(src) != 0 {
		t.Errorf("sources hidden: %d %v", r.Status, r.Body["sources"])
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"showSources": "no"}); st != 400 ||
		!strings.Contains(fmt.Sprint(body), "showSources") {
		t.Errorf("showSources of a string: %d %v", st, body)
	}
}

func TestChatEscalation(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	// The team's endpoint, which verifies the signature with the secret the
	// owner gave the tool.
	const secret = "esc-secret-for-the-team"
	type call struct {
		sig  string
		body []byte
	}
	calls := make(chan call, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls <- call{r.Header.Get("X-Service-Signature"), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Human", "description": "Hand over to the team", "type": "ESCALATE_TO_HUMAN",
		"webhookUrl": hook.URL + "/handover", "webhookSecret": secret}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_h", Name: "human", Arguments: []string{`{"reason":"wants a person","contact":"ada@example.com"}`}}}},
		llmtest.Turn{Text: []string{"Someone will take over."}},
	)
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Let me talk to a person", "sessionId": "esc-1", "stream": false}, nil)
	if r.Status != 200 || r.Body["status"] != "escalated" || r.Body["visitorType"] != "human" {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	var status string
	_ = b.DB.Pool().QueryRow(context.Background(), `SELECT status FROM conversations WHERE id = $1`, r.Body["conversationId"]).Scan(&status)
	if status != "ESCALATED" {
		t.Errorf("stored status %q", status)
	}
	// No input of the model in the envelope.
	ex, _ := r.Body["toolExecutions"].([]any)
	if len(ex) != 1 || strings.Contains(fmt.Sprint(ex), "wants a person") || strings.Contains(fmt.Sprint(ex), "ada@example.com") {
		t.Errorf("toolExecutions = %v", ex)
	}

	// The team was told, signed with the tool's secret.
	select {
	case c := <-calls:
		ts, v1, ok := strings.Cut(strings.TrimPrefix(c.sig, "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "."))
		mac.Write(c.body)
		if !ok || !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) {
			t.Errorf("signature %q does not verify with the tool's secret", c.sig)
		}
		var payload struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal(c.body, &payload); err != nil || payload.Event != "conversation.escalated" ||
			payload.Data["reason"] != "wants a person" || payload.Data["contact"] != "ada@example.com" ||
			payload.Data["conversationId"] != r.Body["conversationId"] || payload.Data["sessionId"] != "esc-1" {
			t.Errorf("escalation payload %s (%v)", c.body, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the escalation webhook was not called")
	}

	// And the hand-over is a lead in the inbox, with its event.
	var channel, reason, contact, subStatus string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT channel, input->>'reason', input->>'contact', status FROM submissions
		WHERE tenant_id = $1 AND conversation_id = $2 AND tool_type = 'ESCALATE_TO_HUMAN'`, ten.ID, r.Body["conversationId"]).
		Scan(&channel, &reason, &contact, &subStatus); err != nil {
		t.Fatalf("submission: %v", err)
	}
	if channel != "web" || reason != "wants a person" || contact != "ada@example.com" || subStatus != "NEW" {
		t.Errorf("submission: %s %q %q %s", channel, reason, contact, subStatus)
	}
	if n := b.Count(t, `SELECT count(*) FROM events WHERE tenant_id = $1 AND type = 'submission.created'`, ten.ID); n != 1 {
		t.Errorf("submission.created events: %d", n)
	}
}

func TestChatFeedback(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Answer."}})
	ten := b.NewTenant(t, "starter")
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Question", "sessionId": "fb-1"}, webtest.AgentHeaders)
	msgID, _ := r.Body["messageId"].(string)
	if r.Status != 200 || msgID == "" {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	path := "/chat/" + ten.Slug + "/feedback"
	fb := b.Chat(t, path, map[string]any{"sessionId": "fb-1", "messageId": msgID, "value": "up"}, nil)
	if fb.Status != 200 || fb.Body["value"] != "up" || fb.Body["messageId"] != msgID {
		t.Fatalf("feedback: %d %v", fb.Status, fb.Body)
	}
	webtest.CheckChatSchema(t, "feedback", "ChatFeedback", fb.Body)
	if fb = b.Chat(t, path, map[string]any{"sessionId": "fb-1", "messageId": msgID, "value": "down"}, nil); fb.Status != 200 {
		t.Fatalf("changed vote: %d %v", fb.Status, fb.Body)
	}
	pos := b.Count(t, `SELECT feedback_positive FROM conversations WHERE id = $1`, r.Body["conversationId"])
	neg := b.Count(t, `SELECT feedback_negative FROM conversations WHERE id = $1`, r.Body["conversationId"])
	if pos != 0 || neg != 1 {
		t.Errorf("counts +%d -%d, want +0 -1", pos, neg)
	}

	cases := []struct {
		name   string
		path   string
		body   map[string]any
		status int
		err    string
	}{
		{"BadValue", path, map[string]any{"sessionId": "fb-1", "messageId": msgID, "value": "meh"}, 400, "Validation failed"},
		{"MissingSession", path, map[string]any{"messageId": msgID, "value": "up"}, 400, "Validation failed"},
		{"OtherSession", path, map[string]any{"sessionId": "fb-2", "messageId": msgID, "value": "up"}, 404, "Message not found"},
		{"UnknownMessage", path, map[string]any{"sessionId": "fb-1", "messageId": "00000000-0000-0000-0000-000000000000", "value": "up"}, 404, "Message not found"},
		{"UnknownTenant", "/chat/no-such-tenant/feedback", map[string]any{"sessionId": "fb-1", "messageId": msgID, "value": "up"}, 404, "Tenant not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := b.Chat(t, tc.path, tc.body, nil)
			if got.Status != tc.status || got.Body["error"] != tc.err {
				t.Errorf("got %d %v, want %d %q", got.Status, got.Body, tc.status, tc.err)
			}
		})
	}
	t.Run("UserMessage", func(t *testing.T) {
		var userID string
		_ = b.DB.Pool().QueryRow(context.Background(), `SELECT id FROM messages WHERE conversation_id = $1 AND role = 'user'`, r.Body["conversationId"]).Scan(&userID)
		got := b.Chat(t, path, map[string]any{"sessionId": "fb-1", "messageId": userID, "value": "up"}, nil)
		if got.Status != 400 {
			t.Errorf("got %d %v", got.Status, got.Body)
		}
	})
}

func TestChatVisitorMemory(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	st, v := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"externalId": "user-7", "displayName": "Grace"})
	if st != 201 && st != 200 {
		t.Fatalf("visitor: %d %v", st, v)
	}
	vid := v["id"].(string)
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors/"+vid+"/memory", ten.Token,
		map[string]any{"key": "favourite_colour", "value": "teal"}); st != 200 && st != 201 {
		t.Fatalf("memory: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_m", Name: "remember", Arguments: []string{`{"key":"city","value":"Lyon"}`}}}},
		llmtest.Turn{Text: []string{"Noted."}},
		llmtest.Turn{Text: []string{"Hello again."}},
	)
	// By id in the header, then by externalId in the body: the same visitor.
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "I live in Lyon", "sessionId": "mem-1"},
		map[string]string{"X-Visitor-Id": vid, "X-Agent-Model": "m"})
	if r.Status != 200 || r.Body["toolResults"].(map[string]any)["Remember"] != true {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	system := string(llm.Requests()[0].Chat.Messages[0].Content)
	if !strings.Contains(system, "favourite_colour: teal") {
		t.Errorf("memory not in the prompt: %q", system)
	}
	r = b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "mem-2", "visitorId": "user-7"}, webtest.AgentHeaders)
	if r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	if system := string(reqs[len(reqs)-1].Chat.Messages[0].Content); !strings.Contains(system, "city: Lyon") {
		t.Errorf("remembered fact not in the next prompt: %q", system)
	}
	if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND visitor_id = $2`, ten.ID, vid); n != 2 {
		t.Errorf("conversations of the visitor: %d", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1`, ten.ID); n != 1 {
		t.Errorf("visitors: %d", n)
	}

	// An anonymous visitor (no token, no id: known by the session alone)
	// has no memory to write to: the tool offered above is not offered.
	if !offered(reqs[0], "remember") {
		t.Fatalf("remember was not offered to a known visitor: %v", reqs[0].Chat.Tools)
	}
	llm.Push(llmtest.Turn{Text: []string{"Hello, stranger."}})
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Remember me", "sessionId": "mem-anon"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("anonymous: got %d %v", r.Status, r.Body)
	}
	reqs = llm.Requests()
	if offered(reqs[len(reqs)-1], "remember") {
		t.Errorf("remember offered to an anonymous visitor")
	}
}

// Without a language model the way to a person still works: the widget's
// settings offer it, and the visitor's request hands the conversation over
// through the segment's ESCALATE_TO_HUMAN tool, as a model would.
func TestChatLocalHandover(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	origin := map[string]string{"Origin": "https://shop.example"}
	settings := func(ten webtest.Tenant) any {
		t.Helper()
		resp, body, raw := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", origin)
		if resp.StatusCode != 200 {
			t.Fatalf("widget settings: %d %s", resp.StatusCode, raw)
		}
		return body["handover"]
	}
	if got := settings(ten); got != nil {
		t.Errorf("handover without a tool or a form = %v, want none", got)
	}
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Human", "description": "Hand over to the team",
		"type": "ESCALATE_TO_HUMAN", "config": map[string]any{"handoffMessage": "Sam from the shop will answer here."}})
	if got := settings(ten); got != "chat" {
		t.Errorf("handover with the tool = %v, want chat", got)
	}
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Can I talk to a person please?", "sessionId": "handover-1"}, webtest.AgentHeaders)
	if r.Status != 200 || r.Body["status"] != "escalated" || r.Body["message"] != "Sam from the shop will answer here." {
		t.Fatalf("hand-over: %d %v", r.Status, r.Body)
	}
	var leads int
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND conversation_id = $2
		AND tool_type = 'ESCALATE_TO_HUMAN'`, ten.ID, r.Body["conversationId"]).Scan(&leads); err != nil || leads != 1 {
		t.Errorf("hand-over submissions = %d (%v), want 1", leads, err)
	}

	// Another tenant with only a lead form: the button opens the form.
	other := b.NewTenant(t, "starter")
	b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/segments", other.Token, map[string]any{"name": "Main", "slug": "main", "isDefault": true, "systemPrompt": "Help.",
		"formConfig": map[string]any{"enabled": true, "intent": "lead",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}})
	if got := settings(other); got != "form" {
		t.Errorf("handover with a lead form = %v, want form", got)
	}
}
