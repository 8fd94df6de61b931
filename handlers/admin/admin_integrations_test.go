package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// setupLoopback is setup with the loopback exempt from the SSRF guard, so
// that the dashboard and the engine may call test servers.
func setupLoopback(t *testing.T) *webtest.Bundle {
	t.Helper()
	store := dbtest.New(t)
	srv, err := web.NewServer(webtest.Config(t, map[string]string{"PARLEY_SSRF_ALLOW": "127.0.0.1/32"}), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return webtest.NewBundle(t, srv, store)
}

// contextHook is a tenant's context webhook in tests: it answers with
// status and body, and keeps whether each call's signature verified with
// the tenant's visitor signing key.
type contextHook struct {
	mu       sync.Mutex
	status   int
	body     string
	signedOK []bool
	ts       *httptest.Server
}

func newContextHook(t *testing.T, key []byte) *contextHook {
	h := &contextHook{status: 200, body: `{"context": "Premium customer since 2021"}`}
	h.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("X-Service-Signature")
		ts, _, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
		sec, _ := strconv.ParseInt(ts, 10, 64)
		var q map[string]any
		ok := r.Header.Get("X-Service-Event") == "visitor.context" && sig == outbound.SignBody(key, time.Unix(sec, 0), raw) &&
			json.Unmarshal(raw, &q) == nil && q["verified"] == false && q["visitorId"] == nil
		h.mu.Lock()
		h.signedOK = append(h.signedOK, ok)
		status, body := h.status, h.body
		h.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(h.ts.Close)
	return h
}

func (h *contextHook) answer(status int, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, body
}

func (h *contextHook) calls() []bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.signedOK...)
}

// closedURL is an http address on the loopback where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/hook"
}

// TestAdminIntegrationsBrowser: the Integrations page in Chromium. Its
// cards tell each connection's state; "Send test" makes the context
// webhook's real signed call and shows the answer, a failing status or the
// connection's failure in words; "Discover tools" on the MCP page lists the
// server's tools with the names the assistant calls them by, or the error.
func TestAdminIntegrationsBrowser(t *testing.T) {
	t.Parallel()
	b := setupLoopback(t)
	ten := b.OwnedTenant(t, "builder")
	stored, err := b.DB.TenantByID(context.Background(), ten.ID)
	webtest.MustStep(t, "reading the tenant", err)
	key, err := b.Box.Open(stored.VisitorSigningKey)
	webtest.MustStep(t, "opening the signing key", err)
	hook := newContextHook(t, key)
	b.Exec(t, `UPDATE tenants SET visitor_context_url = $2, visitor_auth_mode = 'jwt' WHERE id = $1`, ten.ID, hook.ts.URL+"/context")
	server := webtest.NewTenantMCP(t, 0)
	b.SetMCP(t, ten.ID, server.URL, "mcp-key-for-discover", 3)

	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.MustStep(t, "resizing to a phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/integrations")
	if cur := webtest.MustRunStep(ctx, t, "nav", chromedp.Evaluate[string](`(document.querySelector('nav[aria-label=Main] [aria-current=page]') || {}).textContent || ''`)); cur != "Integrations" {
		t.Errorf("current nav item %q, want Integrations", cur)
	}
	for id, want := range map[string]string{
		"integration-verification": "Signed visitor token (JWT)",
		"integration-context":      hook.ts.URL + "/context",
		"integration-mcp":          "Up to 3 of its tools are offered. An API key is sent",
	} {
		if got := webtest.MustRunStep(ctx, t, id, chromedp.Text(chromedp.ID(id))); !strings.Contains(got, want) {
			t.Errorf("card %s says %q, want %q in it", id, got, want)
		}
	}

	sendTest := func(state string) string {
		t.Helper()
		webtest.MustStep(t, "clearing the result", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
			`document.getElementById('context-test-result').removeAttribute('data-state')`)))
		webtest.MustStep(t, "sending a test", chromedp.Do(ctx, chromedp.Click(chromedp.ID("send-context-test"))))
		webtest.WaitUntil(ctx, t, "the test's result", `(document.getElementById('context-test-result') || {}).dataset?.state === '`+state+`'`)
		return webtest.MustRunStep(ctx, t, "result", chromedp.Text(chromedp.ID("context-test-result")))
	}
	if got := sendTest("succeeded"); !strings.Contains(got, "HTTP 200 in") || !strings.Contains(got, "27 characters of context") ||
		!strings.Contains(got, "Premium customer since 2021") {
		t.Errorf("result %q", got)
	}
	if calls := hook.calls(); len(calls) != 1 || !calls[0] {
		t.Errorf("context webhook calls (signature verified): %v", calls)
	}
	hook.answer(500, "database down")
	if got := sendTest("failed"); !strings.Contains(got, "HTTP 500") || !strings.Contains(got, "database down") {
		t.Errorf("result of a 500: %q", got)
	}
	hook.answer(200, `{"ctx": 1}`)
	if got := sendTest("failed"); !strings.Contains(got, `not a JSON object with a "context" string`) {
		t.Errorf("result of a wrong answer: %q", got)
	}
	b.Exec(t, `UPDATE tenants SET visitor_context_url = $2 WHERE id = $1`, ten.ID, closedURL(t))
	if got := sendTest("failed"); !strings.Contains(got, "No answer (cannot reach 127.0.0.1") {
		t.Errorf("result of a closed port: %q", got)
	}

	// The MCP card leads to the MCP page, where Discover lists the tools.
	webtest.MustStep(t, "opening the MCP page", chromedp.Do(ctx, chromedp.Click(chromedp.ID("mcp-settings")),
		chromedp.WaitVisible(chromedp.ID("discover-mcp"))))
	webtest.MustStep(t, "discovering", chromedp.Do(ctx, chromedp.Click(chromedp.ID("discover-mcp"))))
	webtest.WaitUntil(ctx, t, "the tools", `document.querySelectorAll('#mcp-tools-found li').length > 0`)
	found := webtest.MustRunStep(ctx, t, "tools found", chromedp.Text(chromedp.ID("mcp-discover-result")))
	for _, want := range []string{"5 tools found; the assistant is offered the first 3", "get_weather", "called mcp_get_weather",
		"The weather in a city", "not offered: over the maximum"} {
		if !strings.Contains(found, want) {
			t.Errorf("discover result %q lacks %q", found, want)
		}
	}
	if auth := server.AuthHeaders(); len(auth) == 0 || auth[0] != "Bearer mcp-key-for-discover" {
		t.Errorf("the MCP server got Authorization %v", auth)
	}
	b.SetMCP(t, ten.ID, closedURL(t), "", 3)
	webtest.MustStep(t, "discovering again", chromedp.Do(ctx, chromedp.Click(chromedp.ID("discover-mcp"))))
	webtest.WaitUntil(ctx, t, "the error", `(document.getElementById('mcp-discover-result') || {}).dataset?.state === 'failed'`)
	if got := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("mcp-discover-result"))); !strings.Contains(got, "The tools could not be listed: cannot reach 127.0.0.1") {
		t.Errorf("discover error %q", got)
	}
	if html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, "mcp-key-for-discover") {
		t.Error("the MCP key is shown")
	}
}

// Without JavaScript the buttons are plain forms: the page comes back with
// the result in it.
func TestAdminIntegrationsNoScript(t *testing.T) {
	t.Parallel()
	b := setupLoopback(t)
	ten := b.OwnedTenant(t, "builder")
	stored, err := b.DB.TenantByID(context.Background(), ten.ID)
	webtest.MustStep(t, "reading the tenant", err)
	key, err := b.Box.Open(stored.VisitorSigningKey)
	webtest.MustStep(t, "opening the signing key", err)
	hook := newContextHook(t, key)
	b.Exec(t, `UPDATE tenants SET visitor_context_url = $2 WHERE id = $1`, ten.ID, hook.ts.URL)
	sc := b.NewAdminClient(t)
	sc.SignIn(ten)
	if p := sc.Get("/admin/integrations"); p.Status != http.StatusOK || p.Doc.Find("#send-context-test").Length() != 1 {
		t.Fatalf("integrations page: %d %s", p.Status, p.Body)
	}
	p := sc.Submit("/admin/integrations/context-webhook/test", url.Values{})
	if p.Status != http.StatusOK || p.Doc.Find(`#context-test-result[data-state="succeeded"]`).Length() != 1 ||
		!strings.Contains(p.Text("#context-test-result"), "HTTP 200 in") {
		t.Errorf("after a plain post: %d %s", p.Status, p.Text("main"))
	}
	if calls := hook.calls(); len(calls) != 1 || !calls[0] {
		t.Errorf("context webhook calls (signature verified): %v", calls)
	}
	server := webtest.NewTenantMCP(t, 0)
	b.SetMCP(t, ten.ID, server.URL, "", 10)
	p = sc.Submit("/admin/mcp-tools/discover", url.Values{})
	if p.Status != http.StatusOK || p.Doc.Find("#mcp-tools-found li").Length() != 5 || p.Doc.Find("#mcp-form").Length() != 1 {
		t.Errorf("discover without htmx: %d %s", p.Status, p.Text("main"))
	}
	starter := b.OwnedTenant(t, "starter")
	sc2 := b.NewAdminClient(t)
	sc2.SignIn(starter)
	if p := sc2.Submit("/admin/mcp-tools/discover", url.Values{}); p.Status != http.StatusPaymentRequired {
		t.Errorf("discover on starter: %d", p.Status)
	}
}

// The calendar, payments and phone cards say what is connected, and only
// for their own tenant.
func TestAdminIntegrationsConnectorCards(t *testing.T) {
	t.Parallel()
	b := setupLoopback(t)
	ten := b.OwnedTenant(t, "scale")
	other := b.OwnedTenant(t, "starter")
	sc := b.NewAdminClient(t)
	sc.SignIn(ten)
	state := func(p webtest.AdminPage, card string) string {
		return strings.Join(strings.Fields(p.Text(card+" .integration-state")), " ")
	}

	p := sc.Get("/admin/integrations")
	for card, want := range map[string]string{"#integration-calendar": "Not set up", "#integration-payments": "Not set up", "#integration-voice": "Off"} {
		if got := state(p, card); got != want {
			t.Errorf("%s before: %q, want %q", card, got, want)
		}
	}

	b.Exec(t, `INSERT INTO calendar_connectors (tenant_id, server_url, username, password, calendar_url, calendar_name)
		VALUES ($1, 'https://dav.example.com/remote.php/dav', 'ada', '\x00', 'https://dav.example.com/cal/work/', 'Work')`, ten.ID)
	b.Exec(t, `INSERT INTO payment_connectors (tenant_id, secret_key, key_mode, key_type, key_last4) VALUES ($1, '\x00', 'test', 'secret', '4242')`, ten.ID)
	b.Exec(t, `UPDATE tenants SET voice_enabled = true, voice_phone_number = '+14155550123' WHERE id = $1`, ten.ID)
	p = sc.Get("/admin/integrations")
	for card, want := range map[string]string{
		"#integration-calendar": "Connected Work on dav.example.com",
		"#integration-payments": "Test mode Payment links are Stripe test links: no money moves.",
		"#integration-voice":    "On Callers reach the assistant at +14155550123.",
	} {
		if got := state(p, card); got != want {
			t.Errorf("%s connected: %q, want %q", card, got, want)
		}
	}
	if strings.Contains(p.Body, "4242") {
		t.Error("the key's last digits are shown on the index")
	}
	b.Exec(t, `UPDATE payment_connectors SET is_active = false, key_mode = 'live' WHERE tenant_id = $1`, ten.ID)
	if got := state(sc.Get("/admin/integrations"), "#integration-payments"); !strings.HasPrefix(got, "Paused") {
		t.Errorf("paused payments: %q", got)
	}

	sc2 := b.NewAdminClient(t)
	sc2.SignIn(other)
	p = sc2.Get("/admin/integrations")
	for card, want := range map[string]string{"#integration-calendar": "Not set up", "#integration-payments": "Not set up",
		"#integration-voice": "Scale plan Not included in the starter plan."} {
		if got := state(p, card); got != want {
			t.Errorf("other tenant %s: %q, want %q", card, got, want)
		}
	}
}
