package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/parley/parley/web/webtest"
)

// TestOAuthBrowserFlow runs the authorization code flow as a real client
// does: golang.org/x/oauth2 with PKCE, the authorize URL opened in the
// browser, sign-in and consent there, the code received by the client's
// own server, exchanged, used on the REST API, refreshed; and the old
// refresh token used again revokes the chain.
func TestOAuthBrowserFlow(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "builder") // a plan with the MCP server
	base := o.Srv.Config.BaseURL

	// The client's redirect endpoint.
	got := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" { // the browser's favicon request, say
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte("<!doctype html><title>done</title><p id=done>You can close this window.</p>"))
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"

	// Registration is a plain POST.
	clientID := webtest.Register(t, o.NewAdminClient(t), redirect)
	cfg := &oauth2.Config{
		ClientID:    clientID,
		Endpoint:    oauth2.Endpoint{AuthURL: o.TS.URL + "/oauth/authorize", TokenURL: o.TS.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: redirect,
		Scopes:      []string{"settings:read", "corpus:read"},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("state-xyz", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", base))

	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "opening the authorize URL", chromedp.Do(ctx, chromedp.Navigate(authURL)))
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); !strings.HasPrefix(loc, o.TS.URL+"/admin/login?next=") {
		t.Fatalf("signed out, the authorize URL went to %s, want the sign-in", loc)
	}
	webtest.MustStep(t, "signing in", chromedp.Do(ctx,
		webtest.KeyIn(chromedp.ID("email"), ten.OwnerEmail),
		webtest.KeyIn(chromedp.ID("password"), ten.Password),
	))
	webtest.SubmitForm(ctx, t, `form[action="/admin/login"] button[type=submit]`)
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); !strings.HasPrefix(loc, o.TS.URL+"/admin/oauth/consent?") {
		t.Fatalf("after signing in at %s, want the consent page", loc)
	}
	if h := webtest.MustRunStep(ctx, t, "consent heading", chromedp.Text(chromedp.CSS("main h1"))); !strings.Contains(h, "Test app") || !strings.Contains(h, ten.Name) {
		t.Errorf("consent heading = %q", h)
	}
	if s := webtest.MustRunStep(ctx, t, "scopes", chromedp.Text(chromedp.ID("consent-scopes"))); !strings.Contains(s, "Read settings") || !strings.Contains(s, "Read the knowledge base") {
		t.Errorf("consent scopes = %q", s)
	}
	// The consent page on a phone: no sideways scrolling, no serious axe violation.
	axe := webtest.AxeScript(t)
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("the consent page scrolls sideways by %d px on a phone", over)
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("consent page: axe: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "admin oauth consent phone")
	webtest.SubmitForm(ctx, t, "#approve")
	var q url.Values
	select {
	case q = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's redirect endpoint got no code")
	}
	if q.Get("state") != "state-xyz" || q.Get("code") == "" || q.Get("iss") != base {
		t.Fatalf("redirect query = %v", q)
	}

	// Exchange with the verifier, through the validating client.
	cctx := context.WithValue(context.Background(), oauth2.HTTPClient, o.TS.Client())
	tok, err := cfg.Exchange(cctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || time.Until(tok.Expiry) > 15*time.Minute || time.Until(tok.Expiry) < 14*time.Minute {
		t.Errorf("token = %+v", tok)
	}
	status, body := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, tok.AccessToken)
	if status != http.StatusOK || body["tenant"].(map[string]any)["slug"] != ten.Slug {
		t.Fatalf("GET /tenants/%s with the access token: %d %v", ten.Slug, status, body)
	}

	// The same client, authorized for the MCP server (signed in already:
	// straight to the consent), drives it with the official SDK's client;
	// what it writes reads back over REST.
	mcpCfg := *cfg
	mcpCfg.Scopes = []string{"mcp:corpus:read", "mcp:corpus:write"}
	mcpVerifier := oauth2.GenerateVerifier()
	webtest.MustStep(t, "opening the MCP authorize URL", chromedp.Do(ctx, chromedp.Navigate(mcpCfg.AuthCodeURL("state-mcp",
		oauth2.S256ChallengeOption(mcpVerifier), oauth2.SetAuthURLParam("resource", base+"/mcp")))))
	if s := webtest.MustRunStep(ctx, t, "MCP scopes", chromedp.Text(chromedp.ID("consent-scopes"))); !strings.Contains(s, "knowledge base") {
		t.Errorf("MCP consent scopes = %q", s)
	}
	webtest.SubmitForm(ctx, t, "#approve")
	select {
	case q = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's redirect endpoint got no code for the MCP server")
	}
	mcpTok, err := mcpCfg.Exchange(cctx, q.Get("code"), oauth2.VerifierOption(mcpVerifier))
	if err != nil || q.Get("state") != "state-mcp" {
		t.Fatalf("MCP exchange: %v (state %q)", err, q.Get("state"))
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, mcpTok.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("the MCP server's token at the REST API: %d, want 401 (another audience)", status)
	}
	cs := o.MCPClient(t, mcpTok.AccessToken)
	if names := webtest.ToolNames(t, cs); !slices.Contains(names, "create_corpus_entry") || slices.Contains(names, "list_segments") {
		t.Errorf("tools/list with the granted scopes = %v", names)
	}
	created := webtest.MustCall(t, cs, "create_corpus_entry", map[string]any{"title": "Made over OAuth", "content": "Through the MCP server."})
	id, _ := created["corpus"].(map[string]any)["id"].(string)
	if status, body := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug+"/corpus/"+id, tok.AccessToken); status != http.StatusOK ||
		body["corpus"].(map[string]any)["title"] != "Made over OAuth" {
		t.Errorf("REST read of the entry the MCP server made: %d %v", status, body)
	}
	// A REST token at the MCP server: 401, another audience.
	hc := &http.Client{Transport: webtest.HeaderTransport{Name: "Authorization", Value: "Bearer " + tok.AccessToken, Base: o.TS.Client().Transport}}
	if resp, err := hc.Post(o.TS.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the REST token at /mcp: %v %v, want 401", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}

	// Refresh: a new access and refresh token.
	refreshed, err := cfg.TokenSource(cctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if refreshed.RefreshToken == tok.RefreshToken || refreshed.AccessToken == tok.AccessToken {
		t.Fatalf("refresh did not rotate the tokens")
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, refreshed.AccessToken); status != http.StatusOK {
		t.Fatalf("refreshed access token: %d", status)
	}
	// The old refresh token again: invalid_grant, and the chain is revoked.
	_, err = cfg.TokenSource(cctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("reusing the rotated refresh token: %v, want invalid_grant", err)
	}
	if _, err := cfg.TokenSource(cctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token(); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("the newest refresh token after the reuse: %v, want invalid_grant", err)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, refreshed.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("access token of the revoked chain: %d, want 401", status)
	}
}
