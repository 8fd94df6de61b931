package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Webhook endpoint limits, chosen here and documented in the OpenAPI document.
const (
	maxWebhookURL         = 2000
	maxWebhookDescription = 500
	maxPIIFieldName       = 100
	defaultDeliveriesPage = 30
	maxDeliveriesPage     = 100
	// deliveryStatsWindow is how far back an endpoint's statistics reach.
	deliveryStatsWindow = 7 * 24 * time.Hour
	recentDeliveries    = 10
)

// webhookSecretWarning accompanies the secret in the create response.
const webhookSecretWarning = "Store this signing secret now: it is shown only once and cannot be retrieved again. " +
	"Verify each delivery's X-Service-Signature with it and reject timestamps more than 300 seconds old."

type webhookBody struct {
	URL         parley.Opt[string]   `json:"url"`
	Description parley.Opt[string]   `json:"description"`
	Events      parley.Opt[[]string] `json:"events"`
	Enabled     parley.Opt[bool]     `json:"enabled"`
	PIIFields   parley.Opt[[]string] `json:"piiFields"`
}

type webhookJSON struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Description string    `json:"description"`
	Events      []string  `json:"events"`
	Enabled     bool      `json:"enabled"`
	PIIFields   []string  `json:"piiFields"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

func newWebhookJSON(e db.WebhookEndpoint) webhookJSON {
	return webhookJSON{ID: e.ID, URL: e.URL, Description: e.Description, Events: nonNil(e.Events), Enabled: e.Enabled,
		PIIFields: nonNil(e.PIIFields), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type deliveryJSON struct {
	ID            string     `json:"id"`
	EndpointID    string     `json:"endpointId"`
	EventID       string     `json:"eventId"`
	Event         string     `json:"event"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	MaxAttempts   int        `json:"maxAttempts"`
	HTTPStatus    *int       `json:"httpStatus"`
	LastError     *string    `json:"lastError"`
	CreatedAt     time.Time  `json:"createdAt"`
	LastAttemptAt *time.Time `json:"lastAttemptAt"`
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
	DeliveredAt   *time.Time `json:"deliveredAt"`
}

func newDeliveryJSON(d db.WebhookDelivery) deliveryJSON {
	return deliveryJSON{ID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, Event: d.Event, Status: d.Status,
		Attempts: d.Attempts, MaxAttempts: db.DeliveryMaxAttempts, HTTPStatus: d.HTTPStatus, LastError: d.LastError,
		CreatedAt: d.CreatedAt, LastAttemptAt: d.LastAttemptAt, NextAttemptAt: d.NextAttemptAt, DeliveredAt: d.DeliveredAt}
}

// decodeWebhook reads and validates a create or a PATCH body.
func (h *Handler) decodeWebhook(c echo.Context, creating bool) (db.WebhookEndpointWrite, error) {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return db.WebhookEndpointWrite{}, err
	}
	var b webhookBody
	errs := decodeFields(raw, &b)
	w := h.validateWebhook(c.Request().Context(), b, errs, creating)
	if err := errs.Err(); err != nil {
		return db.WebhookEndpointWrite{}, err
	}
	return w, nil
}

// validateWebhook checks a create or update body, the API's or the
// dashboard form's, adding its problems to errs; a field that already has an
// error (of decoding) is not checked again.
func (h *Handler) validateWebhook(ctx context.Context, b webhookBody, errs parley.FieldErrors, creating bool) db.WebhookEndpointWrite {
	w := db.WebhookEndpointWrite{}
	if _, bad := errs["url"]; !bad {
		switch {
		case !b.URL.Set && creating, b.URL.Set && (b.URL.Null || strings.TrimSpace(b.URL.Value) == ""):
			errs.Add("url", "is required")
		case b.URL.Set:
			u := strings.TrimSpace(b.URL.Value)
			if msg := h.checkWebhookURL(ctx, u); msg != "" {
				errs.Add("url", msg)
			}
			w.URL = parley.Some(u)
		}
	}
	if _, bad := errs["description"]; !bad && b.Description.Set {
		d := strings.TrimSpace(b.Description.Value)
		if utf8.RuneCountInString(d) > maxWebhookDescription {
			errs.Add("description", "must be at most 500 characters")
		}
		w.Description = parley.Some(d)
	} else if creating {
		w.Description = parley.Some("")
	}
	if _, bad := errs["events"]; !bad {
		switch {
		case !b.Events.Set && creating:
			w.Events = parley.Some(slices.Clone(db.WebhookEvents)) // every event
		case b.Events.Set && (b.Events.Null || len(b.Events.Value) == 0):
			errs.Add("events", "must list at least one of "+strings.Join(db.WebhookEvents, ", "))
		case b.Events.Set:
			var events []string
			for _, e := range b.Events.Value {
				if !slices.Contains(db.WebhookEvents, e) {
					errs.Add("events", "unknown event "+quoteShort(e)+"; events are "+strings.Join(db.WebhookEvents, ", "))
					break
				}
				if !slices.Contains(events, e) {
					events = append(events, e)
				}
			}
			w.Events = parley.Some(events)
		}
	}
	if _, bad := errs["enabled"]; !bad && b.Enabled.Set {
		if creating {
			// Endpoints start enabled; a false here would be ignored, so say so.
			if !b.Enabled.Value || b.Enabled.Null {
				errs.Add("enabled", "endpoints are created enabled; disable one with PATCH")
			}
		} else if b.Enabled.Null {
			errs.Add("enabled", "must be true or false")
		} else {
			w.Enabled = b.Enabled
		}
	}
	if _, bad := errs["piiFields"]; !bad && b.PIIFields.Set {
		fields := []string{}
		if len(b.PIIFields.Value) > db.MaxWebhookPIIFields {
			errs.Add("piiFields", "must list at most 32 fields")
		}
		for _, f := range b.PIIFields.Value {
			f = strings.TrimSpace(f)
			if f == "" || utf8.RuneCountInString(f) > maxPIIFieldName {
				errs.Add("piiFields", "each field name must be 1 to 100 characters")
				break
			}
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		w.PIIFields = parley.Some(fields)
	}
	return w
}

// checkWebhookURL returns why rawURL cannot receive webhooks, or "". It must
// be an absolute https URL without credentials whose host resolves, every
// address public; plain http only for hosts the operator exempted
// (PARLEY_SSRF_ALLOW). The dial-time guard applies again at each delivery.
func (h *Handler) checkWebhookURL(ctx context.Context, raw string) string {
	if len(raw) > maxWebhookURL {
		return "must be at most 2000 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "must be an absolute https URL"
	}
	if u.User != nil {
		return "must not contain credentials; authenticate deliveries with the signing secret"
	}
	if u.Fragment != "" {
		return "must not contain a fragment"
	}
	if h.Outbound == nil {
		return ""
	}
	if h.plainHTTPRefused(ctx, u, raw) {
		return "must use https"
	}
	return h.addressProblem(ctx, raw, true)
}

func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return `"` + s + `"`
}

// newWebhookSecret returns a fresh signing secret. The HMAC key is the
// secret string itself, as shown.
func newWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// CreateWebhook answers POST /tenants/{slug}/webhooks with the endpoint and
// its signing secret, shown this once.
func (h *Handler) CreateWebhook(c echo.Context) error {
	w, err := h.decodeWebhook(c, true)
	if err != nil {
		return err
	}
	secret := newWebhookSecret()
	w.SecretSealed = h.Box.Seal([]byte(secret))
	ep, err := h.DB.CreateWebhookEndpoint(c.Request().Context(), tenantFrom(c).ID, w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"endpoint": newWebhookJSON(ep), "secret": secret, "warning": webhookSecretWarning})
}

// ListWebhooks answers GET /tenants/{slug}/webhooks: {webhooks}, oldest first, without secrets.
func (h *Handler) ListWebhooks(c echo.Context) error {
	eps, err := h.DB.ListWebhookEndpoints(c.Request().Context(), tenantFrom(c).ID)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(eps))
	for i, e := range eps {
		out[i] = newWebhookJSON(e)
	}
	return c.JSON(http.StatusOK, map[string]any{"webhooks": out})
}

// ShowWebhook answers GET /tenants/{slug}/webhooks/{id}: the endpoint, its
// delivery statistics over the last 7 days and its latest deliveries.
func (h *Handler) ShowWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	t := tenantFrom(c)
	ep, err := h.DB.WebhookEndpoint(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	stats, err := h.DB.WebhookDeliveryStats(ctx, t.ID, ep.ID, h.now().Add(-deliveryStatsWindow))
	if err != nil {
		return err
	}
	recent, err := h.DB.RecentWebhookDeliveries(ctx, t.ID, ep.ID, recentDeliveries)
	if err != nil {
		return err
	}
	ds := make([]deliveryJSON, len(recent))
	for i, d := range recent {
		ds[i] = newDeliveryJSON(d)
	}
	return c.JSON(http.StatusOK, struct {
		webhookJSON
		Stats            db.DeliveryStats `json:"deliveryStats"`
		RecentDeliveries []deliveryJSON   `json:"recentDeliveries"`
	}{newWebhookJSON(ep), stats, ds})
}

// UpdateWebhook answers PATCH /tenants/{slug}/webhooks/{id}.
func (h *Handler) UpdateWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	t := tenantFrom(c)
	if _, err := h.DB.WebhookEndpoint(ctx, t.ID, c.Param("id")); err != nil {
		return err
	}
	w, err := h.decodeWebhook(c, false)
	if err != nil {
		return err
	}
	ep, err := h.DB.UpdateWebhookEndpoint(ctx, t.ID, c.Param("id"), w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWebhookJSON(ep))
}

// DeleteWebhook answers DELETE /tenants/{slug}/webhooks/{id}.
func (h *Handler) DeleteWebhook(c echo.Context) error {
	return deleteOne(c, "id", h.DB.DeleteWebhookEndpoint)
}

// ListWebhookDeliveries answers GET /tenants/{slug}/webhooks/{id}/deliveries.
func (h *Handler) ListWebhookDeliveries(c echo.Context) error {
	page, err := intParam(c, "page", 1, 1, parley.MaxPage)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultDeliveriesPage, 1, maxDeliveriesPage)
	if err != nil {
		return err
	}
	f := db.DeliveryFilter{Page: page, Limit: limit, Status: c.QueryParam("status"), Event: c.QueryParam("event")}
	if f.Status != "" && !slices.Contains([]string{db.DeliveryPending, db.DeliverySucceeded, db.DeliveryFailed, db.DeliveryDropped}, f.Status) {
		return queryError("status", "must be pending, succeeded, failed or dropped")
	}
	if f.Event != "" && !slices.Contains(db.WebhookEvents, f.Event) {
		return queryError("event", "must be one of "+strings.Join(db.WebhookEvents, ", "))
	}
	ctx := c.Request().Context()
	ep, err := h.DB.WebhookEndpoint(ctx, tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	ds, total, err := h.DB.ListWebhookDeliveries(ctx, ep.TenantID, ep.ID, f)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = newDeliveryJSON(d)
	}
	return c.JSON(http.StatusOK, map[string]any{"deliveries": out,
		"pagination": map[string]int{"page": page, "limit": limit, "total": total, "pages": (total + limit - 1) / limit}})
}

// RedeliverWebhook answers POST /tenants/{slug}/webhooks/{id}/deliveries/{deliveryId}/redeliver
// with 202 and the delivery, queued again.
func (h *Handler) RedeliverWebhook(c echo.Context) error {
	d, err := h.DB.Redeliver(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), c.Param("deliveryId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, newDeliveryJSON(d))
}
