package public_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// withKey is headers with an Idempotency-Key.
func withKey(headers map[string]string, key string) map[string]string {
	h := map[string]string{"Idempotency-Key": key}
	for k, v := range headers {
		h[k] = v
	}
	return h
}

// A message sent again with its Idempotency-Key after it was answered (the
// answer lost with a dropped connection) is not stored again and the model
// is not called again: the stored answer is replayed, as JSON or as a
// stream. The same key in another session is another message.
func TestChatSentAgainIsReplayed(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	msg := map[string]any{"message": "When do you open?", "sessionId": "again-1"}
	llm.Push(llmtest.Turn{Text: []string{"At nine."}})
	first := b.Chat(t, path, msg, withKey(webtest.AgentHeaders, "k-1"))
	if first.Status != 200 || first.Body["message"] != "At nine." || first.Body["replayed"] != nil {
		t.Fatalf("first: %d %v", first.Status, first.Body)
	}
	calls := len(llm.Requests())

	again := b.Chat(t, path, msg, withKey(webtest.AgentHeaders, "k-1"))
	if again.Status != 200 || again.Body["message"] != "At nine." || again.Body["replayed"] != true ||
		again.Body["messageId"] != first.Body["messageId"] || again.Body["conversationId"] != first.Body["conversationId"] ||
		again.Body["messageCount"] != float64(2) {
		t.Errorf("sent again: %d %v, want the first answer replayed", again.Status, again.Body)
	}
	stream := b.Chat(t, path, msg, map[string]string{"Idempotency-Key": "k-1"})
	if n := len(stream.Events); stream.Status != 200 || n < 2 || stream.Events[0]["text"] != "At nine." ||
		stream.Events[n-1]["done"] != true || stream.Events[n-1]["replayed"] != true {
		t.Errorf("sent again as a stream: %d %v", stream.Status, stream.Events)
	}
	if got := len(llm.Requests()); got != calls {
		t.Errorf("the model was called %d more times for the messages sent again", got-calls)
	}
	if got, want := sessionMessages(t, b, ten.ID, "again-1"), "user:When do you open?|assistant:At nine."; got != want {
		t.Errorf("stored %q, want %q", got, want)
	}

	// Another session, the same key: a message of its own.
	llm.Push(llmtest.Turn{Text: []string{"At nine, still."}})
	other := b.Chat(t, path, map[string]any{"message": "When do you open?", "sessionId": "again-2"}, withKey(webtest.AgentHeaders, "k-1"))
	if other.Status != 200 || other.Body["message"] != "At nine, still." || other.Body["replayed"] != nil {
		t.Errorf("the same key in another session: %d %v", other.Status, other.Body)
	}
	// A new key in the first session: a new message.
	llm.Push(llmtest.Turn{Text: []string{"Until six."}})
	next := b.Chat(t, path, map[string]any{"message": "And close?", "sessionId": "again-1"}, withKey(webtest.AgentHeaders, "k-2"))
	if next.Status != 200 || next.Body["message"] != "Until six." || next.Body["messageCount"] != float64(4) {
		t.Errorf("a new key: %d %v", next.Status, next.Body)
	}
}

// A message whose turn never ended (the instance answering it was killed
// after storing it) sent again with its key is answered now, once: the
// model is given it as the last message, and it is not stored twice.
func TestChatSentAgainAfterItsInstanceDied(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	runInstance(t, b)
	b.Srv.Base.Engine.SessionWait = time.Second
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "died-1"}, withKey(webtest.AgentHeaders, "k-a")); r.Status != 200 {
		t.Fatalf("first message: %d %v", r.Status, r.Body)
	}
	ctx := context.Background()
	x, err := b.DB.RegisterInstance(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p := parley.ConversationStart{TenantID: ten.ID, SessionID: "died-1", Limit: 1000, IdempotencyKey: "k-b"}
	if ok, st, err := b.DB.OpenTurn(ctx, p, "Are you open on Sunday?", "turn-of-x", x, 2*time.Minute, 19); err != nil || !ok || st.Opened == nil {
		t.Fatalf("the other instance's turn: %v %v %v", ok, st.Opened, err)
	}
	b.Exec(t, `UPDATE instances SET heartbeat_at = now() - interval '2 minutes' WHERE id = $1`, x)

	llm.Push(llmtest.Turn{Text: []string{"No, closed on Sunday."}})
	r := b.Chat(t, path, map[string]any{"message": "Are you open on Sunday?", "sessionId": "died-1"}, withKey(webtest.AgentHeaders, "k-b"))
	if r.Status != 200 || r.Body["message"] != "No, closed on Sunday." || r.Body["replayed"] != nil || r.Body["messageCount"] != float64(4) {
		t.Fatalf("sent again after the dead turn: %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+":"+string(m.Content))
		}
	}
	if got, want := strings.Join(sent, "|"), "user:Hi|assistant:Hello.|user:Are you open on Sunday?"; got != want {
		t.Errorf("model given %q, want %q", got, want)
	}
	want := "user:Hi|assistant:Hello.|user:Are you open on Sunday?|assistant:No, closed on Sunday."
	if got := sessionMessages(t, b, ten.ID, "died-1"); got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	// Sent a third time: now it is answered, so the answer is replayed.
	again := b.Chat(t, path, map[string]any{"message": "Are you open on Sunday?", "sessionId": "died-1"}, withKey(webtest.AgentHeaders, "k-b"))
	if again.Status != 200 || again.Body["message"] != "No, closed on Sunday." || again.Body["replayed"] != true {
		t.Errorf("sent a third time: %d %v", again.Status, again.Body)
	}
}

// A key of 1 to 255 printable ASCII characters is taken; a malformed one
// is refused with nothing stored.
func TestChatIdempotencyKeyRules(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	for name, key := range map[string]string{"Longest": strings.Repeat("k", 255), "Space": "a b"} {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "rules-" + name}, withKey(webtest.AgentHeaders, key)); r.Status != 200 {
			t.Errorf("%s: %d %v, want 200", name, r.Status, r.Body)
		}
	}
	const rule = "Idempotency-Key must be 1 to 255 printable characters"
	for name, key := range map[string]string{"TooLong": strings.Repeat("k", 256), "Tab": "a\tb", "Empty": "", "NonASCII": "clé"} {
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "rules-" + name}, withKey(webtest.AgentHeaders, key))
		if r.Status != 400 || r.Body["error"] != rule || r.Body["code"] != "INVALID_IDEMPOTENCY_KEY" {
			t.Errorf("%s: %d %v, want 400 %q", name, r.Status, r.Body, rule)
		}
		if got := sessionMessages(t, b, ten.ID, "rules-"+name); got != "" {
			t.Errorf("%s: stored %q", name, got)
		}
	}
}

// The same key sent with another message of the session is refused with
// 422: nothing is stored and the model is not called. A replay says it is
// one (Idempotency-Replayed), as JSON and as a stream; a first answer does
// not. Another tenant's session of the same id is another scope.
func TestChatKeyReusedWithAnotherMessage(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"At nine."}})
	first := b.Chat(t, path, map[string]any{"message": "When do you open?", "sessionId": "reuse-1"}, withKey(webtest.AgentHeaders, "k-1"))
	if first.Status != 200 || first.Header.Get("Idempotency-Replayed") != "" {
		t.Fatalf("first: %d %v %v", first.Status, first.Header, first.Body)
	}
	calls := len(llm.Requests())
	r := b.Chat(t, path, map[string]any{"message": "And when do you close?", "sessionId": "reuse-1"}, withKey(webtest.AgentHeaders, "k-1"))
	if r.Status != 422 || r.Body["code"] != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("another message with the key: %d %v", r.Status, r.Body)
	}
	if got, want := sessionMessages(t, b, ten.ID, "reuse-1"), "user:When do you open?|assistant:At nine."; got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	if got := len(llm.Requests()); got != calls {
		t.Errorf("the model was called %d more times", got-calls)
	}
	// A retry may ask for the answer another way: the text is what must match.
	again := b.Chat(t, path, map[string]any{"message": "When do you open?", "sessionId": "reuse-1", "stream": false, "locale": "en"}, withKey(webtest.AgentHeaders, "k-1"))
	if again.Status != 200 || again.Body["message"] != "At nine." || again.Header.Get("Idempotency-Replayed") != "true" {
		t.Errorf("sent again as JSON: %d %v %v", again.Status, again.Header, again.Body)
	}
	stream := b.Chat(t, path, map[string]any{"message": "When do you open?", "sessionId": "reuse-1"}, map[string]string{"Idempotency-Key": "k-1"})
	if stream.Status != 200 || len(stream.Events) < 2 || stream.Header.Get("Idempotency-Replayed") != "true" {
		t.Errorf("sent again as a stream: %d %v %v", stream.Status, stream.Header, stream.Events)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.tenant_id = $1 AND c.session_id = 'reuse-1'`, ten.ID); n != 2 {
		t.Errorf("%d messages stored, want 2 (one turn)", n)
	}
	// Another tenant's session of the same id, the same key: its own message.
	other := b.NewTenant(t, "starter")
	llm.Push(llmtest.Turn{Text: []string{"At ten."}})
	mine := b.Chat(t, "/chat/"+other.Slug, map[string]any{"message": "And when do you close?", "sessionId": "reuse-1"}, withKey(webtest.AgentHeaders, "k-1"))
	if mine.Status != 200 || mine.Body["message"] != "At ten." || mine.Header.Get("Idempotency-Replayed") != "" {
		t.Errorf("another tenant, the same key: %d %v", mine.Status, mine.Body)
	}
}

// A try sent while the first try of its message is still being answered
// waits for it: past the session's wait it is refused with 409, and
// nothing more is stored.
func TestChatSentAgainWhileInFlight(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	b.Srv.Base.Engine.SessionWait = 300 * time.Millisecond
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	body := map[string]any{"message": "Are you open?", "sessionId": "held-1"}
	llm.Push(llmtest.Turn{Stall: true})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", b.TS.URL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range withKey(webtest.AgentHeaders, "k-held") {
		req.Header.Set(k, v)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := b.TS.Client().Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(webtest.Patience); sessionMessages(t, b, ten.ID, "held-1") != "user:Are you open?"; {
		if time.Now().After(deadline) {
			t.Fatal("the first try's message was never stored")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := b.Chat(t, path, body, withKey(webtest.AgentHeaders, "k-held"))
	if r.Status != 409 {
		t.Errorf("a try while the first runs: %d %v, want 409", r.Status, r.Body)
	}
	cancel()
	<-done
	if n := b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND c.session_id = 'held-1' AND m.role = 'user'`, ten.ID); n != 1 {
		t.Errorf("%d visitor messages stored, want 1", n)
	}
}
