package public_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/web/webtest"
)

// typingRow is the conversation's typing signal of party as stored: its
// end, zero when there is none.
func typingRow(t *testing.T, b *webtest.Bundle, conversationID, party string) time.Time {
	t.Helper()
	var until time.Time
	err := b.DB.Pool().QueryRow(context.Background(), `SELECT COALESCE(max(until), 'epoch') FROM conversation_typing
		WHERE conversation_id = $1 AND party = $2`, conversationID, party).Scan(&until)
	webtest.MustStep(t, "reading the typing signal", err)
	if until.Unix() == 0 {
		return time.Time{}
	}
	return until
}

// ageTyping makes the conversation's signals of party older than
// db.TypingEvery, as if the time had passed, so that the next is stored.
func ageTyping(t *testing.T, b *webtest.Bundle, conversationID, party string) {
	t.Helper()
	_, err := b.DB.Pool().Exec(context.Background(), `UPDATE conversation_typing SET until = now() + interval '1 second'
		WHERE conversation_id = $1 AND party = $2`, conversationID, party)
	webtest.MustStep(t, "ageing the typing signal", err)
}

// TestChatTypingSignal: POST /chat/{slug}/typing answers 404 alike for a
// wrong token, another tenant's slug and a session without a conversation,
// 400 without a token; a valid signal is 204, dropped while the assistant
// answers the conversation (nobody reads it), kept while a person is
// awaited, and one sent sooner than db.TypingEvery after the last kept is
// dropped without a write.
func TestChatTypingSignal(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()
	ten, other := b.NewTenant(t, "starter"), b.NewTenant(t, "starter")
	reply := streamSession(t, b, ten.Slug, "typing-1")
	conv, token := reply["conversationId"].(string), reply["streamToken"].(string)
	key, _ := hex.DecodeString(webtest.SecretKey)
	mac := hmac.New(sha256.New, public.StreamKey(key))
	mac.Write([]byte(ten.ID + ":no-such-session"))
	unknown := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	signal := func(slug string, body map[string]any) (int, map[string]any) {
		t.Helper()
		return b.Do(t, "POST", "/chat/"+slug+"/typing", "", body)
	}

	for _, tc := range []struct {
		name, slug string
		body       map[string]any
		status     int
		want       string
	}{
		{"WrongToken", ten.Slug, map[string]any{"sessionId": "typing-1", "token": otherToken(token)}, 404, "Conversation not found"},
		{"OtherSession", ten.Slug, map[string]any{"sessionId": "typing-2", "token": token}, 404, "Conversation not found"},
		{"OtherTenant", other.Slug, map[string]any{"sessionId": "typing-1", "token": token}, 404, "Conversation not found"},
		{"UnknownSession", ten.Slug, map[string]any{"sessionId": "no-such-session", "token": unknown}, 404, "Conversation not found"},
		{"UnknownTenant", "no-such-tenant", map[string]any{"sessionId": "typing-1", "token": token}, 404, "Tenant not found"},
		{"NoToken", ten.Slug, map[string]any{"sessionId": "typing-1"}, 400, "Validation failed"},
	} {
		if st, body := signal(tc.slug, tc.body); st != tc.status || body["error"] != tc.want {
			t.Errorf("%s: %d %v, want %d %q", tc.name, st, body, tc.status, tc.want)
		}
	}
	ok := map[string]any{"sessionId": "typing-1", "token": token}

	// The assistant answers: accepted, and dropped.
	if st, _ := signal(ten.Slug, ok); st != 204 {
		t.Fatalf("a signal while the assistant answers: %d, want 204", st)
	}
	if until := typingRow(t, b, conv, db.PartyVisitor); !until.IsZero() {
		t.Errorf("a signal was stored while the assistant answers (until %v)", until)
	}

	// A person is awaited: kept, and the dashboard reads it.
	_, err := b.DB.MoveConversation(ctx, ten.ID, conv, parley.StatusEscalated, parley.Holder{})
	webtest.MustStep(t, "escalating", err)
	if st, _ := signal(ten.Slug, ok); st != 204 {
		t.Fatalf("a signal while a person is awaited: %d, want 204", st)
	}
	until := typingRow(t, b, conv, db.PartyVisitor)
	if until.IsZero() {
		t.Fatal("the signal was not stored")
	}
	if typing, err := b.DB.VisitorTyping(ctx, ten.ID, conv); err != nil || !typing {
		t.Errorf("VisitorTyping = %v, %v; want true", typing, err)
	}
	if typing, err := b.DB.VisitorTyping(ctx, other.ID, conv); err != nil || typing {
		t.Errorf("another tenant's VisitorTyping = %v, %v; want false", typing, err)
	}

	// At once again: dropped before the database (this instance), and by
	// the database (a signal through another instance).
	if st, _ := signal(ten.Slug, ok); st != 204 {
		t.Fatalf("a second signal: %d, want 204", st)
	}
	if again := typingRow(t, b, conv, db.PartyVisitor); !again.Equal(until) {
		t.Errorf("a signal within %v was written: until %v, then %v", db.TypingEvery, until, again)
	}
	if recorded, err := b.DB.SignalVisitorTyping(ctx, ten.ID, "typing-1"); err != nil || recorded {
		t.Errorf("the store took a second signal at once: %v, %v", recorded, err)
	}

	// The visitor's message ends the typing: the signal came before it.
	visitorSaid := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Here is my order number", "sessionId": "typing-1", "stream": false}, nil)
	if visitorSaid.Status != 200 {
		t.Fatalf("the visitor's message: %d %v", visitorSaid.Status, visitorSaid.Body)
	}
	if typing, _ := b.DB.VisitorTyping(ctx, ten.ID, conv); typing {
		t.Error("the visitor still types after their message came")
	}
	ageTyping(t, b, conv, db.PartyVisitor)
	if recorded, err := b.DB.SignalVisitorTyping(ctx, ten.ID, "typing-1"); err != nil || !recorded {
		t.Fatalf("a signal after db.TypingEvery: %v, %v", recorded, err)
	}
	if typing, _ := b.DB.VisitorTyping(ctx, ten.ID, conv); !typing {
		t.Error("the visitor typing again after their message is not shown")
	}
}

// TestChatStreamTyping: while the person who holds the conversation types,
// the visitor's stream sends a typing event with their name, once per
// stored signal; a signal of someone else is not stored; a signal older
// than the person's last message is not sent to a stream opened after it.
func TestChatStreamTyping(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()
	ten := b.OwnedTenant(t, "starter")
	reply := streamSession(t, b, ten.Slug, "typing-s")
	conv, token := reply["conversationId"].(string), reply["streamToken"].(string)
	var uid string
	webtest.MustStep(t, "the owner's id", b.DB.Pool().QueryRow(ctx, `SELECT id FROM users WHERE email = $1`, ten.OwnerEmail).Scan(&uid))
	maya := parley.Holder{UserID: &uid, Name: "Maya"}
	_, err := b.DB.MoveConversation(ctx, ten.ID, conv, parley.StatusHuman, maya)
	webtest.MustStep(t, "taking over", err)

	s := openStream(t, b, streamPath(ten.Slug, "typing-s", token), nil)
	if ev := s.next(t, "status"); ev.Name != "status" || ev.Data["assignee"] != "Maya" {
		t.Fatalf("first event = %+v, want status human by Maya", ev)
	}
	if recorded, err := b.DB.SignalPersonTyping(ctx, ten.ID, conv, maya); err != nil || !recorded {
		t.Fatalf("Maya's signal: %v, %v", recorded, err)
	}
	ev := s.next(t, "Maya typing")
	if ev.Name != "typing" || ev.Data["name"] != "Maya" || ev.ID != "" {
		t.Fatalf("event = %+v, want typing by Maya", ev)
	}
	webtest.CheckChatSchema(t, "typing event", "ChatStreamTyping", ev.Data)

	// Again at once, and someone who does not hold it: nothing stored,
	// nothing sent (the next event is Maya's message).
	if recorded, err := b.DB.SignalPersonTyping(ctx, ten.ID, conv, maya); err != nil || recorded {
		t.Errorf("a second signal at once was stored: %v, %v", recorded, err)
	}
	other := "00000000-0000-4000-8000-000000000001"
	if recorded, err := b.DB.SignalPersonTyping(ctx, ten.ID, conv, parley.Holder{UserID: &other, Name: "Bob"}); err != nil || recorded {
		t.Errorf("the signal of someone who does not hold it was stored: %v, %v", recorded, err)
	}
	if _, err := b.DB.SignalPersonTyping(ctx, b.NewTenant(t, "starter").ID, conv, maya); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("a signal under another tenant: %v, want not found", err)
	}
	_, _, err = b.DB.AddHumanMessage(ctx, ten.ID, conv, maya, "Here I am.")
	webtest.MustStep(t, "Maya's message", err)
	ev = s.next(t, "Maya's message")
	if ev.Name != "message" || ev.Data["content"] != "Here I am." {
		t.Fatalf("event = %+v, want Maya's message", ev)
	}

	// Typing again later: sent again.
	ageTyping(t, b, conv, db.PartyPerson)
	if recorded, err := b.DB.SignalPersonTyping(ctx, ten.ID, conv, maya); err != nil || !recorded {
		t.Fatalf("Maya's next signal: %v, %v", recorded, err)
	}
	if ev := s.next(t, "Maya typing again"); ev.Name != "typing" || ev.Data["name"] != "Maya" {
		t.Fatalf("event = %+v, want typing by Maya", ev)
	}

	// A stream opened after her next message does not show the signal that
	// announced it: the next event after the status is the close.
	_, _, err = b.DB.AddHumanMessage(ctx, ten.ID, conv, maya, "Done.")
	webtest.MustStep(t, "Maya's second message", err)
	done := s.next(t, "Done.")
	r := openStream(t, b, streamPath(ten.Slug, "typing-s", token), map[string]string{"Last-Event-ID": done.ID})
	r.next(t, "status")
	_, err = b.DB.MoveConversation(ctx, ten.ID, conv, parley.StatusClosed, parley.Holder{})
	webtest.MustStep(t, "closing", err)
	if ev := r.next(t, "the close"); ev.Name != "status" || ev.Data["status"] != "closed" {
		t.Errorf("event = %+v, want the close (no typing)", ev)
	}
}

// otherToken is token with one character of its middle changed: a token of
// the same shape that is not the one issued (the last character would not
// do: in unpadded base64 it carries bits a decoder may ignore).
func otherToken(token string) string {
	c := byte('A')
	if token[10] == 'A' {
		c = 'B'
	}
	return token[:10] + string(c) + token[11:]
}
