package handlers

import (
	"cmp"
	"context"
	"crypto/rand"
	"sync/atomic"
	"time"

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
var errSessionBusy = &db.Error{Kind: db.KindConflict,
	Message: "Another message of this session is still being answered; retry shortly"}

// sessionLease is a turn's hold on its session.
type sessionLease struct {
	h                           *Handler
	ctx                         context.Context
	tenantID, sessionID, holder string
	released                    atomic.Bool
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
	deadline := time.Now().Add(cmp.Or(h.SessionWait, leaseWaitDefault))
	wait := leasePollFirst
	for {
		ok, state, err := h.DB.TryAcquireSessionLeaseFinding(ctx, tenantID, sessionID, holder, chatHistoryTurns-1)
		if err != nil {
			return nil, err
		}
		if ok {
			return &sessionLease{h: h, ctx: ctx, tenantID: tenantID, sessionID: sessionID, holder: holder, state: state}, nil
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

// release gives the lease back unless that was done already (with the
// reply, see db.AppendReplyReleasingLease). It runs with a context of its own:
// the visitor may have left.
func (l *sessionLease) release() {
	if l.released.Swap(true) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), leaseReleaseLimit)
	defer cancel()
	if err := l.h.DB.ReleaseSessionLease(rctx, l.tenantID, l.sessionID, l.holder); err != nil {
		l.h.Logger.Error("releasing a chat session lease", "tenant", l.tenantID, "err", err)
	}
}
