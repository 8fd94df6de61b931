package public

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/live"
	"github.com/parley/parley/handlers"
)

// DefaultStreamKeepAlive is how often an idle stream sends a comment, so
// that proxies and load balancers that cut silent connections keep it.
const DefaultStreamKeepAlive = 25 * time.Second

// streamRetryMS is the reconnection delay the stream asks browsers for.
const streamRetryMS = 3000

// streamMessage is the data of a stream's `message` event: a person's
// message.
type streamMessage struct {
	ID         string    `json:"id"`
	Role       string    `json:"role"`
	Content    string    `json:"content"`
	AuthorName string    `json:"authorName"`
	Timestamp  time.Time `json:"timestamp"`
}

// streamStatus is the data of a stream's `status` event.
type streamStatus struct {
	Status   string  `json:"status"`
	Assignee *string `json:"assignee"`
}

// conversationNotFound answers a stream request whose token, tenant or
// session is wrong, alike, so that none can be told from another.
func conversationNotFound() error {
	return parley.Errorf(parley.KindNotFound, "Conversation not found")
}

// StreamChat answers GET /chat/{slug}/stream: the server-sent events of a
// session's conversation, for the widget while a person is awaited or
// answers. It passes chat's gates (plan, origin, widget key; no count: a
// stream sends nothing to the model), checks the session's stream token
// (chat's streamToken) in constant time, then sends the conversation's
// status and the messages people wrote after the last event id the browser
// saw (Last-Event-ID, else lastEventId), and from then on each new one and
// each change of status, as the instance's live.Hub wakes it. The stream
// is one goroutine (the request's) parked on its subscription, a ticker and
// the request's end: it holds no buffer between events.
func (h *Handler) StreamChat(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := h.DB.TenantBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	if err := tenantGates(c, t, c.QueryParam("widgetKey")); err != nil {
		return err
	}
	sessionID, token := c.QueryParam("sessionId"), c.QueryParam("token")
	if strings.TrimSpace(sessionID) == "" || token == "" {
		return handlers.Invalid("sessionId and token are required")
	}
	after, err := lastEventID(c)
	if err != nil {
		return err
	}
	if !validStreamToken(h.StreamKey, t.ID, sessionID, token) {
		return conversationNotFound()
	}
	conversationID, err := h.Live.Conversation(ctx, t.ID, sessionID)
	if err != nil {
		return err
	}
	sub := h.Live.Subscribe(t.ID, conversationID)
	defer sub.Close()
	if err := sub.Wait(ctx); err != nil {
		if errors.Is(err, live.ErrClosed) {
			return parley.Errorf(parley.KindUnavailable, "The server is restarting; reconnect shortly")
		}
		return nil // the visitor left
	}
	s := &chatStream{c: c, tenantID: t.ID, conversationID: conversationID, after: after}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentType, "text/event-stream")
	hdr.Set(echo.HeaderCacheControl, "no-store")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Response().WriteHeader(200)
	if !s.write("retry: " + strconv.Itoa(streamRetryMS) + "\n\n") {
		return nil
	}
	if err := s.sendNews(h); err != nil {
		return err
	}
	every := h.StreamKeepAlive
	if every <= 0 {
		every = DefaultStreamKeepAlive
	}
	keepAlive := time.NewTicker(every)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.Live.Done():
			return nil // the server stops: the browser reconnects elsewhere
		case <-keepAlive.C:
			if !s.write(": keep-alive\n\n") {
				return nil
			}
		case <-sub.Wake:
			if err := s.sendNews(h); err != nil {
				return err
			}
		}
	}
}

// lastEventID is the id of the last event the browser saw: header
// Last-Event-ID (its reconnection), else query lastEventId (the widget's
// first connection after a page load), else 0.
func lastEventID(c echo.Context) (int64, error) {
	v := c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		v = c.QueryParam("lastEventId")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, &parley.Error{Kind: parley.KindInvalid, Message: "Invalid lastEventId: it must be the id of an event of this stream",
			Details: parley.FieldErrors{"lastEventId": "must be a whole number, the id of the last message event received"}}
	}
	return n, nil
}

// chatStream is one open stream: where it is in its conversation.
type chatStream struct {
	c              echo.Context
	tenantID       string
	conversationID string
	after          int64         // the seq of the last message sent
	sent           *streamStatus // the last status sent
}

// sendNews reads what changed in the conversation since the stream's last
// event and sends it: the status when it differs from the one sent, then
// the people's new messages. A write to a visitor who left ends nothing
// here: the request's context does. A conversation gone (deleted) ends the
// stream.
func (s *chatStream) sendNews(h *Handler) error {
	ctx := s.c.Request().Context()
	for {
		st, msgs, more, err := h.Live.Since(ctx, s.tenantID, s.conversationID, s.after)
		if err != nil {
			if ctx.Err() != nil || parley.ErrorKind(err) == parley.KindNotFound {
				return nil
			}
			h.Log(s.c).Error("reading a conversation for its stream", "err", err)
			return nil // the stream ends; the browser reconnects
		}
		status := streamStatus{Status: strings.ToLower(st.Status), Assignee: st.Assignee}
		if s.sent == nil || s.sent.Status != status.Status || !sameName(s.sent.Assignee, status.Assignee) {
			if !s.event("", "status", status) {
				return nil
			}
			s.sent = &status
		}
		for _, m := range msgs {
			ev := streamMessage{ID: m.ID, Role: parley.RoleHuman, Content: m.Content, AuthorName: m.AuthorName, Timestamp: m.CreatedAt.UTC()}
			if !s.event(strconv.FormatInt(m.Seq, 10), "message", ev) {
				return nil
			}
			s.after = m.Seq
		}
		if !more {
			return nil
		}
	}
}

func sameName(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// event writes one event (with its id when id is not empty) and flushes it.
func (s *chatStream) event(id, name string, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		return false
	}
	var frame strings.Builder
	frame.Grow(len(b) + len(id) + len(name) + 24)
	if id != "" {
		frame.WriteString("id: " + id + "\n")
	}
	frame.WriteString("event: " + name + "\ndata: ")
	frame.Write(b)
	frame.WriteString("\n\n")
	return s.write(frame.String())
}

// write sends frame at once; false when the visitor is gone.
func (s *chatStream) write(frame string) bool {
	w := s.c.Response()
	if _, err := w.Write([]byte(frame)); err != nil {
		return false
	}
	w.Flush()
	return true
}
