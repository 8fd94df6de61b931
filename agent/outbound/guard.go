// Package outbound is the service's one way out: the SSRF-guarded HTTP client
// every outgoing request goes through (webhooks, corpus sync, MCP, the reply
// endpoint, the context webhook) and the signature of the requests the
// service sends to tenants' endpoints.
package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// MaxRedirects is how many redirects an outgoing request follows.
const MaxRedirects = 5

// Resolver looks up a host's addresses; *net.Resolver is one. Tests replace it
// because the machines that run them have no public DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard makes outgoing HTTP requests (webhooks, corpus sync, MCP) that can
// only reach public addresses. The address is checked where it is dialed, for
// every connection, redirects included, so a name that resolves to a public
// address when a URL is registered and to a private one later (DNS
// rebinding) still cannot reach inside. Refused: private, loopback,
// link-local (cloud metadata 169.254.169.254 among them), CGNAT, multicast,
// documentation and other special-purpose IPv4 ranges, and every IPv6
// address outside global unicast (::1, fc00::/7, fe80::/10, IPv4-mapped) plus
// the special-purpose ranges inside it. Any port is allowed: the address is
// what keeps requests outside. Environment proxies are ignored, since a proxy
// would dial on our behalf, unchecked.
type Guard struct {
	allow     []netip.Prefix // exempt from the guard
	guard     *ssrf.Guardian
	resolver  Resolver
	dialer    *net.Dialer
	transport *http.Transport
	// wrap, when set, wraps the transport of every client (WrapTransport).
	wrap func(http.RoundTripper) http.RoundTripper
}

// WrapTransport has every client built from here on send through
// wrap(transport): the traces' client spans. The guard stays below it, at
// dial time.
func (g *Guard) WrapTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	g.wrap = wrap
}

// New builds the guarded client factory. allow lists prefixes exempt
// from the guard (PARLEY_SSRF_ALLOW, for tests and private deployments);
// resolver nil means the system resolver.
func New(allow []netip.Prefix, resolver Resolver) *Guard {
	var v4, v6 []netip.Prefix
	for _, p := range allow {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	g := &Guard{
		allow:    append([]netip.Prefix(nil), allow...),
		guard:    ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...)),
		resolver: resolver,
	}
	g.dialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	g.transport = &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the guard
		DialContext:           g.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return g
}

// Client returns an HTTP client whose whole exchange, body included, is
// bounded by timeout. Clients share one connection pool.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	return g.client(g.transport, timeout)
}

// PooledClient is Client with a connection pool of its own that keeps up to
// idlePerHost idle connections to each host, where the shared pool keeps 4:
// for callers that send many requests at once to the same host (webhook
// deliveries, 100 at a time), which would otherwise close most connections
// after one request and dial a new one for the next. The guard is the same.
func (g *Guard) PooledClient(timeout time.Duration, idlePerHost int) *http.Client {
	t := g.transport.Clone()
	t.MaxIdleConnsPerHost = idlePerHost
	t.MaxIdleConns = max(t.MaxIdleConns, idlePerHost)
	return g.client(t, timeout)
}

func (g *Guard) client(transport *http.Transport, timeout time.Duration) *http.Client {
	var rt http.RoundTripper = transport
	if g.wrap != nil {
		rt = g.wrap(transport)
	}
	return &http.Client{
		Transport: rt,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return &Error{Kind: Refused, Host: req.URL.Hostname(),
					Reason: fmt.Sprintf("redirect to a %s: URL (only http and https are followed)", req.URL.Scheme)}
			}
			if len(via) >= MaxRedirects {
				return &Error{Kind: Unreachable, Host: via[0].URL.Hostname(),
					Reason: fmt.Sprintf("more than %d redirects", MaxRedirects)}
			}
			return nil
		},
	}
}

// CheckURL refuses, before anything is sent, a URL that is not absolute
// http(s) or whose host resolves to any non-public address; it is for
// registration-time checks (a webhook URL). The dial-time guard still
// applies to every request.
func (g *Guard) CheckURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return &Error{Kind: Refused, Reason: "not an absolute http or https URL"}
	}
	host := u.Hostname()
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return classifyDial(ctx, host, err)
	}
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			return &Error{Kind: Refused, Host: host, Err: err}
		}
	}
	return nil
}

// checkAddr is the guard's verdict on one address, IPv4-mapped IPv6
// addresses judged as the IPv4 address they carry.
func (g *Guard) checkAddr(a netip.Addr) error {
	return g.guard.SafeAddr(a.Unmap())
}

// control is the last check, on the socket about to connect: whatever
// resolved the name, this is the address that is dialed.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Kind: Refused, Err: err}
	}
	if err := g.checkAddr(ap.Addr()); err != nil {
		return &Error{Kind: Refused, Err: err}
	}
	return nil
}

func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, err
}

// dial resolves addr's host itself, skips refused addresses and dials the
// others in turn by IP, so the address checked is the address dialed.
func (g *Guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: Unreachable, Host: addr, Err: err}
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, classifyDial(ctx, host, err)
	}
	var refused, firstErr error
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			if refused == nil {
				refused = err
			}
			continue
		}
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if firstErr == nil {
		return nil, &Error{Kind: Refused, Host: host, Err: refused}
	}
	return nil, classifyDial(ctx, host, firstErr)
}

// Kind says why an outgoing request failed.
type Kind int

// Ways an outgoing request fails.
const (
	// Refused: the destination is not allowed (a private or reserved
	// address, or a redirect to a scheme other than http and https).
	Refused Kind = iota + 1
	// Unreachable: DNS failure, connection refused or reset, TLS
	// failure, too many redirects.
	Unreachable
	// Timeout: no complete answer in time.
	Timeout
)

// Error is a failed outgoing request. Its message is safe to show
// to the tenant who gave the URL: it never names the address a refused
// host resolved to.
type Error struct {
	Kind   Kind
	Host   string
	Reason string // overrides the kind's standard wording
	Err    error  // the underlying error, for logs
}

func (e *Error) Error() string {
	host := e.Host
	if host == "" {
		host = "the host"
	}
	switch e.Kind {
	case Refused:
		if e.Reason != "" {
			return "refused: " + e.Reason
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return fmt.Sprintf("refused: %s is a private or reserved address", host)
		}
		// The same words as for a name that does not resolve (handlers):
		// a tenant learns nothing of which internal names exist.
		return fmt.Sprintf("refused: %s is not a public internet address", host)
	case Timeout:
		return fmt.Sprintf("timed out waiting for %s", host)
	default:
		reason := e.Reason
		if reason == "" {
			reason = DescribeFailure(e.Err)
		}
		return fmt.Sprintf("cannot reach %s: %s", host, reason)
	}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Classify turns an error of a guarded client's request, or of
// reading its response body, into an *Error (nil for nil). host
// names the destination when the error itself does not.
func Classify(err error, host string) *Error {
	if err == nil {
		return nil
	}
	if h := urlErrorHost(err); h != "" {
		host = h
	}
	if IsTimeout(err) {
		return &Error{Kind: Timeout, Host: host, Err: err}
	}
	var oe *Error
	if errors.As(err, &oe) {
		c := *oe
		if c.Host == "" {
			c.Host = host
		}
		return &c
	}
	return &Error{Kind: Unreachable, Host: host, Err: err}
}

func urlErrorHost(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			return u.Hostname()
		}
	}
	return ""
}

func classifyDial(ctx context.Context, host string, err error) error {
	var oe *Error
	if errors.As(err, &oe) && oe.Kind == Refused {
		return &Error{Kind: Refused, Host: host, Err: oe.Err}
	}
	if ctx.Err() != nil || IsTimeout(err) {
		return &Error{Kind: Timeout, Host: host, Err: err}
	}
	return &Error{Kind: Unreachable, Host: host, Err: err}
}

// IsTimeout reports whether err is a deadline that passed or a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// DescribeFailure says in a few words why a connection failed.
func DescribeFailure(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case err == nil:
		return "request failed"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &certErr):
		return "its TLS certificate is not valid"
	case errors.As(err, &recordErr):
		return "TLS handshake failed (is it an https server?)"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
