package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// The REST deliveries log's largest page (its default and the statistics'
// window are the root package's, which the dashboard shares), documented in
// the OpenAPI document.
const (
	maxDeliveriesPage = 100
	recentDeliveries  = 10
)

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

func newWebhookJSON(e webhooks.WebhookEndpoint) webhookJSON {
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

func newDeliveryJSON(d webhooks.WebhookDelivery) deliveryJSON {
	return deliveryJSON{ID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, Event: d.Event, Status: d.Status,
		Attempts: d.Attempts, MaxAttempts: webhooks.DeliveryMaxAttempts, HTTPStatus: d.HTTPStatus, LastError: d.LastError,
		CreatedAt: d.CreatedAt, LastAttemptAt: d.LastAttemptAt, NextAttemptAt: d.NextAttemptAt, DeliveredAt: d.DeliveredAt}
}

// decodeWebhook reads a create or a PATCH body.
func decodeWebhook(c echo.Context) (parley.WebhookInput, error) {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return parley.WebhookInput{}, err
	}
	var in parley.WebhookInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in, nil
}

// CreateWebhook answers POST /tenants/{slug}/webhooks with the endpoint and
// its signing secret, shown this once.
func (h *Integrations) CreateWebhook(c echo.Context) error {
	in, err := decodeWebhook(c)
	if err != nil {
		return err
	}
	ep, secret, err := h.Manage.CreateWebhook(c.Request().Context(), handlers.TenantFrom(c).ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, webhookCreatedJSON{Endpoint: newWebhookJSON(ep), Secret: secret, Warning: handlers.WebhookSecretWarning})
}

// webhookCreatedJSON is what POST /tenants/{slug}/webhooks answers: the
// only answer that carries the signing secret.
type webhookCreatedJSON struct {
	Endpoint webhookJSON `json:"endpoint"`
	Secret   string      `json:"secret"`
	Warning  string      `json:"warning"`
}

// ListWebhooks answers GET /tenants/{slug}/webhooks: {webhooks}, oldest first, without secrets.
func (h *Integrations) ListWebhooks(c echo.Context) error {
	eps, err := h.Manage.ListWebhooks(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(eps))
	for i, e := range eps {
		out[i] = newWebhookJSON(e)
	}
	return c.JSON(http.StatusOK, webhookListJSON{Webhooks: out})
}

// webhookListJSON is what GET /tenants/{slug}/webhooks answers.
type webhookListJSON struct {
	Webhooks []webhookJSON `json:"webhooks"`
}

// ShowWebhook answers GET /tenants/{slug}/webhooks/{id}: the endpoint, its
// delivery statistics over the last 7 days and its latest deliveries.
func (h *Integrations) ShowWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	t := handlers.TenantFrom(c)
	ep, err := h.Manage.Webhook(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	stats, err := h.DB.WebhookDeliveryStats(ctx, t.ID, ep.ID, h.Clock().Add(-parley.DeliveryStatsWindow))
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
	return c.JSON(http.StatusOK, webhookDetailJSON{newWebhookJSON(ep), stats, ds})
}

// webhookDetailJSON is one endpoint as GET /tenants/{slug}/webhooks/{id}
// shows it: with its delivery statistics and latest deliveries.
type webhookDetailJSON struct {
	webhookJSON
	Stats            webhooks.DeliveryStats `json:"deliveryStats"`
	RecentDeliveries []deliveryJSON         `json:"recentDeliveries"`
}

// UpdateWebhook answers PATCH /tenants/{slug}/webhooks/{id}.
func (h *Integrations) UpdateWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	t := handlers.TenantFrom(c)
	if _, err := h.Manage.Webhook(ctx, t.ID, c.Param("id")); err != nil {
		return err // not found comes before the body's problems
	}
	in, err := decodeWebhook(c)
	if err != nil {
		return err
	}
	ep, err := h.Manage.UpdateWebhook(ctx, t.ID, c.Param("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWebhookJSON(ep))
}

// DeleteWebhook answers DELETE /tenants/{slug}/webhooks/{id}.
func (h *Integrations) DeleteWebhook(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteWebhook)
}

// ListWebhookDeliveries answers GET /tenants/{slug}/webhooks/{id}/deliveries.
func (h *Integrations) ListWebhookDeliveries(c echo.Context) error {
	page, err := handlers.IntParam(c, "page", 1, 1, parley.MaxPage)
	if err != nil {
		return err
	}
	limit, err := handlers.IntParam(c, "limit", parley.DefaultDeliveriesPage, 1, maxDeliveriesPage)
	if err != nil {
		return err
	}
	f := webhooks.DeliveryFilter{Page: page, Limit: limit, Status: c.QueryParam("status"), Event: c.QueryParam("event")}
	if f.Status != "" && !slices.Contains([]string{webhooks.DeliveryPending, webhooks.DeliverySucceeded, webhooks.DeliveryFailed, webhooks.DeliveryDropped}, f.Status) {
		return handlers.QueryError("status", "must be pending, succeeded, failed or dropped")
	}
	if f.Event != "" && !slices.Contains(parley.WebhookEvents, f.Event) {
		return handlers.QueryError("event", "must be one of "+strings.Join(parley.WebhookEvents, ", "))
	}
	ctx := c.Request().Context()
	ep, err := h.Manage.Webhook(ctx, handlers.TenantFrom(c).ID, c.Param("id"))
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
	return c.JSON(http.StatusOK, deliveryListJSON{Deliveries: out, Pagination: newPaginationJSON(page, limit, total)})
}

// deliveryListJSON is what GET /tenants/{slug}/webhooks/{id}/deliveries answers.
type deliveryListJSON struct {
	Deliveries []deliveryJSON `json:"deliveries"`
	Pagination paginationJSON `json:"pagination"`
}

// RedeliverWebhook answers POST /tenants/{slug}/webhooks/{id}/deliveries/{deliveryId}/redeliver
// with 202 and the delivery, queued again.
func (h *Integrations) RedeliverWebhook(c echo.Context) error {
	d, err := h.Manage.RedeliverWebhook(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), c.Param("deliveryId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, newDeliveryJSON(d))
}
