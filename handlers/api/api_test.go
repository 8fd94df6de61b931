package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"

	"github.com/parley/parley/web/webtest"

	neturl "net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// ---- helpers of this file ----

// jsonBody marshals v.
func jsonBody(t *testing.T, v any) string {
	t.Helper()
	buf, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf)
}

// checkErrorShape asserts the spec's error object: {error: non-empty string, details?, code?} and nothing else.
func checkErrorShape(t *testing.T, status int, body map[string]any, raw string) {
	t.Helper()
	if body == nil {
		t.Fatalf("status %d: body is not a JSON object: %q", status, raw)
	}
	if msg, ok := body["error"].(string); !ok || msg == "" {
		t.Errorf("status %d: error is not a non-empty string: %q", status, raw)
	}
	for k := range body {
		if k != "error" && k != "details" && k != "code" {
			t.Errorf("status %d: unexpected key %q in error body %q", status, k, raw)
		}
	}
}

// scopesExcept is every REST scope but one.
func scopesExcept(scope string) []string {
	var out []string
	for _, s := range auth.RESTScopes {
		if s != scope {
			out = append(out, s)
		}
	}
	return out
}

// jsonValue is v as encoding/json decodes it into an any, for comparisons with decoded bodies.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(jsonBody(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// endpoint is one management endpoint of the tenant resource.
type endpoint struct {
	name, method, suffix, scope, body string
}

var tenantEndpoints = []endpoint{
	{"GET tenant", "GET", "", auth.ScopeSettingsRead, ""},
	{"PUT tenant", "PUT", "", auth.ScopeSettingsWrite, `{"botName":"Scoped"}`},
	{"GET stats", "GET", "/stats", auth.ScopeSettingsRead, ""},
}

// ---- 1. authentication ----

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	ctx := context.Background()

	revoked, revokedID := b.NewToken(t, ten.ID, false, auth.RESTScopes...)
	if err := b.DB.RevokeToken(ctx, ten.ID, revokedID); err != nil {
		t.Fatal(err)
	}
	legacy, _ := b.NewToken(t, ten.ID, true, auth.RESTScopes...)
	unknownAK, _ := auth.NewToken(ten.ID, "never stored", auth.RESTScopes, false)
	unknownLegacy, _ := auth.NewToken(ten.ID, "never stored", auth.RESTScopes, true)

	cases := []struct {
		name    string
		headers map[string]string
		msg     string // substring of the error message, when it matters
	}{
		{"no credentials", nil, ""},
		{"basic scheme", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, "Bearer"},
		{"bearer without token", map[string]string{"Authorization": "Bearer"}, "Bearer"},
		{"bearer with blank token", map[string]string{"Authorization": "Bearer    "}, "Bearer"},
		{"token without scheme", map[string]string{"Authorization": ten.Token}, "Bearer"},
		{"unknown ak_ token", webtest.Bearer(unknownAK), ""},
		{"ak_ prefix only", webtest.Bearer("ak_"), ""},
		{"revoked token", webtest.Bearer(revoked), ""},
		{"ak_ token in X-API-Key", map[string]string{"X-API-Key": ten.Token}, "Bearer"},
		{"legacy key as Bearer", webtest.Bearer(legacy), ""},
		{"unknown legacy key in X-API-Key", map[string]string{"X-API-Key": unknownLegacy}, ""},
		{"JWT-looking bearer", webtest.Bearer("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZW5hbnQifQ.c2lnbmF0dXJl"), ""},
		{"random bearer", webtest.Bearer("not-a-token"), ""},
		{"empty X-API-Key", map[string]string{"X-API-Key": "   "}, ""},
	}
	for _, ep := range tenantEndpoints {
		for _, tc := range cases {
			t.Run(ep.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				status, body, raw := b.Request(t, ep.method, "/tenants/"+ten.Slug+ep.suffix, tc.headers, ep.body)
				if status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401: %s", status, raw)
				}
				checkErrorShape(t, status, body, raw)
				if tc.msg != "" && !strings.Contains(body["error"].(string), tc.msg) {
					t.Errorf("error %q does not mention %q", body["error"], tc.msg)
				}
				if strings.Contains(raw, ten.Token) {
					t.Errorf("the 401 body echoes the credential: %s", raw)
				}
			})
		}
	}

	// Nothing changed through the refused PUTs.
	got, err := b.DB.TenantBySlug(ctx, ten.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if got.BotName != nil {
		t.Errorf("a refused PUT changed botName to %q", *got.BotName)
	}
}

func TestAuthAccepted(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"Bearer", webtest.Bearer(ten.Token)},
		{"lower-case scheme", map[string]string{"Authorization": "bearer " + ten.Token}},
		{"extra spaces", map[string]string{"Authorization": "Bearer   " + ten.Token + "  "}},
		{"Authorization wins over a bad X-API-Key", map[string]string{"Authorization": "Bearer " + ten.Token, "X-API-Key": "nonsense"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body, raw := b.Request(t, "GET", "/tenants/"+ten.Slug, tc.headers, "")
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, raw)
			}
			if body["tenant"].(map[string]any)["id"] != ten.ID {
				t.Errorf("wrong tenant: %s", raw)
			}
		})
	}
	t.Run("a bad Authorization is not rescued by a good X-API-Key", func(t *testing.T) {
		t.Parallel()
		legacy, _ := b.NewToken(t, ten.ID, true, auth.ScopeSettingsRead)
		status, body, raw := b.Request(t, "GET", "/tenants/"+ten.Slug,
			map[string]string{"Authorization": "Basic abc", "X-API-Key": legacy}, "")
		if status != http.StatusUnauthorized {
			t.Fatalf("status %d: %s", status, raw)
		}
		checkErrorShape(t, status, body, raw)
	})
}

func TestAuthLegacyKey(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	other := b.NewTenant(t, "scale")
	ctx := context.Background()

	readKey, _ := b.NewToken(t, ten.ID, true, auth.ScopeSettingsRead)
	statsKey, _ := b.NewToken(t, ten.ID, true, auth.LegacyKeyScopes...)
	writeKey, _ := b.NewToken(t, ten.ID, true, auth.ScopeSettingsWrite)
	revokedKey, revokedID := b.NewToken(t, ten.ID, true, auth.RESTScopes...)
	if err := b.DB.RevokeToken(ctx, ten.ID, revokedID); err != nil {
		t.Fatal(err)
	}
	apiKey := func(k string) map[string]string { return map[string]string{"X-API-Key": k} }

	cases := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		body    string
		want    int
		err     string
	}{
		{"settings:read key reads the tenant", "GET", "/tenants/" + ten.Slug, apiKey(readKey), "", 200, ""},
		{"settings:read key reads stats", "GET", "/tenants/" + ten.Slug + "/stats", apiKey(readKey), "", 200, ""},
		{"settings:read key cannot write", "PUT", "/tenants/" + ten.Slug, apiKey(readKey), `{"botName":"x"}`, 403, "Missing scope: settings:write"},
		{"settings:write key writes", "PUT", "/tenants/" + ten.Slug, apiKey(writeKey), `{"botTitle":"Legacy"}`, 200, ""},
		{"stats:read key only has stats:read", "GET", "/tenants/" + ten.Slug, apiKey(statsKey), "", 403, "Missing scope: settings:read"},
		{"stats:read key cannot read /stats, which needs settings:read", "GET", "/tenants/" + ten.Slug + "/stats", apiKey(statsKey), "", 403, "Missing scope: settings:read"},
		{"key with surrounding spaces", "GET", "/tenants/" + ten.Slug, apiKey("  " + readKey + " "), "", 200, ""},
		{"legacy key as Bearer", "GET", "/tenants/" + ten.Slug, webtest.Bearer(readKey), "", 401, ""},
		{"revoked legacy key", "GET", "/tenants/" + ten.Slug, apiKey(revokedKey), "", 401, ""},
		{"legacy key on another tenant", "GET", "/tenants/" + other.Slug, apiKey(readKey), "", 404, "Tenant not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body, raw := b.Request(t, tc.method, tc.path, tc.headers, tc.body)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, raw)
			}
			if tc.want >= 400 {
				checkErrorShape(t, status, body, raw)
			}
			if tc.err != "" && body["error"] != tc.err {
				t.Errorf("error %q, want %q", body["error"], tc.err)
			}
		})
	}
}

// ---- 2. scopes ----

func TestScopeMatrix(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	for _, ep := range tenantEndpoints {
		t.Run(ep.name+"/every scope but "+ep.scope, func(t *testing.T) {
			t.Parallel()
			tok := b.Token(t, ten.ID, scopesExcept(ep.scope)...)
			status, body, raw := b.Request(t, ep.method, "/tenants/"+ten.Slug+ep.suffix, webtest.Bearer(tok), ep.body)
			if status != http.StatusForbidden {
				t.Fatalf("status %d, want 403: %s", status, raw)
			}
			checkErrorShape(t, status, body, raw)
			if body["error"] != "Missing scope: "+ep.scope {
				t.Errorf("error = %q", body["error"])
			}
			if d := webtest.Details(t, body); d["requiredScope"] != ep.scope {
				t.Errorf("details = %v", d)
			}
		})
		t.Run(ep.name+"/only "+ep.scope, func(t *testing.T) {
			t.Parallel()
			tok := b.Token(t, ten.ID, ep.scope)
			status, _, raw := b.Request(t, ep.method, "/tenants/"+ten.Slug+ep.suffix, webtest.Bearer(tok), ep.body)
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", status, raw)
			}
		})
	}

	t.Run("a forbidden PUT changes nothing", func(t *testing.T) {
		t.Parallel()
		victim := b.NewTenant(t, "starter")
		tok := b.Token(t, victim.ID, scopesExcept(auth.ScopeSettingsWrite)...)
		status, _, raw := b.Request(t, "PUT", "/tenants/"+victim.Slug, webtest.Bearer(tok), `{"botLore":"forbidden lore"}`)
		if status != http.StatusForbidden {
			t.Fatalf("status %d: %s", status, raw)
		}
		got, err := b.DB.TenantBySlug(context.Background(), victim.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if got.BotLore != nil {
			t.Errorf("botLore = %q after a 403", *got.BotLore)
		}
	})
}

// ---- 3. tenant isolation ----

func TestIsolation(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	a := b.NewTenant(t, "scale")
	victim := b.NewTenant(t, "scale")
	before, err := b.DB.TenantBySlug(context.Background(), victim.Slug)
	if err != nil {
		t.Fatal(err)
	}
	aLegacy, _ := b.NewToken(t, a.ID, true, auth.RESTScopes...)
	aNoScope := b.Token(t, a.ID, auth.ScopeCorpusRead)

	slugs := []struct{ name, slug string }{
		{"another tenant's slug", victim.Slug},
		{"unknown slug", "no-such-tenant-" + a.Slug},
		{"slug that is not a slug", "Not_A%20Slug"},
		{"overlong slug", strings.Repeat("x", 300)},
	}
	creds := []struct {
		name    string
		headers map[string]string
	}{
		{"ak_ token with every scope", webtest.Bearer(a.Token)},
		{"legacy key with every scope", map[string]string{"X-API-Key": aLegacy}},
		{"ak_ token without the scope", webtest.Bearer(aNoScope)},
	}
	for _, ep := range tenantEndpoints {
		for _, s := range slugs {
			for _, c := range creds {
				t.Run(ep.name+"/"+s.name+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					body := `{"botName":"Intruder","name":"Hijacked","captchaEnabled":false}`
					if ep.method == "GET" {
						body = ""
					}
					status, got, raw := b.Request(t, ep.method, "/tenants/"+s.slug+ep.suffix, c.headers, body)
					if status != http.StatusNotFound {
						t.Fatalf("status %d, want 404: %s", status, raw)
					}
					if !reflect.DeepEqual(got, map[string]any{"error": "Tenant not found"}) {
						t.Errorf("body = %s, want exactly {\"error\":\"Tenant not found\"}", raw)
					}
				})
			}
		}
	}
	t.Cleanup(func() {
		after, err := b.DB.TenantBySlug(context.Background(), victim.Slug)
		if err != nil {
			t.Error(err)
			return
		}
		if after.Name != before.Name || after.BotName != nil || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("another tenant's PUT changed the victim: name %q botName %v updated %v -> %v",
				after.Name, after.BotName, before.UpdatedAt, after.UpdatedAt)
		}
	})
}

// ---- 4. PUT /tenants/{slug} ----

// fieldCase is one PUT body and what it must do.
type fieldCase struct {
	name string
	body map[string]any
	// errs lists the fields details must name (exactly); empty means 200.
	errs []string
	// errHas is a substring of the message of the first field in errs.
	errHas string
	// want are fields of the returned tenant after a 200 (values as JSON decodes them);
	// nil means the sent body itself.
	want map[string]any
}

func domainOfLength(n int) string {
	// labels of at most 63 characters separated by dots
	var labels []string
	for n > 0 {
		l := min(63, n)
		if n-l == 1 { // never leave a lone dot with nothing after it
			l--
		}
		labels = append(labels, strings.Repeat("a", l))
		n -= l
		if n > 0 {
			n-- // the dot
		}
	}
	return strings.Join(labels, ".")
}

func domains(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("d%d.example.com", i)
	}
	return out
}

func urlOfLength(n int) string {
	const prefix = "https://example.com/"
	return prefix + strings.Repeat("p", n-len(prefix))
}

func str(n int) string { return strings.Repeat("x", n) }

func tenantFieldCases() []fieldCase {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []fieldCase{
		// name
		{name: "name 255", body: obj("name", str(255))},
		{name: "name 256", body: obj("name", str(256)), errs: []string{"name"}, errHas: "255"},
		{name: "name empty", body: obj("name", ""), errs: []string{"name"}, errHas: "empty"},
		{name: "name blank", body: obj("name", "   "), errs: []string{"name"}},
		{name: "name null", body: obj("name", nil), errs: []string{"name"}, errHas: "null"},
		{name: "name trimmed", body: obj("name", "  Trimmed Co  "), want: obj("name", "Trimmed Co")},
		{name: "name number", body: obj("name", 5), errs: []string{"name"}, errHas: "must be a string"},
		// lengths
		{name: "botName 50", body: obj("botName", str(50))},
		{name: "botName 51", body: obj("botName", str(51)), errs: []string{"botName"}, errHas: "50"},
		{name: "botName multibyte 50", body: obj("botName", strings.Repeat("é", 50))},
		{name: "botName null", body: obj("botName", nil)},
		{name: "botTitle 100", body: obj("botTitle", str(100))},
		{name: "botTitle 101", body: obj("botTitle", str(101)), errs: []string{"botTitle"}, errHas: "100"},
		{name: "botLore 10000", body: obj("botLore", str(10000))},
		{name: "botLore 10001", body: obj("botLore", str(10001)), errs: []string{"botLore"}, errHas: "10000"},
		{name: "teaserText 160", body: obj("teaserText", str(160))},
		{name: "teaserText 161", body: obj("teaserText", str(161)), errs: []string{"teaserText"}, errHas: "160"},
		{name: "avatarBackground 100", body: obj("avatarBackground", str(100))},
		{name: "avatarBackground 101", body: obj("avatarBackground", str(101)), errs: []string{"avatarBackground"}, errHas: "100"},
		{name: "description 500", body: obj("description", str(500))},
		{name: "description 501", body: obj("description", str(501)), errs: []string{"description"}, errHas: "500"},
		// botAvatar
		{name: "botAvatar 500", body: obj("botAvatar", urlOfLength(500))},
		{name: "botAvatar 501", body: obj("botAvatar", urlOfLength(501)), errs: []string{"botAvatar"}, errHas: "500"},
		{name: "botAvatar not a URL", body: obj("botAvatar", "not a url"), errs: []string{"botAvatar"}, errHas: "URL"},
		{name: "botAvatar relative", body: obj("botAvatar", "/avatar.png"), errs: []string{"botAvatar"}},
		{name: "botAvatar javascript", body: obj("botAvatar", "javascript:alert(1)"), errs: []string{"botAvatar"}},
		{name: "botAvatar http", body: obj("botAvatar", "http://example.com/a.png")},
		// allowedDomains
		{name: "allowedDomains entry 255", body: obj("allowedDomains", []string{domainOfLength(255)})},
		{name: "allowedDomains entry 256", body: obj("allowedDomains", []string{domainOfLength(256)}), errs: []string{"allowedDomains"}, errHas: "255"},
		{name: "allowedDomains 100 entries", body: obj("allowedDomains", domains(100))},
		{name: "allowedDomains 101 entries", body: obj("allowedDomains", domains(101)), errs: []string{"allowedDomains"}, errHas: "100"},
		{name: "allowedDomains with scheme and path", body: obj("allowedDomains", []string{"https://x.com/path"}), errs: []string{"allowedDomains"}},
		{name: "allowedDomains with a space", body: obj("allowedDomains", []string{"a b"}), errs: []string{"allowedDomains"}},
		{name: "allowedDomains empty entry", body: obj("allowedDomains", []string{""}), errs: []string{"allowedDomains"}},
		{name: "allowedDomains not an array", body: obj("allowedDomains", "example.com"), errs: []string{"allowedDomains"}, errHas: "array"},
		{name: "allowedDomains number entry", body: obj("allowedDomains", []any{1}), errs: []string{"allowedDomains"}},
		{name: "allowedDomains normalised", body: obj("allowedDomains", []string{"Example.COM", "example.com", " WWW.Example.com ", "*.Example.com"}),
			want: obj("allowedDomains", []any{"example.com", "www.example.com", "*.example.com"})},
		{name: "allowedDomains wildcard", body: obj("allowedDomains", []string{"*.example.com"})},
		{name: "allowedDomains with port", body: obj("allowedDomains", []string{"localhost:3000"})},
		{name: "allowedDomains null clears", body: obj("allowedDomains", nil), want: obj("allowedDomains", []any{})},
		{name: "allowedDomains empty", body: obj("allowedDomains", []string{}), want: obj("allowedDomains", []any{})},
		// autoOpenDelay
		{name: "autoOpenDelay 3", body: obj("autoOpenDelay", 3)},
		{name: "autoOpenDelay 120", body: obj("autoOpenDelay", 120)},
		{name: "autoOpenDelay 2", body: obj("autoOpenDelay", 2), errs: []string{"autoOpenDelay"}, errHas: "between 3 and 120"},
		{name: "autoOpenDelay 121", body: obj("autoOpenDelay", 121), errs: []string{"autoOpenDelay"}, errHas: "between 3 and 120"},
		{name: "autoOpenDelay 3.5", body: obj("autoOpenDelay", 3.5), errs: []string{"autoOpenDelay"}, errHas: "integer"},
		{name: "autoOpenDelay string", body: obj("autoOpenDelay", "10"), errs: []string{"autoOpenDelay"}, errHas: "integer"},
		{name: "autoOpenDelay null", body: obj("autoOpenDelay", nil), errs: []string{"autoOpenDelay"}},
		{name: "autoOpenDelay huge", body: obj("autoOpenDelay", 1e30), errs: []string{"autoOpenDelay"}},
		// colours
		{name: "primaryColor bad digit", body: obj("primaryColor", "#12345G"), errs: []string{"primaryColor"}, errHas: "#RRGGBB"},
		{name: "primaryColor no hash", body: obj("primaryColor", "123456"), errs: []string{"primaryColor"}},
		{name: "primaryColor too long", body: obj("primaryColor", "#1234567"), errs: []string{"primaryColor"}},
		{name: "primaryColor short form", body: obj("primaryColor", "#abc"), errs: []string{"primaryColor"}},
		{name: "primaryColor name", body: obj("primaryColor", "red"), errs: []string{"primaryColor"}},
		{name: "primaryColor mixed case", body: obj("primaryColor", "#A1b2C3")},
		{name: "primaryColor null", body: obj("primaryColor", nil), errs: []string{"primaryColor"}, errHas: "null"},
		{name: "secondaryColor set", body: obj("secondaryColor", "#00FF00")},
		{name: "secondaryColor bad", body: obj("secondaryColor", "green"), errs: []string{"secondaryColor"}},
		{name: "secondaryColor null clears", body: obj("secondaryColor", nil)},
		// enums
		{name: "botTone ok", body: obj("botTone", "PLAYFUL")},
		{name: "botTone unknown", body: obj("botTone", "SARCASTIC"), errs: []string{"botTone"}, errHas: "FORMAL, NEUTRAL, FRIENDLY, PLAYFUL, TECHNICAL"},
		{name: "botTone lower case", body: obj("botTone", "friendly"), errs: []string{"botTone"}},
		{name: "botTone null", body: obj("botTone", nil), errs: []string{"botTone"}},
		{name: "avatarType ok", body: obj("avatarType", "GENERATED")},
		{name: "avatarType unknown", body: obj("avatarType", "PHOTO"), errs: []string{"avatarType"}, errHas: "DEFAULT, UPLOAD, LIBRARY, GENERATED"},
		{name: "contentPolicy ok", body: obj("contentPolicy", "SFW_STRICT")},
		{name: "contentPolicy unknown", body: obj("contentPolicy", "NSFW"), errs: []string{"contentPolicy"}, errHas: "SFW_STRICT, SFW, MODERATE, UNFILTERED"},
		// visitor auth
		{name: "visitorAuthMode jwt", body: obj("visitorAuthMode", "jwt")},
		{name: "visitorAuthMode otp", body: obj("visitorAuthMode", "otp")},
		{name: "visitorAuthMode all", body: obj("visitorAuthMode", "all")},
		{name: "visitorAuthMode null", body: obj("visitorAuthMode", nil)},
		{name: "visitorAuthMode sms", body: obj("visitorAuthMode", "sms"), errs: []string{"visitorAuthMode"}, errHas: "jwt, otp, all"},
		{name: "visitorContextUrl https", body: obj("visitorContextUrl", "https://example.com/context")},
		{name: "visitorContextUrl http", body: obj("visitorContextUrl", "http://example.com/context"), errs: []string{"visitorContextUrl"}, errHas: "https"},
		{name: "visitorContextUrl not a URL", body: obj("visitorContextUrl", "context"), errs: []string{"visitorContextUrl"}},
		{name: "visitorContextUrl 501", body: obj("visitorContextUrl", urlOfLength(501)), errs: []string{"visitorContextUrl"}},
		// timezone
		{name: "timezone Europe/Paris", body: obj("timezone", "Europe/Paris")},
		{name: "timezone UTC", body: obj("timezone", "UTC")},
		{name: "timezone Mars/Base", body: obj("timezone", "Mars/Base"), errs: []string{"timezone"}, errHas: "IANA"},
		{name: "timezone Local", body: obj("timezone", "Local"), errs: []string{"timezone"}},
		{name: "timezone empty", body: obj("timezone", ""), errs: []string{"timezone"}},
		{name: "timezone path", body: obj("timezone", "../../etc/passwd"), errs: []string{"timezone"}},
		// booking CTA
		{name: "bookingCtaConfig at limits", body: obj("bookingCtaConfig", obj("headline", str(100), "subtitle", str(200), "ctaText", str(50), "officeHours", str(200)))},
		{name: "bookingCtaConfig headline 101", body: obj("bookingCtaConfig", obj("headline", str(101))), errs: []string{"bookingCtaConfig"}, errHas: "headline"},
		{name: "bookingCtaConfig subtitle 201", body: obj("bookingCtaConfig", obj("subtitle", str(201))), errs: []string{"bookingCtaConfig"}, errHas: "subtitle"},
		{name: "bookingCtaConfig ctaText 51", body: obj("bookingCtaConfig", obj("ctaText", str(51))), errs: []string{"bookingCtaConfig"}, errHas: "ctaText"},
		{name: "bookingCtaConfig officeHours 201", body: obj("bookingCtaConfig", obj("officeHours", str(201))), errs: []string{"bookingCtaConfig"}, errHas: "officeHours"},
		{name: "bookingCtaConfig not an object", body: obj("bookingCtaConfig", "x"), errs: []string{"bookingCtaConfig"}, errHas: "object"},
		{name: "bookingCtaConfig wrong member type", body: obj("bookingCtaConfig", obj("headline", 5)), errs: []string{"bookingCtaConfig"}, errHas: "headline"},
		{name: "bookingCtaConfig null resets", body: obj("bookingCtaConfig", nil),
			want: obj("bookingCtaConfig", obj("headline", "", "subtitle", "", "ctaText", "", "officeHours", ""))},
		// captcha site key alone is fine while the gate is off
		{name: "captchaSiteKey alone", body: obj("captchaSiteKey", "site-key")},
		{name: "captchaSiteKey 256", body: obj("captchaSiteKey", str(256)), errs: []string{"captchaSiteKey"}},
		// several errors at once
		{name: "several errors together", body: obj("botName", str(51), "primaryColor", "red", "autoOpenDelay", 1, "allowEmojis", "yes", "timezone", "Mars/Base"),
			errs: []string{"allowEmojis", "autoOpenDelay", "botName", "primaryColor", "timezone"}},
		// unknown and read-only fields are ignored
		{name: "unknown and read-only fields ignored", body: obj("frobnicate", 1, "plan", "scale", "slug", "hijacked", "id", "x",
			"conversationsLimit", 1e6, "botSeats", 99, "hasCaptchaSecretKey", true, "botName", "Kept"),
			want: obj("plan", "starter", "conversationsLimit", 1000.0, "botSeats", 0.0, "hasCaptchaSecretKey", false, "botName", "Kept")},
		{name: "empty object", body: obj(), want: obj()},
		// PostgreSQL text cannot hold NUL: a 400, not a 500
		{name: "name with NUL", body: obj("name", "a\x00b"), errs: []string{"name"}, errHas: "NUL"},
		{name: "botLore with NUL", body: obj("botLore", "lore\x00"), errs: []string{"botLore"}, errHas: "NUL"},
		{name: "teaserText with NUL", body: obj("teaserText", "\x00"), errs: []string{"teaserText"}, errHas: "NUL"},
		{name: "captchaSiteKey with NUL", body: obj("captchaSiteKey", "k\x00"), errs: []string{"captchaSiteKey"}, errHas: "NUL"},
		{name: "timezone with NUL", body: obj("timezone", "UTC\x00"), errs: []string{"timezone"}},
		{name: "allowedDomains with NUL", body: obj("allowedDomains", []string{"a\x00.com"}), errs: []string{"allowedDomains"}},
		{name: "bookingCtaConfig with NUL", body: obj("bookingCtaConfig", obj("headline", "a\x00")), errs: []string{"bookingCtaConfig"}, errHas: "NUL"},
	}
	// every boolean: true is accepted, a string and null are refused
	for _, f := range []string{"useTutoiement", "allowEmojis", "showAiBadge", "autoOpen", "bubblePulse", "bookingCtaEnabled", "isOnboarded", "captchaEnabled"} {
		if f != "captchaEnabled" {
			cases = append(cases, fieldCase{name: f + " true", body: obj(f, true)})
		}
		cases = append(cases,
			fieldCase{name: f + " false", body: obj(f, false)},
			fieldCase{name: f + " string", body: obj(f, "true"), errs: []string{f}, errHas: "must be a boolean"},
			fieldCase{name: f + " number", body: obj(f, 1), errs: []string{f}, errHas: "must be a boolean"},
			fieldCase{name: f + " null", body: obj(f, nil), errs: []string{f}, errHas: "null"})
	}
	// every string field refuses other types
	for _, f := range []string{"botName", "botTitle", "botLore", "description", "teaserText", "botAvatar", "avatarBackground", "primaryColor", "timezone", "visitorContextUrl"} {
		cases = append(cases, fieldCase{name: f + " not a string", body: obj(f, []int{1}), errs: []string{f}, errHas: "must be a string"})
	}
	// empty strings clear nullable text fields
	for _, f := range []string{"botName", "botTitle", "botLore", "description", "teaserText", "botAvatar", "avatarBackground", "secondaryColor"} {
		cases = append(cases, fieldCase{name: f + " empty clears", body: obj(f, ""), want: obj(f, nil)})
	}
	return cases
}

func TestTenantUpdateFields(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	for _, tc := range tenantFieldCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ten := b.NewTenant(t, "starter") // each case on a fresh tenant: cases cannot disturb each other
			before, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
			if err != nil {
				t.Fatal(err)
			}
			status, body, raw := b.Request(t, "PUT", "/tenants/"+ten.Slug, webtest.Bearer(ten.Token), jsonBody(t, tc.body))
			if len(tc.errs) > 0 {
				if status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %.500s", status, raw)
				}
				checkErrorShape(t, status, body, raw)
				if body["error"] != "Validation failed" {
					t.Errorf("error = %q", body["error"])
				}
				d := webtest.Details(t, body)
				var keys []string
				for k, v := range d {
					keys = append(keys, k)
					if msg, ok := v.(string); !ok || msg == "" {
						t.Errorf("details[%s] = %v, want a message", k, v)
					}
				}
				slices.Sort(keys)
				if !slices.Equal(keys, tc.errs) {
					t.Errorf("details name %v, want %v: %v", keys, tc.errs, d)
				}
				if tc.errHas != "" && !strings.Contains(fmt.Sprint(d[tc.errs[0]]), tc.errHas) {
					t.Errorf("details[%s] = %q, want it to mention %q", tc.errs[0], d[tc.errs[0]], tc.errHas)
				}
				after, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
				if err != nil {
					t.Fatal(err)
				}
				if !after.UpdatedAt.Equal(before.UpdatedAt) || !reflect.DeepEqual(after, before) {
					t.Errorf("a refused PUT changed the tenant")
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200: %.800s", status, raw)
			}
			if body["id"] != ten.ID || body["slug"] != ten.Slug {
				t.Errorf("PUT did not return the full tenant: %.300s", raw)
			}
			want := tc.want
			if want == nil {
				want = tc.body
			}
			for k, v := range want {
				if got := body[k]; !reflect.DeepEqual(got, jsonValue(t, v)) {
					t.Errorf("%s = %#v, want %#v", k, got, jsonValue(t, v))
				}
			}
			// and it is stored: a GET returns the same values
			got := b.GetTenant(t, ten)
			for k, v := range want {
				if !reflect.DeepEqual(got[k], jsonValue(t, v)) {
					t.Errorf("after GET, %s = %#v, want %#v", k, got[k], jsonValue(t, v))
				}
			}
		})
	}
}

func TestTenantUpdateOnlySentFieldsChange(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	status, first := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{
		"botName": "Ava", "allowedDomains": []string{"example.com"}, "secondaryColor": "#111111", "autoOpenDelay": 30,
		"bookingCtaConfig": map[string]string{"headline": "Book a call"}, "visitorAuthMode": "otp",
	})
	if status != http.StatusOK {
		t.Fatalf("first PUT: %d %v", status, first)
	}
	status, second := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botTitle": "Guide"})
	if status != http.StatusOK {
		t.Fatalf("second PUT: %d %v", status, second)
	}
	if second["botTitle"] != "Guide" || second["botName"] != "Ava" {
		t.Errorf("botTitle %v botName %v", second["botTitle"], second["botName"])
	}
	for k, v := range first {
		if k == "botTitle" || k == "updatedAt" {
			continue
		}
		if !reflect.DeepEqual(second[k], v) {
			t.Errorf("%s changed from %#v to %#v though it was not sent", k, v, second[k])
		}
	}
	up1, _ := time.Parse(time.RFC3339Nano, first["updatedAt"].(string))
	up2, _ := time.Parse(time.RFC3339Nano, second["updatedAt"].(string))
	if up2.Before(up1) {
		t.Errorf("updatedAt went back: %v -> %v", up1, up2)
	}
}

func TestTenantUpdateRawBodies(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	for _, tc := range []struct {
		name, body, field string
		want              any
	}{

		{"escaped unicode", `{"botName":"\u00c9lise"}`, "botName", "Élise"},
		{"duplicate keys: the last wins", `{"botName":"first","botName":"second"}`, "botName", "second"},
		{"keys are case-sensitive", `{"BotName":"ignored","botTitle":"t"}`, "botName", nil},
		{"surrounding whitespace", "\n\t {\"botTitle\":\"ws\"} \n", "botTitle", "ws"},
		{"integer written with an exponent", `{"autoOpenDelay":1e1}`, "autoOpenDelay", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ten := b.NewTenant(t, "starter")
			status, body, raw := b.Request(t, "PUT", "/tenants/"+ten.Slug, webtest.Bearer(ten.Token), tc.body)
			if tc.field == "autoOpenDelay" {
				// 1e1 is 10 written as a float: either accepted as 10 or refused with a
				// field message, never a 500
				switch {
				case status == http.StatusOK && body["autoOpenDelay"] == 10.0:
				case status == http.StatusBadRequest && webtest.Details(t, body)["autoOpenDelay"] != nil:
				default:
					t.Fatalf("status %d: %s", status, raw)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, raw)
			}
			if !reflect.DeepEqual(body[tc.field], tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.field, body[tc.field], tc.want)
			}
		})
	}
}

func TestTenantUpdateCaptcha(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	const secret = "captcha-secret-0x5EC12E7-do-not-leak"
	put := func(t *testing.T, body map[string]any) (int, map[string]any, string) {
		t.Helper()
		return b.Request(t, "PUT", "/tenants/"+ten.Slug, webtest.Bearer(ten.Token), jsonBody(t, body))
	}
	expectFields := func(t *testing.T, status int, body map[string]any, raw string, want ...string) {
		t.Helper()
		if status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", status, raw)
		}
		checkErrorShape(t, status, body, raw)
		var keys []string
		for k := range webtest.Details(t, body) {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("details name %v, want %v", keys, want)
		}
	}

	// Subtests are sequential: each builds on the state the previous one left.
	t.Run("enabled without keys", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaEnabled": true})
		expectFields(t, status, body, raw, "captchaSecretKey", "captchaSiteKey")
	})
	t.Run("enabled with the site key only", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaEnabled": true, "captchaSiteKey": "site-123"})
		expectFields(t, status, body, raw, "captchaSecretKey")
	})
	t.Run("enabled with an empty secret", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaEnabled": true, "captchaSiteKey": "site-123", "captchaSecretKey": ""})
		expectFields(t, status, body, raw, "captchaSecretKey")
	})
	t.Run("enabled with both keys", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaEnabled": true, "captchaSiteKey": "site-123", "captchaSecretKey": secret})
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, raw)
		}
		if body["captchaEnabled"] != true || body["captchaSiteKey"] != "site-123" || body["hasCaptchaSecretKey"] != true {
			t.Errorf("captcha fields: %s", raw)
		}
		if strings.Contains(raw, secret) {
			t.Errorf("PUT response contains the secret: %s", raw)
		}
		if _, ok := body["captchaSecretKey"]; ok {
			t.Errorf("PUT response has a captchaSecretKey field")
		}
	})
	t.Run("the secret never comes back", func(t *testing.T) {
		for _, path := range []string{"/tenants/" + ten.Slug, "/tenants/" + ten.Slug + "/stats"} {
			status, body, raw := b.Request(t, "GET", path, webtest.Bearer(ten.Token), "")
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, status, raw)
			}
			if strings.Contains(raw, secret) {
				t.Errorf("GET %s contains the secret", path)
			}
			if tj, ok := body["tenant"].(map[string]any); ok && tj["hasCaptchaSecretKey"] != true {
				t.Errorf("hasCaptchaSecretKey = %v", tj["hasCaptchaSecretKey"])
			}
		}
	})
	t.Run("the secret is sealed at rest", func(t *testing.T) {
		var stored []byte
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT captcha_secret_key FROM tenants WHERE id = $1`, ten.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if len(stored) == 0 || bytes.Contains(stored, []byte(secret)) {
			t.Fatalf("stored column is empty or holds the plaintext: %q", stored)
		}
		plain, err := b.Box.Open(stored)
		if err != nil || string(plain) != secret {
			t.Errorf("opening the stored secret: %q, %v", plain, err)
		}
	})
	t.Run("other fields keep the gate and the secret", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"botName": "Gatekeeper"})
		if status != http.StatusOK || body["hasCaptchaSecretKey"] != true || body["captchaEnabled"] != true {
			t.Fatalf("status %d: %s", status, raw)
		}
	})
	t.Run("the secret cannot be cleared while enabled", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaSecretKey": nil})
		expectFields(t, status, body, raw, "captchaSecretKey")
		status, body, raw = put(t, map[string]any{"captchaSiteKey": ""})
		expectFields(t, status, body, raw, "captchaSiteKey")
	})
	t.Run("disable and clear", func(t *testing.T) {
		status, body, raw := put(t, map[string]any{"captchaEnabled": false, "captchaSecretKey": nil, "captchaSiteKey": nil})
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, raw)
		}
		if body["captchaEnabled"] != false || body["hasCaptchaSecretKey"] != false || body["captchaSiteKey"] != nil {
			t.Errorf("captcha fields after clearing: %s", raw)
		}
		var stored []byte
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT captcha_secret_key FROM tenants WHERE id = $1`, ten.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored != nil {
			t.Errorf("secret column still set: %q", stored)
		}
	})
}

func TestTenantUpdateBadBodies(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	atLimit := `{"botLore":"` + strings.Repeat("a", 1<<20-len(`{"botLore":""}`)) + `"}`
	if len(atLimit) != 1<<20 {
		t.Fatalf("body of %d bytes", len(atLimit))
	}
	cases := []struct {
		name        string
		body        string
		contentType string
		want        int
		wantDetail  string // a details key, when the error carries field details
	}{
		{"not JSON", "not json", "", 400, ""},
		{"truncated object", `{"botName": "x"`, "", 400, ""},
		{"JSON array", `[{"botName":"x"}]`, "", 400, ""},
		{"JSON string", `"botName"`, "", 400, ""},
		{"JSON null", `null`, "", 400, ""},
		{"empty body", "", "", 400, ""},
		{"whitespace body", " \n\t ", "", 400, ""},
		{"trailing garbage", `{"botName":"x"} {"botName":"y"}`, "", 400, ""},
		{"form encoded", "botName=x", "application/x-www-form-urlencoded", 415, ""},
		{"text", `{"botName":"x"}`, "text/plain", 415, ""},
		{"exactly 1 MiB", atLimit, "", 400, "botLore"},
		{"over 1 MiB", `{"botLore":"` + strings.Repeat("a", 1<<20) + `"}`, "", 413, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := webtest.Bearer(ten.Token)
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			status, body, raw := b.Request(t, "PUT", "/tenants/"+ten.Slug, h, tc.body)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", status, tc.want, raw)
			}
			checkErrorShape(t, status, body, raw)
			if tc.wantDetail != "" {
				if _, ok := webtest.Details(t, body)[tc.wantDetail]; !ok {
					t.Errorf("details lack %s: %.300s", tc.wantDetail, raw)
				}
			}
		})
	}
	t.Cleanup(func() {
		got, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
		if err != nil {
			t.Error(err)
			return
		}
		if got.BotName != nil || got.BotLore != nil {
			t.Errorf("a refused body changed the tenant: botName %v, botLore set %v", got.BotName, got.BotLore != nil)
		}
	})
}

// ---- 5. GET /tenants/{slug} and /stats ----

func TestShowTenant(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")

	status, body := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"embedCode", "recentConversations", "stats", "tenant"}) {
		t.Errorf("envelope keys = %v", keys)
	}
	tj := body["tenant"].(map[string]any)
	if tj["id"] != ten.ID || tj["slug"] != ten.Slug || tj["name"] != ten.Name || tj["plan"] != "scale" ||
		tj["isActivated"] != true || tj["conversationsLimit"].(float64) != 25000 {
		t.Errorf("tenant = %v", tj)
	}
	// documented defaults of a new tenant
	for k, v := range map[string]any{
		"botTone": "NEUTRAL", "primaryColor": "#2563EB", "avatarType": "DEFAULT", "contentPolicy": "SFW",
		"autoOpenDelay": 10.0, "showAiBadge": true, "bubblePulse": true, "allowedDomains": []any{},
		"visitorAuthMode": nil, "captchaEnabled": false, "hasCaptchaSecretKey": false, "timezone": "UTC",
		"isOnboarded": false, "conversationsUsed": 0.0, "botSeats": 0.0,
	} {
		if !reflect.DeepEqual(tj[k], v) {
			t.Errorf("tenant.%s = %#v, want %#v", k, tj[k], v)
		}
	}
	for _, secretField := range []string{"captchaSecretKey", "visitorSigningKey", "widgetKey", "visitor_signing_key"} {
		if _, ok := tj[secretField]; ok {
			t.Errorf("tenant exposes %s", secretField)
		}
	}
	if rc, ok := body["recentConversations"].([]any); !ok || len(rc) != 0 {
		t.Errorf("recentConversations = %#v, want an empty array", body["recentConversations"])
	}
	embed, _ := body["embedCode"].(string)
	if !strings.Contains(embed, `data-tenant="`+ten.Slug+`"`) || !strings.Contains(embed, `src="`+b.Srv.Config.CDNURL+`/widget.js"`) {
		t.Errorf("embedCode = %q", embed)
	}
	if b.Srv.Config.CDNURL != "http://localhost:8080" {
		t.Errorf("CDN URL defaults to %q, want the base URL", b.Srv.Config.CDNURL)
	}
}

func TestShowTenantEmbedCodeCDN(t *testing.T) {
	t.Parallel()
	b := webtest.SetupEnv(t, map[string]string{"PARLEY_BASE_URL": "https://api.example.com", "PARLEY_CDN_URL": "https://cdn.example.com/"})
	ten := b.NewTenant(t, "starter")
	status, body := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	embed := body["embedCode"].(string)
	want := `<script src="https://cdn.example.com/widget.js" data-tenant="` + ten.Slug + `" data-api="https://api.example.com" async></script>`
	if embed != want {
		t.Errorf("embedCode = %q, want %q", embed, want)
	}
}

func TestShowTenantStats(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	plans := []struct {
		plan                     string
		conversations, segs, crp int
		activated                bool
	}{
		{"free", 100, 1, 50, false},
		{"starter", 1000, 3, 500, true},
		{"builder", 5000, 10, 5000, true},
		{"scale", 25000, 50, 50000, true},
	}
	month := db.MonthStart(time.Now())
	for _, p := range plans {
		for _, seats := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s with %d bot seats", p.plan, seats), func(t *testing.T) {
				t.Parallel()
				ten := b.NewTenant(t, p.plan)
				ctx := context.Background()
				if seats > 0 {
					if _, err := b.DB.Pool().Exec(ctx, `UPDATE tenants SET bot_seats = $2 WHERE id = $1`, ten.ID, seats); err != nil {
						t.Fatal(err)
					}
				}
				// two more live tokens and one revoked: 3 live in all
				b.Token(t, ten.ID, auth.ScopeStatsRead)
				b.Token(t, ten.ID, auth.ScopeCorpusRead)
				_, revokedID := b.NewToken(t, ten.ID, true, auth.ScopeStatsRead)
				if err := b.DB.RevokeToken(ctx, ten.ID, revokedID); err != nil {
					t.Fatal(err)
				}
				// two corpus entries, counted against the plan's corpus limit
				if _, err := b.DB.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'a', 'a'), ($1, 'b', 'b')`, ten.ID); err != nil {
					t.Fatal(err)
				}
				wantLimit := float64(p.conversations + 1000*seats)
				wantStats := map[string]any{
					"plan": p.plan, "conversationsUsed": 0.0, "conversationsLimit": wantLimit,
					"segmentsCount": 1.0, "segmentsLimit": float64(p.segs), "corpusCount": 2.0, "corpusLimit": float64(p.crp),
					"apiTokensCount": 3.0,
					"periodStart":    month.Format(time.RFC3339), "periodEnd": month.AddDate(0, 1, 0).Format(time.RFC3339),
				}

				status, show := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
				if status != http.StatusOK {
					t.Fatalf("GET tenant: %d %v", status, show)
				}
				status, stats := b.Do(t, "GET", "/tenants/"+ten.Slug+"/stats", ten.Token, nil)
				if status != http.StatusOK {
					t.Fatalf("GET stats: %d %v", status, stats)
				}
				if !reflect.DeepEqual(stats, wantStats) {
					t.Errorf("stats endpoint = %v\nwant %v", stats, wantStats)
				}
				if !reflect.DeepEqual(show["stats"], wantStats) {
					t.Errorf("inline stats = %v\nwant %v", show["stats"], wantStats)
				}
				tj := show["tenant"].(map[string]any)
				if tj["isActivated"] != p.activated || tj["conversationsLimit"] != wantLimit ||
					tj["segmentsLimit"] != float64(p.segs) || tj["corpusLimit"] != float64(p.crp) || tj["botSeats"] != float64(seats) {
					t.Errorf("tenant limits = isActivated %v conversationsLimit %v segmentsLimit %v corpusLimit %v botSeats %v",
						tj["isActivated"], tj["conversationsLimit"], tj["segmentsLimit"], tj["corpusLimit"], tj["botSeats"])
				}
			})
		}
	}
}

// ---- 6. health and unknown routes ----

func TestHealth(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	for _, tc := range []struct {
		name, method, path string
		headers            map[string]string
		want               int
		wantBody           map[string]any
	}{
		{"healthz", "GET", "/healthz", nil, 200, map[string]any{"status": "ok"}},
		{"readyz", "GET", "/readyz", nil, 200, map[string]any{"status": "ok"}},
		{"healthz trailing slash", "GET", "/healthz/", nil, 200, map[string]any{"status": "ok"}},
		{"unknown route", "GET", "/no/such/route", nil, 404, map[string]any{"error": "Not Found"}},
		{"tenants without a slug", "GET", "/tenants", webtest.Bearer(ten.Token), 404, map[string]any{"error": "Not Found"}},
		{"unknown route under a tenant", "GET", "/tenants/" + ten.Slug + "/nope", webtest.Bearer(ten.Token), 404, map[string]any{"error": "Not Found"}},
		{"unknown route under a tenant without credentials", "GET", "/tenants/" + ten.Slug + "/nope", nil, 401, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body, raw := b.Request(t, tc.method, tc.path, tc.headers, "")
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, raw)
			}
			if status >= 400 {
				checkErrorShape(t, status, body, raw)
			}
			if tc.wantBody != nil && !reflect.DeepEqual(body, tc.wantBody) {
				t.Errorf("body = %s, want %v", raw, tc.wantBody)
			}
		})
	}
	t.Run("wrong method on a tenant", func(t *testing.T) {
		t.Parallel()
		status, body, raw := b.Request(t, "DELETE", "/tenants/"+ten.Slug, webtest.Bearer(ten.Token), "")
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			t.Fatalf("status %d: %s", status, raw)
		}
		checkErrorShape(t, status, body, raw)
		if _, err := b.DB.TenantBySlug(context.Background(), ten.Slug); err != nil {
			t.Errorf("tenant gone after DELETE: %v", err)
		}
	})
}

// TestAuthAdminLoginOddInput: text PostgreSQL cannot store (NUL, invalid
// UTF-8) in the sign-in form is a failed sign-in, not a 500.
func TestAuthAdminLoginOddInput(t *testing.T) {
	t.Parallel()
	// The failures count against the client address: give this test an address
	// of its own so that other sign-in tests from 127.0.0.1 are not throttled.
	b := webtest.SetupEnv(t, map[string]string{"PARLEY_TRUSTED_PROXIES": "127.0.0.1/32,::1/128"})
	ip := fmt.Sprintf("198.18.%d.%d", time.Now().UnixNano()%250, webtest.TenantSeq.Add(1)%250+1)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Transport: b.TS.Client().Transport, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(req *http.Request) *http.Response {
		t.Helper()
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	req, _ := http.NewRequest("GET", b.TS.URL+"/admin/login", nil)
	resp := send(req)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the sign-in page: %.300s", page)
	}
	// Text PostgreSQL cannot store is refused at the edge (400 naming the
	// field); a well-formed unknown login is refused by the sign-in (401).
	for _, tc := range []struct {
		email, password string
		want            int
	}{
		{"a\x00b@example.com", "wrong password", http.StatusBadRequest},
		{"\xff\xfe@example.com", "wrong password", http.StatusBadRequest},
		{"nobody@example.com", "wrong password \x00", http.StatusBadRequest},
		{"nobody@example.com", "wrong password", http.StatusUnauthorized},
	} {
		t.Run(fmt.Sprintf("%q %q", tc.email, tc.password), func(t *testing.T) {
			form := neturl.Values{"_csrf": {string(m[1])}, "email": {tc.email}, "password": {tc.password}}
			req, _ := http.NewRequest("POST", b.TS.URL+"/admin/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp := send(req)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// TestTenantUpdateAgainstDocument sends PUT /tenants/{slug} bodies that set
// every field, clear every nullable one, and break one rule per field: the
// document accepts the first two as the server does, and refuses each
// invalid field as the server does (400 naming it).
func TestTenantUpdateAgainstDocument(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	c := &webtest.OpenAPIChecker{T: t, B: b}
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug

	valid := map[string]any{
		"name": "Renamed", "description": "We sell things", "timezone": "Europe/Paris",
		"botName": "Ada", "botTitle": "Assistant", "botLore": "Knows everything.", "botTone": "FRIENDLY",
		"useTutoiement": true, "allowEmojis": true, "primaryColor": "#0F766E", "secondaryColor": "#ffffff",
		"showAiBadge": false, "botAvatar": "https://cdn.example.com/ada.png", "avatarType": "UPLOAD",
		"avatarBackground": "#000000", "teaserText": "Ask me", "autoOpen": true, "autoOpenDelay": 5,
		"bubblePulse": false, "allowedDomains": []string{"example.com", "*.example.org"},
		"contentPolicy": "SFW_STRICT", "visitorAuthMode": "otp", "visitorContextUrl": "https://hooks.example.com/ctx",
		"captchaEnabled": true, "captchaSiteKey": "site-key", "captchaSecretKey": "secret-key",
		"bookingCtaEnabled": true,
		"bookingCtaConfig":  map[string]any{"headline": "Book", "subtitle": "Now", "ctaText": "Go", "officeHours": "9-5"},
		"isOnboarded":       true,
	}
	status, body := c.Exchange("PUT", base, ten.Token, valid, true)
	if status != http.StatusOK {
		t.Fatalf("PUT valid: %d %v", status, body)
	}
	if got := body.(map[string]any); got["hasCaptchaSecretKey"] != true || got["botName"] != "Ada" {
		t.Errorf("PUT did not apply: %v", got)
	}

	// Clearing nullable fields gives nulls, which the document must allow.
	clear := map[string]any{
		"captchaEnabled": false, "captchaSiteKey": nil, "captchaSecretKey": "", "description": nil, "botName": "",
		"secondaryColor": nil, "botAvatar": "", "visitorAuthMode": nil, "visitorContextUrl": "", "allowedDomains": nil,
		"bookingCtaConfig": nil, "teaserText": nil, "avatarBackground": nil, "botTitle": nil, "botLore": nil,
		"id": "ignored", "unknownField": 1,
	}
	status, body = c.Exchange("PUT", base, ten.Token, clear, true)
	if status != http.StatusOK {
		t.Fatalf("PUT clear: %d %v", status, body)
	}
	if got := body.(map[string]any); got["botName"] != nil || got["hasCaptchaSecretKey"] != false {
		t.Errorf("PUT clear did not apply: %v", got)
	}

	invalid := map[string]any{
		"primaryColor": "red", "autoOpenDelay": 1, "botTone": "LOUD", "showAiBadge": "yes",
		"teaserText": strings.Repeat("x", 161), "visitorContextUrl": "ftp://insecure.example.com",
		"allowedDomains": []string{"https://example.com/"}, "name": nil,
	}
	status, body = c.Exchange("PUT", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("PUT invalid: %d %v", status, body)
	}
	details, _ := body.(map[string]any)["details"].(map[string]any)
	for field := range invalid {
		if _, ok := details[field]; !ok {
			t.Errorf("PUT invalid: no details for %s: %v", field, details)
		}
	}

	// Each invalid field alone is refused by both the server and the document.
	for field, value := range invalid {
		status, body = c.Exchange("PUT", base, ten.Token, map[string]any{field: value}, false)
		if status != http.StatusBadRequest {
			t.Errorf("PUT %s=%v: %d %v", field, value, status, body)
		}
	}
}
