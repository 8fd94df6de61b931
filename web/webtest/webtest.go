// Package webtest runs a real Parley server for tests: the test binary's
// database (dbtest), an httptest listener whose client checks every exchange
// against web/openapi.json, tenants, tokens and a signed-in dashboard client,
// the headless browser, and the fake peers at the edges (the model, webhook
// receivers, MCP servers, the voice orchestrator). Each surface's tests under
// handlers/ use it to test their handlers as integrators reach them; web's
// own tests keep what crosses surfaces.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
)

// SecretKey is the secret key of test servers.
var SecretKey = strings.Repeat("ab", 32)

// Bundle is a running test server on the test binary's database.
type Bundle struct {
	T   *testing.T // the test that started the server, which mismatches with openapi.json fail
	Srv *web.Server
	TS  *httptest.Server
	DB  *db.DB
	Box *auth.Box
}

// Setup starts a Parley server on an httptest listener.
func Setup(t *testing.T) *Bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := Config(t)
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return NewBundle(t, srv, store)
}

// NewBundle serves srv for t.
func NewBundle(t *testing.T, srv *web.Server, store *db.DB) *Bundle {
	t.Helper()
	key, _ := auth.ParseKey(SecretKey)
	box, _ := auth.NewBox(key)
	b := &Bundle{T: t, Srv: srv, DB: store, Box: box}
	b.serve()
	// Registered after the listener's Close, so run before it: the open
	// chat streams end, which Close would otherwise wait for.
	t.Cleanup(srv.Live.Close)
	return b
}

// SecondInstance is another Parley instance beside b, as a second server
// behind a load balancer would be: b's configuration, the same database
// through a pool of its own, and its own live hub (its own LISTEN), so that
// what crosses instances goes through PostgreSQL only.
func (b *Bundle) SecondInstance(t *testing.T) *Bundle {
	t.Helper()
	store, err := db.Open(context.Background(), dbtest.URL(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	srv, err := web.NewServer(b.Srv.Config, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return NewBundle(t, srv, store)
}

// serve starts (or restarts) the test server. Its client, b.ts.Client(),
// which every request of the tests goes through, checks each exchange
// against openapi.json (see ValidatingTransport).
func (b *Bundle) serve() {
	b.TS = httptest.NewServer(b.Srv.Echo)
	b.T.Cleanup(b.TS.Close)
	c := b.TS.Client()
	c.Transport = &ValidatingTransport{TB: b.T, Base: c.Transport}
}

// Patience bounds a test's wait for something the machine's load may delay
// (a request in flight reaching its lock, a stored message, a span): the
// wait ends as soon as the thing is seen, so the bound costs nothing when
// the test passes. It is long because a fresh CI machine building and
// vetting beside the tests ran a request's first pass (the OpenAPI router
// of the validating client, the race detector) four times slower than
// this one, past an earlier 10 s bound.
const Patience = 60 * time.Second

var TenantSeq atomic.Int64

// Tenant is a provisioned test tenant; OwnerEmail and Password are its
// owner's login, empty when it has none.
type Tenant struct {
	auth.Provisioned
	Password string
}

// NewTenant provisions a tenant with a unique slug on plan, without an owner
// login: most tests use its API token only. Tests that sign in to /admin use
// OwnedTenant.
func (b *Bundle) NewTenant(t *testing.T, plan string) Tenant {
	t.Helper()
	return b.provision(t, plan, false)
}

// OwnedTenant is NewTenant with an owner login (OwnerEmail, Password).
func (b *Bundle) OwnedTenant(t *testing.T, plan string) Tenant {
	t.Helper()
	return b.provision(t, plan, true)
}

func (b *Bundle) provision(t *testing.T, plan string, owner bool) Tenant {
	t.Helper()
	slug := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1_000_000_000, TenantSeq.Add(1))
	np := parley.NewTenantInput{Slug: slug, Name: "Tenant " + slug, Plan: plan}
	if owner {
		np.OwnerEmail, np.OwnerPassword = "owner@"+slug+".test", "password-"+slug
	}
	p, err := auth.Provision(context.Background(), b.DB, b.Box, b.Srv.Base.Passwords, np)
	if err != nil {
		t.Fatal(err)
	}
	return Tenant{Provisioned: p, Password: np.OwnerPassword}
}

// Token creates an ak_ token of tenant with the given scopes.
func (b *Bundle) Token(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	tok, nt := auth.NewToken(tenantID, "test", scopes, false)
	if _, err := b.DB.CreateToken(context.Background(), nt); err != nil {
		t.Fatal(err)
	}
	return tok
}

// Do sends a request with optional bearer token and JSON body and decodes the JSON answer.
func (b *Bundle) Do(t *testing.T, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	status, raw := b.send(t, method, path, token, body)
	var out map[string]any
	if len(raw) > 0 && (raw[0] == '{') {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return status, out
}

// RawDo is Do returning the raw body.
func (b *Bundle) RawDo(t *testing.T, method, path, token string, body any) (int, string) {
	t.Helper()
	status, raw := b.send(t, method, path, token, body)
	return status, string(raw)
}

// send sends a request with an optional bearer token and body (a string
// sent as it is, anything else as JSON) and returns the status and the body.
func (b *Bundle) send(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(v)
	default:
		buf, _ := json.Marshal(v)
		r = strings.NewReader(string(buf))
	}
	req, _ := http.NewRequest(method, b.TS.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// HookResolver stands in for DNS in tests of outgoing calls (the machines
// that run them have no public DNS): it maps host names to one address each;
// any other name does not resolve.
type HookResolver map[string]string

func (r HookResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// WithOutbound replaces the server's outbound guard with one resolving
// through hosts and, when exempt127, exempting 127.0.0.0/8. The listener is
// restarted so that no request sees the guard change under it.
func (b *Bundle) WithOutbound(t *testing.T, exempt127 bool, hosts HookResolver) {
	t.Helper()
	b.TS.Close()
	var allow []netip.Prefix
	if exempt127 {
		allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	b.Srv.Base.Outbound = outbound.New(allow, hosts)
	b.Srv.Public.Outbound = b.Srv.Base.Outbound
	b.serve()
}

// LogTo sends every log line of the server, its surfaces and its engine to
// logger.
func (b *Bundle) LogTo(logger *slog.Logger) {
	b.Srv.Logger, b.Srv.Base.Logger, b.Srv.Base.Engine.Logger = logger, logger, logger
}

// AtItsAddress makes the test server's address its base URL, in what
// every surface writes (the widget's endpoints, the embed code, the
// orchestrator's and the authorization server's addresses), for a browser
// that follows them.
func (b *Bundle) AtItsAddress() {
	b.Srv.Base.BaseURL = b.TS.URL
}

// AtOwnAddress is AtItsAddress for a browser that chats: the base URL is a
// front of the test's own, a reverse proxy to the test server that gives
// every request it forwards one address of the test's (NewChatAddr) in
// X-Forwarded-For. A widget's requests go out of another origin's page
// without that header (it would have them preflighted), so without the
// front every browser test of the binary would share the loopback's
// per-address chat limits. The widget's script and settings still come
// from the server itself.
func (b *Bundle) AtOwnAddress() {
	target, err := url.Parse(b.TS.URL)
	if err != nil {
		b.T.Fatal(err)
	}
	addr := NewChatAddr()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Set("X-Forwarded-For", addr)
		},
		FlushInterval: -1, // event streams as they are written
	}
	front := httptest.NewServer(proxy)
	b.T.Cleanup(front.Close)
	b.Srv.Base.BaseURL = front.URL
}

// Config is a test server's configuration: the test database and key,
// then each of envs in turn, a later one winning. Passwords are hashed at
// bcrypt's lowest cost: the default cost takes most of a second a hash
// under the race detector.
func Config(tb testing.TB, envs ...map[string]string) web.Config {
	tb.Helper()
	// X-Forwarded-For is believed from the loopback, where every test
	// client connects from: each browser tab (BrowserTab) and each
	// AdminClient sends an address of its own, so that one test's failed
	// sign-ins and chat messages do not throttle another's, in the test
	// binary's one database. A test may set its own proxies.
	// A test server that runs (Server.Run) stops at once: the drain, for a
	// load balancer to notice, is the drain's own test's.
	env := map[string]string{"DATABASE_URL": dbtest.URL(), "PARLEY_SECRET_KEY": SecretKey,
		"PARLEY_TRUSTED_PROXIES": "127.0.0.1/32,::1/128", "PARLEY_DRAIN_DELAY": "0"}
	for _, e := range envs {
		maps.Copy(env, e)
	}
	cfg, err := web.LoadConfig(func(k string) string { return env[k] }, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.PasswordCost = bcrypt.MinCost
	return cfg
}

// ChatEnv configures the managed model as the OpenAI-compatible server at
// modelURL, with the loopback exempt from the SSRF guard and trusted as a
// proxy (tests send X-Forwarded-For).
func ChatEnv(modelURL string) map[string]string {
	return map[string]string{
		"PARLEY_LLM_PROVIDER": "openai", "PARLEY_LLM_BASE_URL": modelURL, "PARLEY_LLM_MODEL": "test-model",
		"PARLEY_SSRF_ALLOW": "127.0.0.1/32", "PARLEY_TRUSTED_PROXIES": "127.0.0.1/32",
	}
}

// EarlierToday is d before now for a row a test needs on today (UTC, the
// day the dashboard counts in), where every such row of the test is at most
// span before now. In the first span after midnight, d shrinks in proportion
// to the part of the day gone by, so the rows stay on today, in the same
// order, whenever the suite runs.
func EarlierToday(now time.Time, span, d time.Duration) time.Time {
	now = now.UTC()
	gone := now.Sub(now.Truncate(24 * time.Hour))
	if room := span + time.Minute; gone < room {
		d = time.Duration(float64(d) * float64(gone) / float64(room))
	}
	return now.Add(-d)
}

// LogBuffer collects JSON log lines, safe for concurrent writers.
type LogBuffer struct {
	Mu  sync.Mutex
	Buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.Buf.Write(p)
}

// Lines returns the logged lines whose msg is msg.
func (l *LogBuffer) Lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.Mu.Lock()
	defer l.Mu.Unlock()
	var out []map[string]any
	for _, raw := range bytes.Split(l.Buf.Bytes(), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(raw, &line); err != nil {
			t.Fatalf("log line %q is not JSON: %v", raw, err)
		}
		if line["msg"] == msg {
			out = append(out, line)
		}
	}
	return out
}
