package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm"
)

// The engine sees a tenant's reply endpoint's answer as plain text.
func TestRunTurnWebhook(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		io.WriteString(w, `{"reply":"Done."}`)
	}))
	t.Cleanup(srv.Close)
	out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	p := llm.NewWebhook(llm.WebhookConfig{URL: srv.URL, Key: []byte("vsk_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"),
		HTTPClient: out.Client(10 * time.Second), Turn: llm.WebhookTurn{Tenant: "acme", SessionID: "sess-1", Message: "Where is my order?"}})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Where is my order?"}}}
	var emitted []string
	res, err := RunTurn(context.Background(), p, req, nil, 0,
		func(ev llm.Event) { emitted = append(emitted, ev.Text) })
	if err != nil || res.Text != "Done." || res.Calls != 1 || len(res.Executions) != 0 || res.StopReason != llm.StopEnd {
		t.Errorf("turn = %+v, %v", res, err)
	}
	if strings.Join(emitted, "") != "Done." {
		t.Errorf("emitted %q", emitted)
	}
}
