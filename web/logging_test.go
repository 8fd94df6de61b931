package web

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/parley/parley/agent/llmtest"
	"github.com/parley/parley/auth"
)

// logBuffer collects JSON log lines, safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the logged lines whose msg is msg.
func (l *logBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, raw := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(raw, &line); err != nil {
			t.Fatalf("log line %q is not JSON: %v", raw, err)
		}
		if line["msg"] == msg {
			out = append(out, line)
		}
	}
	return out
}

// TestRequestLogger: every line logged under a request carries its
// request id and the tenant's slug, from the request line to the chat
// engine's own lines.
func TestRequestLogger(t *testing.T) {
	t.Parallel()
	b, _ := setupChat(t, nil, llmtest.Turn{Status: http.StatusInternalServerError, ErrorMessage: "model down"})
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	b.logTo(logger)
	ten := b.newTenant(t, "scale")

	req, _ := http.NewRequest("GET", b.ts.URL+"/tenants/"+ten.Slug, nil)
	req.Header.Set("Authorization", "Bearer "+b.token(t, ten.ID, auth.ScopeSettingsRead))
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	apiID := resp.Header.Get("X-Request-Id")

	res := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "log-1"},
		map[string]string{"X-Agent-Model": "test-agent"})
	if res.status != http.StatusBadGateway && res.status != http.StatusServiceUnavailable && res.status/100 != 5 {
		t.Fatalf("chat with a failing model answered %d", res.status)
	}
	chatID := res.header.Get("X-Request-Id")
	if apiID == "" || chatID == "" || apiID == chatID {
		t.Fatalf("request ids %q and %q", apiID, chatID)
	}

	byID := map[string]map[string]any{}
	for _, line := range logs.lines(t, "request") {
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
	failed := logs.lines(t, "model call failed")
	if len(failed) != 1 || failed[0]["request_id"] != chatID || failed[0]["tenant"] != ten.Slug {
		t.Errorf("engine lines %v: want one carrying request_id %q and tenant %q", failed, chatID, ten.Slug)
	}
}
