package web

import (
	"net/http"
	"testing"
)

func TestShowTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.newTenant(t, "scale")

	status, body := b.do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	tj := body["tenant"].(map[string]any)
	if tj["slug"] != ten.Slug || tj["isActivated"] != true || tj["conversationsLimit"].(float64) != 25000 {
		t.Errorf("tenant = %v", tj)
	}
	if _, ok := body["embedCode"].(string); !ok {
		t.Errorf("embedCode missing: %v", body)
	}
}
