// Package live tells the visitors' open streams (GET /chat/{slug}/stream)
// that their conversation changed: a person's message, a move of its state.
//
// Every change is announced on db.ConversationChannel in the transaction
// that makes it, so every Parley instance on the database hears it whichever
// instance made it. Each instance has one Hub: one connection LISTENing on
// the channel, and a map from the announced conversation to the streams
// this instance holds for it. A notification wakes those streams only; each
// then reads what is new from the tables itself (Conversation.Since). The
// notification carries nothing but which conversation changed, so a missed
// one loses nothing that the next read does not find: after the listening
// connection comes back, every stream is woken to read again.
package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley/db"
)

// ErrClosed is what Wait answers once the hub is closed: the server is
// stopping, and the stream ends (the browser reconnects to another
// instance).
var ErrClosed = errors.New("live: the hub is closed")

// Hub fans the database's conversation notifications out to this
// instance's streams. Its listening connection starts with the first
// subscription (or Start) and ends with Close.
type Hub struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	// Retry is how long the hub waits before it connects again after its
	// listening connection failed or dropped.
	Retry time.Duration

	mu      sync.Mutex
	subs    map[string]map[*Sub]struct{} // by "tenant id:conversation id", the channel's payload
	started bool
	closed  bool
	conn    *pgx.Conn     // the listening connection, while it is up
	ready   chan struct{} // closed once the first LISTEN is in place
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the listening loop returned
	cancel  context.CancelFunc
}

// Sub is one stream's subscription to one conversation. Wake receives a
// value (at most one waits) whenever the conversation may have changed.
type Sub struct {
	hub  *Hub
	key  string
	Wake chan struct{}
}

// New is the hub of an instance on pool's database; logger hears about the
// listening connection's failures.
func New(pool *pgxpool.Pool, logger *slog.Logger) *Hub {
	return &Hub{pool: pool, logger: logger, Retry: time.Second, subs: map[string]map[*Sub]struct{}{},
		ready: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{})}
}

// Start starts the listening connection, unless it runs already or the hub
// is closed. Subscribe starts it too: a server that no visitor streams
// from holds no connection for it.
func (h *Hub) Start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startLocked()
}

func (h *Hub) startLocked() {
	if h.started || h.closed {
		return
	}
	h.started = true
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.listen(ctx)
}

// Close ends the listening connection and every stream of the hub (their
// Done), and waits for the connection to close. It may be called more
// than once; a closed hub takes no new subscriber.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.stopped
		return
	}
	h.closed = true
	close(h.done)
	started := h.started
	if started {
		h.cancel()
	}
	h.mu.Unlock()
	if started {
		<-h.stopped
	} else {
		close(h.stopped)
	}
}

// Done is closed when the hub closes: every stream ends.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Subscribe registers a stream of the tenant's conversation and starts the
// listening connection if needed. The caller reads the conversation only
// after Wait, so that no change slips between its read and the LISTEN, and
// calls Close when the stream ends.
func (h *Hub) Subscribe(tenantID, conversationID string) *Sub {
	s := &Sub{hub: h, key: tenantID + ":" + conversationID, Wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startLocked()
	set := h.subs[s.key]
	if set == nil {
		set = map[*Sub]struct{}{}
		h.subs[s.key] = set
	}
	set[s] = struct{}{}
	return s
}

// Wait returns once the hub listens (a change committed from then on wakes
// the subscription), ErrClosed once it is closed, or ctx's error.
func (s *Sub) Wait(ctx context.Context) error {
	select {
	case <-s.hub.ready:
		select {
		case <-s.hub.done:
			return ErrClosed
		default:
			return nil
		}
	case <-s.hub.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the subscription.
func (s *Sub) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if set := h.subs[s.key]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(h.subs, s.key)
		}
	}
}

// Subscribers is the number of subscriptions open on the hub.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, set := range h.subs {
		n += len(set)
	}
	return n
}

// wake tells the subscriptions of key (every subscription when all) to
// read again; one waiting value is enough, so a busy stream is not queued
// more.
func (h *Hub) wake(key string, all bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !all {
		wakeAll(h.subs[key])
		return
	}
	for _, set := range h.subs {
		wakeAll(set)
	}
}

func wakeAll(set map[*Sub]struct{}) {
	for s := range set {
		select {
		case s.Wake <- struct{}{}:
		default:
		}
	}
}

// listen holds the listening connection until ctx ends, connecting again
// after a failure, Retry later each time.
func (h *Hub) listen(ctx context.Context) {
	defer close(h.stopped)
	first := true
	for {
		err := h.listenOnce(ctx, &first)
		if ctx.Err() != nil {
			return
		}
		h.logger.Warn("live updates: the listening connection failed; connecting again", "err", err, "retry_in", h.Retry)
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.Retry):
		}
	}
}

// listenOnce connects, LISTENs, wakes every subscription (a notification
// may have been missed while there was no connection) and relays the
// notifications until the connection fails or ctx ends.
func (h *Hub) listenOnce(ctx context.Context, first *bool) error {
	// A connection of its own, not one of the pool's: it is held for the
	// hub's life and receives notifications between queries.
	conn, err := pgx.ConnectConfig(ctx, h.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer func() {
		h.mu.Lock()
		h.conn = nil
		h.mu.Unlock()
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{db.ConversationChannel}.Sanitize()); err != nil {
		return err
	}
	h.mu.Lock()
	h.conn = conn
	h.mu.Unlock()
	if *first {
		*first = false
		close(h.ready)
	} else {
		h.wake("", true)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.wake(n.Payload, false)
	}
}

// ListenerPID is the server process id of the listening connection, 0
// while there is none (tests end it to see the hub come back).
func (h *Hub) ListenerPID() uint32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil {
		return 0
	}
	return h.conn.PgConn().PID()
}
