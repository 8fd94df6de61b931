package oauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// oauthPost posts a form from c's address and decodes the JSON answer.
func oauthPost(t *testing.T, c *webtest.AdminClient, path string, form url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.B.TS.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", c.IP)
	return webtest.OAUTHSend(t, c, req)
}

// pkce is a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = base64.RawURLEncoding.EncodeToString(auth.RandomBytes(32))
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authzQuery is an authorization request's query.
func authzQuery(clientID, redirect, challenge string, extra ...string) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-123"}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return q
}

// approve runs an authorization request as the signed-in c and returns the
// redirect the client receives.
func approve(t *testing.T, c *webtest.AdminClient, q url.Values, decision string) *url.URL {
	t.Helper()
	p := c.Get("/oauth/authorize?" + q.Encode())
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/admin/oauth/consent?") {
		t.Fatalf("authorize: %d to %q: %s", p.Status, p.Location(), p.Text("#oauth-error"))
	}
	page := c.Get(p.Location())
	if page.Status != http.StatusOK {
		t.Fatalf("consent page: %d to %q", page.Status, page.Location())
	}
	form := webtest.FormValues(page.Doc.Find(`form[action="/admin/oauth/consent"]`))
	form.Set("decision", decision)
	done := c.Do("POST", "/admin/oauth/consent", form, nil)
	if done.Status != http.StatusSeeOther {
		t.Fatalf("consent: %d %s", done.Status, done.Body)
	}
	u, err := url.Parse(done.Location())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// codeFor approves a request and returns the code.
func codeFor(t *testing.T, c *webtest.AdminClient, q url.Values) string {
	t.Helper()
	u := approve(t, c, q, "approve")
	code := u.Query().Get("code")
	if code == "" || u.Query().Get("state") != q.Get("state") || u.Query().Get("iss") != c.B.Srv.Config.BaseURL {
		t.Fatalf("redirect %s lacks code, state or iss", u)
	}
	return code
}

// exchange trades a code for tokens.
func exchange(t *testing.T, c *webtest.AdminClient, clientID, code, redirect, verifier string) (int, map[string]any) {
	t.Helper()
	status, h, body := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}})
	if status == http.StatusOK && h.Get("Cache-Control") != "no-store" {
		t.Errorf("token response Cache-Control = %q, want no-store", h.Get("Cache-Control"))
	}
	return status, body
}

// tokens runs the whole flow for ten's owner (already signed in as c) and
// returns the client id and token response.
func tokens(t *testing.T, c *webtest.AdminClient, redirect string, extra ...string) (string, map[string]any) {
	t.Helper()
	clientID := webtest.Register(t, c, redirect)
	verifier, challenge := pkce()
	code := codeFor(t, c, authzQuery(clientID, redirect, challenge, extra...))
	status, body := exchange(t, c, clientID, code, redirect, verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, body)
	}
	return clientID, body
}

func wantOAuthError(t *testing.T, what string, status int, body map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || body["error"] != wantCode {
		t.Errorf("%s: %d %v, want %d %s", what, status, body, wantStatus, wantCode)
	}
	if d, _ := body["error_description"].(string); d == "" && wantCode != "" {
		t.Errorf("%s: no error_description", what)
	}
}

func TestOAuthMetadata(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	base := o.Srv.Config.BaseURL
	status, m := o.Do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil)
	if status != http.StatusOK || m["issuer"] != base || m["token_endpoint"] != base+"/oauth/token" ||
		m["registration_endpoint"] != base+"/oauth/register" || m["jwks_uri"] != base+"/.well-known/jwks.json" {
		t.Errorf("metadata = %d %v", status, m)
	}
	if got := m["code_challenge_methods_supported"].([]any); len(got) != 1 || got[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v, want [S256]", got)
	}
	if got := m["scopes_supported"].([]any); len(got) != len(auth.OAuthScopes) {
		t.Errorf("scopes_supported = %v", got)
	}
	_, r := o.Do(t, http.MethodGet, "/.well-known/oauth-protected-resource", "", nil)
	if r["resource"] != base || r["authorization_servers"].([]any)[0] != base {
		t.Errorf("resource metadata = %v", r)
	}
	_, r = o.Do(t, http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "", nil)
	if r["resource"] != base+"/mcp" || r["scopes_supported"].([]any)[0] != auth.ScopeMCPCorpusRead {
		t.Errorf("MCP resource metadata = %v", r)
	}
	status, jwks := o.Do(t, http.MethodGet, "/.well-known/jwks.json", "", nil)
	keys, _ := jwks["keys"].([]any)
	if status != http.StatusOK || len(keys) == 0 || keys[0].(map[string]any)["alg"] != "RS256" || keys[0].(map[string]any)["kid"] == "" {
		t.Errorf("jwks = %d %v", status, jwks)
	}
}

func TestOAuthRegister(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	c := o.NewAdminClient(t)
	status, _, body := webtest.OAUTHJSON(t, c, "/oauth/register", map[string]any{"client_name": "Claude",
		"redirect_uris": []string{"http://127.0.0.1:3000/cb", "https://app.example/cb"}, "scope": "corpus:read mcp:corpus:read bogus"})
	if status != http.StatusCreated || body["token_endpoint_auth_method"] != "none" || body["scope"] != "corpus:read mcp:corpus:read" ||
		!strings.HasPrefix(body["client_id"].(string), "pc_") {
		t.Errorf("register = %d %v", status, body)
	}
	for name, tc := range map[string]struct {
		body map[string]any
		code string
	}{
		"no redirect":       {map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		"plain http":        {map[string]any{"redirect_uris": []string{"http://app.example/cb"}}, "invalid_redirect_uri"},
		"fragment":          {map[string]any{"redirect_uris": []string{"https://app.example/cb#x"}}, "invalid_redirect_uri"},
		"relative":          {map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
		"confidential":      {map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"},
		"implicit":          {map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "response_types": []string{"token"}}, "invalid_client_metadata"},
		"client credential": {map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
		"no known scope":    {map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "scope": "bogus admin:all"}, "invalid_client_metadata"},
	} {
		status, _, body := webtest.OAUTHJSON(t, o.NewAdminClient(t), "/oauth/register", tc.body)
		wantOAuthError(t, name, status, body, http.StatusBadRequest, tc.code)
	}
}

func TestOAuthRegisterRateLimit(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	c := o.NewAdminClient(t)
	for i := range 5 {
		webtest.Register(t, c, "https://app.example/cb"+strconv.Itoa(i))
	}
	status, h, body := webtest.OAUTHJSON(t, c, "/oauth/register", map[string]any{"redirect_uris": []string{"https://app.example/cb"}})
	if status != http.StatusTooManyRequests || body["error"] != "rate_limited" || h.Get("Retry-After") == "" {
		t.Fatalf("6th registration in an hour: %d %v Retry-After %q", status, body, h.Get("Retry-After"))
	}
	// Another address is counted apart; the next hour the first may register again.
	webtest.Register(t, o.NewAdminClient(t), "https://app.example/cb")
	o.Later(time.Hour)
	webtest.Register(t, c, "https://app.example/cb")
}

func TestOAuthTokenRateLimit(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	c := o.NewAdminClient(t)
	bad := url.Values{"grant_type": {"refresh_token"}, "client_id": {"pc_unknown"}, "refresh_token": {"rt_x"}}
	for i := range 30 {
		if status, _, _ := oauthPost(t, c, "/oauth/token", bad); status != http.StatusUnauthorized {
			t.Fatalf("request %d: %d", i+1, status)
		}
	}
	status, h, body := oauthPost(t, c, "/oauth/token", bad)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("31st token request in a minute: %d %v", status, body)
	}
	// Revoke has its own 30 a minute.
	for i := range 30 {
		if status, _, _ := oauthPost(t, c, "/oauth/revoke", url.Values{"client_id": {"pc_unknown"}, "token": {"x"}}); status != http.StatusUnauthorized {
			t.Fatalf("revoke %d after 30 token requests: %d", i+1, status)
		}
	}
	if status, h, _ := oauthPost(t, c, "/oauth/revoke", url.Values{"client_id": {"pc_unknown"}, "token": {"x"}}); status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("31st revoke in a minute: %d", status)
	}
	// The next minute, token requests go through again.
	o.Later(time.Minute)
	if status, _, _ := oauthPost(t, c, "/oauth/token", bad); status != http.StatusUnauthorized {
		t.Errorf("a token request the next minute: %d", status)
	}
	// Authorize: 20 a minute.
	a := o.NewAdminClient(t)
	for i := range 20 {
		if p := a.Get("/oauth/authorize?client_id=pc_unknown"); p.Status != http.StatusBadRequest {
			t.Fatalf("authorize %d: %d", i+1, p.Status)
		}
	}
	if p := a.Get("/oauth/authorize?client_id=pc_unknown"); p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Errorf("21st authorize in a minute: %d", p.Status)
	}
}

func TestOAuthFlow(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	const redirect = "http://127.0.0.1:9/callback"
	clientID := webtest.Register(t, c, redirect)
	verifier, challenge := pkce()
	q := authzQuery(clientID, redirect, challenge, "resource", o.Srv.Config.BaseURL, "scope", "settings:read corpus:read unknown:scope")

	// Signed out: authorize goes to the consent page, which goes to the sign-in, which comes back.
	p := c.Get("/oauth/authorize?" + q.Encode())
	consent := p.Location()
	if p = c.Get(consent); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/admin/login?next=") {
		t.Fatalf("signed out consent: %d to %q", p.Status, p.Location())
	}
	next, _ := url.Parse(p.Location())
	if p = c.Login(ten.OwnerEmail, ten.Password, next.Query().Get("next")); p.Location() != consent {
		t.Fatalf("after sign-in: to %q, want back to %q", p.Location(), consent)
	}
	page := c.Get(consent)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, ten.Slug) || page.Text("#redirect-host") != "127.0.0.1:9" {
		t.Fatalf("consent page: %d %s", page.Status, page.Body)
	}
	scopes := page.Doc.Find("#consent-scopes li")
	if scopes.Length() != 2 || !strings.Contains(scopes.First().Text(), "Read the knowledge base") {
		t.Errorf("consent lists %d scopes: %q (unknown scopes must be dropped)", scopes.Length(), scopes.Text())
	}
	// Without the CSRF token the consent is refused.
	form := webtest.FormValues(page.Doc.Find(`form[action="/admin/oauth/consent"]`))
	form.Set("decision", "approve")
	noCSRF := url.Values{}
	for k, v := range form {
		if k != "_csrf" {
			noCSRF[k] = v
		}
	}
	if p := c.Post("/admin/oauth/consent", noCSRF); p.Status != http.StatusForbidden {
		t.Errorf("consent without CSRF token: %d", p.Status)
	}
	done := c.Do("POST", "/admin/oauth/consent", form, nil)
	u, _ := url.Parse(done.Location())
	code := u.Query().Get("code")
	if done.Status != http.StatusSeeOther || u.Host != "127.0.0.1:9" || code == "" || u.Query().Get("state") != "st-123" {
		t.Fatalf("approve: %d to %q", done.Status, done.Location())
	}

	status, tok := exchange(t, c, clientID, code, redirect, verifier)
	if status != http.StatusOK || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(900) || tok["scope"] != "corpus:read settings:read" {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if status, body := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, access); status != http.StatusOK {
		t.Fatalf("GET /tenants/%s with the access token: %d %v", ten.Slug, status, body)
	}
	// A scope not granted: 403 naming it.
	if status, body := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug+"/segments", access); status != http.StatusForbidden || body["error"] != "Missing scope: segments:read" {
		t.Errorf("segments with a token without segments:read: %d %v", status, body)
	}
	// Another tenant: 404, as with ak_ tokens.
	other := o.OwnedTenant(t, "starter")
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+other.Slug, access); status != http.StatusNotFound {
		t.Errorf("tenant B with tenant A's token: %d, want 404", status)
	}

	// Refresh rotates; the old refresh token used again revokes the chain.
	status, _, r1 := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	if status != http.StatusOK || r1["refresh_token"] == refresh || r1["scope"] != "corpus:read settings:read" {
		t.Fatalf("refresh: %d %v", status, r1)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, r1["access_token"].(string)); status != http.StatusOK {
		t.Fatalf("refreshed access token: %d", status)
	}
	status, _, again := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	wantOAuthError(t, "rotated refresh token reused", status, again, http.StatusBadRequest, "invalid_grant")
	status, _, latest := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r1["refresh_token"].(string)}, "client_id": {clientID}})
	wantOAuthError(t, "newest refresh token after the chain was revoked", status, latest, http.StatusBadRequest, "invalid_grant")
	for _, a := range []string{access, r1["access_token"].(string)} {
		if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, a); status != http.StatusUnauthorized {
			t.Errorf("access token of a revoked chain: %d, want 401", status)
		}
	}
}

func TestOAuthAuthorizeErrors(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	const redirect = "https://app.example/cb"
	clientID := webtest.Register(t, c, redirect)
	_, challenge := pkce()
	_, _, reg := webtest.OAUTHJSON(t, c, "/oauth/register", map[string]any{"redirect_uris": []string{redirect}, "scope": "corpus:read"})
	restOnly := reg["client_id"].(string) // registered no mcp: scope

	// Not trusted yet: shown as a page, never redirected.
	for name, q := range map[string]url.Values{
		"unknown client":         authzQuery("pc_nope", redirect, challenge),
		"no client":              authzQuery("", redirect, challenge),
		"redirect one char off":  authzQuery(clientID, "https://app.example/cc", challenge),
		"redirect trailing /":    authzQuery(clientID, redirect+"/", challenge),
		"redirect other query":   authzQuery(clientID, redirect+"?x=1", challenge),
		"no redirect":            authzQuery(clientID, "", challenge),
		"redirect other scheme":  authzQuery(clientID, "http://app.example/cb", challenge),
		"redirect upper-cased":   authzQuery(clientID, "https://APP.example/cb", challenge),
		"redirect with fragment": authzQuery(clientID, redirect+"#", challenge),
	} {
		for _, path := range []string{"/oauth/authorize?", "/admin/oauth/consent?"} {
			p := c.Get(path + q.Encode())
			if p.Status != http.StatusBadRequest || p.Location() != "" || p.Text("#oauth-error") == "" {
				t.Errorf("%s at %s: %d to %q", name, path, p.Status, p.Location())
			}
			// the page carries the dashboard's headers
			if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") ||
				p.Header.Get("X-Frame-Options") != "DENY" || p.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s at %s: headers %v", name, path, p.Header)
			}
		}
	}
	// Trusted redirect: the error goes back to the client with the state.
	for name, tc := range map[string]struct {
		q    url.Values
		code string
	}{
		"plain PKCE":      {authzQuery(clientID, redirect, challenge, "code_challenge_method", "plain"), "invalid_request"},
		"no PKCE method":  {authzQuery(clientID, redirect, challenge, "code_challenge_method", ""), "invalid_request"},
		"no challenge":    {authzQuery(clientID, redirect, ""), "invalid_request"},
		"token flow":      {authzQuery(clientID, redirect, challenge, "response_type", "token"), "unsupported_response_type"},
		"other resource":  {authzQuery(clientID, redirect, challenge, "resource", "https://evil.example"), "invalid_target"},
		"no known scopes": {authzQuery(restOnly, redirect, challenge, "scope", "bogus", "resource", o.Srv.Config.BaseURL+"/mcp"), "invalid_scope"},
	} {
		p := c.Get("/oauth/authorize?" + tc.q.Encode())
		u, _ := url.Parse(p.Location())
		if p.Status != http.StatusSeeOther || u.Host != "app.example" || u.Query().Get("error") != tc.code || u.Query().Get("state") != "st-123" {
			t.Errorf("%s: %d to %q, want %s back to the client", name, p.Status, p.Location(), tc.code)
		}
	}
	// state at its limit (spec, Limits: 1000) is carried on; one character
	// more is invalid_request, sent back without the state.
	if p := c.Get("/oauth/authorize?" + authzQuery(clientID, redirect, challenge, "state", strings.Repeat("s", 1000)).Encode()); p.Status != http.StatusSeeOther ||
		!strings.HasPrefix(p.Location(), "/admin/oauth/consent?") {
		t.Errorf("state of 1000: %d to %q, want the consent page", p.Status, p.Location())
	}
	p := c.Get("/oauth/authorize?" + authzQuery(clientID, redirect, challenge, "state", strings.Repeat("s", 1001)).Encode())
	if u, _ := url.Parse(p.Location()); p.Status != http.StatusSeeOther || u.Host != "app.example" ||
		u.Query().Get("error") != "invalid_request" || u.Query().Has("state") {
		t.Errorf("state of 1001: %d to %q, want invalid_request back to the client without the state", p.Status, p.Location())
	}
	// Deny: access_denied back to the client.
	if u := approve(t, c, authzQuery(clientID, redirect, challenge), "deny"); u.Query().Get("error") != "access_denied" || u.Query().Get("code") != "" {
		t.Errorf("deny: %s", u)
	}
}

func TestOAuthTokenErrors(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	const redirect = "http://localhost:8765/cb"
	clientID := webtest.Register(t, c, redirect)
	verifier, challenge := pkce()
	q := authzQuery(clientID, redirect, challenge, "resource", o.Srv.Config.BaseURL, "scope", "settings:read")

	code := codeFor(t, c, q)
	wrong := verifier[:len(verifier)-1] + "A"
	if wrong == verifier {
		wrong = verifier[:len(verifier)-1] + "B"
	}
	for name, tc := range map[string]struct {
		form url.Values
		st   int
		code string
	}{
		"wrong verifier":     {url.Values{"code_verifier": {wrong}}, 400, "invalid_grant"},
		"short verifier":     {url.Values{"code_verifier": {"abc"}}, 400, "invalid_grant"},
		"no verifier":        {url.Values{"code_verifier": {""}}, 400, "invalid_request"},
		"redirect + slash":   {url.Values{"redirect_uri": {redirect + "/"}}, 400, "invalid_grant"},
		"redirect 1 char":    {url.Values{"redirect_uri": {"http://localhost:8765/cc"}}, 400, "invalid_grant"},
		"other client":       {url.Values{"client_id": {webtest.Register(t, o.NewAdminClient(t), redirect)}}, 400, "invalid_grant"},
		"unknown client":     {url.Values{"client_id": {"pc_nope"}}, 401, "invalid_client"},
		"unknown code":       {url.Values{"code": {"ac_nope"}}, 400, "invalid_grant"},
		"other resource":     {url.Values{"resource": {o.Srv.Config.BaseURL + "/mcp"}}, 400, "invalid_target"},
		"bad grant type":     {url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type"},
		"client credentials": {url.Values{"grant_type": {"client_credentials"}}, 400, "unsupported_grant_type"},
	} {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}}
		for k, v := range tc.form {
			form[k] = v
		}
		status, _, body := oauthPost(t, c, "/oauth/token", form)
		wantOAuthError(t, name, status, body, tc.st, tc.code)
	}
	// JSON is refused: the token endpoint is form-encoded only.
	status, _, body := webtest.OAUTHJSON(t, c, "/oauth/token", map[string]string{"grant_type": "authorization_code", "code": code})
	wantOAuthError(t, "JSON body", status, body, http.StatusBadRequest, "invalid_request")

	// The failed attempts left the code usable; it works once.
	status, tok := exchange(t, c, clientID, code, redirect, verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	access := tok["access_token"].(string)
	status, replay := exchange(t, c, clientID, code, redirect, verifier)
	wantOAuthError(t, "replayed code", status, replay, http.StatusBadRequest, "invalid_grant")
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, access); status != http.StatusUnauthorized {
		t.Errorf("access token of a replayed code: %d, want 401", status)
	}
	status, _, ref := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
	wantOAuthError(t, "refresh token of a replayed code", status, ref, http.StatusBadRequest, "invalid_grant")

	// A code lives 10 minutes.
	late := codeFor(t, c, q)
	o.Later(10*time.Minute + time.Second)
	status, body = exchange(t, c, clientID, late, redirect, verifier)
	wantOAuthError(t, "expired code", status, body, http.StatusBadRequest, "invalid_grant")
}

func TestOAuthAccessToken(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	path := "/tenants/" + ten.Slug

	// Expiry: 15 minutes.
	_, tok := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "settings:read")
	o.Later(14 * time.Minute)
	if status, _ := webtest.APIGet(t, o.Bundle, path, tok["access_token"].(string)); status != http.StatusOK {
		t.Errorf("after 14 minutes: %d", status)
	}
	o.Later(2 * time.Minute)
	if status, body := webtest.APIGet(t, o.Bundle, path, tok["access_token"].(string)); status != http.StatusUnauthorized || body["error"] != "Access token expired: refresh it" {
		t.Errorf("after 16 minutes: %d %v", status, body)
	}
	// A 401 says where to find the authorization server (RFC 9728).
	req, _ := http.NewRequest(http.MethodGet, o.TS.URL+path, nil)
	resp, err := o.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer resource_metadata="`+o.Srv.Config.BaseURL+`/.well-known/oauth-protected-resource"`; got != want {
		t.Errorf("WWW-Authenticate = %q, want %q", got, want)
	}

	// Revocation of the access token alone; the refresh token still works.
	clientID, tok := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "settings:read")
	if status, _, _ := oauthPost(t, c, "/oauth/revoke", url.Values{"token": {tok["access_token"].(string)}, "client_id": {clientID}}); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, path, tok["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d", status)
	}
	status, _, r := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
	if status != http.StatusOK {
		t.Fatalf("refresh after revoking the access token: %d %v", status, r)
	}
	// Revoking the refresh token revokes the grant: its access tokens too.
	if status, _, _ := oauthPost(t, c, "/oauth/revoke", url.Values{"token": {r["refresh_token"].(string)}, "token_type_hint": {"refresh_token"}, "client_id": {clientID}}); status != http.StatusOK {
		t.Fatalf("revoke refresh: %d", status)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, path, r["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("access token of a revoked refresh token: %d", status)
	}
	// Unknown tokens: 200 (RFC 7009); unknown client: 401; missing token: 400.
	if status, _, _ := oauthPost(t, c, "/oauth/revoke", url.Values{"token": {"whatever"}, "client_id": {clientID}}); status != http.StatusOK {
		t.Errorf("revoking an unknown token: %d", status)
	}
	status, _, body := oauthPost(t, c, "/oauth/revoke", url.Values{"token": {"x"}, "client_id": {"pc_nope"}})
	wantOAuthError(t, "revoke with unknown client", status, body, http.StatusUnauthorized, "invalid_client")
	status, _, body = oauthPost(t, c, "/oauth/revoke", url.Values{"client_id": {clientID}})
	wantOAuthError(t, "revoke without token", status, body, http.StatusBadRequest, "invalid_request")

	// A token for the MCP server is refused by the REST API (audience), even
	// when it carries REST scopes; mcp: scopes pass no REST scope check.
	_, mcp := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL+"/mcp", "scope", "settings:read mcp:settings:read")
	if status, body := webtest.APIGet(t, o.Bundle, path, mcp["access_token"].(string)); status != http.StatusUnauthorized || !strings.Contains(body["error"].(string), "another resource") {
		t.Errorf("MCP token at the REST API: %d %v", status, body)
	}
	_, mcpOnly := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "mcp:settings:read")
	if status, _ := webtest.APIGet(t, o.Bundle, path, mcpOnly["access_token"].(string)); status != http.StatusForbidden {
		t.Errorf("REST token with only mcp: scopes: %d, want 403", status)
	}
	// No scope asked: the resource's scopes; with no resource either, the
	// scopes the client registered (every one, by default).
	_, def := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL+"/mcp")
	if def["scope"] != strings.Join(auth.MCPScopes, " ") {
		t.Errorf("default scopes of the MCP resource = %q", def["scope"])
	}
	c2 := o.NewAdminClient(t) // registrations are 5 an hour per address
	c2.SignIn(ten)
	_, def = tokens(t, c2, "https://app.example/cb")
	if def["scope"] != strings.Join(auth.OAuthScopes, " ") {
		t.Errorf("default scopes = %q", def["scope"])
	}
	// A forged token (signed by another key) is refused.
	if status, _ := webtest.APIGet(t, o.Bundle, path, "eyJhbGciOiJub25lIn0.eyJ0ZW5hbnQiOiJ4In0."); status != http.StatusUnauthorized {
		t.Errorf("alg none token: %d", status)
	}
}

func TestOAuthConnectedApps(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/connected-apps"); p.Status != http.StatusOK || p.Text("#no-apps") == "" {
		t.Fatalf("empty connected apps: %d", p.Status)
	}
	clientID, tok := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "settings:read corpus:write")
	if p := c.Get("/admin/connected-apps"); p.Doc.Find("#connected-apps tbody tr td").Eq(3).Text() != "never" {
		t.Errorf("last used before any call: %q, want never", p.Doc.Find("#connected-apps tbody tr td").Eq(3).Text())
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, tok["access_token"].(string)); status != http.StatusOK {
		t.Fatal(status)
	}
	p := c.Get("/admin/connected-apps")
	row := p.Doc.Find("#connected-apps tbody tr")
	if row.Length() != 1 || !strings.Contains(row.Text(), "Test app") || !strings.Contains(row.Text(), "Change the knowledge base") ||
		row.Find(".badge").First().AttrOr("title", "") != "corpus:write" ||
		!strings.Contains(row.Text(), "app.example") || strings.Contains(row.Find("td").Eq(3).Text(), "never") {
		t.Fatalf("connected apps row: %q", row.Text())
	}
	// Another tenant's owner cannot revoke it.
	other := o.OwnedTenant(t, "starter")
	oc := o.NewAdminClient(t)
	oc.SignIn(other)
	oc.Get("/admin/connected-apps")
	if p := oc.Submit("/admin/connected-apps/"+clientID+"/revoke", nil); p.Status != http.StatusNotFound {
		t.Errorf("revoking another tenant's app: %d", p.Status)
	}
	if p := c.Submit("/admin/connected-apps/"+clientID+"/revoke", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.Status)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug, tok["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("access token after revoking the app: %d", status)
	}
	status, _, body := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
	wantOAuthError(t, "refresh after revoking the app", status, body, http.StatusBadRequest, "invalid_grant")
	if p := c.Get("/admin/connected-apps"); p.Text("#no-apps") == "" {
		t.Errorf("the revoked app is still listed")
	}
}

// TestOAuthConsentTenant: an owner of several tenants chooses which one the
// app gets, among theirs only.
func TestOAuthConsentTenant(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	a, b, stranger := o.OwnedTenant(t, "starter"), o.OwnedTenant(t, "starter"), o.OwnedTenant(t, "starter")
	if err := o.DB.AddOwner(t.Context(), b.ID, a.OwnerEmail, "unused", false); err != nil {
		t.Fatal(err)
	}
	c := o.NewAdminClient(t)
	c.SignIn(a)
	const redirect = "https://app.example/cb"
	clientID := webtest.Register(t, c, redirect)
	verifier, challenge := pkce()
	q := authzQuery(clientID, redirect, challenge, "resource", o.Srv.Config.BaseURL, "scope", "settings:read")

	p := c.Get("/oauth/authorize?" + q.Encode())
	page := c.Get(p.Location())
	// The tenant the owner is administering is chosen at first.
	selected := page.Doc.Find("#consent-tenant option[selected]").AttrOr("value", "")
	if opts := page.Doc.Find("#consent-tenant option"); opts.Length() != 2 || selected != a.Slug && selected != b.Slug {
		t.Fatalf("tenant choice: %d options, %q selected", opts.Length(), selected)
	}
	if current := c.Get("/admin").Body; !strings.Contains(current, `<option value="`+selected+`" selected>`) {
		t.Errorf("the consent page chose %s, not the tenant the dashboard administers", selected)
	}
	form := webtest.FormValues(page.Doc.Find(`form[action="/admin/oauth/consent"]`))
	form.Set("decision", "approve")
	form.Set("tenant", stranger.Slug)
	if p := c.Do("POST", "/admin/oauth/consent", form, nil); p.Status != http.StatusNotFound {
		t.Errorf("granting a tenant not theirs: %d to %q", p.Status, p.Location())
	}
	form.Set("tenant", b.Slug)
	done := c.Do("POST", "/admin/oauth/consent", form, nil)
	u, _ := url.Parse(done.Location())
	status, tok := exchange(t, c, clientID, u.Query().Get("code"), redirect, verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+b.Slug, tok["access_token"].(string)); status != http.StatusOK {
		t.Errorf("the chosen tenant: %d", status)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+a.Slug, tok["access_token"].(string)); status != http.StatusNotFound {
		t.Errorf("the tenant not chosen: %d, want 404", status)
	}
}

// jwtAudience is the aud of an access token, as a list.
func jwtAudience(t *testing.T, token string) []string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Aud any `json:"aud"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	switch a := claims.Aud.(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, v := range a {
			out = append(out, v.(string))
		}
		return out
	}
	t.Fatalf("aud %v", claims.Aud)
	return nil
}

// The spec's flow has no resource parameter: the audience then follows the
// scopes granted, so that "API calls with the access token" work.
func TestOAuthAudienceFromScopes(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "scale") // a plan with the MCP server
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	base, mcpURL, path := o.Srv.Config.BaseURL, o.Srv.Config.BaseURL+"/mcp", "/tenants/"+ten.Slug
	const redirect = "https://app.example/cb"
	mcpList := func(token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, o.TS.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := o.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	t.Run("REST scopes only: the REST API", func(t *testing.T) {
		clientID, tok := tokens(t, c, redirect, "scope", "settings:read")
		at := tok["access_token"].(string)
		if aud := jwtAudience(t, at); !slices.Equal(aud, []string{base}) {
			t.Errorf("aud %v", aud)
		}
		if status, body := webtest.APIGet(t, o.Bundle, path, at); status != http.StatusOK {
			t.Errorf("REST API: %d %v", status, body)
		}
		if status := mcpList(at); status != http.StatusUnauthorized {
			t.Errorf("/mcp: %d, want 401", status)
		}
		// A refresh keeps the audience, and refuses one the grant lacks
		// without using up the refresh token.
		status, body := refreshGrant(t, c, clientID, tok["refresh_token"].(string), "resource", mcpURL)
		wantOAuthError(t, "refresh for /mcp", status, body, http.StatusBadRequest, "invalid_target")
		status, body = refreshGrant(t, c, clientID, tok["refresh_token"].(string))
		if status != http.StatusOK {
			t.Fatalf("refresh after the refused one: %d %v", status, body)
		}
		if aud := jwtAudience(t, body["access_token"].(string)); !slices.Equal(aud, []string{base}) {
			t.Errorf("aud after refresh %v", aud)
		}
		status, body = refreshGrant(t, c, clientID, body["refresh_token"].(string), "resource", base)
		if status != http.StatusOK || !slices.Equal(jwtAudience(t, body["access_token"].(string)), []string{base}) {
			t.Errorf("refresh naming the grant's resource: %d %v", status, body)
		}
	})
	t.Run("mcp scopes only: the MCP server", func(t *testing.T) {
		_, tok := tokens(t, c, redirect, "scope", "mcp:settings:read mcp:corpus:read")
		at := tok["access_token"].(string)
		if aud := jwtAudience(t, at); !slices.Equal(aud, []string{mcpURL}) {
			t.Errorf("aud %v", aud)
		}
		if status := mcpList(at); status != http.StatusOK {
			t.Errorf("/mcp: %d", status)
		}
		if status, _ := webtest.APIGet(t, o.Bundle, path, at); status != http.StatusUnauthorized {
			t.Errorf("REST API: %d, want 401", status)
		}
	})
	t.Run("both families: both audiences, each checking its own scopes", func(t *testing.T) {
		// the consent page names both
		clientID := webtest.Register(t, c, redirect)
		verifier, challenge := pkce()
		q := authzQuery(clientID, redirect, challenge, "scope", "settings:read mcp:corpus:read")
		p := c.Get("/oauth/authorize?" + q.Encode())
		if page := c.Get(p.Location()); !strings.Contains(page.Text("main"), "management API and its MCP server") {
			t.Errorf("consent page: %q", page.Text("main"))
		}
		status, tok := exchange(t, c, clientID, codeFor(t, c, q), redirect, verifier)
		if status != http.StatusOK {
			t.Fatalf("exchange: %d %v", status, tok)
		}
		at := tok["access_token"].(string)
		if aud := jwtAudience(t, at); !slices.Equal(aud, []string{base, mcpURL}) {
			t.Errorf("aud %v", aud)
		}
		if status, body := webtest.APIGet(t, o.Bundle, path, at); status != http.StatusOK {
			t.Errorf("REST API: %d %v", status, body)
		}
		if status, _ := webtest.APIGet(t, o.Bundle, path+"/corpus", at); status != http.StatusForbidden {
			t.Errorf("REST corpus with only mcp:corpus:read: %d, want 403", status)
		}
		if status := mcpList(at); status != http.StatusOK {
			t.Errorf("/mcp: %d", status)
		}
		// A refresh may narrow the audience to one of the grant's.
		status, body := refreshGrant(t, c, clientID, tok["refresh_token"].(string), "resource", mcpURL)
		if status != http.StatusOK {
			t.Fatalf("refresh for /mcp: %d %v", status, body)
		}
		if aud := jwtAudience(t, body["access_token"].(string)); !slices.Equal(aud, []string{mcpURL}) {
			t.Errorf("narrowed aud %v", aud)
		}
		status, body = refreshGrant(t, c, clientID, body["refresh_token"].(string))
		if status != http.StatusOK || !slices.Equal(jwtAudience(t, body["access_token"].(string)), []string{base, mcpURL}) {
			t.Errorf("the next refresh keeps the grant's audience: %d %v", status, body)
		}
	})
	t.Run("a resource binds the token as before", func(t *testing.T) {
		_, tok := tokens(t, c, redirect, "resource", base, "scope", "settings:read mcp:corpus:read")
		if aud := jwtAudience(t, tok["access_token"].(string)); !slices.Equal(aud, []string{base}) {
			t.Errorf("aud %v", aud)
		}
	})
}

// refreshGrant posts a refresh_token grant, with extra form fields in
// pairs (scope, resource).
func refreshGrant(t *testing.T, c *webtest.AdminClient, clientID, rt string, extra ...string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	status, _, body := oauthPost(t, c, "/oauth/token", form)
	return status, body
}

// A refresh refused for its scope leaves the refresh token good: the
// client's next, correct refresh is not taken for a replay.
func TestOAuthRefusedRefreshKeepsToken(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	clientID, tok := tokens(t, c, "https://app.example/cb", "scope", "settings:read corpus:read")
	rt := tok["refresh_token"].(string)
	for _, scope := range []string{"corpus:write", "settings:read corpus:write", "mcp:corpus:read"} {
		status, body := refreshGrant(t, c, clientID, rt, "scope", scope)
		wantOAuthError(t, "refresh for "+scope, status, body, http.StatusBadRequest, "invalid_scope")
	}
	status, body := refreshGrant(t, c, clientID, rt, "scope", "corpus:read")
	if status != http.StatusOK || body["scope"] != "corpus:read" {
		t.Fatalf("correct refresh after refused ones: %d %v", status, body)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug+"/corpus", body["access_token"].(string)); status != http.StatusOK {
		t.Errorf("narrowed token: %d", status)
	}
	// and the grant was not revoked: the new refresh token works
	status, body = refreshGrant(t, c, clientID, body["refresh_token"].(string))
	if status != http.StatusOK {
		t.Errorf("next refresh: %d %v", status, body)
	}
}

// TestOAuthConsentRole: a person grants an app only the scopes their role
// holds; with none of them left the app is refused; a member removed or
// given a lesser role loses the grants they gave.
func TestOAuthConsentRole(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "scale")
	agent := o.AddMember(t, ten, "agent")
	c := o.NewAdminClient(t)
	c.SignInAs(agent)
	const redirect = "https://app.example/cb"
	clientID := webtest.Register(t, c, redirect)
	verifier, challenge := pkce()
	q := authzQuery(clientID, redirect, challenge, "resource", o.Srv.Config.BaseURL, "scope", "conversations:read settings:write corpus:read")

	p := c.Get("/oauth/authorize?" + q.Encode())
	page := c.Get(p.Location())
	if got := page.Doc.Find("#consent-scopes li").Length(); got != 1 || !strings.Contains(page.Text("#consent-scopes"), "conversations:read") {
		t.Errorf("an agent's consent offers %d scopes: %q", got, page.Text("#consent-scopes"))
	}
	if got := page.Doc.Find("#consent-withheld li").Length(); got != 2 {
		t.Errorf("%d scopes withheld, want settings:write and corpus:read", got)
	}
	form := webtest.FormValues(page.Doc.Find(`form[action="/admin/oauth/consent"]`))
	form.Set("decision", "approve")
	done := c.Do("POST", "/admin/oauth/consent", form, nil)
	u, _ := url.Parse(done.Location())
	status, tok := exchange(t, c, clientID, u.Query().Get("code"), redirect, verifier)
	if status != http.StatusOK || tok["scope"] != "conversations:read" {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	access := tok["access_token"].(string)
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug+"/conversations", access); status != http.StatusOK {
		t.Errorf("the agent's app reads conversations: %d", status)
	}

	// Nothing the role holds: the app is refused.
	_, challenge2 := pkce()
	q2 := authzQuery(clientID, redirect, challenge2, "resource", o.Srv.Config.BaseURL, "scope", "settings:write")
	if u := approve(t, c, q2, "approve"); u.Query().Get("error") != "access_denied" || u.Query().Get("code") != "" {
		t.Errorf("granting only what the role lacks: %s", u)
	}

	// Removed from the team, the agent's grant ends at once.
	owner := o.NewAdminClient(t)
	owner.SignIn(ten)
	owner.Get("/admin/members")
	if p := owner.Submit("/admin/members/"+agent.ID+"/remove", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("removal: %d", p.Status)
	}
	if status, _ := webtest.APIGet(t, o.Bundle, "/tenants/"+ten.Slug+"/conversations", access); status != http.StatusUnauthorized {
		t.Errorf("a removed member's app: %d, want 401", status)
	}
}
