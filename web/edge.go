package web

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/jsonbody"
)

// What the edge refuses before a handler runs: text PostgreSQL cannot store,
// bodies that are not the JSON an endpoint reads, and bodies that do not
// arrive.

// cleanText reports whether s is valid UTF-8 without NUL bytes: text that
// PostgreSQL's text type can hold.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// textError is the 400 naming the part of a request that is not clean text.
func textError(what string) error {
	return parley.Errorf(parley.KindInvalid, "%s must be valid UTF-8 text without NUL bytes", what)
}

// requestTextError checks the decoded path, every query parameter and every
// header value of req, and names the first that is not clean text.
func requestTextError(req *http.Request) error {
	if !cleanText(req.URL.Path) {
		return textError("the path")
	}
	if err := valuesTextError("query parameter", req.URL.Query()); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(req.Header)) {
		for _, v := range req.Header[name] {
			if !cleanText(v) {
				return textError("header " + name)
			}
		}
	}
	return nil
}

// valuesTextError names the first of values (query parameters or form
// fields, kind saying which) whose name or a value is not clean text.
func valuesTextError(kind string, values url.Values) error {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if !cleanText(name) {
			return textError("a " + kind + " name")
		}
		for _, v := range values[name] {
			if !cleanText(v) {
				return textError(fmt.Sprintf("%s %q", kind, name))
			}
		}
	}
	return nil
}

// checkText refuses, with 400, a request whose path, query or headers hold a
// NUL byte or invalid UTF-8, before any of it reaches the database. JSON
// bodies are checked where they are decoded (jsonbody.DecodeObject), forms
// by checkFormText.
func checkText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := requestTextError(c.Request()); err != nil {
			return err
		}
		return next(c)
	}
}

// checkFormText refuses, with 400, a dashboard form whose fields hold a NUL
// byte or invalid UTF-8. It runs after the CSRF check, which parses the form
// of every post; a request whose form is not parsed has none to check.
func checkFormText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if form := c.Request().Form; form != nil {
			if err := valuesTextError("form field", form); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// requireJSON refuses, with 415, a body that is not sent as JSON to an
// endpoint that reads JSON (jsonbody.RequireJSON). The public endpoints
// that count a request against its address's limit check it themselves,
// once the count began, so that a request refused for its type counts too.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := jsonbody.RequireJSON(c.Request()); err != nil {
			return err
		}
		return next(c)
	}
}

// bodyDeadline gives a request's body d to arrive, counted from the end of
// its headers: a client that sends headers and then stalls is cut off (its
// read fails, handlers answer 400 and the connection is closed) instead of
// holding the connection forever. net/http lifts the deadline once the body
// has been read to its end (when it starts watching the connection for the
// client going away), so an answer streamed for minutes (SSE) is not cut by
// it; there is no write timeout for the same reason.
func bodyDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if d > 0 && req.ContentLength != 0 && req.Body != nil && req.Body != http.NoBody {
				// A writer without deadlines (a test recorder) has nothing to bound.
				_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(d))
			}
			return next(c)
		}
	}
}

// HTTPServer is the HTTP server of Parley on addr: headers must arrive
// within 10 s and bodies within BodyTimeout (bodyDeadline); there is no
// whole-request read or write timeout, which would cut streamed answers.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.Echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
}

// limitListener caps the connections open at once from one client address,
// so that one address cannot hold thousands of idle or stalled connections.
// A connection over the cap is closed as soon as it is accepted. Addresses
// in exempt (the trusted proxies, through which many clients come) are not
// counted.
type limitListener struct {
	net.Listener
	max    int
	exempt []netip.Prefix

	mu   sync.Mutex
	open map[netip.Addr]int
}

// LimitConns wraps ln with the per-address cap of the configuration (none
// when it is 0).
func (s *Server) LimitConns(ln net.Listener) net.Listener {
	if s.Config.MaxConnsPerAddress <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: s.Config.MaxConnsPerAddress, exempt: s.Config.TrustedProxies, open: map[netip.Addr]int{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tcp, ok := c.RemoteAddr().(*net.TCPAddr)
		if !ok {
			return c, nil
		}
		addr := tcp.AddrPort().Addr().Unmap()
		if slices.ContainsFunc(l.exempt, func(p netip.Prefix) bool { return p.Contains(addr) }) {
			return c, nil
		}
		l.mu.Lock()
		if l.open[addr] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.open[addr]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(addr) }}, nil
	}
}

func (l *limitListener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

// countedConn gives its place back to its limitListener when closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
