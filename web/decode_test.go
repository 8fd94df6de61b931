package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// decodeJSON decodes a response body into v, failing the test on bad JSON.
func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", resp.Request.URL, err)
	}
}

// listCorpus lists a tenant's corpus straight from the database, for assertions.
func listCorpus(store *db.DB, ctx context.Context, tenantID string, q db.CorpusQuery) ([]parley.CorpusEntry, int, error) {
	res, err := store.ListCorpus(ctx, tenantID, q)
	return res.Entries, res.Total, err
}
