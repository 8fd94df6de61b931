package public_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

var replyHosts = webtest.HookResolver{
	"reply.public.test": "93.184.216.34", // public: accepted, never dialled
	"reply.inside.test": "10.0.0.7",      // private
	"reply.meta.test":   "169.254.169.254",
}

// replyEndpoint is a tenant's reply endpoint that verifies each call's
// signature as the interface spec tells a receiver to.
type replyEndpoint struct {
	srv *httptest.Server

	mu       sync.Mutex
	key      []byte
	status   int
	answer   string
	calls    []map[string]any
	badCalls int // calls whose signature did not verify
}

func newReplyEndpoint(t *testing.T) *replyEndpoint {
	t.Helper()
	e := &replyEndpoint{status: 200, answer: `{"reply":"Your order ships tomorrow."}`}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		if r.Header.Get("X-Service-Event") != "chat.message" || !validSignature(r.Header.Get("X-Service-Signature"), e.key, body, time.Now()) {
			e.badCalls++
			http.Error(w, `{"error":"bad signature"}`, http.StatusUnauthorized)
			return
		}
		var call map[string]any
		_ = json.Unmarshal(body, &call)
		e.calls = append(e.calls, call)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.status)
		io.WriteString(w, e.answer)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *replyEndpoint) set(key []byte, status int, answer string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.key, e.status, e.answer = key, status, answer
}

func (e *replyEndpoint) received() ([]map[string]any, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any(nil), e.calls...), e.badCalls
}

// validSignature checks t=<unix>,v1=<hex HMAC-SHA256(key, "<t>.<raw body>")>
// and the 300-second tolerance, as a Stripe-style verifier does: it reads
// the schemes it knows and ignores the others (v0).
func validSignature(header string, key, body []byte, now time.Time) bool {
	var ts, v1 string
	for _, p := range strings.Split(header, ",") {
		switch k, v, _ := strings.Cut(p, "="); k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > 300*time.Second {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "." + string(body)))
	got, err := hex.DecodeString(v1)
	return err == nil && hmac.Equal(got, mac.Sum(nil))
}

func TestChatWebhookLLM(t *testing.T) {
	t.Parallel()
	b, managed := webtest.SetupChat(t, nil)
	b.WithOutbound(t, true, replyHosts)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	oldKey := b.VisitorKey(t, ten.ID)

	key := b.RotateSigningKey(t, ten)
	if got := b.VisitorKey(t, ten.ID); string(got) != key {
		t.Fatalf("stored key opens to %q, want the key shown, %q", got, key)
	}
	if again := b.RotateSigningKey(t, ten); again == key {
		t.Fatal("a second rotation gave the same key")
	} else {
		key = again
	}

	hook := newReplyEndpoint(t)
	hook.set([]byte(key), 200, `{"reply":"Your order ships tomorrow."}`)
	hookURL := hook.srv.URL + "/reply"
	st, tb := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"llmWebhookUrl": hookURL})
	if st != 200 || tb["llmWebhookUrl"] != hookURL {
		t.Fatalf("PUT llmWebhookUrl: %d %v", st, tb)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Shipping", "content": "Orders ship within 2 business days."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}

	t.Run("KeyNeverEchoed", func(t *testing.T) {
		_, _, raw := b.Request(t, "GET", "/tenants/"+ten.Slug, map[string]string{"Authorization": "Bearer " + ten.Token}, "")
		if strings.Contains(raw, key) || strings.Contains(raw, key[4:]) || strings.Contains(raw, "vsk_") {
			t.Errorf("GET /tenants/{slug} shows the signing key: %s", raw)
		}
		if !strings.Contains(raw, `"llmWebhookUrl":"`+hookURL+`"`) {
			t.Errorf("GET /tenants/{slug} lacks llmWebhookUrl: %s", raw)
		}
	})

	t.Run("Envelope", func(t *testing.T) {
		r := b.Chat(t, path, map[string]any{"message": "Where is my order?", "sessionId": "wh-1", "pageUrl": "https://shop.test/orders", "locale": "fr"}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		if r.Body["message"] != "Your order ships tomorrow." || r.Body["llmSource"] != "webhook" || r.Body["llmProvider"] != "webhook" {
			t.Errorf("envelope %v", r.Body)
		}
		if _, ok := r.Body["llmModel"]; ok {
			t.Errorf("llmModel present with llmSource webhook: %v", r.Body)
		}
		if r.Header.Get("X-AI-Generated") != "true" {
			t.Errorf("X-AI-Generated = %q", r.Header.Get("X-AI-Generated"))
		}
		webtest.CheckChatSchema(t, "webhook envelope", "ChatReply", r.Body)
		convID, _ := r.Body["conversationId"].(string)
		if n := b.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND content = 'Your order ships tomorrow.'`, convID); n != 1 {
			t.Errorf("stored assistant messages = %d", n)
		}
		if n := len(managed.Requests()); n != 0 {
			t.Errorf("the managed model got %d requests", n)
		}
		calls, bad := hook.received()
		if bad != 0 || len(calls) != 1 {
			t.Fatalf("endpoint got %d verified calls, %d unverified", len(calls), bad)
		}
		c := calls[0]
		for k, want := range map[string]any{"event": "chat.message", "tenant": ten.Slug, "sessionId": "wh-1", "conversationId": convID,
			"message": "Where is my order?", "locale": "fr", "segment": "default", "pageUrl": "https://shop.test/orders", "visitor": nil} {
			if c[k] != want {
				t.Errorf("call %s = %v, want %v", k, c[k], want)
			}
		}
		msgs, _ := c["messages"].([]any)
		if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" || msgs[0].(map[string]any)["content"] != "Where is my order?" {
			t.Errorf("call messages = %v", c["messages"])
		}
		passages, _ := c["passages"].([]any)
		if len(passages) != 1 || passages[0].(map[string]any)["title"] != "Shipping" ||
			passages[0].(map[string]any)["content"] != "Orders ship within 2 business days." {
			t.Errorf("call passages = %v", c["passages"])
		}
	})

	t.Run("HistoryAndMessageVariant", func(t *testing.T) {
		hook.set([]byte(key), 200, `{"message":"Second answer."}`)
		defer hook.set([]byte(key), 200, `{"reply":"Your order ships tomorrow."}`)
		r := b.Chat(t, path, map[string]any{"message": "And the invoice?", "sessionId": "wh-1"}, webtest.AgentHeaders)
		if r.Status != 200 || r.Body["message"] != "Second answer." || r.Body["messageCount"] != float64(4) {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		calls, _ := hook.received()
		msgs, _ := calls[len(calls)-1]["messages"].([]any)
		var roles []string
		for _, m := range msgs {
			roles = append(roles, m.(map[string]any)["role"].(string)+":"+m.(map[string]any)["content"].(string))
		}
		want := "user:Where is my order?|assistant:Your order ships tomorrow.|user:And the invoice?"
		if strings.Join(roles, "|") != want {
			t.Errorf("messages = %v, want %s", roles, want)
		}
	})

	t.Run("Stream", func(t *testing.T) {
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-sse"}, nil)
		if r.Status != 200 || len(r.Events) != 2 {
			t.Fatalf("got %d %v", r.Status, r.Events)
		}
		if r.Events[0]["text"] != "Your order ships tomorrow." {
			t.Errorf("chunk %v", r.Events[0])
		}
		done := r.Events[1]
		if done["done"] != true || done["llmSource"] != "webhook" || done["llmProvider"] != "webhook" || done["message"] != "Your order ships tomorrow." {
			t.Errorf("done %v", done)
		}
		if _, ok := done["llmModel"]; ok {
			t.Errorf("llmModel present in the done event: %v", done)
		}
		webtest.CheckChatSchema(t, "webhook done event", "ChatReply", done)
	})

	t.Run("CallerModelWins", func(t *testing.T) {
		caller := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"From the caller."}})
		before, _ := hook.received()
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-byo"}, map[string]string{
			"X-Agent-Model": "m", "X-LLM-Key": "sk-caller", "X-LLM-Model": "caller-model", "X-LLM-Base-Url": caller.URL})
		if r.Status != 200 || r.Body["message"] != "From the caller." || r.Body["llmSource"] != "managed" || r.Body["llmModel"] != "caller-model" {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		if after, _ := hook.received(); len(after) != len(before) {
			t.Errorf("the reply endpoint was called despite the caller's key")
		}
	})

	t.Run("VisitorToken", func(t *testing.T) {
		exp := time.Now().Add(5 * time.Minute).Unix()
		claims := jwt.MapClaims{"sub": "ext-77", "email": "grace@example.com", "name": "Grace", "exp": exp}
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-jwt"},
			map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": webtest.SignVisitor(t, jwt.SigningMethodHS256, []byte(key), claims)})
		if r.Status != 200 {
			t.Fatalf("token signed with the rotated key: %d %v", r.Status, r.Body)
		}
		calls, _ := hook.received()
		v, _ := calls[len(calls)-1]["visitor"].(map[string]any)
		if v == nil || v["externalId"] != "ext-77" || v["email"] != "grace@example.com" || v["displayName"] != "Grace" || v["id"] == "" {
			t.Errorf("call visitor = %v", calls[len(calls)-1]["visitor"])
		}
		for name, k := range map[string][]byte{"OldKey": oldKey, "RandomKey": auth.RandomBytes(32)} {
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-jwt-" + name},
				map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": webtest.SignVisitor(t, jwt.SigningMethodHS256, k, claims)})
			if r.Status != http.StatusUnauthorized || !strings.Contains(r.Body["error"].(string), "Invalid visitor token") {
				t.Errorf("%s: got %d %v", name, r.Status, r.Body)
			}
		}
	})

	t.Run("Failures", func(t *testing.T) {
		for _, tc := range []struct {
			name, answer, code string
			status             int
		}{
			{"ServerError", `{"error":"boom"}`, "LLM_ERROR", 500},
			{"NoReply", `{"reply":""}`, "LLM_ERROR", 200},
			{"NotJSON", `<html>`, "LLM_ERROR", 200},
			{"Refused", `{}`, "LLM_AUTH", 403},
		} {
			t.Run(tc.name, func(t *testing.T) {
				hook.set([]byte(key), tc.status, tc.answer)
				defer hook.set([]byte(key), 200, `{"reply":"Your order ships tomorrow."}`)
				r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-fail-" + tc.name}, webtest.AgentHeaders)
				if r.Status != http.StatusBadGateway || r.Body["code"] != tc.code || !strings.Contains(r.Body["error"].(string), "webhook") {
					t.Errorf("envelope: got %d %v", r.Status, r.Body)
				}
				r = b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-fail-sse-" + tc.name}, nil)
				if r.Status != 200 || len(r.Events) == 0 {
					t.Fatalf("stream: got %d %v", r.Status, r.Events)
				}
				last := r.Events[len(r.Events)-1]
				if last["code"] != tc.code || last["error"] == nil || last["done"] != nil {
					t.Errorf("stream: last event %v", last)
				}
			})
		}
		t.Run("Unreachable", func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := "http://" + l.Addr().String() + "/reply"
			l.Close()
			b.Exec(t, `UPDATE tenants SET llm_webhook_url = $2 WHERE id = $1`, ten.ID, dead)
			defer b.Exec(t, `UPDATE tenants SET llm_webhook_url = $2 WHERE id = $1`, ten.ID, hookURL)
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-dead"}, webtest.AgentHeaders)
			if r.Status != http.StatusBadGateway || r.Body["code"] != "LLM_UNREACHABLE" {
				t.Errorf("got %d %v", r.Status, r.Body)
			}
		})
		t.Run("OldKeyRejectedByReceiver", func(t *testing.T) {
			// A receiver still verifying with the old key refuses the call.
			hook.set(oldKey, 200, `{"reply":"x"}`)
			defer hook.set([]byte(key), 200, `{"reply":"Your order ships tomorrow."}`)
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-oldkey"}, webtest.AgentHeaders)
			if r.Status != http.StatusBadGateway || r.Body["code"] != "LLM_AUTH" {
				t.Errorf("got %d %v", r.Status, r.Body)
			}
		})
	})

	t.Run("ClearedUsesManaged", func(t *testing.T) {
		if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"llmWebhookUrl": nil}); st != 200 || body["llmWebhookUrl"] != nil {
			t.Fatalf("clear: %d %v", st, body)
		}
		managed.Push(llmtest.Turn{Text: []string{"Managed again."}})
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "wh-managed"}, webtest.AgentHeaders)
		if r.Status != 200 || r.Body["llmSource"] != "managed" || r.Body["llmModel"] != "test-model" || r.Body["message"] != "Managed again." {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
	})
}

func TestTenantLLMWebhookURL(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.WithOutbound(t, false, replyHosts)
	ten := b.NewTenant(t, "starter")
	put := func(t *testing.T, v any) (int, map[string]any) {
		t.Helper()
		return b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"llmWebhookUrl": v})
	}
	ofLength := func(n int) string {
		const prefix = "https://reply.public.test/"
		return prefix + strings.Repeat("p", n-len(prefix))
	}
	for _, tc := range []struct {
		name  string
		value any
		want  any    // stored value when accepted
		err   string // part of the field's message when refused
	}{
		{name: "Max", value: ofLength(500), want: ofLength(500)},
		{name: "TooLong", value: ofLength(501), err: "at most 500"},
		{name: "Public", value: "https://reply.public.test/hook", want: "https://reply.public.test/hook"},
		{name: "Trimmed", value: "  https://reply.public.test/t  ", want: "https://reply.public.test/t"},
		{name: "PublicIP", value: "https://93.184.216.34/hook", want: "https://93.184.216.34/hook"},
		{name: "PrivateIP", value: "https://10.0.0.1/hook", err: "10.0.0.1 is a private or reserved address"},
		{name: "PrivateName", value: "https://reply.inside.test/hook", err: "reply.inside.test is not a public internet address"},
		{name: "Metadata", value: "https://reply.meta.test/latest", err: "reply.meta.test is not a public internet address"},
		{name: "Loopback", value: "https://127.0.0.1:8443/hook", err: "127.0.0.1 is a private or reserved address"},
		{name: "HTTPNotExempt", value: "http://reply.public.test/hook", err: "https"},
		{name: "Credentials", value: "https://user:pw@reply.public.test/hook", err: "credentials"},
		{name: "NotURL", value: "reply", err: "absolute URL"},
		{name: "FTP", value: "ftp://reply.public.test/x", err: "absolute URL"},
		{name: "NUL", value: "https://reply.public.test/\u0000", err: "NUL"},
		{name: "NotString", value: 42, err: "string"},
		{name: "EmptyClears", value: "", want: nil},
		{name: "NullClears", value: nil, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == "" && tc.want == nil {
				if st, body := put(t, "https://reply.public.test/before"); st != 200 {
					t.Fatalf("setting: %d %v", st, body)
				}
			}
			st, body := put(t, tc.value)
			if tc.err != "" {
				details, _ := body["details"].(map[string]any)
				msg, _ := details["llmWebhookUrl"].(string)
				if st != http.StatusBadRequest || !strings.Contains(msg, tc.err) {
					t.Errorf("got %d %v, want 400 mentioning %q", st, body, tc.err)
				}
				return
			}
			if st != 200 || body["llmWebhookUrl"] != tc.want {
				t.Errorf("got %d %v, want llmWebhookUrl %v", st, body["llmWebhookUrl"], tc.want)
			}
			if got := b.TenantNow(t, ten.Slug).LLMWebhookURL; (got == nil) != (tc.want == nil) || got != nil && *got != tc.want {
				t.Errorf("stored %v", got)
			}
		})
	}

	t.Run("HTTPExempt", func(t *testing.T) {
		b := webtest.Setup(t)
		b.WithOutbound(t, true, replyHosts)
		ten := b.NewTenant(t, "starter")
		st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"llmWebhookUrl": "http://127.0.0.1:9/reply"})
		if st != 200 || body["llmWebhookUrl"] != "http://127.0.0.1:9/reply" {
			t.Errorf("exempt host over http: %d %v", st, body)
		}
		st, body = b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"llmWebhookUrl": "http://reply.public.test/reply"})
		if details, _ := body["details"].(map[string]any); st != 400 || details["llmWebhookUrl"] != "must use https" {
			t.Errorf("non-exempt host over http: %d %v", st, body)
		}
	})

	t.Run("RotateScope", func(t *testing.T) {
		tok := b.Token(t, ten.ID, auth.ScopeSettingsRead)
		st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitor-signing-key/rotate", tok, nil)
		if st != http.StatusForbidden || body["error"] != "Missing scope: "+auth.ScopeSettingsWrite {
			t.Errorf("rotate with settings:read: %d %v", st, body)
		}
		if st, _ := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitor-signing-key/rotate", "", nil); st != http.StatusUnauthorized {
			t.Errorf("rotate without credentials: %d", st)
		}
	})
}
