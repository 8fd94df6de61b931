package handlers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// AddressCount is one public request's count against its address's limit
// (AddressLimit): made once, by the handler at the limit's place in
// its gate order (verdict), or, for a request refused before that place,
// as the handler returns (settle). Every request is counted, whatever it
// is answered, and before its answer is written, so that a client learns
// nothing by racing its own requests. Chat, votes, form posts and the
// dashboard's test chat each count against their own limit.
type AddressCount struct {
	store  *db.DB
	now    func() time.Time
	logger *slog.Logger
	c      echo.Context
	limit  AddressLimit

	counted bool
	version *int64 // the configuration version of the route's tenant
	err     error  // the verdict: nil, a rate-limit error, or the count's failure

	// mayDefer: the handler can leave the count to its turn (LeaveToTurn);
	// deferred is the count so left (Defer), until its verdict is taken.
	mayDefer bool
	deferred *parley.Admission

	// anonymousID: the request's anonymous visitor is resolved with the
	// count (ResolveAlong, VerdictOn); visitor is it, of tenant visitorOf.
	anonymousID string
	visitor     *parley.Visitor
	visitorOf   string
}

// CountAddress begins c's count against limit, in store at the clock now
// (nil: the time), failures logged to logger; the handler defers Settle.
func CountAddress(c echo.Context, store *db.DB, now func() time.Time, logger *slog.Logger, limit AddressLimit) *AddressCount {
	if now == nil {
		now = time.Now
	}
	return &AddressCount{store: store, now: now, logger: logger, c: c, limit: limit}
}

// Verdict counts the request, the first time, and returns the Verdict:
// nil, or 429 (whose seconds to wait web's error handler sends as
// Retry-After). The count's statement also reads the configuration version
// of the route's tenant (tenantVersion), which the chat's configuration
// cache is checked against.
//
// A count left to the turn (Defer) is taken as the turn made it, or, when
// the turn did not make it (it failed, or never ran), made now.
func (a *AddressCount) Verdict() error {
	switch d := a.deferred; {
	case a.counted:
	case d != nil && d.Made:
		a.judge(d.Windows, d.Now, d.Counts, d.Counted, d.Current, nil)
	default:
		a.hitNow(func(ctx context.Context, windows []parley.RateWindow, now time.Time) ([]int, bool, *int64, error) {
			return a.store.HitWithinForTenant(ctx, windows, now, a.c.Param("slug"))
		})
	}
	return a.err
}

// hitNow makes the count now with hit, one of the store's counts of the
// address's windows; it runs to the end even when the client leaves.
func (a *AddressCount) hitNow(hit func(ctx context.Context, windows []parley.RateWindow, now time.Time) ([]int, bool, *int64, error)) {
	now := a.now()
	windows := a.limit.Windows(a.c.RealIP())
	counts, counted, version, err := hit(context.WithoutCancel(a.c.Request().Context()), windows, now)
	a.judge(windows, now, counts, counted, version, err)
}

// judge takes what the count, made at now, read: its verdict and the
// configuration version; an address refused is remembered (recentRefusals).
func (a *AddressCount) judge(windows []parley.RateWindow, now time.Time, counts []int, counted bool, version *int64, err error) {
	a.counted, a.deferred = true, nil
	a.version, a.err = version, err
	if err == nil {
		a.err = a.limit.Verdict(windows, now, counts, counted)
	}
	if secs, ok := RetryAfterSeconds(a.err); ok {
		recentRefusals.note(a.refusalKey(), now, now.Add(time.Duration(secs)*time.Second))
	}
}

// ResolveAlong has the count, when made on a tenant read (VerdictOn),
// resolve the request's anonymous visitor of anonymousID in its round trip
// (db.HitWithinResolving), for the handler to take (Visitor): only when the
// count admits the request on that tenant's configuration as it is, so a
// refused request writes no visitor. The handler asks for it only when
// nothing after the limit's place can refuse the request.
func (a *AddressCount) ResolveAlong(anonymousID string) { a.anonymousID = anonymousID }

// VerdictOn is Verdict, the request let in so far on t's configuration:
// the count resolves the anonymous visitor with it (ResolveAlong).
func (a *AddressCount) VerdictOn(t parley.Tenant) error {
	if a.counted || a.anonymousID == "" || a.deferred != nil {
		return a.Verdict()
	}
	var v *parley.Visitor
	a.hitNow(func(ctx context.Context, windows []parley.RateWindow, now time.Time) (counts []int, counted bool, version *int64, err error) {
		counts, counted, version, v, err = a.store.HitWithinResolving(ctx, windows, now, a.c.Param("slug"), t.ConfigVersion, t.ID, a.anonymousID)
		return counts, counted, version, err
	})
	if a.err == nil && v != nil {
		a.visitor, a.visitorOf = v, t.ID
	}
	return a.err
}

// Visitor is the anonymous visitor the count resolved (VerdictOn) for
// tenant tenantID, nil when it resolved none for it.
func (a *AddressCount) Visitor(tenantID string) *parley.Visitor {
	if a.visitorOf != tenantID {
		return nil
	}
	return a.visitor
}

// LeaveToTurn says the handler can leave the count to its turn: made with
// the session's lease, in the turn's first round trip, instead of in one
// of its own before it (Defer).
func (a *AddressCount) LeaveToTurn() { a.mayDefer = true }

// Deferrable says the count may be left to the turn: the handler can
// (LeaveToTurn), it is not made yet, and this instance has not refused the
// address lately. An address past its limit thus costs one statement a
// request, as before the turn, not the turn's first round trip.
func (a *AddressCount) Deferrable() bool {
	return a.mayDefer && !a.counted && a.deferred == nil && !recentRefusals.refused(a.refusalKey(), a.now())
}

// Defer leaves the count to the turn, the request let in on the tenant's
// configuration at version: the turn's parley.Admission. The gates after the
// limit's place are passed before it is made, so a refusal of one of
// them must yield to the limit's (Over).
func (a *AddressCount) Defer(version int64) *parley.Admission {
	a.deferred = &parley.Admission{Windows: a.limit.Windows(a.c.RealIP()), Now: a.now(), Slug: a.c.Param("slug"), Version: version}
	return a.deferred
}

// Deferred is the count left to the turn (Defer), nil when none is.
func (a *AddressCount) Deferred() *parley.Admission { return a.deferred }

// Over is err unless the count left to the turn, made now, refuses the
// request: the limit's refusal wins over a later gate's.
func (a *AddressCount) Over(err error) error {
	if a.deferred == nil {
		return err
	}
	if verdict := a.Verdict(); parley.ErrorKind(verdict) == parley.KindRateLimited {
		return verdict
	}
	return err
}

// refusalKey names the address's counters of this limit in recentRefusals.
func (a *AddressCount) refusalKey() string {
	return a.limit.Kind + ":" + RateLimitAddr(a.c.RealIP())
}

// recentRefusals are the addresses this instance refused lately, until
// their refusal ends (its Retry-After): their requests are counted before
// the turn, not with it (Deferrable).
var recentRefusals = refusals{until: map[string]time.Time{}}

// maxRefusals bounds recentRefusals; past it, expired entries go, then
// new ones are not kept (their requests are counted with the turn).
const maxRefusals = 10_000

type refusals struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (r *refusals) note(key string, now, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.until) >= maxRefusals {
		for k, t := range r.until {
			if !t.After(now) { // ended, as refused says
				delete(r.until, k)
			}
		}
		if len(r.until) >= maxRefusals {
			return
		}
	}
	r.until[key] = until
}

func (r *refusals) refused(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	until, ok := r.until[key]
	if ok && !now.Before(until) {
		delete(r.until, key)
		return false
	}
	return ok
}

// Current says whether t, served from the chat's configuration cache, is
// what the database holds: its version is the one the count read
// (counting the request if it was not yet).
func (a *AddressCount) Current(t parley.Tenant) bool {
	_ = a.Verdict()
	return a.version != nil && *a.version == t.ConfigVersion
}

// Settle counts a request the handler answered before the limit's place:
// deferred by every handler that counts. A count that failed is logged;
// the request's own answer stands.
func (a *AddressCount) Settle() {
	if a.counted {
		return // the verdict was the handler's to answer
	}
	if err := a.Verdict(); err != nil && parley.ErrorKind(err) != parley.KindRateLimited && a.c.Request().Context().Err() == nil {
		LoggerOf(a.c, a.logger).Error("counting a request against its address's limit", "err", err)
	}
}
