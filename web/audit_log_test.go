package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/web/webtest"
)

// auditEntries reads a tenant's audit log through the API, with query q.
func auditEntries(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, q string) []map[string]any {
	t.Helper()
	status, body := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log?"+q, ten.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("GET audit-log?%s: %d %v", q, status, body)
	}
	var out []map[string]any
	for _, e := range webtest.List(body["entries"]) {
		out = append(out, webtest.Obj(e))
	}
	return out
}

// findEntry is the newest entry of action with target starting with target, or nil.
func findEntry(entries []map[string]any, action, target string) map[string]any {
	for _, e := range entries {
		if e["action"] == action && strings.HasPrefix(e["target"].(string), target) {
			return e
		}
	}
	return nil
}

// oauthAccessToken is an access token of a connected app named client,
// granted scopes on ten by its owner, for resource.
func oauthAccessToken(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, client, resource string, scopes ...string) string {
	t.Helper()
	ctx := t.Context()
	user, err := b.DB.UserByEmail(ctx, ten.OwnerEmail)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.DB.CreateOAuthClient(ctx, accounts.OAuthClient{ID: auth.NewOpaque("pc_"), Name: client,
		RedirectURIs: []string{"http://127.0.0.1:33418/callback"}, Scopes: auth.OAuthScopes})
	if err != nil {
		t.Fatal(err)
	}
	now := b.Srv.Base.Clock()
	code, jti := auth.NewOpaque("ac_"), auth.NewOpaque("")
	if err := b.DB.CreateOAuthCode(ctx, auth.HashToken(code), accounts.OAuthCode{ClientID: c.ID, TenantID: ten.ID, UserID: user.ID,
		RedirectURI: c.RedirectURIs[0], Scopes: scopes, Resource: resource, CodeChallenge: "x", ExpiresAt: now.Add(auth.CodeTTL)}, now); err != nil {
		t.Fatal(err)
	}
	g, err := b.DB.RedeemOAuthCode(ctx, auth.HashToken(code), accounts.OAuthIssue{JTI: jti, AccessExpires: now.Add(auth.AccessTokenTTL),
		RefreshHash: auth.HashToken(auth.NewOpaque(auth.RefreshTokenPrefix)), RefreshExpires: now.Add(auth.RefreshTokenTTL)}, now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := b.Srv.Base.OAuth.SignAccessToken(ctx, g, jti, now)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestAuditLogRecords: each surface records its changes as its actor, and
// records nothing for reads and refused changes.
func TestAuditLogRecords(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "builder")
	newEntry := func(t *testing.T, title string) string {
		t.Helper()
		status, body := b.Do(t, http.MethodPost, "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": title, "content": "c"})
		if status != http.StatusCreated {
			t.Fatalf("creating an entry: %d %v", status, body)
		}
		return webtest.Obj(body["corpus"])["id"].(string)
	}

	t.Run("Dashboard", func(t *testing.T) {
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		c.Get("/admin/tokens")
		if p := c.Submit("/admin/tokens", url.Values{"name": {"CRM sync"}, "scopes": {"corpus:read"}}); p.Status != http.StatusOK && p.Status != http.StatusSeeOther {
			t.Fatalf("creating a token: %d", p.Status)
		}
		// A refused form records nothing: no scope chosen.
		c.Get("/admin/tokens")
		c.Submit("/admin/tokens", url.Values{"name": {"No scopes"}})
		id := newEntry(t, "Old prices")
		c.Get("/admin/corpus")
		if p := c.Submit("/admin/corpus/"+id+"/delete", nil); p.Status >= 400 {
			t.Fatalf("deleting the entry: %d", p.Status)
		}
		// Another tenant's entry: 404, nothing recorded.
		other := b.OwnedTenant(t, "builder")
		st, body := b.Do(t, http.MethodPost, "/tenants/"+other.Slug+"/corpus", other.Token, map[string]any{"title": "theirs", "content": "c"})
		if st != http.StatusCreated {
			t.Fatal(st, body)
		}
		c.Submit("/admin/corpus/"+webtest.Obj(body["corpus"])["id"].(string)+"/delete", nil)
		if p := c.Get("/admin/submissions/export.csv"); p.Status != http.StatusOK {
			t.Fatalf("exporting: %d", p.Status)
		}

		webtest.ConnectApp(t, b, ten)
		var client string
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT client_id FROM oauth_grants WHERE tenant_id = $1`, ten.ID).Scan(&client); err != nil {
			t.Fatal(err)
		}
		c.Get("/admin/connected-apps")
		if p := c.Submit("/admin/connected-apps/"+client+"/revoke", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("revoking the app: %d", p.Status)
		}

		entries := auditEntries(t, b, ten, "actorKind=person")
		if app := findEntry(entries, audit.ActionAppRevoked, "App"); app == nil || app["target"] != "App: Claude Desktop" || app["targetId"] != client {
			t.Errorf("the app's revocation: %v", app)
		}
		tok := findEntry(entries, audit.ActionTokenCreated, "API token")
		if tok == nil || tok["target"] != "API token: CRM sync" {
			t.Fatalf("no entry of the token's creation: %v", entries)
		}
		actor := webtest.Obj(tok["actor"])
		if actor["kind"] != "person" || actor["name"] != ten.OwnerEmail || actor["id"] == "" {
			t.Errorf("actor = %v, want the owner", actor)
		}
		if webtest.Obj(tok["details"])["via"] != "dashboard" {
			t.Errorf("details = %v", tok["details"])
		}
		if findEntry(entries, audit.ActionTokenCreated, "API token: No scopes") != nil {
			t.Error("a refused form was recorded")
		}
		del := findEntry(entries, audit.ActionDeleted, "Knowledge base entry")
		if del == nil || del["targetId"] != id {
			t.Errorf("no entry of the deletion of %s: %v", id, entries)
		}
		if n := len(auditEntries(t, b, ten, "action=data.deleted")); n != 1 {
			t.Errorf("%d deletions recorded, want 1 (another tenant's id deletes nothing)", n)
		}
		if findEntry(entries, audit.ActionExported, "Submissions") == nil {
			t.Error("no entry of the export")
		}
		if e := auditEntries(t, b, other, ""); len(e) != 0 {
			t.Errorf("the other tenant's log has %v", e)
		}
	})

	t.Run("APIToken", func(t *testing.T) {
		tok, tokID := b.NewToken(t, ten.ID, false, auth.ScopeCorpusWrite, auth.ScopeCorpusRead)
		id := newEntry(t, "Shipping")
		if st, body := b.Do(t, http.MethodDelete, "/tenants/"+ten.Slug+"/corpus/"+id, tok, nil); st != http.StatusOK {
			t.Fatalf("deleting: %d %v", st, body)
		}
		// A read records nothing; a missing scope is a refusal.
		b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/corpus", tok, nil)
		if st, _ := b.Do(t, http.MethodDelete, "/tenants/"+ten.Slug+"/webhooks/00000000-0000-0000-0000-000000000000", tok, nil); st != http.StatusForbidden {
			t.Fatalf("missing scope: %d", st)
		}
		entries := auditEntries(t, b, ten, "actorKind=token&actorId="+tokID)
		if len(entries) != 2 {
			t.Fatalf("the token's entries: %v", entries)
		}
		denied, del := entries[0], entries[1]
		if denied["action"] != audit.ActionAccessDenied || denied["denied"] != true ||
			webtest.Obj(denied["details"])["reason"] != "Missing scope: settings:write" {
			t.Errorf("refusal = %v", denied)
		}
		if del["action"] != audit.ActionDeleted || del["targetId"] != id || webtest.Obj(del["actor"])["name"] != "test" ||
			webtest.Obj(del["details"])["via"] != "api" {
			t.Errorf("deletion = %v", del)
		}
		if got := auditEntries(t, b, ten, "denied=true&actorId="+tokID); len(got) != 1 {
			t.Errorf("denied only: %v", got)
		}
	})

	t.Run("OAuthApp", func(t *testing.T) {
		tok := oauthAccessToken(t, b, ten, "Claude", b.Srv.Config.BaseURL, auth.ScopeSettingsWrite)
		if st, body := b.Do(t, http.MethodPut, "/tenants/"+ten.Slug, tok, map[string]any{"botName": "Ada"}); st != http.StatusOK {
			t.Fatalf("changing settings: %d %v", st, body)
		}
		entries := auditEntries(t, b, ten, "actorKind=oauth&action=settings")
		if len(entries) != 1 {
			t.Fatalf("entries: %v", entries)
		}
		actor := webtest.Obj(entries[0]["actor"])
		if actor["name"] != "Claude ("+ten.OwnerEmail+")" || !strings.HasPrefix(actor["id"].(string), "pc_") {
			t.Errorf("actor = %v", actor)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		tok, tokID := b.NewToken(t, ten.ID, false, auth.ScopeCorpusWrite, auth.ScopeCorpusRead)
		id := newEntry(t, "Returns")
		cs := b.MCPClient(t, tok)
		webtest.MustCall(t, cs, "delete_corpus_entry", map[string]any{"id": id})
		if _, isErr := webtest.CallTool(t, cs, "update_persona", map[string]any{"botName": "Ada"}); !isErr {
			t.Fatal("update_persona without its scope succeeded")
		}
		entries := auditEntries(t, b, ten, "actorId="+tokID)
		if len(entries) != 2 {
			t.Fatalf("entries: %v", entries)
		}
		if e := entries[1]; e["action"] != audit.ActionDeleted || e["targetId"] != id || webtest.Obj(e["details"])["via"] != "mcp" {
			t.Errorf("deletion = %v", e)
		}
		if e := entries[0]; e["action"] != audit.ActionAccessDenied || e["denied"] != true || e["target"] != "MCP tool update_persona" {
			t.Errorf("refusal = %v", e)
		}
	})
}

// TestAuditLogAPI: the listing's filters, pagination and bad inputs.
func TestAuditLogAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, other := b.NewTenant(t, "free"), b.NewTenant(t, "free")
	ctx := context.Background()
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	record := func(tenantID string, at time.Time, kind, id, action string) {
		t.Helper()
		if err := b.DB.RecordAudit(ctx, audit.Entry{TenantID: tenantID, At: at, Actor: audit.Actor{Kind: kind, ID: id, Name: id},
			Action: action, Denied: action == audit.ActionAccessDenied}); err != nil {
			t.Fatal(err)
		}
	}
	// 7 entries, one a day from 10 March: alternately a person's and a token's.
	for i := range 7 {
		kind, id, action := audit.ActorPerson, "ann", audit.ActionWebhookChanged
		if i%2 == 1 {
			kind, id, action = audit.ActorToken, "tok", audit.ActionDeleted
		}
		if i == 6 {
			action = audit.ActionAccessDenied
		}
		record(ten.ID, start.AddDate(0, 0, i), kind, id, action)
	}
	record(other.ID, start, audit.ActorPerson, "ann", audit.ActionWebhookChanged)

	ids := func(entries []map[string]any) string {
		var out []string
		for _, e := range entries {
			out = append(out, e["at"].(string)[8:10])
		}
		return strings.Join(out, ",")
	}
	cases := []struct{ q, want string }{
		{"", "16,15,14,13,12,11,10"},
		{"actorKind=person", "16,14,12,10"},
		{"actorKind=token&actorId=tok", "15,13,11"},
		{"actorId=nobody", ""},
		{"action=webhook", "14,12,10"},
		{"action=data.deleted", "15,13,11"},
		{"denied=true", "16"},
		{"from=2026-03-12&to=2026-03-13", "13,12"},
		{"from=2026-03-12T12:00:00Z&to=2026-03-12T12:00:01Z", "12"},
	}
	for _, c := range cases {
		t.Run("Filter "+c.q, func(t *testing.T) {
			if got := ids(auditEntries(t, b, ten, c.q)); got != c.want {
				t.Errorf("days %q, want %q", got, c.want)
			}
		})
	}

	t.Run("Pages", func(t *testing.T) {
		// limit N with N entries: one page, no cursor; N+1: a second page of one.
		status, body := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log?limit=7", ten.Token, nil)
		if status != http.StatusOK || len(webtest.List(body["entries"])) != 7 || webtest.Obj(body["pagination"])["nextCursor"] != nil {
			t.Fatalf("limit 7: %d %v", status, body["pagination"])
		}
		var days []string
		cursor := ""
		for range 4 {
			status, body := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log?limit=2"+cursor, ten.Token, nil)
			if status != http.StatusOK {
				t.Fatal(status, body)
			}
			for _, e := range webtest.List(body["entries"]) {
				days = append(days, webtest.Obj(e)["at"].(string)[8:10])
			}
			next, _ := webtest.Obj(body["pagination"])["nextCursor"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(next)
		}
		if got := strings.Join(days, ","); got != "16,15,14,13,12,11,10" {
			t.Errorf("pages of 2: %s", got)
		}
		// A new entry does not shift the pages already read.
		status, body = b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log?limit=6", ten.Token, nil)
		next, _ := webtest.Obj(body["pagination"])["nextCursor"].(string)
		if status != http.StatusOK || next == "" {
			t.Fatalf("limit 6: %d %v", status, body["pagination"])
		}
		record(ten.ID, start.AddDate(0, 0, 20), audit.ActorPerson, "ann", audit.ActionExported)
		if got := ids(auditEntries(t, b, ten, "limit=6&cursor="+url.QueryEscape(next))); got != "10" {
			t.Errorf("after a new entry, the next page is %q", got)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		for q, param := range map[string]string{
			"action=webhook.exploded": "action", "action=nothing": "action", "actorKind=robot": "actorKind",
			"from=yesterday": "from", "to=2026-13-01": "to", "from=2026-03-12&to=2026-03-11": "to",
			"limit=0": "limit", "limit=101": "limit", "denied=yes": "denied", "cursor=abc": "cursor", "cursor=1.-2": "cursor",
		} {
			status, body := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log?"+q, ten.Token, nil)
			if status != http.StatusBadRequest || webtest.Obj(body["details"])[param] == nil {
				t.Errorf("%s: %d %v, want 400 naming %s", q, status, body, param)
			}
		}
		// The scope: a token without audit:read is refused; another tenant's token finds no tenant.
		tok := b.Token(t, ten.ID, auth.ScopeSettingsRead)
		if status, _ := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log", tok, nil); status != http.StatusForbidden {
			t.Errorf("without audit:read: %d", status)
		}
		if status, _ := b.Do(t, http.MethodGet, "/tenants/"+ten.Slug+"/audit-log", other.Token, nil); status != http.StatusNotFound {
			t.Errorf("another tenant's token: %d", status)
		}
		if got := auditEntries(t, b, other, ""); len(got) != 1 {
			t.Errorf("the other tenant sees %d entries", len(got))
		}
	})
}

// The OpenAPI document's actions and areas are the vocabulary's
// (db/audit/actions.go): a new action goes into its enum.
func TestAuditLogActionsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	var get struct {
		Parameters []struct {
			Name   string
			Schema struct{ Enum []string }
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc.Paths["/tenants/{slug}/audit-log"]["get"], &get); err != nil {
		t.Fatal(err)
	}
	for _, p := range get.Parameters {
		if p.Name == "action" {
			want := append(audit.Actions(), audit.Areas()...)
			if !slices.Equal(p.Schema.Enum, want) {
				t.Errorf("the action filter's enum is %v, want %v", p.Schema.Enum, want)
			}
			return
		}
	}
	t.Error("no action filter documented")
}
