package tools

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

const paymentsPage = "/admin/integrations/payments"

// paymentsForm is the page's model of a stored connector (nil: none).
func paymentsForm(p *parley.PaymentConnector) views.PaymentsForm {
	j := handlers.NewPaymentJSON(p)
	f := views.PaymentsForm{Connected: j.Connected, IsActive: j.IsActive || p == nil,
		Currency: handlers.Deref(j.Currency), DefaultDescription: handlers.Deref(j.DefaultDescription), SuccessMessage: handlers.Deref(j.SuccessMessage)}
	if p != nil {
		f.Mode, f.KeyType, f.KeyLast4 = p.KeyMode, p.KeyType, p.KeyLast4
	}
	if j.DefaultAmount != nil && p.Currency != nil {
		_, dec, _ := parley.PaymentCurrency(*p.Currency)
		f.DefaultAmount = parley.FormatMinor(*p.DefaultAmount, dec)
	}
	if t := j.LastTest; t != nil {
		f.LastTest = &views.PaymentTest{OK: t.OK, Message: t.Message, At: t.At.UTC().Format("2006-01-02 15:04 UTC")}
	}
	return f
}

func (h *Tools) renderPayments(c echo.Context, status int, f views.PaymentsForm) error {
	return handlers.Render(c, status, views.PaymentsPage(dash.Page(c, h.Sessions, "Payments", "integrations"), f))
}

// ShowPaymentsPage renders the payments integration: connect Stripe, test
// the key, the fixed amount, disconnect.
func (h *Tools) ShowPaymentsPage(c echo.Context) error {
	p, err := h.Manage.PaymentConnector(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	return h.renderPayments(c, http.StatusOK, paymentsForm(p))
}

// SavePayments connects Stripe or saves the settings with the API's rules
// (the management operation's), or re-renders the form with the errors.
func (h *Tools) SavePayments(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	cur, err := h.Manage.PaymentConnector(ctx, t.ID)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := paymentsForm(cur)
	f.Currency = strings.TrimSpace(form.Get("currency"))
	f.DefaultAmount = strings.TrimSpace(form.Get("defaultAmount"))
	f.DefaultDescription, f.SuccessMessage = form.Get("defaultDescription"), form.Get("successMessage")
	errs := parley.FieldErrors{}
	b := handlers.PaymentBody{Currency: parley.Some(f.Currency), DefaultDescription: parley.Some(f.DefaultDescription),
		SuccessMessage: parley.Some(f.SuccessMessage)}
	if key := strings.TrimSpace(form.Get("secretKey")); key != "" {
		b.SecretKey = parley.Some(key)
	}
	if cur != nil {
		f.IsActive = form.Get("isActive") == "true"
		b.IsActive = parley.Some(f.IsActive)
	}
	switch amount := strings.ReplaceAll(f.DefaultAmount, ",", "."); amount {
	case "":
		b.DefaultAmount = parley.Opt[float64]{Set: true, Null: true}
	default:
		if v, err := strconv.ParseFloat(amount, 64); err != nil {
			errs.Add("defaultAmount", "must be a number, such as 49.50")
		} else {
			b.DefaultAmount = parley.Some(v)
		}
	}
	_, err = h.Manage.SavePaymentConnector(ctx, t.ID, b.Input(errs))
	if status, ferrs, _, ok := dash.FormStatus(err); ok && len(ferrs) > 0 {
		f.Errors = ferrs
		return h.renderPayments(c, status, f)
	}
	if err != nil {
		return err
	}
	msg := "Payment settings saved."
	if cur == nil {
		msg = "Stripe connected. Use Test connection to check the key."
	}
	h.Sessions.Put(ctx, dash.SessFlash, msg)
	return c.Redirect(http.StatusSeeOther, paymentsPage)
}

// TestPayments asks Stripe about the saved key; htmx gets the result alone,
// a plain form post the page with it.
func (h *Tools) TestPayments(c echo.Context) error {
	ctx := c.Request().Context()
	res, err := h.RunPaymentTest(ctx, dash.AdminFrom(c).Tenant.ID, "", parley.FieldErrors{})
	if err != nil {
		return err
	}
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.PaymentTestResult(&views.PaymentTest{OK: res.OK, Message: res.Message,
			At: res.TestedAt.Format("2006-01-02 15:04 UTC")}))
	}
	return c.Redirect(http.StatusSeeOther, paymentsPage)
}

// RemovePayments disconnects Stripe; htmx is sent back to the page.
func (h *Tools) RemovePayments(c echo.Context) error {
	ctx := c.Request().Context()
	// None set up is done already: the page says so.
	if err := h.Manage.DeletePaymentConnector(ctx, dash.AdminFrom(c).Tenant.ID); err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Stripe disconnected.")
	return dash.SeeOther(c, paymentsPage)
}
