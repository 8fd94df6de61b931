package web_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestRequestLogger: every line logged under a request carries its
// request id and the tenant's slug, from the request line to the chat
// engine's own lines.
func TestRequestLogger(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Status: http.StatusInternalServerError, ErrorMessage: "model down"})
	var logs webtest.LogBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	b.LogTo(logger)
	ten := b.NewTenant(t, "scale")

	req, _ := http.NewRequest("GET", b.TS.URL+"/tenants/"+ten.Slug, nil)
	req.Header.Set("Authorization", "Bearer "+b.Token(t, ten.ID, auth.ScopeSettingsRead))
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	apiID := resp.Header.Get("X-Request-Id")

	res := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "log-1"},
		map[string]string{"X-Agent-Model": "test-agent"})
	if res.Status != http.StatusBadGateway && res.Status != http.StatusServiceUnavailable && res.Status/100 != 5 {
		t.Fatalf("chat with a failing model answered %d", res.Status)
	}
	chatID := res.Header.Get("X-Request-Id")
	if apiID == "" || chatID == "" || apiID == chatID {
		t.Fatalf("request ids %q and %q", apiID, chatID)
	}

	byID := map[string]map[string]any{}
	for _, line := range logs.Lines(t, "request") {
		byID[line["request_id"].(string)] = line
	}
	for _, id := range []string{apiID, chatID} {
		line, ok := byID[id]
		if !ok {
			t.Fatalf("no request line with request_id %q", id)
		}
		if line["tenant"] != ten.Slug {
			t.Errorf("request line %v: tenant is not the slug %q", line, ten.Slug)
		}
	}
	failed := logs.Lines(t, "model call failed")
	if len(failed) != 1 || failed[0]["request_id"] != chatID || failed[0]["tenant"] != ten.Slug {
		t.Errorf("engine lines %v: want one carrying request_id %q and tenant %q", failed, chatID, ten.Slug)
	}
}
