package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/fetch"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// SyncCorpus answers POST /tenants/{slug}/corpus/sync: it fetches url now
// through the SSRF-guarded client, converts it (fetch.Document) and
// stores it as an entry with source "url", kept fresh by the periodic
// refresh. When the tenant already has an entry with that sourceUrl, that
// entry is refreshed (200) instead of a new one created (201); the body's
// other fields (title, summary, priority, isActive, locale, tags,
// segmentSlug) apply when sent, and an omitted title keeps the entry's own
// or, on create, takes the page's. The fetch is unconditional: an explicit
// sync always re-reads the page. Fetch failures keep an existing entry's
// content and are recorded on it as its sync error.
func (h *Handler) SyncCorpus(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var target struct {
		URL parley.Opt[string] `json:"url"`
	}
	errs := jsonbody.DecodeFields(raw, &target)
	// The entry fields a sync accepts; content and the identity fields come from the fetch.
	in := resource.CorpusInputOf(raw)
	for k, v := range in.Problems {
		errs.Add(k, v)
	}
	in.Problems = nil // in errs
	e, res, err := h.syncURL(c.Request().Context(), h.log(c), TenantFrom(c), target.URL, in, errs)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res == db.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{"corpus": resource.NewCorpusJSON(e), "created": res == db.Created})
}

// syncURL validates a sync request (errs holds decoding problems already),
// fetches and converts the page, and creates or refreshes the tenant's entry
// for that URL. The API and the dashboard's "Add from URL" share it.
func (h *Handler) syncURL(ctx context.Context, log *slog.Logger, t parley.Tenant, target parley.Opt[string], in parley.CorpusInput, errs parley.FieldErrors) (parley.CorpusEntry, db.UpsertResult, error) {
	rawURL := strings.TrimSpace(target.Value)
	switch {
	case errs["url"] != "":
	case !target.Set || target.Null || rawURL == "":
		errs.Add("url", "is required")
	case utf8.RuneCountInString(rawURL) > parley.MaxCorpusSourceURL:
		errs.Add("url", parley.TooLong(parley.MaxCorpusSourceURL))
	default:
		u, err := url.Parse(rawURL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			errs.Add("url", "must be an absolute http or https URL such as https://example.com/faq")
		case u.User != nil:
			errs.Add("url", "must not contain a user name or password")
		}
	}
	in.Content, in.ExternalID, in.Source, in.SourceURL = parley.Opt[string]{}, parley.Opt[string]{}, parley.Opt[string]{}, parley.Opt[string]{}
	w, verrs := h.Manage.CheckCorpusOne(ctx, t.ID, in, false)
	for k, v := range verrs {
		errs.Add(k, v)
	}
	if err := errs.Err(); err != nil {
		return parley.CorpusEntry{}, 0, err
	}

	existing, err := h.DB.CorpusEntryBySourceURL(ctx, t.ID, rawURL)
	found := err == nil
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return parley.CorpusEntry{}, 0, err
	}
	limit := t.PlanInfo().CorpusLimit
	if !found {
		// Refuse before fetching; DB.SyncCorpus checks again under the tenant lock.
		n, err := h.DB.CountCorpus(ctx, t.ID)
		if err != nil {
			return parley.CorpusEntry{}, 0, err
		}
		if n >= limit {
			return parley.CorpusEntry{}, 0, db.CorpusLimitError(n, limit)
		}
	}

	doc, err := fetch.Document(ctx, h.Outbound.Client(fetch.Timeout), rawURL, "", "")
	if err != nil {
		if found && existing.SyncedAt != nil {
			if rerr := h.DB.RecordCorpusSyncError(ctx, t.ID, existing.ID, err.Error(), h.now()); rerr != nil && parley.ErrorKind(rerr) != parley.KindNotFound {
				log.Error("recording corpus sync error", "err", rerr, "entry", existing.ID)
			}
		}
		return parley.CorpusEntry{}, 0, err
	}
	return h.DB.SyncCorpus(ctx, t.ID, limit, rawURL, w, db.CorpusSync{
		Title: doc.Title, Content: doc.Content, ETag: doc.ETag, LastModified: doc.LastModified, At: h.now()})
}
