package admin

import (
	"errors"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// syncPreviewChars is how much of the converted Markdown "Add from URL" shows.
const syncPreviewChars = 800

// SaveCorpusSync is the dashboard's "Add from URL": it fetches and converts
// a page as POST /tenants/{slug}/corpus/sync does, creating the tenant's
// entry for that URL or refreshing it. htmx gets the form back with the
// result (and the table is told to refresh); a plain form post gets the
// whole page with the result, since the preview is worth seeing once.
func (h *Knowledge) SaveCorpusSync(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := views.URLSyncForm{URL: withScheme(form.Get("url")), Title: strings.TrimSpace(form.Get("title")), Segment: form.Get("segment")}
	// Empty title and segment are left out: the page's title on create, the entry's own on refresh.
	var in parley.CorpusInput
	if f.Title != "" {
		in.Title = parley.Some(f.Title)
	}
	if f.Segment != "" {
		in.Segment = parley.Some(f.Segment)
	}
	status := http.StatusOK
	e, res, err := h.SyncURL(ctx, h.Log(c), a.Tenant, parley.Some(f.URL), in, parley.FieldErrors{})
	if err == nil {
		f = views.URLSyncForm{Result: &views.URLSyncResult{
			Created: res == knowledge.Created, ID: e.ID, Title: e.Title, SourceURL: handlers.Deref(e.SourceURL),
			Preview: parley.Clip(e.Content, syncPreviewChars), Chars: utf8.RuneCountInString(e.Content),
		}}
	} else {
		var ok bool
		if status, f.Errors, f.Message, ok = syncFailure(err); !ok {
			return err
		}
	}
	segs, err := h.segmentOptions(ctx, a.Tenant.ID)
	if err != nil {
		return err
	}

	if c.Request().Header.Get("HX-Request") == "true" {
		if f.Result != nil {
			c.Response().Header().Set("HX-Trigger", "corpusChanged")
		}
		return handlers.Render(c, status, views.URLSyncView(views.Page{CSRF: dash.CSRFToken(c)}, segs, f))
	}
	l, err := h.corpusList(c)
	if err != nil {
		return err
	}
	v := views.CorpusView{List: l, Segments: segs, Limit: a.Tenant.PlanInfo().CorpusLimit, Sync: f}
	return handlers.Render(c, status, views.CorpusPage(dash.Page(c, h.Sessions, "Knowledge base", "corpus"), v))
}

// syncFailure maps what syncURL refused to the status and the messages the
// form shows; ok is false for errors left to the error handler (internal).
func syncFailure(err error) (status int, fields views.Errors, msg string, ok bool) {
	var e *parley.Error
	if !errors.As(err, &e) {
		return 0, nil, "", false
	}
	switch e.Kind {
	case parley.KindTooLarge:
		status = http.StatusRequestEntityTooLarge
	case parley.KindUnprocessable:
		status = http.StatusUnprocessableEntity
	default:
		// handlers.Invalid (the fields, or a refused address as the url's error) and the corpus limit.
		status, fields, msg, ok = dash.FormStatus(err)
		if fields["url"] == msg {
			msg = "" // shown at the field already
		}
		return status, fields, sentence(msg), ok
	}
	return status, nil, sentence(e.Message), true
}

// sentence capitalises the fetcher's messages ("refused: ...", "the page
// has no text ...") to stand alone.
func sentence(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// withScheme completes an address typed without its scheme, as people copy
// them from a browser's address bar ("acmebikes.com/faq"), with https://.
func withScheme(address string) string {
	address = strings.TrimSpace(address)
	if address == "" || strings.Contains(address, "://") || strings.ContainsAny(address, " \t") {
		return address
	}
	host, _, _ := strings.Cut(address, "/")
	if !strings.Contains(host, ".") || strings.HasPrefix(host, ".") {
		return address
	}
	return "https://" + address
}
