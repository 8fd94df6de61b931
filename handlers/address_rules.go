package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/parley/parley"
)

// AddressLimit is a per-address limit of one kind of public request: so
// many a minute and an hour from one address, in counters of its own
// (Kind names them), so that one kind does not use up another's. What
// names the requests in the 429's message.
type AddressLimit struct {
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
	ChatLimit = AddressLimit{Kind: "chat", What: "messages", PerMinute: 20, PerHour: 200}
	VoteLimit = AddressLimit{Kind: "vote", What: "votes", PerMinute: 60, PerHour: 600}
	FormLimit = AddressLimit{Kind: "form", What: "form posts", PerMinute: 10, PerHour: 100}
)

// RateDetails is the details payload of a per-address rate-limit error;
// its RetryAfter is also sent as the Retry-After header.
type RateDetails struct {
	RetryAfter int `json:"retryAfter"`
}

// Windows are the limit's counters for ip: a minute's and an hour's, in
// fixed windows kept in Postgres so that every instance shares them
// (db.HitWithin). Both counters are read first and a refused request
// counts against neither, so a client retrying while blocked is not
// blocked for longer; an accepted one adds one to each. The counts
// returned by that addition decide again (Verdict), so concurrent requests
// racing past the read still cannot exceed a limit. An IPv6 address
// counts as its /64, which one subscriber usually holds whole.
func (l AddressLimit) Windows(ip string) []parley.RateWindow {
	who := RateLimitAddr(ip)
	return []parley.RateWindow{
		{Key: l.Kind + ":ip:min:" + who, Length: time.Minute, Limit: l.PerMinute},
		{Key: l.Kind + ":ip:hour:" + who, Length: time.Hour, Limit: l.PerHour},
	}
}

// Verdict is the verdict on counts of windows made at now: nil, or the
// rate-limit error with the seconds to wait.
func (l AddressLimit) Verdict(windows []parley.RateWindow, now time.Time, counts []int, counted bool) error {
	var wait time.Duration
	for i, w := range windows {
		// Refused before counting: at the limit. Counted: past it (a race).
		if i < len(counts) && (!counted && counts[i] >= w.Limit || counted && counts[i] > w.Limit) {
			wait = max(wait, WindowLeft(now, w.Length))
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
		Details: RateDetails{RetryAfter: secs},
	}
}

// WindowLeft is the time from now to the end of the fixed window holding now.
func WindowLeft(now time.Time, window time.Duration) time.Duration {
	return now.Truncate(window).Add(window).Sub(now)
}

// RateLimitAddr is what a per-address limit counts against: the IPv4 address
// (IPv4-mapped IPv6 included), or the /64 of an IPv6 address. Anything that
// is not an address is used as given.
func RateLimitAddr(ip string) string {
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

// RetryAfterSeconds returns the wait a per-address rate-limit error asks
// for, for the Retry-After header.
func RetryAfterSeconds(err error) (int, bool) {
	var e *parley.Error
	if !errors.As(err, &e) || e.Kind != parley.KindRateLimited {
		return 0, false
	}
	d, ok := e.Details.(RateDetails)
	return d.RetryAfter, ok
}
