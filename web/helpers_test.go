package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// testKey is the secret key of test servers.
var testKey = strings.Repeat("ab", 32)

// bundle is a running test server on the test binary's database.
type bundle struct {
	t   *testing.T // the test that started the server, which mismatches with openapi.json fail
	srv *Server
	ts  *httptest.Server
	db  *db.DB
	box *auth.Box
}

// setup starts a Parley server on an httptest listener.
func setup(t *testing.T) *bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := testConfig(t)
	srv, err := NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return newBundle(t, srv, store)
}

// newBundle serves srv for t.
func newBundle(t *testing.T, srv *Server, store *db.DB) *bundle {
	t.Helper()
	key, _ := auth.ParseKey(testKey)
	box, _ := auth.NewBox(key)
	b := &bundle{t: t, srv: srv, db: store, box: box}
	b.serve()
	return b
}

// serve starts (or restarts) the test server. Its client, b.ts.Client(),
// which every request of the tests goes through, checks each exchange
// against openapi.json (see validatingTransport).
func (b *bundle) serve() {
	b.ts = httptest.NewServer(b.srv.Echo)
	b.t.Cleanup(b.ts.Close)
	c := b.ts.Client()
	c.Transport = &validatingTransport{tb: b.t, base: c.Transport}
}

var tenantSeq atomic.Int64

// tenant is a provisioned test tenant; OwnerEmail and Password are its
// owner's login, empty when it has none.
type tenant struct {
	auth.Provisioned
	Password string
}

// newTenant provisions a tenant with a unique slug on plan, without an owner
// login: most tests use its API token only. Tests that sign in to /admin use
// ownedTenant.
func (b *bundle) newTenant(t *testing.T, plan string) tenant {
	t.Helper()
	return b.provision(t, plan, false)
}

// ownedTenant is newTenant with an owner login (OwnerEmail, Password).
func (b *bundle) ownedTenant(t *testing.T, plan string) tenant {
	t.Helper()
	return b.provision(t, plan, true)
}

func (b *bundle) provision(t *testing.T, plan string, owner bool) tenant {
	t.Helper()
	slug := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1_000_000_000, tenantSeq.Add(1))
	np := parley.NewTenantInput{Slug: slug, Name: "Tenant " + slug, Plan: plan}
	if owner {
		np.OwnerEmail, np.OwnerPassword = "owner@"+slug+".test", "password-"+slug
	}
	p, err := auth.Provision(context.Background(), b.db, b.box, b.srv.Base.Passwords, np)
	if err != nil {
		t.Fatal(err)
	}
	return tenant{Provisioned: p, Password: np.OwnerPassword}
}

// token creates an ak_ token of tenant with the given scopes.
func (b *bundle) token(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	tok, nt := auth.NewToken(tenantID, "test", scopes, false)
	if _, err := b.db.CreateToken(context.Background(), nt); err != nil {
		t.Fatal(err)
	}
	return tok
}

// do sends a request with optional bearer token and JSON body and decodes the JSON answer.
func (b *bundle) do(t *testing.T, method, path, token string, body any) (int, map[string]any) {
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
	req, _ := http.NewRequest(method, b.ts.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && (raw[0] == '{') {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return resp.StatusCode, out
}

// hookResolver stands in for DNS in tests of outgoing calls (the machines
// that run them have no public DNS): it maps host names to one address each;
// any other name does not resolve.
type hookResolver map[string]string

func (r hookResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// withOutbound replaces the server's outbound guard with one resolving
// through hosts and, when exempt127, exempting 127.0.0.0/8. The listener is
// restarted so that no request sees the guard change under it.
func (b *bundle) withOutbound(t *testing.T, exempt127 bool, hosts hookResolver) {
	t.Helper()
	b.ts.Close()
	var allow []netip.Prefix
	if exempt127 {
		allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	b.srv.Base.Outbound = outbound.New(allow, hosts)
	b.srv.Public.Outbound = b.srv.Base.Outbound
	b.serve()
}

// logTo sends every log line of the server, its surfaces and its engine to
// logger.
func (b *bundle) logTo(logger *slog.Logger) {
	b.srv.Logger, b.srv.Base.Logger, b.srv.Base.Engine.Logger = logger, logger, logger
}

// atItsAddress makes the test server's address its base URL, in what
// every surface writes (the widget's endpoints, the embed code, the
// orchestrator's and the authorization server's addresses), for a browser
// that follows them.
func (b *bundle) atItsAddress() {
	b.srv.Base.BaseURL = b.ts.URL
}

// testConfig is a test server's configuration: the test database and key,
// then each of envs in turn, a later one winning. Passwords are hashed at
// bcrypt's lowest cost: the default cost takes most of a second a hash
// under the race detector.
func testConfig(tb testing.TB, envs ...map[string]string) Config {
	tb.Helper()
	// X-Forwarded-For is believed from the loopback, where every test
	// client connects from: each browser tab (browserTab) and each
	// adminClient sends an address of its own, so that one test's failed
	// sign-ins and chat messages do not throttle another's, in the test
	// binary's one database. A test may set its own proxies.
	env := map[string]string{"DATABASE_URL": dbtest.URL(), "PARLEY_SECRET_KEY": testKey,
		"PARLEY_TRUSTED_PROXIES": "127.0.0.1/32,::1/128"}
	for _, e := range envs {
		maps.Copy(env, e)
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] }, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.PasswordCost = bcrypt.MinCost
	return cfg
}

// chatEnv configures the managed model as the OpenAI-compatible server at
// modelURL, with the loopback exempt from the SSRF guard and trusted as a
// proxy (tests send X-Forwarded-For).
func chatEnv(modelURL string) map[string]string {
	return map[string]string{
		"PARLEY_LLM_PROVIDER": "openai", "PARLEY_LLM_BASE_URL": modelURL, "PARLEY_LLM_MODEL": "test-model",
		"PARLEY_SSRF_ALLOW": "127.0.0.1/32", "PARLEY_TRUSTED_PROXIES": "127.0.0.1/32",
	}
}

// earlierToday is d before now for a row a test needs on today (UTC, the
// day the dashboard counts in), where every such row of the test is at most
// span before now. In the first span after midnight, d shrinks in proportion
// to the part of the day gone by, so the rows stay on today, in the same
// order, whenever the suite runs.
func earlierToday(now time.Time, span, d time.Duration) time.Time {
	now = now.UTC()
	gone := now.Sub(now.Truncate(24 * time.Hour))
	if room := span + time.Minute; gone < room {
		d = time.Duration(float64(d) * float64(gone) / float64(room))
	}
	return now.Add(-d)
}

// TestEarlierToday: shortly after midnight the rows stay on today, in order;
// later in the day they are exactly d before now.
func TestEarlierToday(t *testing.T) {
	t.Parallel()
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{midnight.Add(time.Second), midnight.Add(90 * time.Second), midnight.Add(2 * time.Hour)} {
		last := now
		for _, d := range []time.Duration{time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
			got := earlierToday(now, 2*time.Hour, d)
			if got.Before(midnight) || !got.Before(last) {
				t.Errorf("at %s, %s before: %s, not on today after %s", now.Format(time.TimeOnly), d, got.Format(time.TimeOnly), last.Format(time.TimeOnly))
			}
			last = got
		}
	}
	if now := midnight.Add(3 * time.Hour); !earlierToday(now, 2*time.Hour, time.Hour).Equal(now.Add(-time.Hour)) {
		t.Error("at 03:00, an hour before is not 02:00")
	}
}
