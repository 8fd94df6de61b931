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

// notWritten is the reason given for the good items of a bulk request that
// had bad ones: a request writes all its entries or none.
const notWritten = "not written: other entries of this request have errors, and a request writes all its entries or none"

// BulkCorpus answers POST /tenants/{slug}/corpus/bulk: 1..50 entries, each
// upserted by externalId. Every item is checked first: with a bad one nothing
// is written (the good ones are reported skipped, with the reason); else all
// are written in one transaction.
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
	segment, err := h.segmentTable(ctx, t.ID)
	if err != nil {
		return err
	}
	out := struct {
		Created int              `json:"created"`
		Updated int              `json:"updated"`
		Skipped int              `json:"skipped"`
		Errors  []bulkError      `json:"errors"`
		Results []bulkItemResult `json:"results"`
	}{Errors: []bulkError{}, Results: make([]bulkItemResult, len(items))}
	fail := func(i int, extID, why string) {
		out.Errors = append(out.Errors, bulkError{ExternalID: extID, Reason: why})
		out.Results[i] = bulkItemResult{ExternalID: extID, Status: "error", Reason: why}
	}
	writes := make([]db.CorpusWrite, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil {
			fail(i, "", fmt.Sprintf("entry %d is not a JSON object", i+1))
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
		w, verrs := checkCorpus(b, true, segment)
		for k, v := range verrs {
			errs.Add(k, v)
		}
		out.Results[i] = bulkItemResult{ExternalID: extID}
		if len(errs) > 0 {
			fail(i, extID, reason(errs))
			continue
		}
		writes = append(writes, w)
	}
	if len(out.Errors) > 0 {
		for i := range out.Results {
			if out.Results[i].Status == "" {
				out.Results[i].Status, out.Results[i].Reason = "skipped", notWritten
				out.Skipped++
			}
		}
		return c.JSON(http.StatusOK, out)
	}
	done, err := h.DB.UpsertCorpusBatch(ctx, t.ID, t.PlanInfo().CorpusLimit, writes)
	if err != nil {
		return err
	}
	for i, d := range done {
		r := &out.Results[i]
		r.ID = d.Entry.ID
		switch d.Result {
		case db.Created:
			out.Created++
			r.Status = "created"
		case db.Updated:
			out.Updated++
			r.Status = "updated"
		default:
			out.Skipped++
			r.Status, r.Reason = "skipped", "unchanged"
		}
	}
	return c.JSON(http.StatusOK, out)
}
