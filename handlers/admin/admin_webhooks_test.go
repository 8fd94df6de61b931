package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/web/webtest"
)

// adminHookHosts stands in for DNS: hooks.example.com is public,
// internal.example.com private, anything else does not resolve.
var adminHookHosts = webtest.HookResolver{"hooks.example.com": "93.184.216.34", "internal.example.com": "10.1.2.3"}

const adminHookURL = "https://hooks.example.com/parley"

// withAdminHookResolver makes the server resolve webhook hosts with adminHookHosts.
func withAdminHookResolver(b *webtest.Bundle) *webtest.Bundle {
	b.Srv.Base.Outbound = outbound.New(nil, adminHookHosts)
	return b
}

// adminHookEndpoint stores an endpoint of the tenant directly.
func adminHookEndpoint(t *testing.T, b *webtest.Bundle, tenantID, u string) webhooks.WebhookEndpoint {
	t.Helper()
	ep, err := b.DB.CreateWebhookEndpoint(context.Background(), tenantID, webhooks.WebhookEndpointWrite{
		URL: parley.Some(u), Events: parley.Some(parley.WebhookEvents), SecretSealed: b.Box.Seal([]byte("whsec_test")),
	})
	webtest.MustStep(t, "creating an endpoint", err)
	return ep
}

// adminHookDelivery records a submission, so that each enabled endpoint of the
// tenant gets a delivery, and returns the endpoint's newest delivery.
func adminHookDelivery(t *testing.T, b *webtest.Bundle, tenantID, endpointID string) webhooks.WebhookDelivery {
	t.Helper()
	ctx := context.Background()
	_, _, err := b.DB.CreateSubmission(ctx, parley.NewSubmission{TenantID: tenantID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", Input: json.RawMessage(`{"email":"a@b.co"}`)}, nil)
	webtest.MustStep(t, "creating a submission", err)
	ds, _, err := b.DB.ListWebhookDeliveries(ctx, tenantID, endpointID, webhooks.DeliveryFilter{Page: 1, Limit: 1})
	webtest.MustStep(t, "listing deliveries", err)
	if len(ds) != 1 {
		t.Fatalf("the submission made %d deliveries for the endpoint, want 1", len(ds))
	}
	return ds[0]
}

// adminFailDelivery marks a delivery as failed after its last attempt.
func adminFailDelivery(t *testing.T, b *webtest.Bundle, id string) {
	t.Helper()
	_, err := b.DB.Pool().Exec(context.Background(), `UPDATE webhook_deliveries SET status = 'failed', attempts = 6,
		last_error = 'HTTP 500: boom', http_status = 500, last_attempt_at = now(), next_attempt_at = NULL WHERE id = $1`, id)
	webtest.MustStep(t, "failing the delivery", err)
}

// adminDeliveryJobs counts the River jobs queued for a delivery.
func adminDeliveryJobs(t *testing.T, b *webtest.Bundle, id string) int {
	t.Helper()
	var n int
	err := b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM river_job
		WHERE kind = 'webhook_delivery' AND args->>'deliveryId' = $1`, id).Scan(&n)
	webtest.MustStep(t, "counting delivery jobs", err)
	return n
}

func adminSetHookEnabled(t *testing.T, b *webtest.Bundle, tenantID, id string, enabled bool) {
	t.Helper()
	_, err := b.DB.UpdateWebhookEndpoint(context.Background(), tenantID, id, webhooks.WebhookEndpointWrite{Enabled: parley.Some(enabled)})
	webtest.MustStep(t, "updating the endpoint", err)
}

func TestBrowserWebhooks(t *testing.T) {
	t.Parallel()
	b := withAdminHookResolver(webtest.Setup(t))
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/webhooks")

	// Each event is ticked, and says in words when it is sent.
	events := webtest.MustRunStep(ctx, t, "events", chromedp.Evaluate[[][]string](`[...document.querySelectorAll('input[name=events]')].map(
		i => [i.value, String(i.checked), i.closest('label').querySelector('.muted')?.textContent.trim() ?? ''])`))
	if len(events) != len(parley.WebhookEvents) {
		t.Errorf("events offered %v, want %v", events, parley.WebhookEvents)
	}
	for i, e := range events {
		if i >= len(parley.WebhookEvents) || e[0] != parley.WebhookEvents[i] || e[1] != "true" || len(e[2]) < 10 {
			t.Errorf("event %v: want %s ticked, said in words", e, parley.WebhookEvents[min(i, len(parley.WebhookEvents)-1)])
		}
	}
	webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
		webtest.FillField("url", adminHookURL),
		webtest.FillField("description", "CRM"),
		webtest.FillField("piiFields", "email, phone"),
	))
	if status := webtest.SubmitForm(ctx, t, "#create-webhook"); status != http.StatusOK {
		t.Fatalf("after creating: status %d", status)
	}
	secret := strings.TrimSpace(webtest.MustRunStep(ctx, t, "new secret", chromedp.Text(chromedp.ID("new-secret"))))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown = %q", secret)
	}
	if txt := webtest.MustRunStep(ctx, t, "copy button", chromedp.Text(chromedp.ID("copy-secret"))); txt != "Copy" {
		t.Errorf("copy button = %q", txt)
	}
	if warning := webtest.MustRunStep(ctx, t, "warning", chromedp.Text(chromedp.ID("secret-once"))); !strings.Contains(warning, "shown only once") {
		t.Errorf("no warning that the secret is shown once: %q", warning)
	}
	eps, err := b.DB.ListWebhookEndpoints(bg, ten.ID)
	webtest.MustStep(t, "listing endpoints", err)
	if len(eps) != 1 {
		t.Fatalf("%d endpoints stored, want 1", len(eps))
	}
	ep := eps[0]
	if ep.URL != adminHookURL || ep.Description != "CRM" || !ep.Enabled || !slices.Equal(ep.Events, parley.WebhookEvents) ||
		strings.Join(ep.PIIFields, ",") != "email,phone" {
		t.Errorf("stored endpoint = %+v", ep)
	}
	if plain, err := b.Box.Open(ep.SecretSealed); err != nil || string(plain) != secret {
		t.Errorf("the secret shown is not the one stored (%v)", err)
	}
	row := "#webhook-" + ep.ID

	t.Run("ShownOnce", func(t *testing.T) {
		webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
		html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, secret) || strings.Contains(html, `id="new-secret"`) {
			t.Error("the secret is still shown after a reload")
		}
		if u := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS(row+" .webhook-url"))); u != adminHookURL {
			t.Errorf("row URL = %q", u)
		}
	})

	t.Run("PrivateAddress", func(t *testing.T) {
		webtest.MustStep(t, "filling the form", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks"), webtest.FillField("url", "https://10.0.0.1/hook")))
		if status := webtest.SubmitForm(ctx, t, "#create-webhook"); status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "url error", chromedp.Text(chromedp.ID("err-url"))); msg != "refused: 10.0.0.1 is a private or reserved address" {
			t.Errorf("url error = %q", msg)
		}
		if v := webtest.MustRunStep(ctx, t, "url", chromedp.Value(chromedp.ID("url"))); v != "https://10.0.0.1/hook" {
			t.Errorf("the form lost what was typed: %q", v)
		}
		if eps, _ := b.DB.ListWebhookEndpoints(bg, ten.ID); len(eps) != 1 {
			t.Errorf("%d endpoints stored, want 1", len(eps))
		}
	})

	t.Run("DisableInPlace", func(t *testing.T) {
		webtest.MustStep(t, "opening the list", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks")))
		webtest.MustStep(t, "disabling", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+" button.toggle")),
			chromedp.WaitVisible(chromedp.CSS(row+" .badge.revoked"))))
		if got, _ := b.DB.WebhookEndpoint(bg, ten.ID, ep.ID); got.Enabled {
			t.Error("the endpoint is still enabled")
		}
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/webhooks" {
			t.Errorf("location after disabling = %s", loc)
		}
		webtest.MustStep(t, "enabling", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+" button.toggle"))))
		webtest.WaitUntil(ctx, t, "the enabled row", `document.querySelector('`+row+` td.state .badge')?.textContent === 'enabled'`)
		if got, _ := b.DB.WebhookEndpoint(bg, ten.ID, ep.ID); !got.Enabled {
			t.Error("the endpoint is still disabled")
		}
	})

	del := adminHookDelivery(t, b, ten.ID, ep.ID)
	adminFailDelivery(t, b, del.ID)
	drow := "#delivery-" + del.ID

	t.Run("FailedDelivery", func(t *testing.T) {
		webtest.MustStep(t, "opening the endpoint", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks/"+ep.ID)))
		for sel, want := range map[string]string{
			drow + " .badge":       "failed",
			drow + " .last-error":  "HTTP 500: boom",
			drow + " .attempts":    "6/6",
			drow + " .http-status": "500",
			"#stat-total":          "1",
			"#stat-failed":         "1",
			"#stat-last-success":   "never",
		} {
			if got := webtest.MustRunStep(ctx, t, sel, chromedp.Text(chromedp.CSS(sel))); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if cls := webtest.MustRunStep(ctx, t, "badge", chromedp.AttributeValue(chromedp.CSS(drow+" .badge"), "class")); !strings.Contains(cls.Value, "status-failed") {
			t.Errorf("badge class = %q", cls.Value)
		}
	})

	t.Run("RedeliverRefused", func(t *testing.T) {
		adminSetHookEnabled(t, b, ten.ID, ep.ID, false)
		webtest.MustStep(t, "opening the endpoint", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks/"+ep.ID),
			chromedp.Click(chromedp.CSS(drow+" button.redeliver")),
			chromedp.WaitVisible(chromedp.ID("redeliver-error-"+del.ID))))
		msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("redeliver-error-"+del.ID)))
		if msg != "Webhook endpoint is disabled; enable it before redelivering" {
			t.Errorf("refusal shown = %q", msg)
		}
		if badge := webtest.MustRunStep(ctx, t, "badge", chromedp.Text(chromedp.CSS(drow+" .badge"))); badge != "failed" {
			t.Errorf("badge after a refusal = %q", badge)
		}
		if n := adminDeliveryJobs(t, b, del.ID); n != 1 {
			t.Errorf("%d jobs for the delivery, want the first only", n)
		}
		adminSetHookEnabled(t, b, ten.ID, ep.ID, true)
	})

	t.Run("Redeliver", func(t *testing.T) {
		webtest.MustStep(t, "redelivering", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks/"+ep.ID),
			chromedp.Click(chromedp.CSS(drow+" button.redeliver")),
			chromedp.WaitVisible(chromedp.CSS(drow+" .badge.status-pending"))))
		if badge := webtest.MustRunStep(ctx, t, "badge", chromedp.Text(chromedp.CSS(drow+" .badge"))); badge != "pending" {
			t.Errorf("badge = %q", badge)
		}
		if n := webtest.MustRunStep(ctx, t, "buttons", chromedp.Evaluate[int](`document.querySelectorAll(`+webtest.JSString(drow+" button.redeliver")+`).length`)); n != 0 {
			t.Error("a pending delivery still offers Redeliver")
		}
		if n := adminDeliveryJobs(t, b, del.ID); n != 2 {
			t.Errorf("%d jobs for the delivery, want 2", n)
		}
		ds, _, err := b.DB.ListWebhookDeliveries(bg, ten.ID, ep.ID, webhooks.DeliveryFilter{Page: 1, Limit: 10})
		webtest.MustStep(t, "listing deliveries", err)
		if len(ds) != 1 || ds[0].Status != webhooks.DeliveryPending {
			t.Errorf("deliveries = %+v", ds)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		webtest.MustStep(t, "opening the list", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/webhooks")))
		msg := webtest.ClickAndConfirm(ctx, t, row+" button.delete")
		if !strings.Contains(msg, "Delete the endpoint "+adminHookURL) {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.WaitUntil(ctx, t, "the row to go", `!document.querySelector(`+webtest.JSString(row)+`)`)
		if _, err := b.DB.WebhookEndpoint(bg, ten.ID, ep.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the endpoint is still stored: %v", err)
		}
		var n int
		webtest.MustStep(t, "counting deliveries", b.DB.Pool().QueryRow(bg, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, ep.ID).Scan(&n))
		if n != 0 {
			t.Errorf("%d deliveries left", n)
		}
	})
}

func TestAdminWebhooksValidation(t *testing.T) {
	t.Parallel()
	b := withAdminHookResolver(webtest.SetupAdmin(t, nil))
	ten := b.OwnedTenant(t, "builder")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/webhooks")
	both := []string{webhooks.EventSubmissionCreated, webhooks.EventSubmissionUpdated}
	many := make([]string, 33)
	for i := range many {
		many[i] = "f" + strconv.Itoa(i)
	}

	for _, tc := range []struct {
		name, field, want string
		form              url.Values
	}{
		{"NoURL", "url", "is required", url.Values{"url": {" "}, "events": both}},
		{"NotAURL", "url", "must be an absolute https URL", url.Values{"url": {"hooks.example.com"}, "events": both}},
		{"PlainHTTP", "url", "must use https", url.Values{"url": {"http://hooks.example.com/x"}, "events": both}},
		{"Credentials", "url", "must not contain credentials; authenticate deliveries with the signing secret", url.Values{"url": {"https://u:p@hooks.example.com/x"}, "events": both}},
		{"PrivateAddress", "url", "refused: 10.0.0.1 is a private or reserved address", url.Values{"url": {"https://10.0.0.1/hook"}, "events": both}},
		{"ResolvesPrivate", "url", "refused: internal.example.com is not a public internet address", url.Values{"url": {"https://internal.example.com/hook"}, "events": both}},
		{"Unresolvable", "url", "refused: nowhere.example.com is not a public internet address", url.Values{"url": {"https://nowhere.example.com/hook"}, "events": both}},
		{"NoEvents", "events", "must list at least one of submission.created, submission.updated", url.Values{"url": {adminHookURL}}},
		{"UnknownEvent", "events", `unknown event "order.paid"; events are submission.created, submission.updated, conversation.escalated, conversation.taken, conversation.handed_back, conversation.closed, message.created`, url.Values{"url": {adminHookURL}, "events": {"order.paid"}}},
		{"DescriptionTooLong", "description", "must be at most 500 characters", url.Values{"url": {adminHookURL}, "events": both, "description": {strings.Repeat("d", 501)}}},
		{"TooManyPIIFields", "piiFields", "must list at most 32 fields", url.Values{"url": {adminHookURL}, "events": both, "piiFields": {strings.Join(many, ",")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := c.As(t)
			p := cc.Submit("/admin/webhooks", tc.form)
			if p.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.Status)
			}
			if got := p.Text("#err-" + tc.field); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%s error = %q, want %q", tc.field, got, tc.want)
			}
			if got := p.Doc.Find("#url").AttrOr("value", ""); got != tc.form.Get("url") {
				t.Errorf("url shown = %q, want what was typed", got)
			}
		})
	}
	t.Run("NUL", func(t *testing.T) {
		// Refused at the edge, before the form is read.
		p := c.As(t).Submit("/admin/webhooks", url.Values{"url": {adminHookURL}, "events": both, "description": {"a\x00b"}})
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Doc.Text(), `form field "description" must be valid UTF-8 text without NUL bytes`) {
			t.Errorf("%d %.300s", p.Status, p.Doc.Find("main").Text())
		}
	})
	if eps, _ := b.DB.ListWebhookEndpoints(context.Background(), ten.ID); len(eps) != 0 {
		t.Errorf("%d endpoints stored by invalid forms", len(eps))
	}

	t.Run("CreateAndEdit", func(t *testing.T) {
		cc := c.As(t)
		p := cc.Submit("/admin/webhooks", url.Values{"url": {adminHookURL}, "events": {webhooks.EventSubmissionUpdated}, "piiFields": {"email, , phone,email"}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/webhooks" {
			t.Fatalf("creating: %d to %q: %s", p.Status, p.Location(), p.Text("main"))
		}
		list := cc.Get("/admin/webhooks")
		secret := list.Text("#new-secret")
		if !strings.HasPrefix(secret, "whsec_") || list.Doc.Find("#copy-secret").Length() != 1 {
			t.Errorf("secret %q, copy buttons %d", secret, list.Doc.Find("#copy-secret").Length())
		}
		if again := cc.Get("/admin/webhooks"); again.Doc.Find("#new-secret").Length() != 0 || strings.Contains(again.Body, secret) {
			t.Error("the secret is shown a second time")
		}
		eps, err := b.DB.ListWebhookEndpoints(context.Background(), ten.ID)
		webtest.MustStep(t, "listing", err)
		if len(eps) != 1 || strings.Join(eps[0].Events, ",") != "submission.updated" || strings.Join(eps[0].PIIFields, ",") != "email,phone" {
			t.Fatalf("stored = %+v", eps)
		}
		id := eps[0].ID

		edit := cc.Get("/admin/webhooks/" + id)
		form := webtest.FormValues(edit.Doc.Find("#webhook-form"))
		if form.Get("enabled") != "true" || form.Get("piiFields") != "email, phone" {
			t.Errorf("edit form = %v", form)
		}
		form.Set("url", "https://10.0.0.1/hook")
		if p := cc.Submit("/admin/webhooks/"+id, form); p.Status != http.StatusUnprocessableEntity ||
			p.Text("#err-url") != "refused: 10.0.0.1 is a private or reserved address" {
			t.Errorf("invalid edit: %d %q", p.Status, p.Text("#err-url"))
		}
		form.Set("url", adminHookURL+"/v2")
		form.Set("description", "Edited")
		form["events"] = both
		form.Del("enabled")
		form.Set("piiFields", "")
		if p := cc.Submit("/admin/webhooks/"+id, form); p.Status != http.StatusSeeOther || p.Location() != "/admin/webhooks/"+id {
			t.Fatalf("saving: %d to %q: %s", p.Status, p.Location(), p.Text("main"))
		}
		got, err := b.DB.WebhookEndpoint(context.Background(), ten.ID, id)
		webtest.MustStep(t, "reading", err)
		if got.URL != adminHookURL+"/v2" || got.Description != "Edited" || got.Enabled || len(got.Events) != 2 || len(got.PIIFields) != 0 {
			t.Errorf("after saving: %+v", got)
		}
		if p := cc.Get("/admin/webhooks/" + id); p.Text(".flash.ok") != "Webhook endpoint saved." || p.Text("#endpoint-state") != "disabled" {
			t.Errorf("after saving: flash %q, state %q", p.Text(".flash.ok"), p.Text("#endpoint-state"))
		}
	})
}

func TestAdminWebhooksDeliveries(t *testing.T) {
	t.Parallel()
	b := withAdminHookResolver(webtest.SetupAdmin(t, nil))
	ten := b.OwnedTenant(t, "builder")
	ep := adminHookEndpoint(t, b, ten.ID, adminHookURL)
	failed := adminHookDelivery(t, b, ten.ID, ep.ID)
	adminFailDelivery(t, b, failed.ID)
	pending := adminHookDelivery(t, b, ten.ID, ep.ID)
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	path := "/admin/webhooks/" + ep.ID

	t.Run("Log", func(t *testing.T) {
		p := c.As(t).Get(path)
		rows := p.Doc.Find("#deliveries-table tbody tr")
		if rows.Length() != 2 || rows.First().AttrOr("id", "") != "delivery-"+pending.ID {
			t.Fatalf("%d rows, first %q: want 2, newest first", rows.Length(), rows.First().AttrOr("id", ""))
		}
		if p.Doc.Find("#delivery-"+pending.ID+" button.redeliver").Length() != 0 || p.Doc.Find("#delivery-"+failed.ID+" button.redeliver").Length() != 1 {
			t.Error("Redeliver is offered for a pending delivery, or not for a failed one")
		}
		if p.Text("#stat-total") != "2" || p.Text("#stat-pending") != "1" || p.Text("#stat-failed") != "1" {
			t.Errorf("stats: total %q, pending %q, failed %q", p.Text("#stat-total"), p.Text("#stat-pending"), p.Text("#stat-failed"))
		}
	})

	t.Run("NextAttemptIsTheRetrysTime", func(t *testing.T) {
		now := b.Srv.Base.Now().UTC() // the dashboard's clock
		last, next := now.Add(-5*time.Second), now.Add(10*time.Minute)
		_, err := b.DB.Pool().Exec(context.Background(), `UPDATE webhook_deliveries SET attempts = 1, last_error = 'HTTP 502',
			last_attempt_at = $2, next_attempt_at = $3 WHERE id = $1`, pending.ID, last, next)
		webtest.MustStep(t, "failing a first attempt", err)
		defer func() {
			_, err := b.DB.Pool().Exec(context.Background(), `UPDATE webhook_deliveries SET attempts = 0, last_error = NULL,
				last_attempt_at = NULL, next_attempt_at = NULL WHERE id = $1`, pending.ID)
			webtest.MustStep(t, "restoring the delivery", err)
		}()
		p := c.As(t).Get(path)
		row := "#delivery-" + pending.ID
		if got, want := p.Text(row+" td.last-attempt"), last.Format("2006-01-02 15:04:05 UTC"); got != want {
			t.Errorf("last attempt = %q, want %q", got, want)
		}
		if got, want := p.Text(row+" td.next-attempt"), next.Format("2006-01-02 15:04:05 UTC")+" (in 10 min)"; got != want {
			t.Errorf("next attempt = %q, want %q", got, want)
		}
		if got := p.Text("#delivery-" + failed.ID + " td.next-attempt"); got != "—" {
			t.Errorf("a failed delivery's next attempt = %q", got)
		}
	})

	t.Run("FilterByStatus", func(t *testing.T) {
		p := c.As(t).Get(path + "?status=failed")
		rows := p.Doc.Find("#deliveries-table tbody tr")
		if rows.Length() != 1 || rows.AttrOr("id", "") != "delivery-"+failed.ID {
			t.Errorf("failed filter: %d rows", rows.Length())
		}
		if sel := p.Doc.Find("#status-filter option[selected]").AttrOr("value", ""); sel != "failed" {
			t.Errorf("filter shown = %q", sel)
		}
		if p := c.As(t).Get(path + "?status=dropped"); p.Doc.Find("#no-deliveries").Length() != 1 {
			t.Error("no empty-state for a filter matching nothing")
		}
		frag := c.As(t).Do("GET", path+"?status=pending", nil, map[string]string{"HX-Request": "true", "HX-Target": "deliveries"})
		if frag.Doc.Find("main").Length() != 0 || frag.Doc.Find("#deliveries-table tbody tr").Length() != 1 {
			t.Errorf("htmx filter: not the log fragment: %s", frag.Body)
		}
	})

	t.Run("RedeliverAlreadyQueued", func(t *testing.T) {
		cc := c.As(t)
		cc.Get(path)
		p := cc.Do("POST", path+"/deliveries/"+pending.ID+"/redeliver", url.Values{"_csrf": {cc.CSRF}}, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusConflict || p.Header.Get("HX-Retarget") != "#redeliver-error-"+pending.ID ||
			strings.TrimSpace(p.Body) != "Delivery is already queued" {
			t.Errorf("%d, retarget %q: %q", p.Status, p.Header.Get("HX-Retarget"), p.Body)
		}
	})

	t.Run("RedeliverWithoutJavaScript", func(t *testing.T) {
		cc := c.As(t)
		cc.Get(path)
		p := cc.Submit(path+"/deliveries/"+failed.ID+"/redeliver", url.Values{})
		if p.Status != http.StatusSeeOther || p.Location() != path {
			t.Fatalf("%d to %q", p.Status, p.Location())
		}
		if p := cc.Get(path); p.Text(".flash.ok") != "Delivery queued again." || p.Text("#delivery-"+failed.ID+" .badge") != "pending" {
			t.Errorf("flash %q, badge %q", p.Text(".flash.ok"), p.Text("#delivery-"+failed.ID+" .badge"))
		}
	})
}

func TestAdminWebhooksIsolation(t *testing.T) {
	t.Parallel()
	b := withAdminHookResolver(webtest.SetupAdmin(t, nil))
	mine, theirs := b.OwnedTenant(t, "builder"), b.NewTenant(t, "builder")
	ep := adminHookEndpoint(t, b, theirs.ID, adminHookURL)
	del := adminHookDelivery(t, b, theirs.ID, ep.ID)
	adminFailDelivery(t, b, del.ID)
	c := b.NewAdminClient(t)
	c.SignIn(mine)
	c.Get("/admin/webhooks")

	c.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "Show", Method: "GET", Path: "/admin/webhooks/" + ep.ID, Form: nil, HX: false},
		{Name: "Edit", Method: "POST", Path: "/admin/webhooks/" + ep.ID, Form: url.Values{"url": {adminHookURL + "/mine"}, "events": {webhooks.EventSubmissionCreated}}, HX: false},
		{Name: "Disable", Method: "POST", Path: "/admin/webhooks/" + ep.ID + "/enabled", Form: url.Values{"enabled": {"false"}}, HX: true},
		{Name: "Delete", Method: "POST", Path: "/admin/webhooks/" + ep.ID + "/delete", Form: url.Values{}, HX: true},
		{Name: "Redeliver", Method: "POST", Path: "/admin/webhooks/" + ep.ID + "/deliveries/" + del.ID + "/redeliver", Form: url.Values{}, HX: true},
		{Name: "NotAnID", Method: "GET", Path: "/admin/webhooks/not-a-uuid", Form: nil, HX: false},
	})

	if p := c.Get("/admin/webhooks"); p.Doc.Find("#webhooks").Length() != 0 || strings.Contains(p.Body, ep.ID) {
		t.Error("their endpoint is listed")
	}
	got, err := b.DB.WebhookEndpoint(context.Background(), theirs.ID, ep.ID)
	webtest.MustStep(t, "reading their endpoint", err)
	if got.URL != adminHookURL || !got.Enabled || !slices.Equal(got.Events, parley.WebhookEvents) {
		t.Errorf("their endpoint changed: %+v", got)
	}
	if n := adminDeliveryJobs(t, b, del.ID); n != 1 {
		t.Errorf("their delivery was queued again: %d jobs", n)
	}
}

func TestAdminWebhooksHealth(t *testing.T) {
	t.Parallel()
	b := withAdminHookResolver(webtest.SetupAdmin(t, nil))
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	// An event recorded before any endpoint exists has no delivery: the
	// deliveries below are written as each scenario needs.
	_, ev, err := b.DB.CreateSubmission(bg, parley.NewSubmission{TenantID: ten.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
		Channel: "web", Input: json.RawMessage(`{"email":"a@b.co"}`)}, nil)
	webtest.MustStep(t, "recording an event", err)
	now := b.Srv.Base.Now().UTC()
	delivery := func(endpointID, status string, at time.Time, failed bool) {
		t.Helper()
		var lastErr, deliveredAt any
		if failed {
			lastErr = "HTTP 500: boom"
		} else if status == webhooks.DeliverySucceeded {
			deliveredAt = at
		}
		_, err := b.DB.Pool().Exec(bg, `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event, status, attempts,
			last_error, last_attempt_at, delivered_at, created_at) VALUES ($1, $2, $3, 'submission.created', $4, 1, $5, $6, $7, $6)`,
			ten.ID, endpointID, ev.ID, status, lastErr, at, deliveredAt)
		webtest.MustStep(t, "writing a delivery", err)
	}
	failing := adminHookEndpoint(t, b, ten.ID, "https://hooks.example.com/failing")
	delivery(failing.ID, webhooks.DeliverySucceeded, now.Add(-48*time.Hour), false)
	for i := range 3 {
		delivery(failing.ID, webhooks.DeliveryFailed, now.Add(-time.Duration(3-i)*time.Hour), true)
	}
	working := adminHookEndpoint(t, b, ten.ID, "https://hooks.example.com/working")
	delivery(working.ID, webhooks.DeliveryFailed, now.Add(-3*time.Hour), true)
	delivery(working.ID, webhooks.DeliverySucceeded, now.Add(-2*time.Hour), false)
	delivery(working.ID, webhooks.DeliverySucceeded, now.Add(-time.Hour), false)
	recovering := adminHookEndpoint(t, b, ten.ID, "https://hooks.example.com/recovering")
	delivery(recovering.ID, webhooks.DeliverySucceeded, now.Add(-3*time.Hour), false)
	delivery(recovering.ID, webhooks.DeliveryFailed, now.Add(-2*time.Hour), true)
	delivery(recovering.ID, webhooks.DeliveryPending, now.Add(-time.Hour), true) // a retry is due
	quiet := adminHookEndpoint(t, b, ten.ID, "https://hooks.example.com/quiet")
	off := adminHookEndpoint(t, b, ten.ID, "https://hooks.example.com/off")
	delivery(off.ID, webhooks.DeliveryFailed, now.Add(-time.Hour), true)
	adminSetHookEnabled(t, b, ten.ID, off.ID, false)
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	p := c.Get("/admin/webhooks")
	at := func(d time.Duration) string { return now.Add(d).Format("2006-01-02 15:04 UTC") }
	for _, tc := range []struct {
		name, id, state, lastSuccess, recent string
	}{
		{"Failing", failing.ID, "failing", at(-48 * time.Hour), "3 of 3 deliveries failed in the last 24 h."},
		{"Working", working.ID, "working", at(-time.Hour), "1 of 3 deliveries failed in the last 24 h."},
		{"NotYetFailing", recovering.ID, "enabled", at(-3 * time.Hour), "2 of 3 deliveries failed in the last 24 h."},
		{"Quiet", quiet.ID, "enabled", "never", "Nothing sent in the last 24 h."},
		{"Disabled", off.ID, "disabled", "never", "The one delivery of the last 24 h failed."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := "#webhook-" + tc.id + " td.state"
			if got := p.Text(row + " .badge"); got != tc.state {
				t.Errorf("list badge = %q, want %q", got, tc.state)
			}
			if got := p.Text(row + " #last-success"); got != tc.lastSuccess {
				t.Errorf("list last success = %q, want %q", got, tc.lastSuccess)
			}
			if got := p.Text(row + " #recent"); got != tc.recent {
				t.Errorf("list recent = %q, want %q", got, tc.recent)
			}
			d := c.Get("/admin/webhooks/" + tc.id)
			if d.Text("#endpoint-state") != tc.state || d.Text("#endpoint-last-success") != tc.lastSuccess || d.Text("#endpoint-recent") != tc.recent {
				t.Errorf("endpoint page: %q, %q, %q", d.Text("#endpoint-state"), d.Text("#endpoint-last-success"), d.Text("#endpoint-recent"))
			}
		})
	}
	if title := p.Doc.Find("#webhook-"+failing.ID+" td.state .badge").AttrOr("title", ""); !strings.Contains(title, "last 3 deliveries all failed") {
		t.Errorf("failing badge explains %q", title)
	}
}
