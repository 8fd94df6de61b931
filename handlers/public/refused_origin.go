package public

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/origins"
)

// errOriginNotAllowed is the origin gate's refusal (tenantGates): the one
// refusal whose site the tenant's overview lists (noteRefusal).
var errOriginNotAllowed = &parley.Error{Kind: parley.KindForbidden, Message: "Origin not allowed"}

// RefusalEvery is how often this instance writes one refused origin of a
// tenant: the refusals in between are added up and written with the next
// one after it.
const RefusalEvery = time.Minute

const (
	// refusalWrites bounds one tenant's writes of refused origins per
	// RefusalEvery on this instance, whatever the origins (a caller can
	// forge any Origin header): the rest wait, counted, or are dropped.
	refusalWrites = 10
	// refusalKeys bounds the origins this instance keeps counts of.
	refusalKeys = 10000
	// refusalKeep is how long a count waiting for its origin's next
	// refusal is kept.
	refusalKeep = time.Hour
)

// noteRefusal records, when err is the origin gate's refusal, the site
// that was refused for t's overview ("Sites refused"), at most once per
// RefusalEvery per origin (refusalThrottle). A failure to record is
// logged: the request is refused all the same.
func (h *Handler) noteRefusal(c echo.Context, t parley.Tenant, err error) {
	if err != errOriginNotAllowed {
		return
	}
	hdr := c.Request().Header
	origin, ok := refusedOrigin(hdr.Get(echo.HeaderOrigin), hdr.Get("Referer"))
	if !ok {
		return
	}
	now := h.Clock()
	n := h.refusals.take(t.ID, origin, now)
	if n == 0 {
		return
	}
	h.Log(c).Info("widget refused on a site the tenant has not allowed", "tenant", t.Slug, "origin", origin, "refusals", n)
	if err := h.DB.NoteRefusedOrigin(c.Request().Context(), t.ID, origin, n, now); err != nil {
		h.Log(c).Error("recording a refused origin", "tenant", t.Slug, "err", err)
	}
}

// refusedOrigin is the origin of the page a request came from (its Origin
// header, else its Referer's), normalized: scheme://host[:port], the host
// lower-cased without a trailing dot, the port only when it is not the
// scheme's default, no path. ok is false for a page the gate could not
// check (no http(s) page, "null", credentials, too long).
func refusedOrigin(origin, referer string) (string, bool) {
	page := strings.TrimSpace(origin)
	if page == "" {
		page = strings.TrimSpace(referer)
	}
	if page == "" || len(page) > 2048 {
		return "", false
	}
	host, port, ok := pageHost(page)
	if !ok {
		return "", false
	}
	scheme := strings.ToLower(page[:strings.Index(page, ":")])
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if (scheme == "https" && port == 443) || (scheme == "http" && port == 80) {
		addr = strings.TrimSuffix(addr, ":"+strconv.Itoa(port))
	}
	out := scheme + "://" + addr
	if len(out) > origins.MaxOrigin {
		return "", false
	}
	return out, true
}

// refusalThrottle counts, per tenant and origin, the refusals this
// instance saw since it last wrote that origin, so that a site refused on
// every page view costs one write a minute, and bounds a tenant's writes
// and the origins counted.
type refusalThrottle struct {
	mu      sync.Mutex
	origins map[string]*refusalCount
	tenants map[string]*refusalWindow
	swept   time.Time
}

// refusalCount is one origin's: when it was last written, and the
// refusals seen since.
type refusalCount struct {
	written time.Time
	pending int
}

// refusalWindow is a tenant's writes since start.
type refusalWindow struct {
	start  time.Time
	writes int
}

// take counts a refusal of origin for the tenant at now and returns how
// many refusals to write now: 0 while the origin was written less than
// RefusalEvery ago (or the tenant's writes are spent), else the refusals
// counted since, this one included.
func (r *refusalThrottle) take(tenantID, origin string, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.origins == nil {
		r.origins, r.tenants = map[string]*refusalCount{}, map[string]*refusalWindow{}
	}
	if now.Sub(r.swept) >= RefusalEvery || len(r.origins) >= refusalKeys {
		r.sweep(now)
	}
	key := tenantID + " " + origin
	e := r.origins[key]
	if e == nil {
		if len(r.origins) >= refusalKeys {
			return 0
		}
		e = &refusalCount{}
		r.origins[key] = e
	}
	e.pending++
	if !e.written.IsZero() && now.Sub(e.written) < RefusalEvery {
		return 0
	}
	w := r.tenants[tenantID]
	if w == nil || now.Sub(w.start) >= RefusalEvery {
		w = &refusalWindow{start: now}
		r.tenants[tenantID] = w
	}
	if w.writes >= refusalWrites {
		return 0
	}
	w.writes++
	n := e.pending
	e.written, e.pending = now, 0
	return n
}

// sweep forgets the origins with nothing waiting whose last write is past
// RefusalEvery, the counts waiting longer than refusalKeep, and the
// tenants' past windows.
func (r *refusalThrottle) sweep(now time.Time) {
	for k, e := range r.origins {
		if age := now.Sub(e.written); (e.pending == 0 && age >= RefusalEvery) || age >= refusalKeep {
			delete(r.origins, k)
		}
	}
	for k, w := range r.tenants {
		if now.Sub(w.start) >= RefusalEvery {
			delete(r.tenants, k)
		}
	}
	r.swept = now
}
