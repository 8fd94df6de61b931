package public_test

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

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// contextEndpoint is a tenant's context webhook: it verifies each call's
// signature with the visitor signing key, as a tenant would from the
// documentation, keeps the bodies, and answers with the scripted status and
// context (and challenge, when set). It verifies v1 over "<t>.<body>" as a
// Stripe-style verifier does, or with RawBody v0 over the body alone, as a
// reader of the spec's first sentence does.
type contextEndpoint struct {
	srv       *httptest.Server
	mu        sync.Mutex
	key       []byte
	status    int
	rawBody   bool
	challenge map[string]any
	bodies    []map[string]any
	bad       []string // calls whose signature did not verify
}

// signatureSchemes splits X-Service-Signature into its schemes.
func signatureSchemes(header string) map[string]string {
	out := map[string]string{}
	for _, p := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(p, "=")
		out[k] = v
	}
	return out
}

// verifies reports whether header signs body with key: v1 over t.body
// within 300 s, or, with RawBody, v0 over the body alone.
func verifies(header string, key, body []byte, rawBody bool) bool {
	sc := signatureSchemes(header)
	mac := hmac.New(sha256.New, key)
	if rawBody {
		mac.Write(body)
		return hmac.Equal([]byte(sc["v0"]), []byte(hex.EncodeToString(mac.Sum(nil))))
	}
	mac.Write([]byte(sc["t"] + "."))
	mac.Write(body)
	unix, err := strconv.ParseInt(sc["t"], 10, 64)
	return err == nil && hmac.Equal([]byte(sc["v1"]), []byte(hex.EncodeToString(mac.Sum(nil)))) &&
		time.Since(time.Unix(unix, 0)).Abs() <= 300*time.Second
}

func newContextEndpoint(t *testing.T, key []byte) *contextEndpoint {
	e := &contextEndpoint{key: key, status: http.StatusOK}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		if !verifies(r.Header.Get("X-Service-Signature"), e.key, body, e.rawBody) {
			e.bad = append(e.bad, r.Header.Get("X-Service-Signature"))
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		e.bodies = append(e.bodies, m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.status)
		if e.status == http.StatusOK {
			ext, _ := m["externalId"].(string)
			answer := map[string]any{"context": "CRM: " + ext + " is a gold customer with open order #42."}
			if e.challenge != nil {
				answer["challenge"] = e.challenge
			}
			_ = json.NewEncoder(w).Encode(answer)
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
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	key := b.VisitorKey(t, ten.ID)
	e := newContextEndpoint(t, key)
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorContextUrl": e.srv.URL + "/context"})
	path := "/chat/" + ten.Slug
	system := func() string {
		reqs := llm.Requests()
		return string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	}

	// A verified visitor: identity sent, the answer in the prompt.
	token := webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-7", "email": "ada@example.com", "exp": time.Now().Add(time.Minute).Unix()})
	llm.Push(llmtest.Turn{Text: []string{"Hello Ada."}})
	r := b.Chat(t, path, map[string]any{"message": "Where is my order?", "sessionId": "ctx-1", "visitorToken": token}, webtest.AgentHeaders)
	if r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
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
	b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "ctx-2"}, webtest.AgentHeaders)
	if got := e.last(); got["externalId"] != nil || got["visitorId"] != nil || got["email"] != nil || got["verified"] != false {
		t.Errorf("anonymous context query %v", got)
	}

	// Under a visitor auth mode an id alone proves nothing: no identity sent.
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorAuthMode": "jwt"})
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.Chat(t, path, map[string]any{"message": "I am ext-7", "sessionId": "ctx-3", "visitorId": "ext-7"}, webtest.AgentHeaders)
	if got := e.last(); got["externalId"] != nil || got["visitorId"] != nil || got["email"] != nil {
		t.Errorf("an unverified visitor's claimed identity was sent: %v", got)
	}

	// A failing endpoint: the chat answers without the section.
	e.mu.Lock()
	e.status = http.StatusInternalServerError
	e.mu.Unlock()
	llm.Push(llmtest.Turn{Text: []string{"Hello again."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "ctx-4"}, webtest.AgentHeaders); r.Status != 200 || r.Body["message"] != "Hello again." {
		t.Errorf("with a failing context webhook: %d %v", r.Status, r.Body)
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

// A challenge in the context webhook's answer: the agent is offered
// VERIFY_EXTERNAL_CHALLENGE with the challenge's prompt, posts the answer to
// verifyUrl signed like the context call, counts answers against
// maxAttempts, and once the answer is right the conversation's visitor is
// verified: their memory is in the next prompt. The context endpoint here
// verifies the raw-body reading of the signature (v0), the verify endpoint
// the t.body one (v1).
func TestChatContextChallenge(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	key := b.VisitorKey(t, ten.ID)
	e := newContextEndpoint(t, key)
	e.rawBody = true
	var (
		mu      sync.Mutex
		answers []map[string]any
		badSigs int
	)
	verify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		defer mu.Unlock()
		if !verifies(r.Header.Get("X-Service-Signature"), key, body, false) || r.Header.Get("X-Service-Event") != "visitor.challenge" {
			badSigs++
		}
		answers = append(answers, m)
		_ = json.NewEncoder(w).Encode(map[string]bool{"verified": m["answer"] == "1990-01-01" && m["challengeId"] == "dob" && m["externalId"] == "ext-9"})
	}))
	t.Cleanup(verify.Close)
	e.challenge = map[string]any{"id": "dob", "prompt": "What is your date of birth?", "verifyUrl": verify.URL + "/verify",
		"maxAttempts": 3, "expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339)}
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorContextUrl": e.srv.URL + "/context", "visitorAuthMode": "jwt"})
	vid := b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"externalId": "ext-9"})["id"].(string)
	b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/visitors/"+vid+"/memory", ten.Token, map[string]any{"key": "plan", "value": "gold"})
	path := "/chat/" + ten.Slug

	answer := func(t *testing.T, session, ans string) (llmtest.Received, []string) {
		t.Helper()
		llm.Push(llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("c1", "verify_external_challenge", `{"answer":"`+ans+`"}`)}},
			llmtest.Turn{Text: []string{"OK."}})
		n := len(llm.Requests())
		if r := b.Chat(t, path, map[string]any{"message": ans, "sessionId": session, "visitorId": "ext-9"}, webtest.AgentHeaders); r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		reqs := llm.Requests()
		return reqs[n], webtest.ToolResults(reqs[n+1])
	}

	first, res := answer(t, "ch-1", "1980-05-05")
	if !offered(first, "verify_external_challenge") || offered(first, "remember") {
		t.Fatalf("tools %v", first.Chat.Tools)
	}
	for _, tool := range first.Chat.Tools {
		if tool.Function.Name == "verify_external_challenge" && !strings.Contains(tool.Function.Description, "What is your date of birth?") {
			t.Errorf("the challenge's prompt is not relayed: %q", tool.Function.Description)
		}
	}
	if len(res) != 1 || !strings.Contains(res[0], "not right") {
		t.Fatalf("wrong answer: %q", res)
	}
	if strings.Contains(string(first.Chat.Messages[0].Content), "plan: gold") {
		t.Error("memory before verification")
	}
	if _, res = answer(t, "ch-1", "1990-01-01"); !strings.Contains(res[0], `"verified":true`) {
		t.Fatalf("right answer: %q", res)
	}
	if n := b.Count(t, `SELECT count(*) FROM tool_history h JOIN conversations c ON c.id = h.conversation_id
		WHERE c.tenant_id = $1 AND h.input::text LIKE '%1990-01-01%'`, ten.ID); n != 0 {
		t.Error("the tool history keeps the answer")
	}

	// The next message: the visitor is verified, with their memory.
	llm.Push(llmtest.Turn{Text: []string{"You are on the gold plan."}})
	n := len(llm.Requests())
	if r := b.Chat(t, path, map[string]any{"message": "My plan?", "sessionId": "ch-1", "visitorId": "ext-9"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	req := llm.Requests()[n]
	if s := string(req.Chat.Messages[0].Content); !strings.Contains(s, "plan: gold") || !strings.Contains(s, "The visitor's identity is verified.") {
		t.Errorf("the verified visitor's memory is not in the prompt: %q", s)
	}
	if offered(req, "verify_external_challenge") {
		t.Error("the challenge is still offered to a verified visitor")
	}
	if got := e.last(); got["verified"] != true || got["externalId"] != "ext-9" {
		t.Errorf("context query after verification %v", got)
	}

	// maxAttempts counts the answers of a conversation.
	e.mu.Lock()
	e.challenge["maxAttempts"] = 1
	e.mu.Unlock()
	answer(t, "ch-2", "wrong")
	if _, res = answer(t, "ch-2", "1990-01-01"); !strings.Contains(res[0], "used up") {
		t.Errorf("answer beyond maxAttempts: %q", res)
	}

	// An expired challenge is not offered.
	e.mu.Lock()
	e.challenge["expiresAt"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	e.mu.Unlock()
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	n = len(llm.Requests())
	b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "ch-3"}, webtest.AgentHeaders)
	if offered(llm.Requests()[n], "verify_external_challenge") {
		t.Error("an expired challenge is offered")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(answers) != 3 || badSigs != 0 {
		t.Errorf("%d answers posted (want 3), %d badly signed", len(answers), badSigs)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.bad) != 0 {
		t.Errorf("context calls whose raw-body signature did not verify: %v", e.bad)
	}
}

// A message its address's limit refuses calls nobody: though its count is
// made with its turn's first round trip, the turn reads nothing from the
// tenant's context webhook until the count has let it in.
func TestChatRefusedCallsNoContextWebhook(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	webtest.ManualClock(b) // the counts stay in one minute's window
	ten := b.NewTenant(t, "starter")
	e := newContextEndpoint(t, b.VisitorKey(t, ten.ID))
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorContextUrl": e.srv.URL + "/context"})
	path := "/chat/" + ten.Slug
	addr := webtest.NewChatAddr()
	from := map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test"}
	calls := func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.bodies)
	}
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "lim-1"}, from); r.Status != 200 || calls() != 1 {
		t.Fatalf("under the limit: %d %v, %d context calls; want 200 and 1", r.Status, r.Body, calls())
	}
	b.Exec(t, `UPDATE rate_counters SET count = 20 WHERE key = $1`, "chat:ip:min:"+addr)
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "lim-2"}, from); r.Status != 429 {
		t.Fatalf("at the limit: %d %v, want 429", r.Status, r.Body)
	}
	if calls() != 1 {
		t.Errorf("%d context calls after a refused message, want 1: the refused one called the tenant", calls())
	}
}
