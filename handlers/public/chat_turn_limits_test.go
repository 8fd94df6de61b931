package public_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// A turn that outlasts the session lease's lifetime keeps its session: the
// lease is renewed while the model answers, so a second message of the
// session still waits for the first's answer instead of taking the expired
// lease and interleaving.
func TestChatLeaseOutlivesItsLifetime(t *testing.T) {
	t.Parallel()
	// A model that takes 3 s over a message mentioning "slow": three
	// lifetimes of the lease below. (A lease of 300 ms, renewed every 100 ms,
	// expired now and then on a machine busy enough that a renewal's write
	// waited longer than the lease: the test is of renewal, not of speed.)
	llm, slowURL := slowModel(t, 3*time.Second)
	b, _ := webtest.SetupChat(t, map[string]string{"PARLEY_LLM_BASE_URL": slowURL})
	b.Srv.Base.Engine.SessionLease = time.Second // renewed every third of a second
	b.Srv.Base.Engine.SessionWait = 10 * time.Second
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"Answer A."}}, llmtest.Turn{Text: []string{"Answer B."}})

	var wg sync.WaitGroup
	var first, second webtest.ChatResponse
	wg.Add(2)
	go func() {
		defer wg.Done()
		first = b.Chat(t, path, map[string]any{"message": "slow one", "sessionId": "renew-1"}, webtest.AgentHeaders)
	}()
	waitSessionStarted(t, b, ten.ID, "renew-1")
	go func() {
		defer wg.Done()
		second = b.Chat(t, path, map[string]any{"message": "two", "sessionId": "renew-1"}, webtest.AgentHeaders)
	}()
	wg.Wait()
	if first.Status != 200 || second.Status != 200 {
		t.Fatalf("got %d %v and %d %v", first.Status, first.Body, second.Status, second.Body)
	}
	var got []string
	rows, err := b.DB.Pool().Query(t.Context(), `SELECT m.role || ':' || m.content FROM messages m
		JOIN conversations c ON c.id = m.conversation_id WHERE c.tenant_id = $1 AND c.session_id = 'renew-1' ORDER BY m.seq`, ten.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{"user:slow one", "assistant:Answer A.", "user:two", "assistant:Answer B."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored messages %q, want %q", got, want)
	}
	if second.Body["messageCount"] != float64(4) {
		t.Errorf("second answer's messageCount %v, want 4", second.Body["messageCount"])
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d leases left behind", n)
	}
}

// A model that goes silent mid-answer ends the turn at the turn's time
// limit with LLM_TIMEOUT, in both response modes, and what it said is kept.
func TestChatTurnTimeout(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	b.Srv.Base.Engine.TurnTimeout = 400 * time.Millisecond
	ten := b.NewTenant(t, "starter")

	llm.Push(llmtest.Turn{Text: []string{"Partial answer"}, Stall: true})
	start := time.Now()
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "silent-sse"}, nil)
	if len(r.Events) != 2 || r.Events[0]["text"] != "Partial answer" || r.Events[1]["code"] != "LLM_TIMEOUT" ||
		r.Events[1]["error"] != "the openai model provider did not answer in time" {
		t.Errorf("SSE: got %d %v, want the partial text then an LLM_TIMEOUT error event", r.Status, r.Events)
	} else {
		webtest.CheckChatSchema(t, "timeout event", "ChatStreamError", r.Events[1])
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("the stream ended after %v", waited)
	}

	llm.Push(llmtest.Turn{Stall: true})
	r = b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "silent-json"}, webtest.AgentHeaders)
	if r.Status != http.StatusBadGateway || r.Body["code"] != "LLM_TIMEOUT" {
		t.Errorf("JSON: got %d %v, want 502 LLM_TIMEOUT", r.Status, r.Body)
	}

	if n := b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND c.session_id = 'silent-sse' AND m.role = 'assistant' AND m.content = 'Partial answer'`, ten.ID); n != 1 {
		t.Errorf("the partial answer was stored %d times, want once", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d leases left behind", n)
	}
}

// slowModel is a scripted model behind a proxy that holds each request
// mentioning "slow" for delay before passing it on; it returns the model
// and the base URL to configure.
func slowModel(t *testing.T, delay time.Duration) (*llmtest.OpenAI, string) {
	llm := llmtest.NewOpenAI(t)
	target, _ := url.Parse(llm.URL)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := httputil.DumpRequest(r, true)
		if strings.Contains(string(body), "slow") {
			time.Sleep(delay)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	return llm, slow.URL + "/v1"
}

// waitSessionStarted returns once the session has a stored message: its
// first turn holds the session's lease (it stores the message under it), so
// a message sent now is the second, whatever the machine's load, with no
// guessed delay.
func waitSessionStarted(t *testing.T, b *webtest.Bundle, tenantID, sessionID string) {
	t.Helper()
	for deadline := time.Now().Add(webtest.Patience); b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c
		ON c.id = m.conversation_id WHERE c.tenant_id = $1 AND c.session_id = $2`, tenantID, sessionID) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no message of session %s was stored", sessionID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
