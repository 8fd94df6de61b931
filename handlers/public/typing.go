package public

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/jsonbody"
)

// chatTypingRequest is the body of POST /chat/{slug}/typing.
type chatTypingRequest struct {
	SessionID string `json:"sessionId"`
	Token     string `json:"token"`
	WidgetKey string `json:"widgetKey"`
}

// typingSlack is how much sooner than db.TypingEvery a signal of the same
// session is still taken: the widget's timer is not exact.
const typingSlack = 500 * time.Millisecond

// typingThrottle remembers, per tenant and session, when the database last
// kept a visitor's typing signal sent to this instance, so that signals sent
// faster than db.TypingEvery cost no round trip (the store drops those of
// several instances too). Entries older than that are swept now and then.
type typingThrottle struct {
	mu    sync.Mutex
	last  map[string]time.Time
	swept time.Time
}

// due reports whether a signal of key at now goes to the database: none
// of key was recorded less than db.TypingEvery before.
func (t *typingThrottle) due(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	if now.Sub(t.swept) > time.Minute {
		for k, at := range t.last {
			if now.Sub(at) >= db.TypingEvery {
				delete(t.last, k)
			}
		}
		t.swept = now
	}
	at, ok := t.last[key]
	return !ok || now.Sub(at) >= db.TypingEvery-typingSlack
}

// recorded remembers that the database kept a signal of key at now.
func (t *typingThrottle) recorded(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	t.last[key] = now
}

// SignalTyping answers POST /chat/{slug}/typing: the widget tells that its
// visitor is typing, at most every db.TypingEvery while they type, for the
// dashboard's conversation page ("The visitor is typing…"). It passes the
// stream's gates (plan, origin, widget key; no count: a signal writes at
// most once every few seconds per conversation, whatever the rate it is
// sent at) and checks the session's stream token in constant time: a wrong
// token, another tenant's session or one without a conversation is 404,
// alike. The answer is 204 No Content; a signal is kept only while the
// conversation waits for a person or a person holds it, and one sooner
// than db.TypingEvery after the last is dropped, both answered 204 too
// (the visitor may type while the state changes: nothing is wrong).
func (h *Handler) SignalTyping(c echo.Context) error {
	if err := jsonbody.RequireJSON(c.Request()); err != nil {
		return err
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var req chatTypingRequest
	if errs := jsonbody.DecodeFields(raw, &req); len(errs) > 0 {
		return errs.Err()
	}
	errs := parley.FieldErrors{}
	if strings.TrimSpace(req.SessionID) == "" {
		errs.Add("sessionId", "is required")
	}
	if req.Token == "" {
		errs.Add("token", "is required")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	t, err := h.chatTenant(c, req.WidgetKey)
	if err != nil {
		return err
	}
	if !validStreamToken(h.StreamKey, t.ID, req.SessionID, req.Token) {
		return conversationNotFound()
	}
	key, now := t.ID+":"+req.SessionID, h.Clock()
	if !h.typing.due(key, now) {
		return c.NoContent(http.StatusNoContent)
	}
	recorded, err := h.DB.SignalVisitorTyping(c.Request().Context(), t.ID, req.SessionID)
	if err != nil {
		return err
	}
	if recorded {
		h.typing.recorded(key, now)
	}
	return c.NoContent(http.StatusNoContent)
}
