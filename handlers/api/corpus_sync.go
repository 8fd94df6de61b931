package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// syncTarget is what a sync reads besides the entry fields of
// resource.CorpusBody: the page to fetch.
type syncTarget struct {
	URL parley.Opt[string] `json:"url"`
}

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
func (h *Knowledge) SyncCorpus(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var target syncTarget
	errs := jsonbody.DecodeFields(raw, &target)
	// The entry fields a sync accepts; content and the identity fields come from the fetch.
	in := resource.CorpusInputOf(raw)
	for k, v := range in.Problems {
		errs.Add(k, v)
	}
	in.Problems = nil // in errs
	e, res, err := h.SyncURL(c.Request().Context(), h.Log(c), handlers.TenantFrom(c), target.URL, in, errs)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res == knowledge.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, resource.CorpusUpsertJSON{Corpus: resource.NewCorpusJSON(e), Created: res == knowledge.Created})
}
