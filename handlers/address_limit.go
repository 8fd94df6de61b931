package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// addressCount is one public request's count against its address's limit
// (parley.AddressLimit): made once, by the handler at the limit's place in
// its gate order (verdict), or, for a request refused before that place,
// as the handler returns (settle). Every request is counted, whatever it
// is answered, and before its answer is written, so that a client learns
// nothing by racing its own requests. Chat, votes, form posts and the
// dashboard's test chat each count against their own limit.
type addressCount struct {
	h     *Handler
	c     echo.Context
	limit parley.AddressLimit

	counted bool
	version *int64 // the configuration version of the route's tenant
	err     error  // the verdict: nil, a rate-limit error, or the count's failure
}

// countAddress begins the request's count against limit; the handler
// defers settle.
func (h *Handler) countAddress(c echo.Context, limit parley.AddressLimit) *addressCount {
	return &addressCount{h: h, c: c, limit: limit}
}

// verdict counts the request, the first time, and returns the verdict:
// nil, or 429 (whose seconds to wait web's error handler sends as
// Retry-After). The count's statement also reads the configuration version
// of the route's tenant (tenantVersion), which the chat's configuration
// cache is checked against.
func (a *addressCount) verdict() error {
	if !a.counted {
		a.counted = true
		// The count runs to the end even when the client leaves.
		ctx := context.WithoutCancel(a.c.Request().Context())
		now := a.h.now()
		windows := a.limit.Windows(a.c.RealIP())
		counts, counted, version, err := a.h.DB.HitWithinForTenant(ctx, windows, now, a.c.Param("slug"))
		a.version, a.err = version, err
		if err == nil {
			a.err = a.limit.Verdict(windows, now, counts, counted)
		}
	}
	return a.err
}

// current says whether t, served from the chat's configuration cache, is
// what the database holds: its version is the one the count read
// (counting the request if it was not yet).
func (a *addressCount) current(t parley.Tenant) bool {
	_ = a.verdict()
	return a.version != nil && *a.version == t.ConfigVersion
}

// settle counts a request the handler answered before the limit's place:
// deferred by every handler that counts. A count that failed is logged;
// the request's own answer stands.
func (a *addressCount) settle() {
	if a.counted {
		return // the verdict was the handler's to answer
	}
	if err := a.verdict(); err != nil && parley.ErrorKind(err) != parley.KindRateLimited && a.c.Request().Context().Err() == nil {
		a.h.log(a.c).Error("counting a request against its address's limit", "err", err)
	}
}
