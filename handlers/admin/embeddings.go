package admin

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// embeddingsPath is the dashboard's "Search by meaning" page, under the
// knowledge base: the tenant's own embedding endpoint (issue 34), saved
// with the API's rules (validateEmbeddingSettings).
const embeddingsPath = "/admin/corpus/embeddings"

// embeddingsStatus is the page's status block: which endpoint embeds the
// knowledge base and how far, times in the tenant's time zone.
func (h *core) embeddingsStatus(c echo.Context) (views.EmbeddingsStatus, handlers.EmbeddingsJSON, error) {
	t := dash.AdminFrom(c).Tenant
	st, err := h.EmbeddingsState(c.Request().Context(), t.ID)
	if err != nil {
		return views.EmbeddingsStatus{}, st, err
	}
	loc := resource.TenantLocation(t)
	when := func(at *time.Time) string {
		if at == nil {
			return ""
		}
		return at.In(loc).Format("2 Jan 2006, 15:04")
	}
	return views.EmbeddingsStatus{Source: st.Source, Entries: st.Entries, Embedded: st.Embedded,
		LastError: handlers.Deref(st.LastError), LastErrorAt: when(st.LastErrorAt), LastEmbeddedAt: when(st.LastEmbeddedAt)}, st, nil
}

func (h *core) renderEmbeddings(c echo.Context, status int, f views.EmbeddingsForm) error {
	return handlers.Render(c, status, views.EmbeddingsPage(dash.Page(c, h.Sessions, "Search by meaning", "corpus"), f))
}

// ShowEmbeddingsPage renders the tenant's endpoint, its form and the status.
func (h *Knowledge) ShowEmbeddingsPage(c echo.Context) error {
	s, st, err := h.embeddingsStatus(c)
	if err != nil {
		return err
	}
	f := views.EmbeddingsForm{Configured: st.URL != nil, URL: handlers.Deref(st.URL), Model: handlers.Deref(st.Model),
		HasKey: st.HasAPIKey, Status: s}
	if st.Dimensions != nil {
		f.Dimensions = strconv.Itoa(*st.Dimensions)
	}
	return h.renderEmbeddings(c, http.StatusOK, f)
}

// ShowEmbeddingsStatus renders the status block alone, which the page asks
// for again while entries are being embedded.
func (h *Knowledge) ShowEmbeddingsStatus(c echo.Context) error {
	s, _, err := h.embeddingsStatus(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.EmbeddingsStatusView(s))
}

// SaveEmbeddingsPage saves the form with the API's rules, or re-renders it
// with the errors. The key is write-only: an empty field keeps the stored
// one, the "remove" box removes it.
func (h *Knowledge) SaveEmbeddingsPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	cur, err := h.Manage.EmbeddingSettings(ctx, t.ID)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := views.EmbeddingsForm{Configured: cur.URL != nil, URL: strings.TrimSpace(form.Get("embeddingsUrl")),
		Model: strings.TrimSpace(form.Get("embeddingsModel")), Dimensions: strings.TrimSpace(form.Get("embeddingsDimensions")),
		HasKey: cur.SealedAPIKey != nil}
	// The owner's words win over the API's where they differ (Add keeps
	// the first message of a field): the API speaks of DELETE and null.
	errs := parley.FieldErrors{}
	in := parley.EmbeddingsInput{URL: parley.Some(f.URL), Model: parley.Some(f.Model), Problems: errs}
	if f.URL == "" {
		errs.Add("embeddingsUrl", "is required; to stop using your own endpoint, use “Stop using my endpoint” below")
	}
	if f.Dimensions != "" {
		n, err := strconv.Atoi(f.Dimensions)
		switch {
		case err != nil:
			errs.Add("embeddingsDimensions", "must be a whole number, or empty for the model's own")
		case n < 1 || n > parley.MaxEmbeddingsDims:
			errs.Add("embeddingsDimensions", fmt.Sprintf("must be between 1 and %d, or empty for the model's own", parley.MaxEmbeddingsDims))
		}
		if err == nil {
			in.Dimensions = parley.Some(n)
		}
	}
	switch key := form.Get("embeddingsApiKey"); {
	case key != "":
		in.APIKey = parley.Some(key)
	case form.Get("removeApiKey") == "true":
		in.APIKey = parley.Some("") // the API's way to remove it
	}
	_, err = h.Manage.SaveEmbeddingSettings(ctx, t.ID, in)
	if status, ferrs, _, ok := dash.FormStatus(err); ok && len(ferrs) > 0 {
		f.Errors = ferrs
		if f.Status, _, err = h.embeddingsStatus(c); err != nil {
			return err
		}
		return h.renderEmbeddings(c, status, f)
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Saved. Your knowledge base is being prepared for search by meaning with your endpoint.")
	return c.Redirect(http.StatusSeeOther, embeddingsPath)
}

// RemoveEmbeddingsPage removes the tenant's endpoint and key; htmx is sent
// back to the page.
func (h *Knowledge) RemoveEmbeddingsPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	if err := h.Manage.ClearEmbeddingSettings(ctx, t.ID); err != nil {
		return err
	}
	msg := "Your endpoint is no longer used: the assistant matches words, typos and synonyms."
	if h.Engine != nil && h.Engine.Embeddings != nil {
		msg = "Your endpoint is no longer used: the service's default endpoint prepares your knowledge base instead."
	}
	h.Sessions.Put(ctx, dash.SessFlash, msg)
	return dash.SeeOther(c, embeddingsPath)
}
