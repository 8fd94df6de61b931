package web

import (
	"encoding/json"
	"net/http"
	"testing"
)

// decodeJSON decodes a response body into v, failing the test on bad JSON.
func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", resp.Request.URL, err)
	}
}
