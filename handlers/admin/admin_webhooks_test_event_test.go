package admin_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web/webtest"
)

// signedHook is a receiver that checks each request's signature as the spec
// tells receivers to, answering status (and 401 to a bad signature).
type signedHook struct {
	srv      *httptest.Server
	status   atomic.Int32
	secret   atomic.Pointer[string]
	received chan hookRequest
}

type hookRequest struct {
	header   http.Header
	body     []byte
	verified bool
}

func newSignedHook(t *testing.T, secret string) *signedHook {
	t.Helper()
	h := &signedHook{received: make(chan hookRequest, 8)}
	h.status.Store(http.StatusNoContent)
	h.secret.Store(&secret)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ts int64
		var sig string
		for _, part := range strings.Split(r.Header.Get("X-Service-Signature"), ",") {
			k, v, _ := strings.Cut(part, "=")
			switch k {
			case "t":
				fmt.Sscan(v, &ts)
			case "v1":
				sig = v
			}
		}
		mac := hmac.New(sha256.New, []byte(*h.secret.Load()))
		fmt.Fprintf(mac, "%d.%s", ts, body)
		got, _ := hex.DecodeString(sig)
		ok := hmac.Equal(got, mac.Sum(nil)) && time.Since(time.Unix(ts, 0)).Abs() <= 300*time.Second
		h.received <- hookRequest{header: r.Header.Clone(), body: body, verified: ok}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(int(h.status.Load()))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// url is the receiver's address under a name that the test guard resolves to the loopback.
func (h *signedHook) url() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(h.srv.URL, "http://"))
	return "http://hooks.test:" + port + "/hook"
}

// attempt works the delivery's job and returns what the receiver got.
func (h *signedHook) attempt(t *testing.T, b *webtest.Bundle, deliveryID string) hookRequest {
	t.Helper()
	workDeliveryJob(t, b, deliveryID)
	select {
	case r := <-h.received:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver got nothing")
	}
	return hookRequest{}
}

// workDeliveryJob works the River job queued for a delivery with the
// production worker, through rivertest, as River would.
func workDeliveryJob(t *testing.T, b *webtest.Bundle, deliveryID string) {
	t.Helper()
	ctx := context.Background()
	var jobID int64
	webtest.MustStep(t, "reading the delivery's job", b.DB.Pool().QueryRow(ctx, `SELECT job_id FROM webhook_deliveries WHERE id = $1`, deliveryID).Scan(&jobID))
	driver := riverpgxv5.New(b.DB.Pool())
	client, err := river.NewClient(driver, &river.Config{})
	webtest.MustStep(t, "a River client", err)
	row, err := client.JobGet(ctx, jobID)
	webtest.MustStep(t, "reading the job", err)
	if row.Kind != (deliveryargs.Args{}).Kind() || row.Queue != deliveryargs.Queue {
		t.Fatalf("job %s on %s, want a delivery on its queue", row.Kind, row.Queue)
	}
	worker := &jobs.WebhookDeliveryWorker{DB: b.DB, Box: b.Box, Client: jobs.DeliveryClient(b.Srv.Base.Outbound, jobs.DeliveryTimeout)}
	tx, err := b.DB.Pool().Begin(ctx)
	webtest.MustStep(t, "a transaction", err)
	defer tx.Rollback(ctx)
	_, _ = rivertest.NewWorker(t, driver, &river.Config{}, worker).WorkJob(ctx, t, tx, row) // a failed attempt is an error here
	webtest.MustStep(t, "committing the job's state", tx.Commit(ctx))
}

func TestAdminWebhooksTestEvent(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	// The dashboard reads the time of the retry on the workers' clock, the
	// real one; WithOutbound restarts the listener after this change.
	b.Srv.Base.Now = nil
	b.WithOutbound(t, true, webtest.WebhookHosts)
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	hook := newSignedHook(t, "whsec_test")
	ep := adminHookEndpoint(t, b, ten.ID, hook.url())
	other := adminHookEndpoint(t, b, ten.ID, "https://public.test/other")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	path := "/admin/webhooks/" + ep.ID
	send := func(t *testing.T) (webtest.AdminPage, webhooks.WebhookDelivery) {
		t.Helper()
		c.Get(path)
		p := c.Do("POST", path+"/test", url.Values{"_csrf": {c.CSRF}}, map[string]string{"HX-Request": "true"})
		ds, _, err := b.DB.ListWebhookDeliveries(bg, ten.ID, ep.ID, webhooks.DeliveryFilter{Page: 1, Limit: 1})
		webtest.MustStep(t, "listing deliveries", err)
		if len(ds) == 0 {
			t.Fatalf("no delivery queued: %d %s", p.Status, p.Body)
		}
		return p, ds[0]
	}
	result := func(t *testing.T, d webhooks.WebhookDelivery) hookRequest { return hook.attempt(t, b, d.ID) }

	t.Run("Delivered", func(t *testing.T) {
		p, d := send(t)
		if p.Status != http.StatusAccepted || p.Doc.Find("#test-result[hx-get]").Length() != 1 || p.Text("#test-result") != "Sending…" {
			t.Fatalf("answer %d: %s", p.Status, p.Body)
		}
		if p.Doc.Find(`#deliveries[hx-swap-oob="true"] #delivery-`+d.ID).Length() != 1 || p.Doc.Find(`#delivery-stats[hx-swap-oob="true"]`).Length() != 1 {
			t.Errorf("the log and the statistics do not come along: %s", p.Body)
		}
		if d.Event != webhooks.EventWebhookTest || d.Status != webhooks.DeliveryPending || adminDeliveryJobs(t, b, d.ID) != 1 {
			t.Fatalf("delivery %s %s with %d jobs", d.Event, d.Status, adminDeliveryJobs(t, b, d.ID))
		}
		r := result(t, d)
		if !r.verified {
			t.Errorf("the signature does not verify with the endpoint's secret: %q", r.header.Get("X-Service-Signature"))
		}
		if r.header.Get("X-Service-Event") != "webhook.test" || r.header.Get("X-Service-Delivery-Id") != d.ID {
			t.Errorf("headers %v", r.header)
		}
		var body struct {
			Event string
			Data  struct {
				Test       bool
				EndpointID string
			}
		}
		if err := json.Unmarshal(r.body, &body); err != nil || body.Event != "webhook.test" || !body.Data.Test || body.Data.EndpointID != ep.ID {
			t.Errorf("body %s (%v)", r.body, err)
		}
		got := c.Get(path + "/test/" + d.ID)
		if got.Doc.Find("#test-result[hx-get]").Length() != 0 || got.Doc.Find("#test-result").AttrOr("data-state", "") != "succeeded" ||
			!strings.Contains(got.Text("#test-result"), "answered HTTP 204") {
			t.Errorf("result: %s", got.Body)
		}
		if n, _, _ := b.DB.ListWebhookDeliveries(bg, ten.ID, other.ID, webhooks.DeliveryFilter{Page: 1, Limit: 10}); len(n) != 0 {
			t.Errorf("the test went to another endpoint too: %d deliveries", len(n))
		}
		if page := c.Get(path); page.Text("#delivery-"+d.ID+" code") != "webhook.test" || page.Text("#endpoint-state") != "working" {
			t.Errorf("log: %q, health %q", page.Text("#delivery-"+d.ID+" code"), page.Text("#endpoint-state"))
		}
		// The API's log lists it too, as its document says (the exchange is checked against openapi.json).
		status, log := b.Do(t, "GET", "/tenants/"+ten.Slug+"/webhooks/"+ep.ID+"/deliveries", b.Token(t, ten.ID, "settings:read"), nil)
		if ds := webtest.List(log["deliveries"]); status != http.StatusOK || len(ds) != 1 || webtest.Obj(ds[0])["event"] != "webhook.test" {
			t.Errorf("API log: %d %v", status, log)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		hook.status.Store(http.StatusInternalServerError)
		_, d := send(t)
		if r := result(t, d); !r.verified {
			t.Error("the signature does not verify")
		}
		got := c.Get(path + "/test/" + d.ID)
		if txt := got.Text("#test-result"); got.Doc.Find("#test-result").AttrOr("data-state", "") != "failed" ||
			!strings.Contains(txt, "HTTP 500") || !retriedIn30s.MatchString(txt) {
			t.Errorf("result: %q", txt)
		}
	})

	t.Run("Disabled", func(t *testing.T) {
		adminSetHookEnabled(t, b, ten.ID, ep.ID, false)
		defer adminSetHookEnabled(t, b, ten.ID, ep.ID, true)
		c.Get(path)
		p := c.Do("POST", path+"/test", url.Values{"_csrf": {c.CSRF}}, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusConflict || p.Text("#test-result") != "The endpoint is disabled; enable it to send a test event" {
			t.Errorf("%d %q", p.Status, p.Text("#test-result"))
		}
		if page := c.Get(path); page.Doc.Find("#send-test[disabled]").Length() != 1 {
			t.Error("Send test event is offered for a disabled endpoint")
		}
	})

	t.Run("WithoutJavaScript", func(t *testing.T) {
		c.Get(path)
		p := c.Submit(path+"/test", url.Values{})
		if p.Status != http.StatusSeeOther || p.Location() != path {
			t.Fatalf("%d to %q", p.Status, p.Location())
		}
		if page := c.Get(path); !strings.HasPrefix(page.Text(".flash.ok"), "Test event queued") {
			t.Errorf("flash %q", page.Text(".flash.ok"))
		}
	})
}

func TestAdminWebhooksRotateSecret(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	b.WithOutbound(t, true, webtest.WebhookHosts)
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	hook := newSignedHook(t, "whsec_test")
	ep := adminHookEndpoint(t, b, ten.ID, hook.url())
	queued, err := b.DB.SendTestEvent(bg, ten.ID, ep.ID, time.Now())
	webtest.MustStep(t, "queueing a delivery before the rotation", err)
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	path := "/admin/webhooks/" + ep.ID

	page := c.Get(path)
	if page.Doc.Find("#new-secret").Length() != 0 || page.Doc.Find(`#signing-secret form[hx-confirm]`).Length() != 1 {
		t.Fatal("a secret is shown before any rotation, or the rotation asks for no confirmation")
	}
	p := c.Do("POST", path+"/secret", url.Values{"_csrf": {c.CSRF}}, map[string]string{"HX-Request": "true"})
	if p.Status != http.StatusOK || p.Header.Get("HX-Redirect") != path {
		t.Fatalf("rotation: %d to %q", p.Status, p.Header.Get("HX-Redirect"))
	}
	page = c.Get(path)
	secret := page.Text("#new-secret")
	if !strings.HasPrefix(secret, "whsec_") || secret == "whsec_test" || !strings.Contains(page.Text("#secret-once"), "old secret no longer verifies") {
		t.Fatalf("new secret %q, notice %q", secret, page.Text("#secret-once"))
	}
	if page.Text(".flash.ok") != "New signing secret made; the old one no longer verifies." {
		t.Errorf("flash %q", page.Text(".flash.ok"))
	}
	if again := c.Get(path); again.Doc.Find("#new-secret").Length() != 0 {
		t.Error("the secret is shown twice")
	}
	stored, err := b.DB.WebhookEndpoint(bg, ten.ID, ep.ID)
	webtest.MustStep(t, "reading the endpoint", err)
	if opened, err := b.Box.Open(stored.SecretSealed); err != nil || string(opened) != secret {
		t.Errorf("stored secret %q (%v), shown %q", opened, err, secret)
	}

	// No grace period: a delivery queued before the rotation is signed with the new secret.
	if r := hook.attempt(t, b, queued.ID); r.verified {
		t.Error("the old secret still verifies after the rotation")
	}
	hook.secret.Store(&secret)
	d, err := b.DB.Redeliver(bg, ten.ID, ep.ID, queued.ID)
	if err != nil {
		// Still pending after a refused attempt: its retry is the next attempt.
		d = queued
	}
	if r := hook.attempt(t, b, d.ID); !r.verified {
		t.Error("the new secret does not verify the next attempt")
	}

	cc := c.As(t)
	cc.Get(path)
	if p := cc.Submit(path+"/secret", url.Values{}); p.Status != http.StatusSeeOther || p.Location() != path {
		t.Errorf("without JavaScript: %d to %q", p.Status, p.Location())
	}
	if p := cc.Get(path); p.Text("#new-secret") == secret || p.Text("#new-secret") == "" {
		t.Errorf("second rotation shows %q", p.Text("#new-secret"))
	}
}

// TestBrowserWebhookTestEventAndSecret drives Send test event and Make a new
// secret in Chromium: the result panel asks again until the worker is done,
// and the rotation is confirmed first.
func TestBrowserWebhookTestEventAndSecret(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.WithOutbound(t, true, webtest.WebhookHosts)
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	hook := newSignedHook(t, "whsec_test")
	ep := adminHookEndpoint(t, b, ten.ID, hook.url())
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/webhooks/"+ep.ID)
	webtest.MustStep(t, "opening the endpoint", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("send-test"))))

	webtest.MustStep(t, "sending a test event", chromedp.Do(ctx, chromedp.Click(chromedp.ID("send-test"))))
	webtest.WaitUntil(ctx, t, "the pending result", `document.getElementById('test-result')?.textContent === 'Sending…'`)
	var d webhooks.WebhookDelivery
	for range 50 {
		ds, _, err := b.DB.ListWebhookDeliveries(bg, ten.ID, ep.ID, webhooks.DeliveryFilter{Page: 1, Limit: 1})
		webtest.MustStep(t, "listing deliveries", err)
		if len(ds) == 1 {
			d = ds[0]
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := hook.attempt(t, b, d.ID); !r.verified {
		t.Error("the test event's signature does not verify")
	}
	webtest.WaitUntil(ctx, t, "the result", `document.getElementById('test-result')?.dataset.state === 'succeeded'`)
	if txt := webtest.MustRunStep(ctx, t, "result", chromedp.Text(chromedp.ID("test-result"))); !strings.Contains(txt, "answered HTTP 204") {
		t.Errorf("result = %q", txt)
	}
	// What the test changed on the page came with the result, without a reload.
	for sel, want := range map[string]string{"#endpoint-state": "working", "#stat-succeeded": "1",
		"#endpoint-recent":            "The one delivery of the last 24 h went through.",
		"#delivery-" + d.ID + " code": "webhook.test", "#delivery-" + d.ID + " .badge": "succeeded"} {
		if got := webtest.MustRunStep(ctx, t, sel, chromedp.Text(chromedp.CSS(sel))); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	webtest.SaveScreenshot(ctx, t, "webhook-endpoint-tested")

	if msg := webtest.ClickAndConfirm(ctx, t, "#rotate-secret"); !strings.Contains(msg, "stops verifying deliveries at once") {
		t.Errorf("confirmation = %q", msg)
	}
	// Read in the evaluation that finds it: htmx may swap the node between two steps.
	const readSecret = `(document.getElementById('new-secret')?.innerText || '').trim()`
	webtest.WaitUntil(ctx, t, "the new secret", readSecret+` !== ''`)
	secret := webtest.MustRunStep(ctx, t, "secret", chromedp.Evaluate[string](readSecret))
	stored, err := b.DB.WebhookEndpoint(bg, ten.ID, ep.ID)
	webtest.MustStep(t, "reading the endpoint", err)
	if opened, err := b.Box.Open(stored.SecretSealed); err != nil || string(opened) != secret || secret == "whsec_test" {
		t.Errorf("shown %q, stored %q (%v)", secret, opened, err)
	}
}

// retriedIn30s is the refused test's retry, 30 s after the attempt: a
// second or two less by the time the page is read on a loaded machine.
var retriedIn30s = regexp.MustCompile(`Retried in (2[7-9]|30) s`)
