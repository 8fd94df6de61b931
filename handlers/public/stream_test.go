package public_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/web/webtest"
)

// sseEvent is one event of a chat stream.
type sseEvent struct {
	ID, Name string
	Data     map[string]any
}

// chatStream is an open GET /chat/{slug}/stream, its events read as they
// come.
type chatStream struct {
	comments atomic.Int64 // keep-alive comments received
	header   http.Header
	events   chan sseEvent
	cancel   context.CancelFunc
}

// openStream opens the stream at path (query included) with headers and
// checks it answers 200; its events arrive on the returned stream until
// the test ends.
func openStream(t *testing.T, b *webtest.Bundle, path string, headers map[string]string) *chatStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", b.TS.URL+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &chatStream{header: resp.Header, events: make(chan sseEvent, 64), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				s.comments.Add(1)
			case line == "":
				if ev.Name != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
					t.Errorf("bad event data %q", line)
				}
			}
		}
	}()
	return s
}

// next is the stream's next event; a hang fails the test.
func (s *chatStream) next(t *testing.T, what string) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return ev
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no event within 15 s", what)
	}
	return sseEvent{}
}

// none checks that no event is waiting once the stream has sent what
// follows a marker: the status event the test provokes next.
func (s *chatStream) none(t *testing.T, what string) {
	t.Helper()
	select {
	case ev := <-s.events:
		t.Errorf("%s: unexpected event %v", what, ev)
	default:
	}
}

// streamSession starts a conversation on session and returns the chat's
// answer.
func streamSession(t *testing.T, b *webtest.Bundle, slug, session string) map[string]any {
	t.Helper()
	r := b.Chat(t, "/chat/"+slug, map[string]any{"message": "Can a person help me?", "sessionId": session, "stream": false}, nil)
	if r.Status != 200 {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	return r.Body
}

func streamPath(slug, session, token string) string {
	return "/chat/" + slug + "/stream?sessionId=" + url.QueryEscape(session) + "&token=" + url.QueryEscape(token)
}

// TestChatStreamRefused: the stream answers 404 Conversation not found,
// alike, for a token that is not the session's, another tenant's slug and
// a session with no conversation; 400 for missing parameters and a bad
// event id.
func TestChatStreamRefused(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, other := b.NewTenant(t, "starter"), b.NewTenant(t, "starter")
	reply := streamSession(t, b, ten.Slug, "refused-1")
	token, _ := reply["streamToken"].(string)
	if len(token) != 43 {
		t.Fatalf("streamToken = %q, want 43 base64url characters", token)
	}
	webtest.CheckChatSchema(t, "envelope", "ChatReply", reply)
	if again := streamSession(t, b, ten.Slug, "refused-1"); again["streamToken"] != token {
		t.Errorf("the session's second answer has another token")
	}
	// A valid token of a session that has no conversation: made with the
	// server's key, as the server would.
	key, _ := hex.DecodeString(webtest.SecretKey)
	mac := hmac.New(sha256.New, public.StreamKey(key))
	mac.Write([]byte(ten.ID + ":no-such-session"))
	unknown := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	for _, tc := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"WrongToken", streamPath(ten.Slug, "refused-1", otherToken(token)), 404, "Conversation not found"},
		{"NotBase64", streamPath(ten.Slug, "refused-1", "%%%"), 404, "Conversation not found"},
		{"OtherSession", streamPath(ten.Slug, "refused-2", token), 404, "Conversation not found"},
		{"OtherTenant", streamPath(other.Slug, "refused-1", token), 404, "Conversation not found"},
		{"UnknownSession", streamPath(ten.Slug, "no-such-session", unknown), 404, "Conversation not found"},
		{"UnknownTenant", streamPath("no-such-tenant", "refused-1", token), 404, "Tenant not found"},
		{"NoToken", "/chat/" + ten.Slug + "/stream?sessionId=refused-1", 400, "sessionId and token are required"},
		{"BadEventID", streamPath(ten.Slug, "refused-1", token) + "&lastEventId=-3", 400, "Invalid lastEventId: it must be the id of an event of this stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := b.Do(t, "GET", tc.path, "", nil)
			if st != tc.status || body["error"] != tc.want {
				t.Errorf("got %d %v, want %d %q", st, body, tc.status, tc.want)
			}
		})
	}
	t.Run("Origin", func(t *testing.T) {
		b.MustDo(t, 200, "PUT", "/tenants/"+other.Slug, other.Token, map[string]any{"allowedDomains": []string{"shop.example"}})
		reply := streamSession(t, b, other.Slug, "origin-1")
		req, _ := http.NewRequest("GET", b.TS.URL+streamPath(other.Slug, "origin-1", reply["streamToken"].(string)), nil)
		req.Header.Set("Origin", "https://evil.example")
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("a page of another origin: %d, want 403", resp.StatusCode)
		}
	})
}

// TestChatStreamLive: a stream sends the conversation's status, then each
// person's message and each change of status as they are stored; the
// chat's answer while a person holds the conversation has no text and
// names them; an idle stream sends keep-alive comments; a stream resumed with Last-Event-ID (or lastEventId) sends
// exactly the messages after it.
func TestChatStreamLive(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.Srv.Public.StreamKeepAlive = 20 * time.Millisecond // before any stream opens
	ten := b.NewTenant(t, "starter")
	ctx := context.Background()
	reply := streamSession(t, b, ten.Slug, "live-1")
	conv, token := reply["conversationId"].(string), reply["streamToken"].(string)
	path := streamPath(ten.Slug, "live-1", token)

	s := openStream(t, b, path, map[string]string{"Origin": "https://shop.example"})
	for k, want := range map[string]string{"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store",
		"Content-Type": "text/event-stream", "X-Content-Type-Options": "nosniff"} {
		if got := s.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if s.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	if ev := s.next(t, "the first status"); ev.Name != "status" || ev.Data["status"] != "bot" || ev.Data["assignee"] != nil || ev.ID != "" {
		t.Fatalf("first event = %+v, want status bot", ev)
	}
	webtest.CheckChatSchema(t, "status event", "ChatStreamStatus", map[string]any{"status": "bot", "assignee": nil})

	maya := parley.Holder{Name: "Maya"}
	m1, _, err := b.DB.AddHumanMessage(ctx, ten.ID, conv, maya, "Hi, I'm Maya.")
	if err != nil {
		t.Fatal(err)
	}
	if ev := s.next(t, "the takeover"); ev.Name != "status" || ev.Data["status"] != "human" || ev.Data["assignee"] != "Maya" {
		t.Fatalf("event = %+v, want status human by Maya", ev)
	}
	ev := s.next(t, "Maya's message")
	if ev.Name != "message" || ev.ID == "" || ev.Data["id"] != m1.ID || ev.Data["content"] != "Hi, I'm Maya." ||
		ev.Data["authorName"] != "Maya" || ev.Data["role"] != "human" || ev.Data["timestamp"] == nil {
		t.Fatalf("event = %+v, want Maya's message", ev)
	}
	webtest.CheckChatSchema(t, "message event", "ChatStreamMessage", ev.Data)
	first := ev.ID

	// The visitor writes while Maya holds the conversation: no answer from
	// the assistant, Maya named.
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Thanks!", "sessionId": "live-1", "stream": false}, nil)
	if r.Status != 200 || r.Body["message"] != "" || r.Body["status"] != "human" || r.Body["assignee"] != "Maya" || r.Body["messageId"] != nil {
		t.Errorf("chat while a person holds it: %d %v", r.Status, r.Body)
	}
	webtest.CheckChatSchema(t, "envelope while held", "ChatReply", r.Body)

	for _, text := range []string{"Let me check.", "Found it."} {
		if _, _, err := b.DB.AddHumanMessage(ctx, ten.ID, conv, maya, text); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, want := range []string{"Let me check.", "Found it."} {
		ev := s.next(t, want)
		if ev.Name != "message" || ev.Data["content"] != want {
			t.Fatalf("event = %+v, want %q", ev, want)
		}
		ids = append(ids, ev.ID)
	}
	if _, err := b.DB.MoveConversation(ctx, ten.ID, conv, parley.StatusBot, parley.Holder{}); err != nil {
		t.Fatal(err)
	}
	if ev := s.next(t, "the hand-back"); ev.Name != "status" || ev.Data["status"] != "bot" || ev.Data["assignee"] != nil {
		t.Fatalf("event = %+v, want status bot", ev)
	}
	s.none(t, "after the hand-back")
	for deadline := time.Now().Add(15 * time.Second); s.comments.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no keep-alive comment on an idle stream")
		}
	}

	t.Run("Resume", func(t *testing.T) {
		// Reconnected after the first message: the two after it, once
		// each, after the current status.
		s := openStream(t, b, path, map[string]string{"Last-Event-ID": first})
		if ev := s.next(t, "status"); ev.Name != "status" || ev.Data["status"] != "bot" {
			t.Fatalf("event = %+v, want status bot", ev)
		}
		for i, want := range []string{"Let me check.", "Found it."} {
			if ev := s.next(t, want); ev.Name != "message" || ev.Data["content"] != want || ev.ID != ids[i] {
				t.Fatalf("event = %+v, want %q with id %s", ev, want, ids[i])
			}
		}
		// The next event is the close's status: nothing was sent twice.
		if _, err := b.DB.MoveConversation(ctx, ten.ID, conv, parley.StatusClosed, parley.Holder{}); err != nil {
			t.Fatal(err)
		}
		if ev := s.next(t, "the close"); ev.Name != "status" || ev.Data["status"] != "closed" {
			t.Fatalf("event = %+v, want status closed", ev)
		}
		s.none(t, "after the close")

		// The query parameter, as the widget sends it after a page load;
		// the header wins over it.
		q := openStream(t, b, path+"&lastEventId="+ids[0], nil)
		q.next(t, "status")
		if ev := q.next(t, "after lastEventId"); ev.Data["content"] != "Found it." {
			t.Errorf("after lastEventId: %+v, want the last message", ev)
		}
		h := openStream(t, b, path+"&lastEventId=0", map[string]string{"Last-Event-ID": ids[1]})
		h.next(t, "status")
		if _, _, err := b.DB.AddHumanMessage(ctx, ten.ID, conv, maya, "Back again."); err != nil {
			t.Fatal(err)
		}
		h.next(t, "the takeover")
		if ev := h.next(t, "after Last-Event-ID"); ev.Data["content"] != "Back again." {
			t.Errorf("the header did not win: %+v", ev)
		}
	})
}
