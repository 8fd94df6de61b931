package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
)

// perAddressLimit is the public surface's per-address limit, as middleware
// on the routes that share its counters (chat messages, votes, form posts).
// It starts counting the request at once, beside the handler's first reads,
// and leaves the verdict in the request's scope: the handler takes it at its
// place in the gate order (after the tenant, origin, widget key and bot
// challenge gates), so a request those refuse still answers their error.
// Every request is counted, whatever it is answered, and before its answer
// is written (the middleware waits for the count), so that a client learns
// nothing by racing its own requests. The count overlaps the handler's
// tenant and segment reads: no round trip is added before the first byte.
func (s *Server) perAddressLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The count runs to the end even when the client leaves.
		ctx, ip, at, slug := context.WithoutCancel(c.Request().Context()), c.RealIP(), s.now(), c.Param("slug")
		type result struct {
			version *int64
			err     error
		}
		verdict := make(chan result, 1)
		go func() {
			v, err := addressLimit(ctx, s.DB, ip, at, slug)
			verdict <- result{v, err}
		}()
		var res result
		var once sync.Once
		wait := func() error {
			once.Do(func() { res = <-verdict })
			return res.err
		}
		// The statement also reads the configuration version of the
		// route's tenant, which the chat's cache is checked against.
		handlers.SetConfigVersion(c, func() *int64 {
			_ = wait()
			return res.version
		})
		handlers.SetAddressLimit(c, func() error {
			if err := wait(); err != nil {
				if secs, ok := retryAfterSeconds(err); ok {
					c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
				}
				return err
			}
			return nil
		})
		herr := next(c)
		if cerr := wait(); cerr != nil && parley.ErrorKind(cerr) != parley.KindRateLimited {
			handlers.LoggerOf(c, s.Logger).Error("counting a request against its address's limit", "err", cerr)
		}
		return herr
	}
}

// Per-address chat limits (spec, Limits).
const (
	chatPerMinute = 20
	chatPerHour   = 200
)

// chatRateDetails is the details payload of a per-address rate-limit error;
// its RetryAfter is also sent as the Retry-After header.
type chatRateDetails struct {
	RetryAfter int `json:"retryAfter"`
}

// addressLimit counts one chat message (or form post, or vote) from ip against 20 a minute and 200
// an hour, in fixed windows kept in Postgres so that every instance shares
// them. Both counters are read first and a refused message counts against
// neither, so a client retrying while blocked is not blocked for longer; an
// accepted message adds one to each. The counts returned by that addition
// decide again, so concurrent requests racing past the read still cannot
// exceed a limit. An IPv6 address counts as its /64, which one subscriber
// usually holds whole.
//
// It returns as well the configuration version of the tenant with slug (nil
// for none), read by the same statement (db.HitWithinForTenant).
func addressLimit(ctx context.Context, store *db.DB, ip string, now time.Time, slug string) (*int64, error) {
	who := rateLimitAddr(ip)
	windows := []db.Window{
		{Key: "chat:ip:min:" + who, Length: time.Minute, Limit: chatPerMinute},
		{Key: "chat:ip:hour:" + who, Length: time.Hour, Limit: chatPerHour},
	}
	counts, counted, version, err := store.HitWithinForTenant(ctx, windows, now, slug)
	if err != nil {
		return nil, err
	}
	var wait time.Duration
	for i, w := range windows {
		// Refused before counting: at the limit. Counted: past it (a race).
		if !counted && counts[i] >= w.Limit || counted && counts[i] > w.Limit {
			wait = max(wait, windowLeft(now, w.Length))
		}
	}
	if wait == 0 {
		return version, nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return version, &parley.Error{
		Kind: parley.KindRateLimited,
		Message: fmt.Sprintf("Too many messages: at most %d a minute and %d an hour from one address; retry in %d seconds",
			chatPerMinute, chatPerHour, secs),
		Details: chatRateDetails{RetryAfter: secs},
	}
}

// windowLeft is the time from now to the end of the fixed window holding now.
func windowLeft(now time.Time, window time.Duration) time.Duration {
	return now.Truncate(window).Add(window).Sub(now)
}

// rateLimitAddr is what a per-address limit counts against: the IPv4 address
// (IPv4-mapped IPv6 included), or the /64 of an IPv6 address. Anything that
// is not an address is used as given.
func rateLimitAddr(ip string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}

// retryAfterSeconds returns the wait a chat rate-limit error asks for, for
// the Retry-After header.
func retryAfterSeconds(err error) (int, bool) {
	var e *parley.Error
	if !errors.As(err, &e) || e.Kind != parley.KindRateLimited {
		return 0, false
	}
	d, ok := e.Details.(chatRateDetails)
	return d.RetryAfter, ok
}

// oauthLimit limits an endpoint of the authorization server to limit
// requests per window from one address (spec, Limits), counted in Postgres
// like chat's. A refused request is not counted, and gets 429 with
// Retry-After and the RFC 6749 error shape.
func (s *Server) oauthLimit(endpoint string, limit int, window time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			now := s.now()
			w := db.Window{Key: "oauth:" + endpoint + ":" + rateLimitAddr(c.RealIP()), Length: window, Limit: limit}
			counts, counted, err := s.DB.HitWithin(c.Request().Context(), []db.Window{w}, now)
			if err != nil {
				return err
			}
			if counted && counts[0] <= limit {
				return next(c)
			}
			secs := max(1, int(math.Ceil(windowLeft(now, window).Seconds())))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			c.Response().Header().Set("Cache-Control", "no-store")
			return c.JSON(http.StatusTooManyRequests, map[string]string{"error": "rate_limited",
				"error_description": fmt.Sprintf("Too many %s requests from this address: at most %d per %s; retry in %d seconds",
					endpoint, limit, windowName(window), secs)})
		}
	}
}

// windowName is a limit's window in words.
func windowName(d time.Duration) string {
	if d == time.Hour {
		return "hour"
	}
	return "minute"
}
