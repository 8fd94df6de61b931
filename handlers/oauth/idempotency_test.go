package oauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// An OAuth client's access tokens share their Idempotency-Keys: a create
// sent again after a refresh, with the new access token, is replayed.
// Another client's key of the same text is its own.
func TestOAuthIdempotencyKeyScope(t *testing.T) {
	t.Parallel()
	o := webtest.SetupOAuth(t)
	ten := o.OwnedTenant(t, "starter")
	c := o.NewAdminClient(t)
	c.SignIn(ten)
	path := "/tenants/" + ten.Slug + "/corpus"
	create := func(token string) (int, bool, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", o.TS.URL+path, strings.NewReader(`{"title":"Hours","content":"Nine to five."}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "oauth-1")
		resp, err := o.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body struct {
			Corpus struct {
				ID string `json:"id"`
			} `json:"corpus"`
		}
		_ = json.Unmarshal(raw, &body)
		return resp.StatusCode, resp.Header.Get("Idempotency-Replayed") == "true", body.Corpus.ID
	}

	clientID, tok := tokens(t, c, "https://app.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "corpus:write")
	st, replayed, first := create(tok["access_token"].(string))
	if st != 201 || replayed || first == "" {
		t.Fatalf("first: %d, replayed %v", st, replayed)
	}
	status, _, r := oauthPost(t, c, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, r)
	}
	if st, replayed, id := create(r["access_token"].(string)); st != 201 || !replayed || id != first {
		t.Errorf("after a refresh: %d, replayed %v, entry %s (want %s)", st, replayed, id, first)
	}
	_, other := tokens(t, c, "https://other.example/cb", "resource", o.Srv.Config.BaseURL, "scope", "corpus:write")
	if st, replayed, id := create(other["access_token"].(string)); st != 201 || replayed || id == first {
		t.Errorf("another client: %d, replayed %v", st, replayed)
	}
	if n := webtest.CountCorpus(t, o.Bundle, ten.ID); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}
