package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web/webtest"
)

// setupWebhookAPI is setup with an outbound guard that resolves with
// WebhookHosts and, when exempt127, exempts 127.0.0.0/8. The guard is set
// before the listener starts, so requests see it without a race.
func setupWebhookAPI(t *testing.T, exempt127 bool) *webtest.Bundle {
	t.Helper()
	b := webtest.Setup(t)
	b.WithOutbound(t, exempt127, webtest.WebhookHosts)
	return b
}

var secretPattern = regexp.MustCompile(`^whsec_[0-9a-f]{64}$`)

// webhookAPI is one tenant's webhook API, every exchange checked against the document.
type webhookAPI struct {
	c     *webtest.OpenAPIChecker
	b     *webtest.Bundle
	ten   webtest.Tenant
	base  string
	token string
}

func newWebhookAPI(t *testing.T, b *webtest.Bundle) *webhookAPI {
	t.Helper()
	_, c, _ := webtest.OpenAPIHarness(t, b)
	ten := b.NewTenant(t, "scale")
	return &webhookAPI{c: c, b: b, ten: ten, base: "/tenants/" + ten.Slug + "/webhooks", token: ten.Token}
}

// create registers an endpoint and fails the test unless it gets 201.
func (w *webhookAPI) create(t *testing.T, body map[string]any) (endpoint map[string]any, secret string) {
	t.Helper()
	status, got := w.c.Exchange("POST", w.base, w.token, body, true)
	if status != http.StatusCreated {
		t.Fatalf("POST %v: %d %v", body, status, got)
	}
	return webtest.Obj(webtest.Obj(got)["endpoint"]), webtest.Obj(got)["secret"].(string)
}

func (w *webhookAPI) patch(t *testing.T, id string, body map[string]any) map[string]any {
	t.Helper()
	status, got := w.c.Exchange("PATCH", w.base+"/"+id, w.token, body, true)
	if status != http.StatusOK {
		t.Fatalf("PATCH %v: %d %v", body, status, got)
	}
	return webtest.Obj(got)
}

// deliveries lists an endpoint's deliveries with query (may be "").
func (w *webhookAPI) deliveries(t *testing.T, id, query string) ([]any, map[string]any) {
	t.Helper()
	status, got := w.c.Exchange("GET", w.base+"/"+id+"/deliveries"+query, w.token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET deliveries%s: %d %v", query, status, got)
	}
	return webtest.List(webtest.Obj(got)["deliveries"]), webtest.Obj(webtest.Obj(got)["pagination"])
}

// newSubmission records a submission of the tenant, which fires submission.created.
func newSubmission(t *testing.T, b *webtest.Bundle, tenantID string) parley.Submission {
	t.Helper()
	sub, _, err := b.DB.CreateSubmission(context.Background(), parley.NewSubmission{
		TenantID: tenantID, ToolType: "SUBMIT_FORM", ToolName: "Contact", Channel: "api",
		Input: json.RawMessage(`{"name":"Ada","phone":"+33 6 00 00 00 00"}`),
	}, []parley.Turn{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func countRows(t *testing.T, b *webtest.Bundle, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.DB.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhookCreate(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	_, _, schema := webtest.OpenAPIHarness(t, b)

	status, got := w.c.Exchange("POST", w.base, w.token, map[string]any{"url": "https://public.test/hook"}, true)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d %v", status, got)
	}
	webtest.SameKeys(t, "POST webhooks", schema("WebhookCreated"), got)
	ep, secret := webtest.Obj(webtest.Obj(got)["endpoint"]), webtest.Obj(got)["secret"].(string)
	if !secretPattern.MatchString(secret) || webtest.Obj(got)["warning"] == "" || webtest.Obj(got)["warning"] == nil {
		t.Errorf("secret %q, warning %v", secret, webtest.Obj(got)["warning"])
	}
	if ep["enabled"] != true || ep["description"] != "" || fmt.Sprint(ep["events"]) != fmt.Sprint(parley.WebhookEvents) ||
		len(webtest.List(ep["piiFields"])) != 0 || ep["url"] != "https://public.test/hook" {
		t.Errorf("created endpoint: %v", ep)
	}
	id := ep["id"].(string)

	full, secret2 := w.create(t, map[string]any{"url": " https://public.test/other ", "description": "  CRM  ",
		"events": []string{"submission.updated", "submission.updated"}, "piiFields": []string{"phone", " email ", "phone"}, "enabled": true})
	if full["url"] != "https://public.test/other" || full["description"] != "CRM" || fmt.Sprint(full["events"]) != "[submission.updated]" ||
		fmt.Sprint(full["piiFields"]) != "[phone email]" || secret2 == secret {
		t.Errorf("created endpoint: %v (secret reused: %t)", full, secret2 == secret)
	}

	// The secret is never shown again.
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", w.base, nil},
		{"GET", w.base + "/" + id, nil},
		{"PATCH", w.base + "/" + id, map[string]any{"description": "again"}},
		{"GET", w.base + "/" + id + "/deliveries", nil},
	} {
		status, raw := b.RawDo(t, req.method, req.path, w.token, req.body)
		if status != http.StatusOK || strings.Contains(raw, secret) || strings.Contains(raw, "whsec_") || strings.Contains(raw, "secret") {
			t.Errorf("%s %s: %d %s", req.method, req.path, status, raw)
		}
	}
	status, got = w.c.Exchange("GET", w.base, w.token, nil, true)
	if hooks := webtest.List(webtest.Obj(got)["webhooks"]); status != http.StatusOK || len(hooks) != 2 || webtest.Obj(hooks[0])["id"] != id {
		t.Errorf("GET list: %d %v", status, got)
	} else {
		webtest.SameKeys(t, "GET webhooks[0]", schema("WebhookEndpoint"), hooks[0])
	}
	status, got = w.c.Exchange("GET", w.base+"/"+id, w.token, nil, true)
	if status != http.StatusOK || webtest.Obj(got)["description"] != "again" {
		t.Errorf("GET one: %d %v", status, got)
	}
	webtest.SameKeys(t, "GET webhook", schema("WebhookEndpointDetail"), got)

	// The secret signs: the stored sealed secret is the string shown.
	var sealed []byte
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if opened, err := b.Box.Open(sealed); err != nil || string(opened) != secret {
		t.Errorf("stored secret %q %v, want %q", opened, err, secret)
	}
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	pii := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("field%d", i)
		}
		return out
	}
	urlOf := func(n int) string { // an https URL of n characters
		u := "https://public.test/"
		return u + strings.Repeat("p", n-len(u))
	}

	// At the limits: accepted.
	for name, body := range map[string]map[string]any{
		"piiFields32":    {"url": "https://public.test/a", "piiFields": pii(32)},
		"description500": {"url": "https://public.test/b", "description": strings.Repeat("d", 500)},
		"url2000":        {"url": urlOf(2000)},
		"httpExempt":     {"url": "http://hooks.test:8080/hook"},
		"httpsExempt":    {"url": "https://hooks.test/hook"},
		"enabledTrue":    {"url": "https://public.test/c", "enabled": true},
		"piiNull":        {"url": "https://public.test/d", "piiFields": nil, "description": nil},
	} {
		t.Run(name, func(t *testing.T) {
			ep, _ := w.create(t, body)
			if name == "piiFields32" && len(webtest.List(ep["piiFields"])) != 32 {
				t.Errorf("piiFields: %v", ep["piiFields"])
			}
		})
	}

	// Refused, with details on the field. validReq says whether the document
	// itself accepts the body (the server checks more than a schema can).
	for _, tc := range []struct {
		name     string
		body     any
		field    string
		validReq bool
		msg      string // a part of the detail, when it matters
	}{
		{"piiFields33", map[string]any{"url": "https://public.test/", "piiFields": pii(33)}, "piiFields", false, "at most 32"},
		{"piiFieldEmpty", map[string]any{"url": "https://public.test/", "piiFields": []string{""}}, "piiFields", false, ""},
		{"piiFieldType", map[string]any{"url": "https://public.test/", "piiFields": "phone"}, "piiFields", false, ""},
		{"description501", map[string]any{"url": "https://public.test/", "description": strings.Repeat("d", 501)}, "description", false, "500"},
		{"url2001", map[string]any{"url": urlOf(2001)}, "url", false, "2000"},
		{"noURL", map[string]any{"description": "x"}, "url", false, "required"},
		{"emptyURL", map[string]any{"url": ""}, "url", false, "required"},
		{"nullURL", map[string]any{"url": nil}, "url", false, "required"},
		{"httpPublic", map[string]any{"url": "http://public.test/hook"}, "url", true, "https"},
		{"privateLiteral", map[string]any{"url": "https://10.0.0.7/hook"}, "url", true, "refused"},
		{"metadataLiteral", map[string]any{"url": "https://169.254.169.254/latest/meta-data"}, "url", true, "refused"},
		{"privateName", map[string]any{"url": "https://inside.test/hook"}, "url", true, "refused: inside.test is not a public internet address"},
		{"metadataName", map[string]any{"url": "https://meta.test/hook"}, "url", true, "refused"},
		{"unresolvable", map[string]any{"url": "https://nowhere.test/hook"}, "url", true, "refused: nowhere.test is not a public internet address"},
		{"credentials", map[string]any{"url": "https://user:pw@public.test/hook"}, "url", true, "credentials"},
		{"fragment", map[string]any{"url": "https://public.test/hook#x"}, "url", true, "fragment"},
		{"notAURL", map[string]any{"url": "not a url"}, "url", false, "absolute https"},
		{"ftp", map[string]any{"url": "ftp://public.test/"}, "url", false, "absolute https"},
		{"urlType", map[string]any{"url": 5}, "url", false, ""},
		{"unknownEvent", map[string]any{"url": "https://public.test/", "events": []string{"submission.created", "lead.created"}}, "events", false, "lead.created"},
		{"emptyEvents", map[string]any{"url": "https://public.test/", "events": []string{}}, "events", false, "at least one"},
		{"nullEvents", map[string]any{"url": "https://public.test/", "events": nil}, "events", false, ""},
		{"eventsType", map[string]any{"url": "https://public.test/", "events": "submission.created"}, "events", false, ""},
		{"disabled", map[string]any{"url": "https://public.test/", "enabled": false}, "enabled", false, "created enabled"},
		{"enabledType", map[string]any{"url": "https://public.test/", "enabled": "yes"}, "enabled", false, ""},
		{"descriptionType", map[string]any{"url": "https://public.test/", "description": 3}, "description", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, got := w.c.Exchange("POST", w.base, w.token, tc.body, tc.validReq)
			detail, _ := webtest.ErrorDetails(got)[tc.field].(string)
			if status != http.StatusBadRequest || detail == "" || !strings.Contains(detail, tc.msg) {
				t.Errorf("%d %v", status, got)
			}
		})
	}
	for name, body := range map[string]any{"notAnObject": "https://public.test/", "array": []string{"x"}} {
		if status, got := w.c.Exchange("POST", w.base, w.token, body, false); status != http.StatusBadRequest || webtest.Obj(got)["error"] != "Request body must be a JSON object" {
			t.Errorf("%s: %d %v", name, status, got)
		}
	}
	if status, got := w.c.Exchange("POST", w.base, w.token, map[string]any{"url": "https://public.test/", "description": strings.Repeat("x", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d %v", status, got)
	}
	if n := countRows(t, b, `SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1`, w.ten.ID); n != 7 {
		t.Errorf("%d endpoints stored, want the 7 valid ones", n)
	}

	// Without the operator's exemption, loopback is refused like any private address.
	strict := newWebhookAPI(t, setupWebhookAPI(t, false))
	for _, u := range []string{"https://hooks.test/hook", "https://127.0.0.1/hook", "https://[::1]/hook", "http://hooks.test/hook"} {
		status, got := strict.c.Exchange("POST", strict.base, strict.token, map[string]any{"url": u}, true)
		if detail, _ := webtest.ErrorDetails(got)["url"].(string); status != http.StatusBadRequest || detail == "" {
			t.Errorf("%s without exemption: %d %v", u, status, got)
		}
	}
}

func TestWebhookCap(t *testing.T) {
	t.Parallel()
	w := newWebhookAPI(t, setupWebhookAPI(t, true))
	var first string
	for i := range webhooks.MaxWebhookEndpoints {
		ep, _ := w.create(t, map[string]any{"url": fmt.Sprintf("https://public.test/%d", i)})
		if i == 0 {
			first = ep["id"].(string)
		}
	}
	status, got := w.c.Exchange("POST", w.base, w.token, map[string]any{"url": "https://public.test/21"}, true)
	if status != http.StatusConflict || !strings.Contains(fmt.Sprint(webtest.Obj(got)["error"]), "at most 20") {
		t.Errorf("21st endpoint: %d %v", status, got)
	}
	if status, got = w.c.Exchange("DELETE", w.base+"/"+first, w.token, nil, true); status != http.StatusOK {
		t.Fatalf("DELETE: %d %v", status, got)
	}
	w.create(t, map[string]any{"url": "https://public.test/21"})
}

func TestWebhookUpdate(t *testing.T) {
	t.Parallel()
	w := newWebhookAPI(t, setupWebhookAPI(t, true))
	ep, _ := w.create(t, map[string]any{"url": "https://public.test/a", "description": "first", "piiFields": []string{"phone"}})
	id := ep["id"].(string)

	for _, tc := range []struct {
		body  map[string]any
		field string
		want  string
	}{
		{map[string]any{"url": "https://hooks.test/b"}, "url", "https://hooks.test/b"},
		{map[string]any{"description": "second"}, "description", "second"},
		{map[string]any{"description": nil}, "description", ""},
		{map[string]any{"events": []string{"submission.updated"}}, "events", "[submission.updated]"},
		{map[string]any{"piiFields": []string{"email", "name"}}, "piiFields", "[email name]"},
		{map[string]any{"piiFields": nil}, "piiFields", "[]"},
		{map[string]any{"enabled": false}, "enabled", "false"},
		{map[string]any{"enabled": true}, "enabled", "true"},
		{map[string]any{}, "url", "https://hooks.test/b"},
	} {
		got := w.patch(t, id, tc.body)
		if fmt.Sprint(got[tc.field]) != tc.want {
			t.Errorf("PATCH %v: %s = %v, want %s", tc.body, tc.field, got[tc.field], tc.want)
		}
	}
	status, got := w.c.Exchange("GET", w.base+"/"+id, w.token, nil, true)
	if got := webtest.Obj(got); status != http.StatusOK || got["url"] != "https://hooks.test/b" || fmt.Sprint(got["events"]) != "[submission.updated]" || got["enabled"] != true {
		t.Errorf("GET after PATCH: %d %v", status, got)
	}

	for _, tc := range []struct {
		name     string
		body     map[string]any
		field    string
		validReq bool
	}{
		{"nullURL", map[string]any{"url": nil}, "url", false},
		{"emptyURL", map[string]any{"url": ""}, "url", false},
		{"privateURL", map[string]any{"url": "https://inside.test/"}, "url", true},
		{"httpURL", map[string]any{"url": "http://public.test/"}, "url", true},
		{"emptyEvents", map[string]any{"events": []string{}}, "events", false},
		{"nullEvents", map[string]any{"events": nil}, "events", false},
		{"unknownEvent", map[string]any{"events": []string{"x"}}, "events", false},
		{"nullEnabled", map[string]any{"enabled": nil}, "enabled", false},
		{"enabledType", map[string]any{"enabled": "no"}, "enabled", false},
		{"pii33", map[string]any{"piiFields": make([]string, 33)}, "piiFields", false},
		{"description501", map[string]any{"description": strings.Repeat("d", 501)}, "description", false},
	} {
		status, got := w.c.Exchange("PATCH", w.base+"/"+id, w.token, tc.body, tc.validReq)
		if _, ok := webtest.ErrorDetails(got)[tc.field]; status != http.StatusBadRequest || !ok {
			t.Errorf("PATCH %s: %d %v", tc.name, status, got)
		}
	}
	if status, got := w.c.Exchange("PATCH", w.base+"/"+id, w.token, map[string]any{"description": strings.Repeat("x", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PATCH large body: %d %v", status, got)
	}
}

func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	doc, _, schema := webtest.OpenAPIHarness(t, b)
	ctx := context.Background()

	all, _ := w.create(t, map[string]any{"url": "https://public.test/all", "piiFields": []string{"phone"}})
	updates, _ := w.create(t, map[string]any{"url": "https://public.test/updates", "events": []string{"submission.updated"}})
	off, _ := w.create(t, map[string]any{"url": "https://public.test/off"})
	allID, updatesID, offID := all["id"].(string), updates["id"].(string), off["id"].(string)
	w.patch(t, offID, map[string]any{"enabled": false})

	sub := newSubmission(t, b, w.ten.ID)
	ds, _ := w.deliveries(t, allID, "")
	if len(ds) != 1 {
		t.Fatalf("deliveries of a subscribed endpoint after a create: %v", ds)
	}
	d := webtest.Obj(ds[0])
	if d["event"] != "submission.created" || d["status"] != "pending" || d["attempts"] != float64(0) || d["maxAttempts"] != float64(6) ||
		d["httpStatus"] != nil || d["lastError"] != nil || d["deliveredAt"] != nil || d["endpointId"] != allID {
		t.Errorf("new delivery: %v", d)
	}
	webtest.SameKeys(t, "delivery", schema("WebhookDelivery"), d)
	createdID := d["id"].(string)
	if ds, _ := w.deliveries(t, updatesID, ""); len(ds) != 0 {
		t.Errorf("an endpoint subscribed to submission.updated got a create: %v", ds)
	}
	if ds, _ := w.deliveries(t, offID, ""); len(ds) != 0 {
		t.Errorf("a disabled endpoint got a delivery: %v", ds)
	}
	jobsOf := `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND args->>'deliveryId' = $1`
	if n := countRows(t, b, jobsOf, createdID); n != 1 {
		t.Errorf("%d jobs for the new delivery", n)
	}

	// A status change reaches both subscribed endpoints; its payload carries both statuses.
	if _, _, err := b.DB.UpdateSubmissionStatus(ctx, w.ten.ID, sub.ID, parley.SubmissionContacted); err != nil {
		t.Fatal(err)
	}
	ds, _ = w.deliveries(t, updatesID, "")
	if len(ds) != 1 || webtest.Obj(ds[0])["event"] != "submission.updated" {
		t.Fatalf("deliveries of the updates endpoint: %v", ds)
	}
	updatedID := webtest.Obj(ds[0])["id"].(string)
	payloadOf := func(deliveryID string) []byte {
		var p []byte
		if err := b.DB.Pool().QueryRow(ctx, `SELECT e.payload FROM events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE d.id = $1`, deliveryID).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var payload map[string]any
	_ = json.Unmarshal(payloadOf(updatedID), &payload)
	if data := webtest.Obj(payload["data"]); payload["event"] != "submission.updated" || data["status"] != "CONTACTED" || data["previousStatus"] != "NEW" || data["id"] != sub.ID {
		t.Errorf("submission.updated payload: %v", payload)
	}
	if err := schema("SubmissionUpdatedEvent").VisitJSON(payload); err != nil {
		t.Errorf("submission.updated payload does not fit the document: %v", err)
	}
	webtest.DocumentedKeys(t, "submission.updated payload", schema("WebhookEvent"), payload)
	_ = json.Unmarshal(payloadOf(createdID), &payload)
	if err := schema("SubmissionCreatedEvent").VisitJSON(payload); err != nil {
		t.Errorf("submission.created payload does not fit the document: %v", err)
	}
	webtest.DocumentedKeys(t, "submission.created payload", schema("WebhookEvent"), payload)
	if len(webtest.List(webtest.Obj(payload["data"])["messages"])) != 2 {
		t.Errorf("stored payload lost its messages: %v", payload)
	}
	// piiFields are applied when sending: the stored payload keeps everything.
	sent, err := jobs.RedactPayload(payloadOf(createdID), []string{"phone"})
	if err != nil || strings.Contains(string(sent), "+33") || strings.Contains(string(sent), "messages") || !strings.Contains(string(sent), "Ada") {
		t.Errorf("redacted payload %s %v", sent, err)
	}
	if wh := doc.Webhooks; wh["submission.created"] == nil || wh["submission.updated"] == nil {
		t.Errorf("the document's webhooks section lists %v", wh)
	}

	// The endpoint's statistics and latest deliveries.
	status, got := w.c.Exchange("GET", w.base+"/"+allID, w.token, nil, true)
	stats := webtest.Obj(webtest.Obj(got)["deliveryStats"])
	if status != http.StatusOK || stats["total"] != float64(2) || stats["pending"] != float64(2) || stats["succeeded"] != float64(0) ||
		stats["dropped"] != float64(0) || len(webtest.List(webtest.Obj(got)["recentDeliveries"])) != 2 {
		t.Errorf("GET webhook: %d %v", status, got)
	}
	webtest.SameKeys(t, "GET webhook", schema("WebhookEndpointDetail"), got)

	// Filters and pages.
	if ds, p := w.deliveries(t, allID, "?status=pending"); len(ds) != 2 || p["total"] != float64(2) {
		t.Errorf("status=pending: %v %v", ds, p)
	}
	if ds, _ := w.deliveries(t, allID, "?status=failed"); len(ds) != 0 {
		t.Errorf("status=failed: %v", ds)
	}
	if ds, _ := w.deliveries(t, allID, "?event=submission.updated"); len(ds) != 1 || webtest.Obj(ds[0])["event"] != "submission.updated" {
		t.Errorf("event=submission.updated: %v", ds)
	}
	ds1, p := w.deliveries(t, allID, "?limit=1")
	ds2, p2 := w.deliveries(t, allID, "?limit=1&page=2")
	if len(ds1) != 1 || len(ds2) != 1 || webtest.Obj(ds1[0])["event"] != "submission.updated" || webtest.Obj(ds2[0])["id"] != createdID ||
		fmt.Sprint(p) != "map[limit:1 page:1 pages:2 total:2]" || fmt.Sprint(p2) != "map[limit:1 page:2 pages:2 total:2]" {
		t.Errorf("pages: %v %v / %v %v", ds1, p, ds2, p2)
	}
	if ds, p := w.deliveries(t, allID, "?page=3&limit=1"); len(ds) != 0 || p["total"] != float64(2) {
		t.Errorf("past the last page: %v %v", ds, p)
	}
	for _, q := range []string{"status=lost", "event=lead.created", "limit=0", "limit=101", "page=0", "limit=x"} {
		name, _, _ := strings.Cut(q, "=")
		status, got := w.c.Exchange("GET", w.base+"/"+allID+"/deliveries?"+q, w.token, nil, false)
		if _, ok := webtest.ErrorDetails(got)[name]; status != http.StatusBadRequest || !ok {
			t.Errorf("?%s: %d %v", q, status, got)
		}
	}

	// A pending delivery cannot be redelivered.
	redeliver := func(endpointID, deliveryID string) (int, map[string]any) {
		status, got := w.c.Exchange("POST", w.base+"/"+endpointID+"/deliveries/"+deliveryID+"/redeliver", w.token, nil, true)
		return status, webtest.Obj(got)
	}
	if status, got := redeliver(allID, createdID); status != http.StatusConflict {
		t.Errorf("redeliver a pending delivery: %d %v", status, got)
	}

	// Disabling drops pending deliveries; new events skip the endpoint.
	w.patch(t, allID, map[string]any{"enabled": false})
	for _, d := range func() []any { ds, _ := w.deliveries(t, allID, ""); return ds }() {
		if webtest.Obj(d)["status"] != "dropped" || webtest.Obj(d)["nextAttemptAt"] != nil {
			t.Errorf("after disabling: %v", d)
		}
	}
	if ds, _ := w.deliveries(t, updatesID, ""); webtest.Obj(ds[0])["status"] != "pending" {
		t.Errorf("another endpoint's delivery was dropped: %v", ds)
	}
	newSubmission(t, b, w.ten.ID)
	if ds, p := w.deliveries(t, allID, ""); len(ds) != 2 || p["total"] != float64(2) {
		t.Errorf("a disabled endpoint got a new delivery: %v", ds)
	}
	if status, got := redeliver(allID, createdID); status != http.StatusConflict || !strings.Contains(fmt.Sprint(got["error"]), "disabled") {
		t.Errorf("redeliver while disabled: %d %v", status, got)
	}

	// Enabling again leaves them dropped; redelivery queues one again.
	w.patch(t, allID, map[string]any{"enabled": true})
	if ds, _ := w.deliveries(t, allID, "?status=dropped"); len(ds) != 2 {
		t.Errorf("after enabling: %v", ds)
	}
	status, got = w.c.Exchange("GET", w.base+"/"+allID, w.token, nil, true)
	if stats := webtest.Obj(webtest.Obj(got)["deliveryStats"]); stats["dropped"] != float64(2) || stats["pending"] != float64(0) {
		t.Errorf("stats after dropping: %d %v", status, stats)
	}
	status, red := redeliver(allID, createdID)
	if status != http.StatusAccepted || red["id"] != createdID || red["status"] != "pending" || red["attempts"] != float64(0) || red["event"] != "submission.created" {
		t.Errorf("redeliver: %d %v", status, red)
	}
	webtest.SameKeys(t, "redeliver", schema("WebhookDelivery"), red)
	if n := countRows(t, b, jobsOf, createdID); n != 2 {
		t.Errorf("%d jobs after redelivery, want the first and a new one", n)
	}
	if n := countRows(t, b, jobsOf+` AND state <> 'cancelled'`, createdID); n != 1 {
		t.Errorf("%d live jobs after redelivery, want 1 (the dropped round's job is cancelled)", n)
	}
	if status, got := redeliver(allID, createdID); status != http.StatusConflict {
		t.Errorf("redeliver twice: %d %v", status, got)
	}
	if ds, _ := w.deliveries(t, allID, "?status=pending"); len(ds) != 1 || webtest.Obj(ds[0])["id"] != createdID {
		t.Errorf("pending after redelivery: %v", ds)
	}

	// Deleting a submission erases its deliveries, everywhere.
	if err := b.DB.DeleteSubmission(ctx, w.ten.ID, sub.ID); err != nil {
		t.Fatal(err)
	}
	if ds, _ := w.deliveries(t, allID, ""); len(ds) != 0 {
		t.Errorf("deliveries of a deleted submission: %v", ds)
	}
	if ds, _ := w.deliveries(t, updatesID, ""); len(ds) != 0 {
		t.Errorf("deliveries of a deleted submission: %v", ds)
	}
	if status, got := redeliver(allID, createdID); status != http.StatusNotFound || got["error"] != "Delivery not found" {
		t.Errorf("redeliver an erased delivery: %d %v", status, got)
	}

	// Deleting an endpoint erases its deliveries.
	newSubmission(t, b, w.ten.ID)
	if ds, _ := w.deliveries(t, allID, ""); len(ds) != 1 {
		t.Fatalf("deliveries before DELETE: %v", ds)
	}
	status, got = w.c.Exchange("DELETE", w.base+"/"+allID, w.token, nil, true)
	if webtest.Obj(got)["deleted"] != true || webtest.Obj(got)["id"] != allID || status != http.StatusOK {
		t.Errorf("DELETE: %d %v", status, got)
	}
	webtest.SameKeys(t, "DELETE", schema("WebhookDeletion"), got)
	if n := countRows(t, b, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, allID); n != 0 {
		t.Errorf("%d deliveries left after DELETE", n)
	}
	for _, p := range []string{"", "/deliveries"} {
		if status, got := w.c.Exchange("GET", w.base+"/"+allID+p, w.token, nil, true); status != http.StatusNotFound || webtest.Obj(got)["error"] != "Webhook endpoint not found" {
			t.Errorf("GET%s after DELETE: %d %v", p, status, got)
		}
	}
	if status, got := w.c.Exchange("DELETE", w.base+"/"+allID, w.token, nil, true); status != http.StatusNotFound {
		t.Errorf("DELETE twice: %d %v", status, got)
	}
}

// TestWebhookSend runs one attempt of the worker against a local receiver and
// checks the documented headers and signature.
func TestWebhookSend(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	hookURL, got := hookReceiver(t)
	ep, secret := w.create(t, map[string]any{"url": hookURL, "piiFields": []string{"phone"}})
	newSubmission(t, b, w.ten.ID)
	ds, _ := w.deliveries(t, ep["id"].(string), "")
	if len(ds) != 1 {
		t.Fatalf("deliveries: %v", ds)
	}
	id := webtest.Obj(ds[0])["id"].(string)

	now := time.Now()
	worker := &jobs.WebhookDeliveryWorker{DB: b.DB, Box: b.Box, Client: b.Srv.Base.Outbound.Client(jobs.DeliveryTimeout), Now: func() time.Time { return now }}
	job := &river.Job[deliveryargs.Args]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 6}, Args: deliveryargs.Args{DeliveryID: id}}
	if err := worker.Work(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	r := <-got
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.%s", now.Unix(), r.body)
	if want := fmt.Sprintf("t=%d,v1=%s", now.Unix(), hex.EncodeToString(mac.Sum(nil))); r.header.Get("X-Service-Signature") != want {
		t.Errorf("signature %q, want %q", r.header.Get("X-Service-Signature"), want)
	}
	if err := verifySignature(secret, r.header, r.body, now); err != nil {
		t.Errorf("a receiver following the document rejects the delivery: %v", err)
	}
	if r.header.Get("X-Service-Event") != "submission.created" || r.header.Get("X-Service-Delivery-Id") != id {
		t.Errorf("headers %v", r.header)
	}
	if strings.Contains(string(r.body), "+33") || strings.Contains(string(r.body), "messages") || !strings.Contains(string(r.body), `"Ada"`) {
		t.Errorf("piiFields not applied: %s", r.body)
	}
	ds, _ = w.deliveries(t, ep["id"].(string), "?status=succeeded")
	if len(ds) != 1 || webtest.Obj(ds[0])["attempts"] != float64(1) || webtest.Obj(ds[0])["httpStatus"] != float64(204) || webtest.Obj(ds[0])["deliveredAt"] == nil {
		t.Errorf("after a successful attempt: %v", ds)
	}
}

func TestWebhookTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	mine, theirs := newWebhookAPI(t, b), newWebhookAPI(t, b)
	myEP, _ := mine.create(t, map[string]any{"url": "https://public.test/mine"})
	theirEP, _ := theirs.create(t, map[string]any{"url": "https://public.test/theirs"})
	newSubmission(t, b, theirs.ten.ID)
	ds, _ := theirs.deliveries(t, theirEP["id"].(string), "")
	if len(ds) != 1 {
		t.Fatalf("deliveries: %v", ds)
	}
	theirDelivery := webtest.Obj(ds[0])["id"].(string)
	myID, theirID := myEP["id"].(string), theirEP["id"].(string)

	for _, tc := range []struct {
		method, path string
		body         any
		want         string
	}{
		{"GET", "/" + theirID, nil, "Webhook endpoint not found"},
		{"PATCH", "/" + theirID, map[string]any{"description": "x"}, "Webhook endpoint not found"},
		{"PATCH", "/" + theirID, map[string]any{"url": "https://inside.test/"}, "Webhook endpoint not found"},
		{"DELETE", "/" + theirID, nil, "Webhook endpoint not found"},
		{"GET", "/" + theirID + "/deliveries", nil, "Webhook endpoint not found"},
		{"POST", "/" + theirID + "/deliveries/" + theirDelivery + "/redeliver", nil, "Webhook endpoint not found"},
		{"POST", "/" + myID + "/deliveries/" + theirDelivery + "/redeliver", nil, "Delivery not found"},
		{"POST", "/" + myID + "/deliveries/not-a-uuid/redeliver", nil, "Delivery not found"},
		{"GET", "/not-a-uuid", nil, "Webhook endpoint not found"},
		{"DELETE", "/not-a-uuid", nil, "Webhook endpoint not found"},
	} {
		status, got := mine.c.Exchange(tc.method, mine.base+tc.path, mine.token, tc.body, true)
		if status != http.StatusNotFound || webtest.Obj(got)["error"] != tc.want {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, status, got)
		}
	}
	// Their endpoint is untouched.
	status, got := theirs.c.Exchange("GET", theirs.base+"/"+theirID, theirs.token, nil, true)
	if status != http.StatusOK || webtest.Obj(got)["description"] != "" || webtest.Obj(webtest.Obj(got)["deliveryStats"])["pending"] != float64(1) {
		t.Errorf("their endpoint: %d %v", status, got)
	}
	// Another tenant's slug.
	if status, got := mine.c.Exchange("GET", theirs.base, mine.token, nil, true); status != http.StatusNotFound || webtest.Obj(got)["error"] != "Tenant not found" {
		t.Errorf("their list with my token: %d %v", status, got)
	}
}

func TestWebhookAuth(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	ep, _ := w.create(t, map[string]any{"url": "https://public.test/"})
	id := ep["id"].(string)
	read := b.Token(t, w.ten.ID, auth.ScopeSettingsRead)
	write := b.Token(t, w.ten.ID, auth.ScopeSettingsWrite)

	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", "", map[string]any{"url": "https://public.test/x"}},
		{"PATCH", "/" + id, map[string]any{"enabled": false}},
		{"DELETE", "/" + id, nil},
		{"POST", "/" + id + "/deliveries/" + id + "/redeliver", nil},
	} {
		status, got := w.c.Exchange(tc.method, w.base+tc.path, read, tc.body, true)
		if status != http.StatusForbidden || webtest.Obj(got)["error"] != "Missing scope: settings:write" {
			t.Errorf("%s %s with settings:read: %d %v", tc.method, tc.path, status, got)
		}
	}
	for _, p := range []string{"", "/" + id, "/" + id + "/deliveries"} {
		if status, got := w.c.Exchange("GET", w.base+p, read, nil, true); status != http.StatusOK {
			t.Errorf("GET %s with settings:read: %d %v", p, status, got)
		}
		if status, got := w.c.Exchange("GET", w.base+p, write, nil, true); status != http.StatusForbidden || webtest.Obj(got)["error"] != "Missing scope: settings:read" {
			t.Errorf("GET %s with settings:write only: %d %v", p, status, got)
		}
		if status, got := w.c.Exchange("GET", w.base+p, "", nil, true); status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d %v", p, status, got)
		}
	}
	if status, got := w.c.Exchange("POST", w.base, "", map[string]any{"url": "https://public.test/x"}, true); status != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d %v", status, got)
	}
	if status, got := w.c.Exchange("POST", w.base, write, map[string]any{"url": "https://public.test/x"}, true); status != http.StatusCreated {
		t.Errorf("POST with settings:write: %d %v", status, got)
	}
}
