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

// perAddressLimit is the public surface's per-address limit of one kind
// of request (chatLimit, voteLimit, formLimit: each counts apart), as
// middleware. It starts counting the request at once, beside the handler's first reads,
// and leaves the verdict in the request's scope: the handler takes it at its
// place in the gate order (after the tenant, origin, widget key and bot
// challenge gates), so a request those refuse still answers their error.
// Every request is counted, whatever it is answered, and before its answer
// is written (the middleware waits for the count), so that a client learns
// nothing by racing its own requests. The count overlaps the handler's
// tenant and segment reads: no round trip is added before the first byte.
func (s *Server) perAddressLimit(l addressLimit) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc { return s.addressLimited(next, l, false) }
}

// perAddressLimitHanded is perAddressLimit(chatLimit) for chat messages, whose count
// the handler may hand to the turn (handlers.SetAddressGuard): the store
// then makes it in the turn's first round trip (parley.TurnGuard, db.OpenTurn)
// rather than in one of its own before it. So it does not start at once:
// it starts when the handler first waits for the verdict or the
// configuration version, when the handler starts it, or after the handler
// returns, unless the turn took it.
func (s *Server) perAddressLimitHanded(next echo.HandlerFunc) echo.HandlerFunc {
	return s.addressLimited(next, chatLimit, true)
}

func (s *Server) addressLimited(next echo.HandlerFunc, l addressLimit, handed bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The count runs to the end even when the client leaves.
		a := &addressCount{store: s.DB, ctx: context.WithoutCancel(c.Request().Context()), now: s.now(),
			limit: l, windows: l.windows(c.RealIP()), slug: c.Param("slug"), done: make(chan struct{})}
		if !handed {
			a.start()
		}
		// The statement also reads the configuration version of the
		// route's tenant, which the chat's cache is checked against.
		handlers.SetConfigVersion(c, func() *int64 {
			_ = a.wait()
			return a.version
		})
		handlers.SetAddressLimit(c, func() error {
			if err := a.wait(); err != nil {
				if secs, ok := retryAfterSeconds(err); ok {
					c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
				}
				return err
			}
			return nil
		})
		if handed {
			handlers.SetAddressGuard(c, a.guard, a.start)
		}
		herr := next(c)
		// A count handed to the turn runs in the request's context: one cut
		// short by a client that left is not an error of the server's.
		if cerr := a.wait(); cerr != nil && parley.ErrorKind(cerr) != parley.KindRateLimited && c.Request().Context().Err() == nil {
			handlers.LoggerOf(c, s.Logger).Error("counting a request against its address's limit", "err", cerr)
		}
		return herr
	}
}

// addressCount is one request's count against its address's limit: made
// on its own (start), or handed to the turn (guard) and settled by the
// store; done is closed once the verdict is known.
type addressCount struct {
	store   *db.DB
	ctx     context.Context
	now     time.Time
	limit   addressLimit
	windows []db.Window
	slug    string

	mu      sync.Mutex
	started bool // counting on its own, or handed to the turn
	done    chan struct{}
	version *int64 // the configuration version of slug's tenant
	err     error  // the verdict: nil, a rate-limit error, or the count's failure
}

// start counts the request on its own unless it is counted already.
func (a *addressCount) start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		return
	}
	a.started = true
	go func() {
		counts, counted, version, err := a.store.HitWithinForTenant(a.ctx, a.windows, a.now, a.slug)
		a.settle(counts, counted, version, err)
	}()
}

// wait returns the verdict, counting the request first if nobody did.
func (a *addressCount) wait() error {
	a.start()
	<-a.done
	return a.err
}

// settle records what was counted, and the verdict.
func (a *addressCount) settle(counts []int, counted bool, version *int64, err error) {
	a.version, a.err = version, err
	if err == nil {
		a.err = a.limit.verdict(a.windows, a.now, counts, counted)
	}
	close(a.done)
}

// guard hands the count to a turn whose gates ran on configuration version
// version: the store claims it when it sends the turn's first round trip,
// unless it was counted on its own by then.
func (a *addressCount) guard(version int64) *parley.TurnGuard {
	return &parley.TurnGuard{Windows: a.windows, Now: a.now, Slug: a.slug, ConfigVersion: version,
		Claim: func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.started {
				return false
			}
			a.started = true
			return true
		},
		Settle: a.settle}
}

// addressLimit is a per-address limit of one kind of public request: so
// many a minute and an hour from one address, in counters of its own
// (Kind names them), so that one kind does not use up another's. What
// names the requests in the 429's message.
type addressLimit struct {
	Kind, What         string
	PerMinute, PerHour int
}

// The per-address limits. Chat messages: the spec's 20 a minute and 200
// an hour (Limits); the dashboard's test chat counts as chat. Votes
// (POST /chat/{slug}/feedback) and form posts (POST /form/{slug}) have
// their own, so that a visitor who votes on every answer, or sends a form,
// keeps their messages: a vote is one small write, so 60 a minute and 600
// an hour; a form post is a lead and a webhook, which a person sends a few
// of, so 10 a minute and 100 an hour.
var (
	chatLimit = addressLimit{Kind: "chat", What: "messages", PerMinute: 20, PerHour: 200}
	voteLimit = addressLimit{Kind: "vote", What: "votes", PerMinute: 60, PerHour: 600}
	formLimit = addressLimit{Kind: "form", What: "form posts", PerMinute: 10, PerHour: 100}
)

// chatRateDetails is the details payload of a per-address rate-limit error;
// its RetryAfter is also sent as the Retry-After header.
type chatRateDetails struct {
	RetryAfter int `json:"retryAfter"`
}

// windows are the limit's counters for ip: a minute's and an hour's, in
// fixed windows kept in Postgres so that every instance shares them
// (db.HitWithin). Both counters are read first and a refused request
// counts against neither, so a client retrying while blocked is not
// blocked for longer; an accepted one adds one to each. The counts
// returned by that addition decide again (verdict), so concurrent requests
// racing past the read still cannot exceed a limit. An IPv6 address
// counts as its /64, which one subscriber usually holds whole.
func (l addressLimit) windows(ip string) []db.Window {
	who := rateLimitAddr(ip)
	return []db.Window{
		{Key: l.Kind + ":ip:min:" + who, Length: time.Minute, Limit: l.PerMinute},
		{Key: l.Kind + ":ip:hour:" + who, Length: time.Hour, Limit: l.PerHour},
	}
}

// verdict is the verdict on counts of windows made at now: nil, or the
// rate-limit error with the seconds to wait.
func (l addressLimit) verdict(windows []db.Window, now time.Time, counts []int, counted bool) error {
	var wait time.Duration
	for i, w := range windows {
		// Refused before counting: at the limit. Counted: past it (a race).
		if i < len(counts) && (!counted && counts[i] >= w.Limit || counted && counts[i] > w.Limit) {
			wait = max(wait, windowLeft(now, w.Length))
		}
	}
	if wait == 0 {
		return nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &parley.Error{
		Kind: parley.KindRateLimited,
		Message: fmt.Sprintf("Too many %s: at most %d a minute and %d an hour from one address; retry in %d seconds",
			l.What, l.PerMinute, l.PerHour, secs),
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
