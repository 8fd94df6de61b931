package public

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
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

// streamTyping is the data of a stream's `typing` event: the person who
// holds the conversation is typing a reply. The widget shows it until
// their message comes or db.TypingFor after the last such event.
type streamTyping struct {
	Name string `json:"name"`
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
// each change of status, as the instance's live.Hub wakes it. Once past
// the gates the stream takes the connection from net/http (chatStream.run):
// an idle stream is then a goroutine parked on its subscription and a
// ticker, and one parked on a read that tells when the visitor goes; it
// holds no buffer between events.
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
	if err := sub.Wait(ctx); err != nil {
		sub.Close()
		if errors.Is(err, live.ErrClosed) {
			return parley.Errorf(parley.KindUnavailable, "The server is restarting; reconnect shortly")
		}
		return nil // the visitor left
	}
	s := &chatStream{hub: h.Live, log: h.Log(c), tenantID: t.ID, conversationID: conversationID, after: after,
		keepAlive: h.StreamKeepAlive}
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultStreamKeepAlive
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentType, "text/event-stream")
	hdr.Set(echo.HeaderCacheControl, "no-store")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	conn, err := hijack(c)
	switch {
	case err == nil:
		// The stream goes on in a goroutine of its own, on the bare
		// connection, and the handler returns: net/http's connection
		// goroutine, its reader and its buffers are freed, so an idle
		// stream holds a small stack, the socket and this struct.
		s.conn = conn
		go s.run(sub)
		return nil
	case !errors.Is(err, http.ErrNotSupported):
		sub.Close()
		return nil // the visitor left
	}
	// No connection to take (HTTP/2, a recorder): the handler streams.
	defer sub.Close()
	c.Response().WriteHeader(http.StatusOK)
	s.out, s.flush = c.Response(), c.Response().Flush
	s.follow(ctx, sub, nil)
	return nil
}

// hijack takes the request's connection and writes the response's head on
// it, for a body that ends when the connection closes;
// http.ErrNotSupported when the connection cannot be taken.
func hijack(c echo.Context) (net.Conn, error) {
	conn, _, err := http.NewResponseController(c.Response()).Hijack()
	if err != nil {
		return nil, http.ErrNotSupported
	}
	hdr := c.Response().Header()
	hdr.Set("Connection", "close")
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = hdr.Write(&head)
	head.WriteString("\r\n")
	_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := conn.Write(head.Bytes()); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// run follows the stream on its taken connection until the visitor goes,
// a write fails or the hub closes; a one-byte read tells that the visitor
// went (the browser sends nothing more on an event stream).
func (s *chatStream) run(sub *live.Sub) {
	defer sub.Close()
	defer s.conn.Close()
	s.out = s.conn
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var b [1]byte
		_, _ = s.conn.Read(b[:])
		cancel() // also ends a read of the conversation under way
	}()
	s.follow(ctx, sub, nil)
}

// follow sends the retry delay, the conversation's state and the messages
// after the stream's last event, then what each wake finds, and a comment
// every keepAlive, until ctx ends, gone closes, a write fails or the hub
// closes.
func (s *chatStream) follow(ctx context.Context, sub *live.Sub, gone <-chan struct{}) {
	if !s.write("retry: "+strconv.Itoa(streamRetryMS)+"\n\n") || !s.sendNews(ctx) {
		return
	}
	keepAlive := time.NewTicker(s.keepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
			return
		case <-s.hub.Done():
			return // the server stops: the browser reconnects elsewhere
		case <-keepAlive.C:
			if !s.write(": keep-alive\n\n") {
				return
			}
		case <-sub.Wake:
			if !s.sendNews(ctx) {
				return
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

// chatStream is one open stream: where it is in its conversation, and
// where it writes.
type chatStream struct {
	hub            *live.Hub
	log            *slog.Logger
	tenantID       string
	conversationID string
	keepAlive      time.Duration
	after          int64         // the seq of the last message sent
	sent           *streamStatus // the last status sent
	typed          time.Time     // the end of the last typing signal sent

	conn  net.Conn  // the taken connection, when the stream has one
	out   io.Writer // conn, or the handler's response
	flush func()    // the response's flush; nil on a taken connection
}

// streamWriteTimeout bounds each write of a stream: a visitor whose
// browser stopped reading ends the stream rather than hold it.
const streamWriteTimeout = 10 * time.Second

// streamReadTimeout bounds a read of the conversation after a wake.
const streamReadTimeout = 10 * time.Second

// sendNews reads what changed in the conversation since the stream's last
// event and sends it: the status when it differs from the one sent, then
// the people's new messages, then a new signal of the person typing. It reports whether the stream goes on: a
// failed write or read, or a conversation gone (deleted), ends it (the
// browser reconnects).
func (s *chatStream) sendNews(ctx context.Context) bool {
	for {
		rctx, cancel := context.WithTimeout(ctx, streamReadTimeout)
		st, msgs, more, err := s.hub.Since(rctx, s.tenantID, s.conversationID, s.after)
		cancel()
		if err != nil {
			if ctx.Err() == nil && parley.ErrorKind(err) != parley.KindNotFound {
				s.log.Error("reading a conversation for its stream", "err", err)
			}
			return false
		}
		status := streamStatus{Status: strings.ToLower(st.Status), Assignee: st.Assignee}
		if s.sent == nil || s.sent.Status != status.Status || !sameName(s.sent.Assignee, status.Assignee) {
			if !s.event("", "status", status) {
				return false
			}
			s.sent = &status
		}
		for _, m := range msgs {
			ev := streamMessage{ID: m.ID, Role: parley.RoleHuman, Content: m.Content, AuthorName: m.AuthorName, Timestamp: m.CreatedAt.UTC()}
			if !s.event(strconv.FormatInt(m.Seq, 10), "message", ev) {
				return false
			}
			s.after = m.Seq
		}
		if !more {
			if st.Typing != nil && !st.TypingUntil.Equal(s.typed) {
				if !s.event("", "typing", streamTyping{Name: *st.Typing}) {
					return false
				}
				s.typed = st.TypingUntil
			}
			return true
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
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	}
	if _, err := io.WriteString(s.out, frame); err != nil {
		return false
	}
	if s.flush != nil {
		s.flush()
	}
	return true
}
