package handlers

import (
	"cmp"
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Session lease waits (see db.TryAcquireSessionLeaseFinding).
const (
	leaseWaitDefault  = 30 * time.Second
	leasePollFirst    = 50 * time.Millisecond
	leasePollMax      = 500 * time.Millisecond
	leaseReleaseLimit = 5 * time.Second
)

// errSessionBusy answers a message whose session stayed busy too long.
var errSessionBusy = &parley.Error{Kind: parley.KindConflict,
	Message: "Another message of this session is still being answered; retry shortly"}

// sessionLease is a turn's hold on its session.
type sessionLease struct {
	h                           *Handler
	ctx                         context.Context
	tenantID, sessionID, holder string
	ttl                         time.Duration
	released                    atomic.Bool
	mu                          sync.Mutex
	renewal                     *time.Timer // the next renewal, while the lease is held
	// state is the session as read right after the lease was taken: its
	// conversation (nil when none yet) and the turns before this one.
	state db.SessionState
}

// acquireSessionLease waits, polling with backoff, until this turn holds the
// lease of its session, so that the turns of one session run one after the
// other: the user message of the second lands after the first's answer.
// No connection or lock is held while waiting or while the model answers.
func (h *Handler) acquireSessionLease(ctx context.Context, tenantID, sessionID string) (*sessionLease, error) {
	holder := rand.Text()
	ttl := cmp.Or(h.SessionLease, db.SessionLeaseTTL)
	deadline := time.Now().Add(cmp.Or(h.SessionWait, leaseWaitDefault))
	wait := leasePollFirst
	for {
		ok, state, err := h.DB.TryAcquireSessionLeaseFinding(ctx, tenantID, sessionID, holder, ttl, chatHistoryTurns-1)
		if err != nil {
			return nil, err
		}
		if ok {
			l := &sessionLease{h: h, ctx: ctx, tenantID: tenantID, sessionID: sessionID, holder: holder, ttl: ttl, state: state}
			l.keepAlive()
			return l, nil
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, errSessionBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, leasePollMax)
	}
}

// keepAlive arranges the lease's next renewal, a third of its lifetime
// from now, unless it was released: a turn may outlast the lease (a slow
// model, several tool rounds) and must keep its session to the end. A timer,
// not a goroutine, waits for it.
func (l *sessionLease) keepAlive() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released.Load() {
		l.renewal = time.AfterFunc(l.ttl/3, l.renew)
	}
}

// renew extends the lease and arranges the next renewal. A failed renewal
// is retried at the next; a lease found lost is not renewed again.
func (l *sessionLease) renew() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), leaseReleaseLimit)
	defer cancel()
	held, err := l.h.DB.RenewSessionLease(ctx, l.tenantID, l.sessionID, l.holder, l.ttl)
	switch {
	case err != nil:
		l.h.Logger.Error("renewing a chat session lease", "tenant", l.tenantID, "err", err)
	case !held:
		if !l.released.Load() {
			l.h.Logger.Warn("a chat turn lost its session lease", "tenant", l.tenantID)
		}
		return
	}
	l.keepAlive()
}

// markReleased records that the lease was given back (with the reply, see
// db.AppendReplyReleasingLease) and stops its renewals, reporting whether it
// had been already.
func (l *sessionLease) markReleased() bool {
	was := l.released.Swap(true)
	l.mu.Lock()
	if l.renewal != nil {
		l.renewal.Stop()
	}
	l.mu.Unlock()
	return was
}

// release gives the lease back unless that was done already. It runs with
// a context of its own: the visitor may have left.
func (l *sessionLease) release() {
	if l.markReleased() {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), leaseReleaseLimit)
	defer cancel()
	if err := l.h.DB.ReleaseSessionLease(rctx, l.tenantID, l.sessionID, l.holder); err != nil {
		l.h.Logger.Error("releasing a chat session lease", "tenant", l.tenantID, "err", err)
	}
}
