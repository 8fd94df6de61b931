package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
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

// bulkError is an item refused by a bulk upsert: the contract's
// {externalId, reason}, with the item's position in entries (from 0), since
// a refused item may have no externalId to name it by.
type bulkError struct {
	Index      int    `json:"index"`
	ExternalID string `json:"externalId"`
	Reason     string `json:"reason"`
}

// bulkReport is the answer of a bulk upsert: the contract's counts and
// errors, and what happened to each item.
type bulkReport struct {
	Created int              `json:"created"`
	Updated int              `json:"updated"`
	Skipped int              `json:"skipped"`
	Errors  []bulkError      `json:"errors"`
	Results []bulkItemResult `json:"results"`
}

// BulkCorpus answers POST /tenants/{slug}/corpus/bulk: 1..50 entries, each
// upserted by externalId. Every item is checked first; the bad ones are
// reported in errors and left out, the good ones are written in one
// transaction (so a failure of the database writes none of them), as the
// contract's {created, updated, skipped, errors} says: a bad item costs only
// itself. An item that would change its entry in nothing is skipped. Every
// item has an externalId, so there is no duplicate rule by title and content
// here, unlike the CSV import: a new externalId is a new entry by the
// caller's own decision. The body as a whole (not an object, entries not an
// array of 1 to 50) is still a 400, and the plan's limit a 429 for the whole
// request.
func (h *Knowledge) BulkCorpus(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, maxBulkBody)
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
	t := handlers.TenantFrom(c)
	segment, err := h.Manage.SegmentTable(ctx, t.ID)
	if err != nil {
		return err
	}
	out := bulkReport{Errors: []bulkError{}, Results: make([]bulkItemResult, len(items))}
	fail := func(i int, extID, why string) {
		out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: extID, Reason: why})
		out.Results[i] = bulkItemResult{ExternalID: extID, Status: "error", Reason: why}
	}
	writes := make([]knowledge.CorpusWrite, 0, len(items))
	at := make([]int, 0, len(items)) // writes[k] is items[at[k]]
	seen := map[string]bool{}
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
			fail(i, "", "the item must be a JSON object")
			continue
		}
		in := resource.CorpusInputOf(fields)
		extID := in.ExternalID.Value
		if !in.ExternalID.Set || in.ExternalID.Null || strings.TrimSpace(extID) == "" {
			in.Problems.Add("externalId", "is required in bulk")
		} else if seen[extID] {
			// One statement per item could apply both, but which one the
			// caller meant is anyone's guess: the first is written.
			in.Problems.Add("externalId", "appears twice in this request")
		}
		w, errs := manage.CheckCorpus(in, true, segment)
		out.Results[i] = bulkItemResult{ExternalID: extID}
		if len(errs) > 0 {
			fail(i, extID, errs.Sentence())
			continue
		}
		seen[extID] = true // a refused item does not take its externalId from a later good one
		writes = append(writes, w)
		at = append(at, i)
	}
	if len(writes) == 0 {
		return c.JSON(http.StatusOK, out)
	}
	done, err := h.Manage.UpsertCorpusBatch(ctx, t, writes)
	if err != nil {
		return err
	}
	for k, d := range done {
		r := &out.Results[at[k]]
		r.ID = d.Entry.ID
		switch d.Result {
		case knowledge.Created:
			out.Created++
			r.Status = "created"
		case knowledge.Updated:
			out.Updated++
			r.Status = "updated"
		default:
			out.Skipped++
			r.Status, r.Reason = "skipped", "unchanged"
		}
	}
	return c.JSON(http.StatusOK, out)
}
