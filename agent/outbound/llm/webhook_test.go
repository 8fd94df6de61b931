package llm

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound"
)

const testWebhookKey = "vsk_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// webhookCall is one request a test reply endpoint received.
type webhookCall struct {
	header http.Header
	body   []byte
}

type webhookBundle struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []webhookCall
	turn  WebhookTurn
	now   time.Time
}

// setupWebhookLLM starts a reply endpoint answering with handle.
func setupWebhookLLM(t *testing.T, handle http.HandlerFunc) *webhookBundle {
	t.Helper()
	b := &webhookBundle{
		now: time.Unix(1_760_000_000, 0),
		turn: WebhookTurn{
			Tenant: "acme", SessionID: "sess-1", ConversationID: "conv-1", Message: "Where is my order?",
			Visitor: &WebhookVisitor{ID: "v-1", ExternalID: ptr("ext-1"), Email: ptr("ada@example.com")},
			Locale:  "fr", Segment: "default", PageURL: "https://shop.example.com/orders",
		},
	}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.calls = append(b.calls, webhookCall{header: r.Header.Clone(), body: body})
		b.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func ptr(s string) *string { return &s }

// provider returns the provider reaching the endpoint through the guarded
// client, loopback allowed as tests allow it.
func (b *webhookBundle) provider(url string, timeout time.Duration) *Webhook {
	out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	return NewWebhook(WebhookConfig{URL: url, Key: []byte(testWebhookKey), HTTPClient: out.Client(10 * time.Second),
		Timeout: timeout, Now: func() time.Time { return b.now }, Turn: b.turn})
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// verifySignature checks X-Service-Signature both ways a receiver may read
// it: v1 is hex HMAC-SHA256 over "<t>.<raw body>" (the Stripe-style
// reading, which ignores other schemes), v0 over the raw body alone.
func verifySignature(t *testing.T, header string, key, body []byte, now time.Time) {
	t.Helper()
	schemes := map[string]string{}
	for _, p := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(p, "=")
		schemes[k] = v
	}
	if len(schemes) != 3 || schemes["t"] == "" || schemes["v1"] == "" || schemes["v0"] == "" {
		t.Fatalf("X-Service-Signature = %q, want t=<unix>,v1=<hex>,v0=<hex>", header)
	}
	ts := schemes["t"]
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec != now.Unix() {
		t.Errorf("t = %q, want %d", ts, now.Unix())
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	got, err := hex.DecodeString(schemes["v1"])
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		t.Errorf("v1 does not verify with the key over t.body: %q", header)
	}
	mac = hmac.New(sha256.New, key)
	mac.Write(body)
	got, err = hex.DecodeString(schemes["v0"])
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		t.Errorf("v0 does not verify with the key over the raw body: %q", header)
	}
}

func webhookRequest() Request {
	req := Request{
		System:   "ignored by the webhook",
		Tools:    []ToolSpec{{Name: "remember", Description: "never offered to a webhook"}},
		Passages: []Passage{{Title: "Shipping", Content: "Orders ship in 2 days."}, {Title: "Returns", Content: "30 days."}},
	}
	for i := range 25 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		req.Messages = append(req.Messages, Message{Role: role, Content: fmt.Sprintf("turn %d", i)})
	}
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "x"}}},
		Message{Role: RoleTool, Content: "tool result", ToolCallID: "c1"},
		Message{Role: RoleUser, Content: "Where is my order?"})
	return req
}

func TestWebhookLLM(t *testing.T) {
	t.Parallel()

	t.Run("RequestAndReply", func(t *testing.T) {
		t.Parallel()
		b := setupWebhookLLM(t, answer(200, `{"reply":"It ships tomorrow."}`))
		p := b.provider(b.srv.URL+"/reply", 0)
		if p.Name() != "webhook" || p.Model() != "" {
			t.Errorf("Name, Model = %q, %q", p.Name(), p.Model())
		}
		r := collectStream(mustStream(t, p, webhookRequest()))
		if r.err != nil || r.text() != "It ships tomorrow." || len(r.texts) != 1 || len(r.calls) != 0 {
			t.Fatalf("stream = %+v", r)
		}
		if r.done == nil || r.done.StopReason != StopEnd {
			t.Errorf("done = %+v", r.done)
		}
		if len(b.calls) != 1 {
			t.Fatalf("%d calls", len(b.calls))
		}
		call := b.calls[0]
		if got := call.header.Get("X-Service-Event"); got != "chat.message" {
			t.Errorf("X-Service-Event = %q", got)
		}
		if got := call.header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type = %q", got)
		}
		verifySignature(t, call.header.Get("X-Service-Signature"), []byte(testWebhookKey), call.body, b.now)

		var got map[string]any
		if err := json.Unmarshal(call.body, &got); err != nil {
			t.Fatal(err)
		}
		var msgs []any
		for i := 6; i < 25; i++ { // the last 20 user and assistant turns; tool traffic left out
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, map[string]any{"role": role, "content": fmt.Sprintf("turn %d", i)})
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": "Where is my order?"})
		want := map[string]any{
			"event": "chat.message", "tenant": "acme", "sessionId": "sess-1", "conversationId": "conv-1",
			"message": "Where is my order?", "messages": msgs,
			"visitor": map[string]any{"id": "v-1", "externalId": "ext-1", "email": "ada@example.com", "displayName": nil},
			"locale":  "fr", "segment": "default", "pageUrl": "https://shop.example.com/orders",
			"passages": []any{map[string]any{"title": "Shipping", "content": "Orders ship in 2 days."},
				map[string]any{"title": "Returns", "content": "30 days."}},
		}
		wb, _ := json.Marshal(want)
		jsonEqual(t, string(call.body), string(wb))
	})

	t.Run("AnonymousNoLocale", func(t *testing.T) {
		t.Parallel()
		b := setupWebhookLLM(t, answer(200, `{"reply":"Hi."}`))
		b.turn.Visitor, b.turn.Locale, b.turn.PageURL = nil, "", ""
		p := b.provider(b.srv.URL, 0)
		if r := collectStream(mustStream(t, p, Request{Messages: []Message{{Role: RoleUser, Content: "Where is my order?"}}})); r.text() != "Hi." {
			t.Fatalf("stream = %+v", r)
		}
		var got map[string]any
		_ = json.Unmarshal(b.calls[0].body, &got)
		for _, k := range []string{"visitor", "locale", "pageUrl"} {
			if v, ok := got[k]; !ok || v != nil {
				t.Errorf("%s = %v (present %v), want null", k, v, ok)
			}
		}
		if ps, ok := got["passages"].([]any); !ok || len(ps) != 0 {
			t.Errorf("passages = %v, want []", got["passages"])
		}
	})

	t.Run("ReplyVariants", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ name, body, want string }{
			{"Reply", `{"reply":"A"}`, "A"},
			{"Message", `{"message":"B"}`, "B"},
			{"ReplyWins", `{"reply":"C","message":"D"}`, "C"},
			{"EmptyReplyFallsBackToMessage", `{"reply":"","message":"E"}`, "E"},
			{"ExtraFields", `{"reply":"F","confidence":0.9}`, "F"},
			{"Multiline", `{"reply":"line 1\nline 2"}`, "line 1\nline 2"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := setupWebhookLLM(t, answer(200, tc.body))
				r := collectStream(mustStream(t, b.provider(b.srv.URL, 0), webhookRequest()))
				if r.err != nil || r.text() != tc.want {
					t.Errorf("got %q, %v; want %q", r.text(), r.err, tc.want)
				}
			})
		}
	})

	t.Run("Failures", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name   string
			status int
			body   string
			kind   ErrorKind
		}{
			{"EmptyReply", 200, `{"reply":""}`, Upstream},
			{"BlankReply", 200, `{"reply":"  "}`, Upstream},
			{"MissingReply", 200, `{"answer":"x"}`, Upstream},
			{"ReplyNotString", 200, `{"reply":42}`, Upstream},
			{"NotJSON", 200, `It ships tomorrow.`, Upstream},
			{"JSONArray", 200, `["x"]`, Upstream},
			{"NoBody", 204, ``, Upstream},
			{"ServerError", 500, `{"reply":"oops"}`, Upstream},
			{"BadGateway", 502, ``, Upstream},
			{"Unauthorized", 401, `{}`, Auth},
			{"RateLimited", 429, `{}`, RateLimited},
			{"NotFound", 404, `{}`, BadRequest},
			{"GatewayTimeout", 504, `{}`, Timeout},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := setupWebhookLLM(t, answer(tc.status, tc.body))
				s, err := b.provider(b.srv.URL, 0).Stream(context.Background(), webhookRequest())
				var le *Error
				if s != nil || !errors.As(err, &le) || le.Kind != tc.kind || le.Provider != "webhook" {
					t.Fatalf("got stream %v, error %#v; want an Error of kind %d", s != nil, err, tc.kind)
				}
				if tc.status >= 300 && le.Status != tc.status {
					t.Errorf("status = %d", le.Status)
				}
				if strings.Contains(err.Error(), "oops") {
					t.Errorf("the endpoint's body leaked into the message: %q", err)
				}
			})
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		b := setupWebhookLLM(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		start := time.Now()
		_, err := b.provider(b.srv.URL, 200*time.Millisecond).Stream(context.Background(), webhookRequest())
		var le *Error
		if !errors.As(err, &le) || le.Kind != Timeout {
			t.Fatalf("error = %#v, want a timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("gave up after %v", d)
		}
		if !strings.Contains(err.Error(), "did not answer in time") {
			t.Errorf("message = %q", err)
		}
	})

	t.Run("CallerGone", func(t *testing.T) {
		t.Parallel()
		b := setupWebhookLLM(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := b.provider(b.srv.URL, 0).Stream(ctx, webhookRequest())
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
	})

	t.Run("ConnectionRefused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		b := setupWebhookLLM(t, answer(200, `{}`))
		_, err = b.provider("http://"+addr+"/reply", 0).Stream(context.Background(), webhookRequest())
		var le *Error
		if !errors.As(err, &le) || le.Kind != Unreachable {
			t.Fatalf("error = %#v, want unreachable", err)
		}
	})

	t.Run("PrivateAddressRefused", func(t *testing.T) {
		t.Parallel()
		b := setupWebhookLLM(t, answer(200, `{"reply":"x"}`))
		// No exemption: the guard refuses loopback where it dials.
		p := NewWebhook(WebhookConfig{URL: b.srv.URL, Key: []byte(testWebhookKey),
			HTTPClient: outbound.New(nil, nil).Client(5 * time.Second), Turn: b.turn})
		_, err := p.Stream(context.Background(), webhookRequest())
		var le *Error
		if !errors.As(err, &le) || le.Kind != Unreachable {
			t.Fatalf("error = %#v, want unreachable", err)
		}
		if len(b.calls) != 0 {
			t.Errorf("the endpoint was reached")
		}
	})
}

func mustStream(t *testing.T, p Provider, req Request) Stream {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return s
}
