package handlers

import (
	"cmp"
	"context"
	"crypto/rand"
	"time"

	"github.com/parley/parley/db"
)

// Session lease waits (see db.TryAcquireSessionLease).
const (
	leaseWaitDefault  = 30 * time.Second
	leasePollFirst    = 50 * time.Millisecond
	leasePollMax      = 500 * time.Millisecond
	leaseReleaseLimit = 5 * time.Second
)

// errSessionBusy answers a message whose session stayed busy too long.
var errSessionBusy = &db.Error{Kind: db.KindConflict,
	Message: "Another message of this session is still being answered; retry shortly"}

// acquireSessionLease waits, polling with backoff, until this turn holds the
// lease of its session, so that the turns of one session run one after the
// other: the user message of the second lands after the first's answer.
// No connection or lock is held while waiting or while the model answers.
// It returns the release function, which runs with a context of its own
// (the visitor may have left) and is safe to call once.
func (h *Handler) acquireSessionLease(ctx context.Context, tenantID, sessionID string) (func(), error) {
	holder := rand.Text()
	deadline := time.Now().Add(cmp.Or(h.SessionWait, leaseWaitDefault))
	wait := leasePollFirst
	for {
		ok, err := h.DB.TryAcquireSessionLease(ctx, tenantID, sessionID, holder)
		if err != nil {
			return nil, err
		}
		if ok {
			break
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
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseLimit)
		defer cancel()
		if err := h.DB.ReleaseSessionLease(rctx, tenantID, sessionID, holder); err != nil {
			h.Logger.Error("releasing a chat session lease", "tenant", tenantID, "err", err)
		}
	}
	return release, nil
}
