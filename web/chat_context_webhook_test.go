package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/agent/llmtest"
)

// contextEndpoint is a tenant's context webhook: it verifies each call's
// signature with the visitor signing key, as a tenant would from the
// documentation, keeps the bodies, and answers with the scripted status and
// context.
type contextEndpoint struct {
	srv    *httptest.Server
	mu     sync.Mutex
	key    []byte
	status int
	bodies []map[string]any
	bad    []string // calls whose signature did not verify
}

func newContextEndpoint(t *testing.T, key []byte) *contextEndpoint {
	e := &contextEndpoint{key: key, status: http.StatusOK}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		ts, v1, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("X-Service-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, e.key)
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		unix, err := strconv.ParseInt(ts, 10, 64)
		if !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) || err != nil || time.Since(time.Unix(unix, 0)).Abs() > 300*time.Second {
			e.bad = append(e.bad, r.Header.Get("X-Service-Signature"))
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		e.bodies = append(e.bodies, m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.status)
		if e.status == http.StatusOK {
			ext, _ := m["externalId"].(string)
			_ = json.NewEncoder(w).Encode(map[string]string{"context": "CRM: " + ext + " is a gold customer with open order #42."})
		}
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *contextEndpoint) last() map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bodies[len(e.bodies)-1]
}

// The context webhook is called for every message with who is writing, as
// far as the service knows, signed with the visitor signing key; its answer
// goes into the prompt. A failing endpoint does not stop the chat, and an
// unverified visitor's claimed identity is not sent when the tenant asks for
// verified visitors.
func TestChatVisitorContext(t *testing.T) {
	t.Parallel()
	b, llm := setupChat(t, nil)
	ten := b.newTenant(t, "starter")
	key := b.visitorKey(t, ten.ID)
	e := newContextEndpoint(t, key)
	b.mustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorContextUrl": e.srv.URL + "/context"})
	path := "/chat/" + ten.Slug
	system := func() string {
		reqs := llm.Requests()
		return string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	}

	// A verified visitor: identity sent, the answer in the prompt.
	token := signVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-7", "email": "ada@example.com", "exp": time.Now().Add(time.Minute).Unix()})
	llm.Push(llmtest.Turn{Text: []string{"Hello Ada."}})
	r := b.chat(t, path, map[string]any{"message": "Where is my order?", "sessionId": "ctx-1", "visitorToken": token}, agentHeaders)
	if r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	got := e.last()
	if got["externalId"] != "ext-7" || got["email"] != "ada@example.com" || got["visitorId"] == nil || got["verified"] != true || got["timestamp"] == nil {
		t.Errorf("context query %v", got)
	}
	if s := system(); !strings.Contains(s, "<visitor_context>\nCRM: ext-7 is a gold customer with open order #42.\n</visitor_context>") {
		t.Errorf("the context is not in the prompt: %q", s)
	}

	// An anonymous visitor: nulls, and the tenant's answer still goes in.
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.chat(t, path, map[string]any{"message": "Hi", "sessionId": "ctx-2"}, agentHeaders)
	if got := e.last(); got["externalId"] != nil || got["visitorId"] != nil || got["email"] != nil || got["verified"] != false {
		t.Errorf("anonymous context query %v", got)
	}

	// Under a visitor auth mode an id alone proves nothing: no identity sent.
	b.mustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorAuthMode": "jwt"})
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.chat(t, path, map[string]any{"message": "I am ext-7", "sessionId": "ctx-3", "visitorId": "ext-7"}, agentHeaders)
	if got := e.last(); got["externalId"] != nil || got["visitorId"] != nil || got["email"] != nil {
		t.Errorf("an unverified visitor's claimed identity was sent: %v", got)
	}

	// A failing endpoint: the chat answers without the section.
	e.mu.Lock()
	e.status = http.StatusInternalServerError
	e.mu.Unlock()
	llm.Push(llmtest.Turn{Text: []string{"Hello again."}})
	if r := b.chat(t, path, map[string]any{"message": "Hi", "sessionId": "ctx-4"}, agentHeaders); r.status != 200 || r.body["message"] != "Hello again." {
		t.Errorf("with a failing context webhook: %d %v", r.status, r.body)
	}
	if strings.Contains(system(), "visitor_context") {
		t.Error("a failed context call left a section in the prompt")
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.bodies) != 4 || len(e.bad) != 0 {
		t.Errorf("%d calls for 4 messages, %d with a bad signature: %v", len(e.bodies), len(e.bad), e.bad)
	}
}
