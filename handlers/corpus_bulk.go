package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// maxBulkBody fits 50 entries of 50,000 characters each.
const maxBulkBody = 12 << 20

// bulkItemResult is what happened to one item of a bulk upsert.
type bulkItemResult struct {
	ExternalID string `json:"externalId"`
	Status     string `json:"status"` // created, updated, skipped (unchanged) or error
	ID         string `json:"id,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

type bulkError struct {
	ExternalID string `json:"externalId"`
	Reason     string `json:"reason"`
}

// reason joins field errors into one sentence, fields in order.
func reason(errs parley.FieldErrors) string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + errs[k]
	}
	return strings.Join(parts, "; ")
}

// BulkCorpus answers POST /tenants/{slug}/corpus/bulk: 1..50 entries, each
// validated and upserted by externalId on its own, in its own transaction, so
// a bad item never stops or half-writes another.
func (h *Handler) BulkCorpus(c echo.Context) error {
	raw, err := decodeObject(c, maxBulkBody)
	if err != nil {
		return err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw["entries"], &items); err != nil || raw["entries"] == nil {
		return &parley.Error{Kind: parley.KindInvalid, Message: "entries must be an array of 1 to 50 entries",
			Details: map[string]string{"entries": "must be an array"}}
	}
	if len(items) < 1 || len(items) > maxBulkEntries {
		return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("entries must hold 1 to %d entries, got %d", maxBulkEntries, len(items)),
			Details: map[string]string{"entries": fmt.Sprintf("1 to %d entries", maxBulkEntries)}}
	}
	ctx := c.Request().Context()
	t := tenantFrom(c)
	out := struct {
		Created int              `json:"created"`
		Updated int              `json:"updated"`
		Skipped int              `json:"skipped"`
		Errors  []bulkError      `json:"errors"`
		Results []bulkItemResult `json:"results"`
	}{Errors: []bulkError{}, Results: make([]bulkItemResult, 0, len(items))}
	fail := func(extID, why string) {
		out.Errors = append(out.Errors, bulkError{ExternalID: extID, Reason: why})
		out.Results = append(out.Results, bulkItemResult{ExternalID: extID, Status: "error", Reason: why})
	}
	seen := map[string]bool{}
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil {
			fail("", fmt.Sprintf("entry %d is not a JSON object", i+1))
			continue
		}
		var b corpusBody
		errs := decodeFields(fields, &b)
		extID := b.ExternalID.Value
		if !b.ExternalID.Set || b.ExternalID.Null || strings.TrimSpace(extID) == "" {
			errs.Add("externalId", "is required in bulk")
		} else if seen[extID] {
			errs.Add("externalId", "appears twice in this request")
		}
		seen[extID] = true
		w, verrs := h.validateCorpus(ctx, t.ID, b, true)
		for k, v := range verrs {
			errs.Add(k, v)
		}
		if len(errs) > 0 {
			fail(extID, reason(errs))
			continue
		}
		e, res, err := h.DB.UpsertCorpus(ctx, t.ID, t.PlanInfo().CorpusLimit, w)
		switch {
		case parley.ErrorKind(err) != parley.KindInternal:
			fail(extID, err.Error())
		case err != nil:
			return err
		case res == db.Created:
			out.Created++
			out.Results = append(out.Results, bulkItemResult{ExternalID: extID, Status: "created", ID: e.ID})
		case res == db.Updated:
			out.Updated++
			out.Results = append(out.Results, bulkItemResult{ExternalID: extID, Status: "updated", ID: e.ID})
		default:
			out.Skipped++
			out.Results = append(out.Results, bulkItemResult{ExternalID: extID, Status: "skipped", ID: e.ID, Reason: "unchanged"})
		}
	}
	return c.JSON(http.StatusOK, out)
}
