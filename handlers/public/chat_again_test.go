package public_test

import (
	"context"
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

// A malformed Idempotency-Key is refused with nothing stored.
func TestChatIdempotencyKeyRules(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "rules-max"}, withKey(webtest.AgentHeaders, strings.Repeat("k", 100))); r.Status != 200 {
		t.Errorf("a key of 100 characters: %d %v, want 200", r.Status, r.Body)
	}
	const rule = "Idempotency-Key must be one value of 1 to 100 visible ASCII characters, such as a UUID"
	for name, key := range map[string]string{"TooLong": strings.Repeat("k", 101), "Space": "a b", "Empty": "", "NonASCII": "clé"} {
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "rules-" + name}, withKey(webtest.AgentHeaders, key))
		if r.Status != 400 || r.Body["error"] != rule {
			t.Errorf("%s: %d %v, want 400 %q", name, r.Status, r.Body, rule)
		}
		if got := sessionMessages(t, b, ten.ID, "rules-"+name); got != "" {
			t.Errorf("%s: stored %q", name, got)
		}
	}
}
