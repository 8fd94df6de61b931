package webtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
)

// OAUTHTest is a dashboard test server whose clock stands still (in the
// middle of a minute, so that a test's requests share each rate-limit
// window) until a test moves it forward.
type OAUTHTest struct {
	*Bundle
	shift atomic.Int64 // nanoseconds added to the server's clock
}

func SetupOAuth(t *testing.T) *OAUTHTest {
	t.Helper()
	b := SetupAdmin(t, nil)
	o := &OAUTHTest{Bundle: b}
	base := b.Srv.Base.Now()
	b.Srv.Base.Now = func() time.Time { return base.Add(time.Duration(o.shift.Load())) }
	return o
}

// Later moves the server's clock forward by d.
func (o *OAUTHTest) Later(d time.Duration) { o.shift.Add(int64(d)) }

// OAUTHJSON posts a JSON body from c's address and decodes the JSON answer.
func OAUTHJSON(t *testing.T, c *AdminClient, path string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.B.TS.URL+path, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", c.IP)
	return OAUTHSend(t, c, req)
}

func OAUTHSend(t *testing.T, c *AdminClient, req *http.Request) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON", req.Method, req.URL.Path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, resp.Header, out
}

// APIGet calls the management API with a bearer token.
func APIGet(t *testing.T, b *Bundle, path, token string) (int, map[string]any) {
	t.Helper()
	return b.Do(t, http.MethodGet, path, token, nil)
}

// Register registers a public client with one redirect URI and returns its id.
func Register(t *testing.T, c *AdminClient, redirect string) string {
	t.Helper()
	status, _, body := OAUTHJSON(t, c, "/oauth/register", map[string]any{
		"client_name": "Test app", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	if status != http.StatusCreated {
		t.Fatalf("registering: %d %v", status, body)
	}
	return body["client_id"].(string)
}

// ConnectApp gives ten a connected app (a client with a live grant), as the
// flow leaves one, for the pages that list them.
func ConnectApp(t *testing.T, b *Bundle, ten Tenant) {
	t.Helper()
	ctx := t.Context()
	user, err := b.DB.UserByEmail(ctx, ten.OwnerEmail)
	if err != nil {
		t.Fatal(err)
	}
	client, err := b.DB.CreateOAuthClient(ctx, accounts.OAuthClient{ID: auth.NewOpaque("pc_"), Name: "Claude Desktop",
		RedirectURIs: []string{"http://127.0.0.1:33418/callback"}, Scopes: auth.OAuthScopes})
	if err != nil {
		t.Fatal(err)
	}
	now := b.Srv.Base.Clock()
	code := auth.NewOpaque("ac_")
	if err := b.DB.CreateOAuthCode(ctx, auth.HashToken(code), accounts.OAuthCode{ClientID: client.ID, TenantID: ten.ID, UserID: user.ID,
		RedirectURI: client.RedirectURIs[0], Scopes: auth.MCPScopes, Resource: b.Srv.Config.BaseURL + "/mcp",
		CodeChallenge: "x", ExpiresAt: now.Add(auth.CodeTTL)}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.RedeemOAuthCode(ctx, auth.HashToken(code), accounts.OAuthIssue{JTI: auth.NewOpaque(""), AccessExpires: now.Add(auth.AccessTokenTTL),
		RefreshHash: auth.HashToken(auth.NewOpaque(auth.RefreshTokenPrefix)), RefreshExpires: now.Add(auth.RefreshTokenTTL)}, now); err != nil {
		t.Fatal(err)
	}
}
