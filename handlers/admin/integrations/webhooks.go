package integrations

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// sessNewWebhookSecret holds a just-created endpoint's signing secret until
// the page after the redirect shows it, once.
const sessNewWebhookSecret = "newWebhookSecret"

// sessRotatedWebhookSecret, followed by an endpoint's id, holds its new
// signing secret until the endpoint's page shows it, once.
const sessRotatedWebhookSecret = "rotatedWebhookSecret:"

// rotationWarning goes with a new secret: the old one stopped verifying.
const rotationWarning = "Store it now: it is shown only once. The old secret no longer verifies anything: " +
	"put this one in your receiver. Deliveries it refuses meanwhile are retried for about 8 hours, signed with this secret, and can be redelivered."

// deliveryStatuses are the statuses the deliveries log filters on.
var deliveryStatuses = []string{webhooks.DeliveryPending, webhooks.DeliverySucceeded, webhooks.DeliveryFailed, webhooks.DeliveryDropped}

// healthWindow is the span of the recent failures an endpoint's health counts.
const healthWindow = 24 * time.Hour

func webhookRow(e webhooks.WebhookEndpoint, health webhooks.EndpointHealth) views.WebhookRow {
	return views.WebhookRow{ID: e.ID, URL: e.URL, Description: e.Description, Events: e.Events, Enabled: e.Enabled,
		PIIFields: e.PIIFields, CreatedAt: e.CreatedAt.UTC().Format(dash.DateTime), Health: webhookHealth(e, health)}
}

// webhookHealth says how an endpoint's deliveries go, in words.
func webhookHealth(e webhooks.WebhookEndpoint, h webhooks.EndpointHealth) views.WebhookHealth {
	v := views.WebhookHealth{LastSuccess: "never"}
	if h.LastSuccessAt != nil {
		v.LastSuccess = h.LastSuccessAt.UTC().Format(dash.DateTime)
	}
	switch {
	case h.Attempted == 0:
		v.Recent = "Nothing sent in the last 24 h."
	case h.Failed == 0 && h.Attempted == 1:
		v.Recent = "The one delivery of the last 24 h went through."
	case h.Failed == 0:
		v.Recent = fmt.Sprintf("All %d deliveries of the last 24 h went through.", h.Attempted)
	case h.Attempted == 1:
		v.Recent = "The one delivery of the last 24 h failed."
	default:
		v.Recent = fmt.Sprintf("%d of %d deliveries failed in the last 24 h.", h.Failed, h.Attempted)
	}
	switch {
	case !e.Enabled:
		v.State, v.Title = "disabled", "Receives no events until enabled again."
	case h.Failing:
		v.State, v.Title = "failing", fmt.Sprintf("The last %d deliveries all failed: check the endpoint, then redeliver.", webhooks.FailingStreak)
	case h.LatestSucceeded:
		v.State, v.Title = "working", "The latest delivery went through."
	case h.Attempted > 0:
		v.State, v.Title = "enabled", "The latest delivery failed; see the log."
	default:
		v.State, v.Title = "enabled", "Receives the events it subscribes to."
	}
	return v
}

// endpointHealth reads the health of the tenant's endpoints.
func (h *Integrations) endpointHealth(c echo.Context) (map[string]webhooks.EndpointHealth, error) {
	return h.DB.WebhookHealth(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, h.Clock().Add(-healthWindow))
}

// dateTimeSeconds shows times a few seconds apart, such as an attempt and its retry.
const dateTimeSeconds = "2006-01-02 15:04:05 UTC"

func deliveryRow(endpointID string, d webhooks.WebhookDelivery, now time.Time) views.DeliveryRow {
	r := views.DeliveryRow{ID: d.ID, EndpointID: endpointID, Event: d.Event, Status: d.Status,
		Attempts: fmt.Sprintf("%d/%d", d.Attempts, webhooks.DeliveryMaxAttempts), LastError: handlers.Deref(d.LastError),
		CreatedAt: d.CreatedAt.UTC().Format(dash.DateTime), LastAttempt: secondsOrDash(d.LastAttemptAt), NextAttempt: nextAttempt(d, now)}
	if d.HTTPStatus != nil {
		r.HTTPStatus = strconv.Itoa(*d.HTTPStatus)
	}
	return r
}

func secondsOrDash(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format(dateTimeSeconds)
}

// nextAttempt says when a pending delivery is tried next: the time its retry
// is scheduled for, to the second, and how long until then; "now" when it
// waits for a worker. A settled delivery has none.
func nextAttempt(d webhooks.WebhookDelivery, now time.Time) string {
	if d.Status != webhooks.DeliveryPending {
		return "—"
	}
	if d.NextAttemptAt == nil || !d.NextAttemptAt.After(now) {
		return "now (queued)"
	}
	return d.NextAttemptAt.UTC().Format(dateTimeSeconds) + " (in " + roughDuration(d.NextAttemptAt.Sub(now)) + ")"
}

// roughDuration is a wait in the largest units that matter: "25 s", "2 min", "1 h 5 min".
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(max(d.Round(time.Second), time.Second)/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Round(time.Minute)/time.Minute)) + " min"
	}
	h, m := int(d/time.Hour), int((d%time.Hour).Round(time.Minute)/time.Minute)
	if m == 0 || m == 60 {
		return strconv.Itoa(h+m/60) + " h"
	}
	return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
}

// webhookForm turns an endpoint into its edit form.
func webhookForm(e webhooks.WebhookEndpoint) views.WebhookForm {
	f := views.WebhookForm{ID: e.ID, URL: e.URL, Description: e.Description, Enabled: e.Enabled,
		PIIFields: strings.Join(e.PIIFields, ", "), Events: map[string]bool{}}
	for _, ev := range e.Events {
		f.Events[ev] = true
	}
	return f
}

// webhookFromForm reads the create or edit form into the API's input, so
// that the API's rules check it, and the form to show again.
func webhookFromForm(form url.Values, creating bool) (parley.WebhookInput, views.WebhookForm) {
	f := views.WebhookForm{URL: form.Get("url"), Description: form.Get("description"), PIIFields: form.Get("piiFields"),
		Events: map[string]bool{}, Enabled: form.Get("enabled") == "true"}
	events := []string{}
	for _, e := range form["events"] {
		f.Events[e] = true
		events = append(events, e)
	}
	pii := []string{}
	for _, p := range strings.Split(f.PIIFields, ",") {
		if p = strings.TrimSpace(p); p != "" {
			pii = append(pii, p)
		}
	}
	in := parley.WebhookInput{URL: parley.Some(f.URL), Description: parley.Some(f.Description), Events: parley.Some(events), PIIFields: parley.Some(pii)}
	if !creating {
		in.Enabled = parley.Some(f.Enabled) // endpoints are created enabled
	}
	return in, f
}

func (h *Integrations) webhooksView(c echo.Context, v views.WebhooksView) (views.WebhooksView, error) {
	eps, err := h.Manage.ListWebhooks(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return v, err
	}
	health, err := h.endpointHealth(c)
	if err != nil {
		return v, err
	}
	for _, e := range eps {
		v.Endpoints = append(v.Endpoints, webhookRow(e, health[e.ID]))
	}
	v.Limit, v.Form.AllEvents, v.Warning = webhooks.MaxWebhookEndpoints, parley.WebhookEvents, handlers.WebhookSecretWarning
	return v, nil
}

func (h *Integrations) renderWebhooksPage(c echo.Context, status int, v views.WebhooksView) error {
	v, err := h.webhooksView(c, v)
	if err != nil {
		return err
	}
	return handlers.Render(c, status, views.WebhooksPage(dash.Page(c, h.Sessions, "Webhooks", "webhooks"), v))
}

// ShowWebhooksPage lists the tenant's webhook endpoints, with a just-created
// endpoint's signing secret shown once.
func (h *Integrations) ShowWebhooksPage(c echo.Context) error {
	form := views.WebhookForm{Events: map[string]bool{}}
	for _, e := range parley.WebhookEvents {
		form.Events[e] = true // new endpoints get every event unless told otherwise
	}
	return h.renderWebhooksPage(c, http.StatusOK, views.WebhooksView{
		NewSecret: h.Sessions.PopString(c.Request().Context(), sessNewWebhookSecret),
		Form:      form,
	})
}

// SaveNewWebhook creates an endpoint from the form with the API's rules;
// its secret is shown once after the redirect.
func (h *Integrations) SaveNewWebhook(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	in, f := webhookFromForm(form, true)
	ep, secret, err := h.Manage.CreateWebhook(ctx, a.Tenant.ID, in)
	if status, errs, msg, ok := dash.FormStatus(err); ok {
		f.Errors, f.Error = errs, msg // a conflict: the cap of endpoints
		return h.renderWebhooksPage(c, status, views.WebhooksView{Form: f})
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessNewWebhookSecret, secret)
	h.Sessions.Put(ctx, dash.SessFlash, "Webhook endpoint "+ep.URL+" created.")
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks")
}

// ToggleWebhook enables or disables an endpoint; disabling drops its pending
// deliveries. htmx gets the updated row.
func (h *Integrations) ToggleWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	enabled := c.FormValue("enabled") == "true"
	ep, err := h.Manage.UpdateWebhook(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id"), parley.WebhookInput{Enabled: parley.Some(enabled)})
	if err != nil {
		return err
	}
	if dash.IsHTMX(c) {
		health, err := h.endpointHealth(c)
		if err != nil {
			return err
		}
		return handlers.Render(c, http.StatusOK, views.WebhookRowView(views.Page{CSRF: dash.CSRFToken(c)}, webhookRow(ep, health[ep.ID])))
	}
	verb := "disabled"
	if enabled {
		verb = "enabled"
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Webhook endpoint "+ep.URL+" "+verb+".")
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks")
}

// RemoveWebhook deletes an endpoint and its delivery history. htmx from the
// list gets an empty answer that removes the row; from the endpoint's own
// page, a redirect to the list.
func (h *Integrations) RemoveWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.DeleteWebhook(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id")); err != nil {
		return err
	}
	if dash.IsHTMX(c) && c.FormValue("from") != "detail" {
		return c.HTML(http.StatusOK, "")
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Webhook endpoint deleted.")
	return dash.SeeOther(c, "/admin/webhooks")
}

// renderWebhookPage shows an endpoint: its form (f), its delivery statistics
// and a page of its deliveries log, filtered by the query's status.
func (h *Integrations) webhookView(c echo.Context, ep webhooks.WebhookEndpoint, f views.WebhookForm) (views.WebhookView, error) {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	stats, err := h.DB.WebhookDeliveryStats(ctx, tenantID, ep.ID, h.Clock().Add(-parley.DeliveryStatsWindow))
	if err != nil {
		return views.WebhookView{}, err
	}
	l := views.DeliveriesList{EndpointID: ep.ID, Statuses: deliveryStatuses, Page: 1}
	if s := c.QueryParam("status"); slices.Contains(deliveryStatuses, s) {
		l.Status = s // an unknown status shows every delivery
	}
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 && n <= parley.MaxPage {
		l.Page = n
	}
	ds, total, err := h.DB.ListWebhookDeliveries(ctx, tenantID, ep.ID,
		webhooks.DeliveryFilter{Status: l.Status, Page: l.Page, Limit: parley.DefaultDeliveriesPage})
	if err != nil {
		return views.WebhookView{}, err
	}
	l.Total, l.Pages = total, (total+parley.DefaultDeliveriesPage-1)/parley.DefaultDeliveriesPage
	for _, d := range ds {
		l.Rows = append(l.Rows, deliveryRow(ep.ID, d, h.Clock()))
	}
	health, err := h.endpointHealth(c)
	if err != nil {
		return views.WebhookView{}, err
	}
	f.ID, f.AllEvents = ep.ID, parley.WebhookEvents
	v := views.WebhookView{Endpoint: webhookRow(ep, health[ep.ID]), Form: f, Deliveries: l, Stats: views.DeliveryStats{
		Total: stats.Total, Succeeded: stats.Succeeded, Failed: stats.Failed, Pending: stats.Pending, Dropped: stats.Dropped,
		LastSuccess: "never", LastAttempt: "never",
	}}
	if stats.LastSuccessAt != nil {
		v.Stats.LastSuccess = stats.LastSuccessAt.UTC().Format(dash.DateTime)
	}
	if stats.LastAttemptAt != nil {
		v.Stats.LastAttempt = stats.LastAttemptAt.UTC().Format(dash.DateTime)
	}
	return v, nil
}

func (h *Integrations) renderWebhookPage(c echo.Context, status int, ep webhooks.WebhookEndpoint, f views.WebhookForm) error {
	ctx := c.Request().Context()
	v, err := h.webhookView(c, ep, f)
	if err != nil {
		return err
	}
	l := v.Deliveries
	if dash.IsHTMX(c) && c.Request().Header.Get("HX-Target") == "deliveries" {
		return handlers.Render(c, status, views.DeliveriesListView(views.Page{CSRF: dash.CSRFToken(c)}, l))
	}
	if v.NewSecret = h.Sessions.PopString(ctx, sessRotatedWebhookSecret+ep.ID); v.NewSecret != "" {
		v.Warning = rotationWarning
	}
	return handlers.Render(c, status, views.WebhookPage(dash.Page(c, h.Sessions, "Webhook endpoint", "webhooks"), v))
}

// ShowWebhookPage renders an endpoint's edit form, statistics and
// deliveries, with a just-rotated signing secret shown once.
func (h *Integrations) ShowWebhookPage(c echo.Context) error {
	ep, err := h.Manage.Webhook(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.renderWebhookPage(c, http.StatusOK, ep, webhookForm(ep))
}

// RotateWebhookSecret gives an endpoint a new signing secret, shown once on
// its page after the redirect; the old one stops verifying at once.
func (h *Integrations) RotateWebhookSecret(c echo.Context) error {
	ctx := c.Request().Context()
	ep, secret, err := h.Manage.RotateWebhookSecret(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessRotatedWebhookSecret+ep.ID, secret)
	h.Sessions.Put(ctx, dash.SessFlash, "New signing secret made; the old one no longer verifies.")
	return dash.SeeOther(c, "/admin/webhooks/"+ep.ID)
}

// SaveWebhook saves an endpoint's form with the API's rules, or shows
// it again with the errors.
func (h *Integrations) SaveWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	ep, err := h.Manage.Webhook(ctx, tenantID, c.Param("id"))
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	in, f := webhookFromForm(form, false)
	saved, err := h.Manage.UpdateWebhook(ctx, tenantID, ep.ID, in)
	if status, errs, msg, ok := dash.FormStatus(err); ok {
		f.Errors, f.Error = errs, msg
		return h.renderWebhookPage(c, status, ep, f)
	}
	if err != nil {
		return err
	}
	ep = saved
	h.Sessions.Put(ctx, dash.SessFlash, "Webhook endpoint saved.")
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+ep.ID)
}

// RedeliverWebhookDelivery queues a past delivery again. htmx gets the row,
// pending, or the refusal (409: the endpoint is disabled, or the delivery is
// already queued) swapped into the row's error slot.
func (h *Integrations) RedeliverWebhookDelivery(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	endpointID, deliveryID := c.Param("id"), c.Param("deliveryId")
	d, err := h.Manage.RedeliverWebhook(ctx, tenantID, endpointID, deliveryID)
	refused := parley.ErrorKind(err) == parley.KindConflict
	if err != nil && !refused {
		return err
	}
	if !dash.IsHTMX(c) {
		if refused {
			h.Sessions.Put(ctx, dash.SessFlashError, err.Error())
		} else {
			h.Sessions.Put(ctx, dash.SessFlash, "Delivery queued again.")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+endpointID)
	}
	if refused {
		// The row stays as it is; the reason goes in its error slot.
		c.Response().Header().Set("HX-Retarget", "#redeliver-error-"+deliveryID)
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		return c.HTML(http.StatusConflict, template.HTMLEscapeString(err.Error()))
	}
	return handlers.Render(c, http.StatusAccepted, views.DeliveryRowView(views.Page{CSRF: dash.CSRFToken(c)}, deliveryRow(endpointID, d, h.Clock())))
}

// testEventResult says how a test delivery went, for the endpoint's page.
func testEventResult(endpointID string, d webhooks.WebhookDelivery, now time.Time) views.TestEventResult {
	r := views.TestEventResult{EndpointID: endpointID, DeliveryID: d.ID}
	status := ""
	if d.HTTPStatus != nil {
		status = "HTTP " + strconv.Itoa(*d.HTTPStatus)
	}
	switch {
	case d.Status == webhooks.DeliverySucceeded:
		r.State, r.Text = "succeeded", "Delivered: the endpoint answered "+status+". Check that it verified the signature."
	case d.Status == webhooks.DeliveryPending && d.Attempts == 0:
		r.State, r.Text, r.Waiting = "pending", "Sending…", true
	case d.Status == webhooks.DeliveryPending:
		r.State, r.Text = "failed", "Not delivered: "+handlers.Deref(d.LastError)+". Retried "+retryWhen(d, now)+
			"; fix the endpoint and send another test to check at once."
	case d.Status == webhooks.DeliveryFailed:
		r.State, r.Text = "failed", "Not delivered after every attempt: "+handlers.Deref(d.LastError)+"."
	default:
		r.State, r.Text = "failed", "Not sent: the endpoint was disabled first."
	}
	return r
}

// retryWhen is when a pending delivery is tried again, in words.
func retryWhen(d webhooks.WebhookDelivery, now time.Time) string {
	if d.NextAttemptAt == nil || !d.NextAttemptAt.After(now) {
		return "now"
	}
	return "in " + roughDuration(d.NextAttemptAt.Sub(now))
}

// SendTestEvent queues a webhook.test delivery to the endpoint, signed and
// sent by the delivery workers as any other. htmx gets the result panel,
// which asks again until the first attempt is over; without htmx, the
// endpoint's page with the delivery at the top of its log.
func (h *Integrations) SendTestEvent(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	d, err := h.Manage.SendWebhookTest(ctx, dash.AdminFrom(c).Tenant.ID, id, h.Clock())
	refused := parley.ErrorKind(err) == parley.KindConflict
	if err != nil && !refused {
		return err
	}
	if !dash.IsHTMX(c) {
		if refused {
			h.Sessions.Put(ctx, dash.SessFlashError, err.Error())
		} else {
			h.Sessions.Put(ctx, dash.SessFlash, "Test event queued; its delivery is at the top of the log.")
		}
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+id)
	}
	if refused {
		return handlers.Render(c, http.StatusConflict, views.TestEventResultView(views.TestEventResult{EndpointID: id, State: "failed", Text: err.Error()}))
	}
	return h.renderTestEventAnswer(c, http.StatusAccepted, d)
}

// renderTestEventAnswer answers with the test's result and, out of band, the
// endpoint's health, statistics and delivery log (at the filter the page
// sent along), which the test has just changed.
func (h *Integrations) renderTestEventAnswer(c echo.Context, status int, d webhooks.WebhookDelivery) error {
	ep, err := h.Manage.Webhook(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, d.EndpointID)
	if err != nil {
		return err
	}
	v, err := h.webhookView(c, ep, views.WebhookForm{})
	if err != nil {
		return err
	}
	return handlers.Render(c, status, views.TestEventAnswer(views.Page{CSRF: dash.CSRFToken(c)}, testEventResult(ep.ID, d, h.Clock()), v))
}

// ShowTestEventResult is the result panel of a test delivery, asked for
// again by the panel itself while the first attempt is under way.
func (h *Integrations) ShowTestEventResult(c echo.Context) error {
	id := c.Param("id")
	d, err := h.DB.WebhookDelivery(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, id, c.Param("deliveryId"))
	if err != nil {
		return err
	}
	if r := testEventResult(id, d, h.Clock()); r.Waiting {
		return handlers.Render(c, http.StatusOK, views.TestEventResultView(r))
	}
	return h.renderTestEventAnswer(c, http.StatusOK, d)
}
