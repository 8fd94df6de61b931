package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley/parley"
)

// Session lease waits (see db.OpenTurn).
const (
	// SessionLeaseTTL bounds a session lease: a holder that crashed blocks the
	// session for at most this long, or until its instance's heartbeat goes
	// stale when it runs under one (Engine.Instance), whichever comes first.
	// A live holder renews its lease while its turn runs (RenewSessionLease).
	SessionLeaseTTL = 2 * time.Minute

	leaseWaitDefault  = 30 * time.Second
	leasePollFirst    = 50 * time.Millisecond
	leasePollMax      = 500 * time.Millisecond
	leaseReleaseLimit = 5 * time.Second
)

// sessionLease is a turn's hold on its session.
type sessionLease struct {
	e                           *Engine
	log                         *slog.Logger
	ctx                         context.Context
	tenantID, sessionID, holder string
	ttl                         time.Duration
	released                    atomic.Bool
	mu                          sync.Mutex
	renewal                     *time.Timer // the next renewal, while the lease is held
	// state is the session as read right after the lease was taken: its
	// conversation (nil when none yet) and the turns before this one.
	state parley.SessionState
}

// takeSessionLease waits, polling with backoff, until this turn holds the
// lease of its session, so that the turns of one session run one after the
// other: the user message of the second lands after the first's answer.
// No connection or lock is held while waiting or while the model answers.
// start is the conversation the turn starts should the session have none,
// which the lease counts against the monthly limit, and message the
// visitor's message, stored with the lease when it can be (Store.OpenTurn).
func (e *Engine) takeSessionLease(ctx context.Context, log *slog.Logger, start *parley.ConversationStart, message string) (*sessionLease, error) {
	tenantID, sessionID := start.TenantID, start.SessionID
	holder := rand.Text()
	ttl := cmp.Or(e.SessionLease, SessionLeaseTTL)
	deadline := time.Now().Add(cmp.Or(e.SessionWait, leaseWaitDefault))
	wait := leasePollFirst
	for {
		ok, state, err := e.Store.OpenTurn(ctx, *start, message, holder, e.Instance, ttl, HistoryTurns-1)
		if a := start.Admit; a != nil {
			start.Admit = nil // the address's count is made once, with the first try
			if err == nil && a.Made && !a.Admitted {
				return nil, ErrNotAdmitted
			}
		}
		if err != nil {
			return nil, err
		}
		if ok {
			l := &sessionLease{e: e, log: log, ctx: ctx, tenantID: tenantID, sessionID: sessionID, holder: holder, ttl: ttl, state: state}
			l.keepAlive()
			return l, nil
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, ErrSessionBusy
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
	held, err := l.e.Store.RenewSessionLease(ctx, l.tenantID, l.sessionID, l.holder, l.ttl)
	switch {
	case err != nil:
		l.log.Error("renewing a session lease", "err", err)
	case !held:
		if !l.released.Load() {
			l.log.Warn("a turn lost its session lease")
		}
		return
	}
	l.keepAlive()
}

// markReleased records that the lease was given back (with the turn, see
// db.SaveTurn) and stops its renewals, reporting whether it
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
	if err := l.e.Store.ReleaseSessionLease(rctx, l.tenantID, l.sessionID, l.holder); err != nil {
		l.log.Error("releasing a session lease", "err", err)
	}
}
