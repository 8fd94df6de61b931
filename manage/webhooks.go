package manage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/webhooks"
)

// The tenant's webhook endpoints, which receive its events signed with a
// secret of their own: created (the secret shown once), updated, rotated,
// read, listed and deleted; and the writes to their deliveries log, a
// redelivery and a test event. Reading the log is the surfaces' own.

// CheckWebhook checks in (creating: the URL required, every event unless
// some are chosen), its URL vetted with address when not nil: the write to
// apply, or its problems.
func CheckWebhook(in parley.WebhookInput, creating bool, address func(rawURL string) string) (webhooks.WebhookEndpointWrite, parley.FieldErrors) {
	errs := in.Check(creating, address)
	return webhooks.WebhookEndpointWrite{URL: in.URL, Description: in.Description, Events: in.Events, Enabled: in.Enabled,
		PIIFields: in.PIIFields}, errs
}

// newWebhookSecret returns a fresh signing secret. The HMAC key is the
// secret string itself, as shown.
func newWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// CreateWebhook creates an endpoint, enabled, within the cap of a tenant's
// endpoints (a conflict past it), with a new signing secret: stored
// sealed, and returned this once.
func (s *Service) CreateWebhook(ctx context.Context, tenantID string, in parley.WebhookInput) (webhooks.WebhookEndpoint, string, error) {
	w, errs := CheckWebhook(in, true, s.urlVetter(ctx, true))
	if err := errs.Err(); err != nil {
		return webhooks.WebhookEndpoint{}, "", err
	}
	secret := newWebhookSecret()
	w.SecretSealed = s.Box.Seal([]byte(secret))
	ep, err := s.DB.CreateWebhookEndpoint(ctx, tenantID, w)
	if err != nil {
		return webhooks.WebhookEndpoint{}, "", err
	}
	return ep, secret, nil
}

// UpdateWebhook changes the fields of in that are set, of the endpoint id;
// disabling it drops its pending deliveries.
func (s *Service) UpdateWebhook(ctx context.Context, tenantID, id string, in parley.WebhookInput) (webhooks.WebhookEndpoint, error) {
	w, errs := CheckWebhook(in, false, s.urlVetter(ctx, true))
	if err := errs.Err(); err != nil {
		return webhooks.WebhookEndpoint{}, err
	}
	return s.DB.UpdateWebhookEndpoint(ctx, tenantID, id, w)
}

// RotateWebhookSecret gives an endpoint a new signing secret, returned this
// once. The old secret stops verifying at once (no grace period: a
// delivery carries one signature, as the spec has it); the retries of
// refused deliveries and redelivery cover the switch.
func (s *Service) RotateWebhookSecret(ctx context.Context, tenantID, id string) (webhooks.WebhookEndpoint, string, error) {
	secret := newWebhookSecret()
	ep, err := s.DB.RotateWebhookSecret(ctx, tenantID, id, s.Box.Seal([]byte(secret)))
	if err != nil {
		return webhooks.WebhookEndpoint{}, "", err
	}
	return ep, secret, nil
}

// Webhook reads one of the tenant's endpoints, without its secret.
func (s *Service) Webhook(ctx context.Context, tenantID, id string) (webhooks.WebhookEndpoint, error) {
	return s.DB.WebhookEndpoint(ctx, tenantID, id)
}

// ListWebhooks lists the tenant's endpoints, oldest first.
func (s *Service) ListWebhooks(ctx context.Context, tenantID string) ([]webhooks.WebhookEndpoint, error) {
	return s.DB.ListWebhookEndpoints(ctx, tenantID)
}

// DeleteWebhook deletes an endpoint and its delivery history.
func (s *Service) DeleteWebhook(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteWebhookEndpoint(ctx, tenantID, id)
}

// RedeliverWebhook queues a past delivery of the endpoint again, for a
// full new round of attempts; a delivery still pending, or one of a
// disabled endpoint, is a conflict.
func (s *Service) RedeliverWebhook(ctx context.Context, tenantID, endpointID, deliveryID string) (webhooks.WebhookDelivery, error) {
	return s.DB.Redeliver(ctx, tenantID, endpointID, deliveryID)
}

// SendWebhookTest queues a webhook.test event, recorded at at, to the
// endpoint, delivered as any other; a disabled endpoint is a conflict.
func (s *Service) SendWebhookTest(ctx context.Context, tenantID, endpointID string, at time.Time) (webhooks.WebhookDelivery, error) {
	return s.DB.SendTestEvent(ctx, tenantID, endpointID, at)
}
