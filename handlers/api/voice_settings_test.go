package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/vapi/vapitest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// setupWithVapi is setup with the managed voice setup pointed at a fake Vapi.
func setupWithVapi(t *testing.T) (*webtest.Bundle, *vapitest.Server) {
	t.Helper()
	fake := vapitest.Start(t)
	store := dbtest.New(t)
	cfg := webtest.Config(t, map[string]string{"PARLEY_VAPI_API_KEY": vapitest.Key, "PARLEY_VAPI_BASE_URL": fake.URL()})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return webtest.NewBundle(t, srv, store), fake
}

func TestVoiceTenantFields(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	got := b.TenantOf(t, ten)
	if got["voiceEnabled"] != false || got["voiceProvider"] != "vapi" || got["voicePhoneNumber"] != nil ||
		got["voiceAssistantId"] != nil || got["voiceSecretSet"] != false {
		t.Fatalf("defaults: %v", got)
	}
	if cfg, _ := got["voiceConfig"].(map[string]any); cfg == nil || len(cfg) != 0 {
		t.Fatalf("voiceConfig default = %v, want {}", got["voiceConfig"])
	}
	if _, leaked := got["voiceSecret"]; leaked {
		t.Fatal("the secret is returned")
	}

	phrases := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strings.Repeat("b", size)
		}
		return out
	}
	atLimits := map[string]any{"voiceId": strings.Repeat("v", 100), "language": "fr-FR", "firstMessage": strings.Repeat("é", 1000),
		"endCallPhrases": phrases(10, 100), "maxCallDuration": 3600}
	st, put := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voiceConfig": atLimits,
		"voicePhoneNumber": " +33198765432 ", "voiceAssistantId": "5b6c1d2e-0f9a", "voiceProvider": "vapi"})
	if st != 200 {
		t.Fatalf("at the limits: %d %v", st, put)
	}
	cfg := put["voiceConfig"].(map[string]any)
	if cfg["maxCallDuration"] != float64(3600) || len(cfg["endCallPhrases"].([]any)) != 10 || cfg["language"] != "fr-FR" ||
		put["voicePhoneNumber"] != "+33198765432" || put["voiceAssistantId"] != "5b6c1d2e-0f9a" {
		t.Fatalf("saved: %v", put)
	}
	if st, put := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voiceConfig": map[string]any{"maxCallDuration": 10}}); st != 200 ||
		put["voiceConfig"].(map[string]any)["maxCallDuration"] != float64(10) || put["voiceConfig"].(map[string]any)["voiceId"] != nil {
		t.Fatalf("shortest duration (and the whole config replaced): %d %v", st, put)
	}

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		want  string
	}{
		{"voiceId over 100", map[string]any{"voiceConfig": map[string]any{"voiceId": strings.Repeat("v", 101)}}, "voiceConfig", "voiceId must be at most 100"},
		{"firstMessage over 1000", map[string]any{"voiceConfig": map[string]any{"firstMessage": strings.Repeat("é", 1001)}}, "voiceConfig", "firstMessage must be at most 1000"},
		{"11 phrases", map[string]any{"voiceConfig": map[string]any{"endCallPhrases": phrases(11, 5)}}, "voiceConfig", "at most 10 phrases"},
		{"phrase over 100", map[string]any{"voiceConfig": map[string]any{"endCallPhrases": phrases(1, 101)}}, "voiceConfig", "phrase 1 must be at most 100"},
		{"empty phrase", map[string]any{"voiceConfig": map[string]any{"endCallPhrases": []string{"bye", " "}}}, "voiceConfig", "phrase 2 is empty"},
		{"duration 3601", map[string]any{"voiceConfig": map[string]any{"maxCallDuration": 3601}}, "voiceConfig", "between 10 and 3600"},
		{"duration 9", map[string]any{"voiceConfig": map[string]any{"maxCallDuration": 9}}, "voiceConfig", "between 10 and 3600"},
		{"language", map[string]any{"voiceConfig": map[string]any{"language": "french please"}}, "voiceConfig", "BCP-47"},
		{"duration a string", map[string]any{"voiceConfig": map[string]any{"maxCallDuration": "60"}}, "voiceConfig", "maxCallDuration must be an integer"},
		{"phrases a string", map[string]any{"voiceConfig": map[string]any{"endCallPhrases": "bye"}}, "voiceConfig", "endCallPhrases must be an array"},
		{"config a string", map[string]any{"voiceConfig": "loud"}, "voiceConfig", "must be an object"},
		{"enabled a string", map[string]any{"voiceEnabled": "yes"}, "voiceEnabled", "must be a boolean"},
		{"provider", map[string]any{"voiceProvider": "twilio"}, "voiceProvider", "must be one of vapi"},
		{"provider null", map[string]any{"voiceProvider": nil}, "voiceProvider", "must not be null"},
		{"phone", map[string]any{"voicePhoneNumber": "06 12 34 56 78"}, "voicePhoneNumber", "E.164"},
		{"phone leading zero", map[string]any{"voicePhoneNumber": "+0612345678"}, "voicePhoneNumber", "E.164"},
		{"assistant id", map[string]any{"voiceAssistantId": "has spaces"}, "voiceAssistantId", "assistant id"},
		{"assistant id 201", map[string]any{"voiceAssistantId": strings.Repeat("a", 201)}, "voiceAssistantId", "at most 200"},
		{"enabled without a secret", map[string]any{"voiceEnabled": true}, "voiceEnabled", "voice setup"},
	} {
		st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, tc.body)
		msg, _ := webtest.ErrorDetails(got)[tc.field].(string)
		if st != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want 400 with %s: %q", tc.name, st, got, tc.field, tc.want)
		}
	}
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voiceAssistantId": strings.Repeat("a", 200)}); st != 200 {
		t.Errorf("assistant id of 200: %d %v", st, got)
	}
	// "" and null clear the number; null resets the config.
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voicePhoneNumber": "", "voiceConfig": nil}); st != 200 ||
		got["voicePhoneNumber"] != nil || len(got["voiceConfig"].(map[string]any)) != 0 {
		t.Errorf("clearing: %d %v", st, got)
	}
	// Another tenant's token does not reach these settings.
	other := b.NewTenant(t, "scale")
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, other.Token, map[string]any{"voicePhoneNumber": "+33198765432"}); st != 404 {
		t.Errorf("another tenant's token: %d %v", st, got)
	}
}

// TestVoicePlanRequired: a plan without voice refuses a change of the
// voice settings with 402 PLAN_REQUIRED, as the MCP settings do, and both
// setups whatever the body; sending back what was read still works.
func TestVoicePlanRequired(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	for _, tc := range []struct {
		method, path string
		body         map[string]any
	}{
		{"PUT", "", map[string]any{"voiceConfig": map[string]any{"language": "fr-FR"}}},
		{"PUT", "", map[string]any{"voicePhoneNumber": "+33198765432", "name": "Renamed"}},
		{"POST", "/voice/setup", map[string]any{}},
		{"PUT", "/voice/setup", map[string]any{"assistantId": "asst-1"}},
	} {
		st, got := b.Do(t, tc.method, "/tenants/"+ten.Slug+tc.path, ten.Token, tc.body)
		if st != 402 || got["code"] != "PLAN_REQUIRED" || webtest.ErrorDetails(got)["requiredPlan"] != "scale" {
			t.Errorf("%s %s %v: %d %v", tc.method, tc.path, tc.body, st, got)
		}
	}
	if got := b.TenantOf(t, ten); got["name"] == "Renamed" {
		t.Error("a refused body changed the name")
	}
	read := b.TenantOf(t, ten)
	read["name"] = "Round trip"
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, read); st != 200 || got["name"] != "Round trip" {
		t.Errorf("sending back what was read on builder: %d %v", st, got)
	}
}

func TestVoiceManagedSetup(t *testing.T) {
	t.Parallel()
	b, fake := setupWithVapi(t)
	ten := b.NewTenant(t, "scale")
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voiceConfig": map[string]any{
		"endCallPhrases": []string{"goodbye"}, "maxCallDuration": 600, "voiceId": "Kylie"}}); st != 200 {
		t.Fatalf("config: %d %v", st, got)
	}
	st, got := b.Do(t, "POST", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{"language": "en-US", "voiceId": "Elliot",
		"firstMessage": "Hello, Acme Plumbing, how can I help?", "buyNumber": true, "numberAreaCode": "415"})
	if st != 200 {
		t.Fatalf("setup: %d %v", st, got)
	}
	secret, _ := got["secret"].(string)
	base := b.Srv.Config.BaseURL + "/voice/" + ten.Slug
	if got["assistantId"] != "asst-b" || got["phoneNumber"] != "+14155550123" || got["customLlmUrl"] != base ||
		got["serverUrl"] != base+"/events" || len(secret) < 40 {
		t.Fatalf("answer: %v", got)
	}
	// What Vapi was asked.
	if len(fake.Assistants()) != 1 || len(fake.Numbers()) != 1 {
		t.Fatalf("calls: %d assistants, %d numbers", len(fake.Assistants()), len(fake.Numbers()))
	}
	a := fake.Assistants()[0]
	model, _ := a["model"].(map[string]any)
	headers, _ := model["headers"].(map[string]any)
	server, _ := a["server"].(map[string]any)
	voice, _ := a["voice"].(map[string]any)
	transcriber, _ := a["transcriber"].(map[string]any)
	if model["provider"] != "custom-llm" || model["url"] != base || headers["X-Vapi-Secret"] != secret ||
		server["url"] != base+"/events" || server["secret"] != secret ||
		a["firstMessage"] != "Hello, Acme Plumbing, how can I help?" || voice["voiceId"] != "Elliot" || transcriber["language"] != "en" ||
		a["maxDurationSeconds"] != float64(600) || len(a["endCallPhrases"].([]any)) != 1 {
		t.Errorf("assistant asked for: %v", a)
	}
	if n := fake.Numbers()[0]; n["provider"] != "vapi" || n["assistantId"] != "asst-b" || n["numberDesiredAreaCode"] != "415" {
		t.Errorf("number asked for: %v", n)
	}
	// What was stored.
	tn := b.TenantOf(t, ten)
	cfg := tn["voiceConfig"].(map[string]any)
	if tn["voiceEnabled"] != true || tn["voiceAssistantId"] != "asst-b" || tn["voicePhoneNumber"] != "+14155550123" ||
		tn["voiceSecretSet"] != true || cfg["language"] != "en-US" || cfg["voiceId"] != "Elliot" || cfg["maxCallDuration"] != float64(600) {
		t.Errorf("tenant after setup: %v", tn)
	}
	if stored := b.OpenVoiceSecret(t, ten.ID); stored != secret {
		t.Errorf("stored secret %q, answered %q", stored, secret)
	}

	// One number per tenant.
	if st, got := b.Do(t, "POST", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{"buyNumber": true}); st != 400 ||
		!strings.Contains(webtest.ErrorDetails(got)["buyNumber"].(string), "+14155550123") {
		t.Errorf("a second number: %d %v", st, got)
	}

	// The number purchase fails: the assistant is deleted again, nothing is saved.
	other := b.NewTenant(t, "scale")
	fake.FailNumber(true)
	st, got = b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, map[string]any{"buyNumber": true, "numberAreaCode": "999"})
	msg, _ := got["error"].(string)
	if st != 502 || got["code"] != "ORCHESTRATOR_ERROR" || !strings.Contains(msg, "buying the number failed") ||
		!strings.Contains(msg, "No numbers available for area code 999") || !strings.Contains(msg, "deleted again") ||
		webtest.ErrorDetails(got)["assistantDeleted"] != true {
		t.Errorf("failed purchase: %d %v", st, got)
	}
	if len(fake.Deleted()) != 1 || fake.Deleted()[0] != webtest.ErrorDetails(got)["assistantId"] {
		t.Errorf("deleted %v after %v", fake.Deleted(), got)
	}
	if tn := b.TenantOf(t, other); tn["voiceAssistantId"] != nil || tn["voiceEnabled"] != false || tn["voiceSecretSet"] != false {
		t.Errorf("half written: %v", tn)
	}
	fake.FailDelete(true)
	st, got = b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, map[string]any{"buyNumber": true})
	if msg, _ := got["error"].(string); st != 502 || !strings.Contains(msg, "could not be deleted") || webtest.ErrorDetails(got)["assistantDeleted"] != false {
		t.Errorf("failed purchase and clean-up: %d %v", st, got)
	}
	fake.FailNumber(false)
	fake.FailDelete(false)

	// Vapi refuses the assistant.
	fake.FailCreate(400)
	st, got = b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, map[string]any{})
	if msg, _ := got["error"].(string); st != 502 || !strings.Contains(msg, "Vapi answered HTTP 400: model.url must be a URL address") ||
		!strings.Contains(msg, "nothing was saved") {
		t.Errorf("refused assistant: %d %v", st, got)
	}
	fake.FailCreate(0)
	// The operator's key is wrong.
	fake.SetKey("rotated")
	st, got = b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, map[string]any{})
	if msg, _ := got["error"].(string); st != 502 || !strings.Contains(msg, "refused the service's API key (HTTP 401)") {
		t.Errorf("wrong key: %d %v", st, got)
	}
	if tn := b.TenantOf(t, other); tn["voiceAssistantId"] != nil || tn["voiceSecretSet"] != false {
		t.Errorf("half written after refusals: %v", tn)
	}

	// Bad bodies, checked before Vapi is called.
	for _, tc := range []struct {
		body        map[string]any
		field, want string
	}{
		{map[string]any{"language": "english!"}, "language", "BCP-47"},
		{map[string]any{"buyNumber": true, "numberAreaCode": "41"}, "numberAreaCode", "3-digit"},
		{map[string]any{"numberAreaCode": "415"}, "numberAreaCode", "only used when a number is bought"},
		{map[string]any{"buyNumber": "yes"}, "buyNumber", "boolean"},
		{map[string]any{"firstMessage": strings.Repeat("x", 1001)}, "firstMessage", "at most 1000"},
		{map[string]any{"voiceId": 7}, "voiceId", "string"},
	} {
		st, got := b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, tc.body)
		if msg, _ := webtest.ErrorDetails(got)[tc.field].(string); st != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %d %v", tc.body, st, got)
		}
	}
	if st, got := b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", other.Token, "[]"); st != 400 {
		t.Errorf("not an object: %d %v", st, got)
	}
	// Scope and tenant.
	if st, got := b.Do(t, "POST", "/tenants/"+other.Slug+"/voice/setup", b.Token(t, other.ID, auth.ScopeSettingsRead), map[string]any{}); st != 403 {
		t.Errorf("settings:read only: %d %v", st, got)
	}
	if st, got := b.Do(t, "POST", "/tenants/"+ten.Slug+"/voice/setup", other.Token, map[string]any{}); st != 404 {
		t.Errorf("another tenant's slug: %d %v", st, got)
	}
}

// TestVoiceManagedSetupUnavailable: without the operator's Vapi key the
// managed setup says so, and linking still works.
func TestVoiceManagedSetupUnavailable(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	st, got := b.Do(t, "POST", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{"buyNumber": true})
	if msg, _ := got["error"].(string); st != 503 || got["code"] != "VOICE_SETUP_UNAVAILABLE" || !strings.Contains(msg, "Link your own assistant") {
		t.Errorf("unconfigured: %d %v", st, got)
	}
}

func TestVoiceLink(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	own := "my-own-secret-0123456789"
	st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{
		"assistantId": "5b6c1d2e-0f9a-4b8c", "phoneNumber": "+33198765432", "language": "fr-FR", "secret": own})
	base := b.Srv.Config.BaseURL + "/voice/" + ten.Slug
	if st != 200 || got["secret"] != own || got["assistantId"] != "5b6c1d2e-0f9a-4b8c" || got["phoneNumber"] != "+33198765432" ||
		got["customLlmUrl"] != base || got["serverUrl"] != base+"/events" {
		t.Fatalf("link: %d %v", st, got)
	}
	if s := b.OpenVoiceSecret(t, ten.ID); s != own {
		t.Errorf("stored secret %q", s)
	}
	tn := b.TenantOf(t, ten)
	if tn["voiceEnabled"] != true || tn["voiceAssistantId"] != "5b6c1d2e-0f9a-4b8c" || tn["voiceConfig"].(map[string]any)["language"] != "fr-FR" {
		t.Errorf("tenant: %v", tn)
	}
	// Without a secret one is generated, replacing the old; no number is fine.
	st, got = b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{"assistantId": "asst-2"})
	gen, _ := got["secret"].(string)
	if st != 200 || !strings.HasPrefix(gen, "vs_") || gen == own || got["phoneNumber"] != nil || b.OpenVoiceSecret(t, ten.ID) != gen {
		t.Errorf("generated: %d %v", st, got)
	}
	// Now voiceEnabled may be turned off and on through the tenant.
	for _, on := range []bool{false, true} {
		if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"voiceEnabled": on}); st != 200 || got["voiceEnabled"] != on {
			t.Errorf("voiceEnabled %v: %d %v", on, st, got)
		}
	}
	for _, tc := range []struct {
		body        map[string]any
		field, want string
	}{
		{map[string]any{}, "assistantId", "is required"},
		{map[string]any{"assistantId": " "}, "assistantId", "is required"},
		{map[string]any{"assistantId": 42}, "assistantId", "string"},
		{map[string]any{"assistantId": "a", "phoneNumber": "+0123456789"}, "phoneNumber", "E.164"},
		{map[string]any{"assistantId": "a", "phoneNumber": "+1234567890123456"}, "phoneNumber", "E.164"},
		{map[string]any{"assistantId": "a", "language": "fr_FR"}, "language", "BCP-47"},
		{map[string]any{"assistantId": "a", "secret": strings.Repeat("s", 15)}, "secret", "16 to 200"},
		{map[string]any{"assistantId": "a", "secret": strings.Repeat("s", 201)}, "secret", "16 to 200"},
		{map[string]any{"assistantId": "a", "secret": "with a space inside it"}, "secret", "printable ASCII"},
	} {
		st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, tc.body)
		if msg, _ := webtest.ErrorDetails(got)[tc.field].(string); st != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %d %v", tc.body, st, got)
		}
	}
	for _, n := range []int{16, 200} {
		if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{"assistantId": "a",
			"secret": strings.Repeat("s", n)}); st != 200 {
			t.Errorf("secret of %d: %d %v", n, st, got)
		}
	}
	if b.TenantOf(t, ten)["voiceAssistantId"] != "a" {
		t.Error("the last link is not stored")
	}
	other := b.NewTenant(t, "scale")
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", other.Token, map[string]any{"assistantId": "x"}); st != 404 {
		t.Errorf("another tenant: %d %v", st, got)
	}
	if st, got := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/voice/setup", b.Token(t, ten.ID, auth.ScopeConversationsRead), map[string]any{"assistantId": "x"}); st != 403 {
		t.Errorf("without settings:write: %d %v", st, got)
	}
}

func TestVoiceRecording(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	host, audio := webtest.AudioHost(t)
	ten, other := b.NewTenant(t, "scale"), b.NewTenant(t, "scale")
	b.InsertVoiceCall(t, ten.ID, "call-a", webtest.VoiceStr(host.URL+"/wav.wav"))
	b.InsertVoiceCall(t, ten.ID, "call-html", webtest.VoiceStr(host.URL+"/page"))
	b.InsertVoiceCall(t, ten.ID, "call-gone", webtest.VoiceStr(host.URL+"/missing"))
	b.InsertVoiceCall(t, ten.ID, "call-silent", nil)
	b.InsertVoiceCall(t, other.ID, "call-b", webtest.VoiceStr(host.URL+"/wav.wav"))
	read := b.Token(t, ten.ID, auth.ScopeConversationsRead)

	get := func(path, token string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", b.TS.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	// The guard refuses the loopback until the operator exempts it: an
	// https address is refused when dialled, a plain http one before.
	tlsHost := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsHost.Close)
	b.InsertVoiceCall(t, ten.ID, "call-tls", webtest.VoiceStr(tlsHost.URL+"/wav.wav"))
	if resp, body := get("/voice/"+ten.Slug+"/recordings/call-tls", read); resp.StatusCode != 502 ||
		!strings.Contains(string(body), "could not be fetched: refused") {
		t.Errorf("guarded: %d %s", resp.StatusCode, body)
	}
	if resp, body := get("/voice/"+ten.Slug+"/recordings/call-a", read); resp.StatusCode != 502 || !strings.Contains(string(body), "plain http") {
		t.Errorf("plain http: %d %s", resp.StatusCode, body)
	}
	b.WithOutbound(t, true, nil)
	resp, body := get("/voice/"+ten.Slug+"/recordings/call-a", read)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || string(body) != string(audio) ||
		resp.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("recording: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get("/voice/"+ten.Slug+"/recordings/call-html", read); resp.StatusCode != 200 ||
		resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("not audio: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	for _, tc := range []struct {
		path, token string
		status      int
		want        string
	}{
		{"/voice/" + ten.Slug + "/recordings/call-gone", read, 502, "answered HTTP 404"},
		{"/voice/" + ten.Slug + "/recordings/call-silent", read, 404, "no recording"},
		{"/voice/" + ten.Slug + "/recordings/call-b", read, 404, "Call not found"},     // another tenant's call
		{"/voice/" + other.Slug + "/recordings/call-b", read, 404, "Tenant not found"}, // another tenant's slug
		{"/voice/" + ten.Slug + "/recordings/nothing", read, 404, "Call not found"},
		{"/voice/" + ten.Slug + "/recordings/call-a", b.Token(t, ten.ID, auth.ScopeSettingsRead), 403, "conversations:read"},
		{"/voice/" + ten.Slug + "/recordings/call-a", "", 401, ""},
	} {
		resp, body := get(tc.path, tc.token)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.path, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// TestVoiceManagedSetupUnreachable: Vapi not answering is a 502 in words,
// and nothing is stored.
func TestVoiceManagedSetupUnreachable(t *testing.T) {
	t.Parallel()
	b, fake := setupWithVapi(t)
	fake.Close()
	ten := b.NewTenant(t, "scale")
	st, got := b.Do(t, "POST", "/tenants/"+ten.Slug+"/voice/setup", ten.Token, map[string]any{})
	if msg, _ := got["error"].(string); st != 502 || got["code"] != "ORCHESTRATOR_ERROR" || !strings.Contains(msg, "Vapi could not be reached") {
		t.Errorf("unreachable: %d %v", st, got)
	}
	if tn := b.TenantOf(t, ten); tn["voiceAssistantId"] != nil || tn["voiceSecretSet"] != false {
		t.Errorf("stored after a failure: %v", tn)
	}
}
