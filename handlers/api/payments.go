package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// The payment connector: the tenant's Stripe account, under
// /tenants/{slug}/integrations/payments. The key is write-only: answers
// carry hasSecretKey, its mode and type and its last 4 characters.

// ShowPaymentConnector answers GET /tenants/{slug}/integrations/payments.
func (h *Tools) ShowPaymentConnector(c echo.Context) error {
	p, err := h.Manage.PaymentConnector(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	return handlers.ShowWithETag(c, business.PaymentETag(p), handlers.NewPaymentJSON(p))
}

// UpdatePaymentConnector answers PUT /tenants/{slug}/integrations/payments:
// it connects Stripe (secretKey required the first time) or changes the
// fields sent; under an If-Match, only on the connector as the client read
// it (none: 412).
func (h *Tools) UpdatePaymentConnector(c echo.Context) error {
	ctx := handlers.Conditional(c)
	t := handlers.TenantFrom(c)
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var b handlers.PaymentBody
	errs := jsonbody.DecodeFields(raw, &b)
	saved, err := h.Manage.SavePaymentConnector(ctx, t.ID, b.Input(errs))
	if err != nil {
		return err
	}
	return handlers.JSONWithETag(c, http.StatusOK, business.PaymentETag(&saved), handlers.NewPaymentJSON(&saved))
}

// DeletePaymentConnector answers DELETE /tenants/{slug}/integrations/payments:
// the key is deleted and the agent stops offering payment links.
func (h *Tools) DeletePaymentConnector(c echo.Context) error {
	if err := h.Manage.DeletePaymentConnector(c.Request().Context(), handlers.TenantFrom(c).ID); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true})
}

// TestPaymentConnector answers POST /tenants/{slug}/integrations/payments/test:
// it asks Stripe for the key's account. 200 whatever Stripe said (ok tells);
// 404 without a connector and without a key in the body.
func (h *Tools) TestPaymentConnector(c echo.Context) error {
	ctx := c.Request().Context()
	var b handlers.PaymentBody
	errs := parley.FieldErrors{}
	if c.Request().ContentLength != 0 {
		raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
		if err != nil {
			return err
		}
		errs = jsonbody.DecodeFields(raw, &b)
		if b.SecretKey.Set && (b.SecretKey.Null || strings.TrimSpace(b.SecretKey.Value) == "") {
			errs.Add("secretKey", "must be a key to test; leave it out to test the saved key")
		}
		if err := errs.Err(); err != nil {
			return err
		}
	}
	res, err := h.RunPaymentTest(ctx, handlers.TenantFrom(c).ID, strings.TrimSpace(b.SecretKey.Value), errs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
