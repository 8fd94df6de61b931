package handlers

import (
	"context"
	"log/slog"
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
func (a *AddressCount) Verdict() error {
	if !a.counted {
		a.counted = true
		// The count runs to the end even when the client leaves.
		ctx := context.WithoutCancel(a.c.Request().Context())
		now := a.now()
		windows := a.limit.Windows(a.c.RealIP())
		counts, counted, version, err := a.store.HitWithinForTenant(ctx, windows, now, a.c.Param("slug"))
		a.version, a.err = version, err
		if err == nil {
			a.err = a.limit.Verdict(windows, now, counts, counted)
		}
	}
	return a.err
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
