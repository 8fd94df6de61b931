package agent

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/agent/tools/toolstest"
)

func TestEscalation(t *testing.T) {
	t.Parallel()
	secret := []byte("whsec-test-secret")
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), b}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	tool := toolstest.Tool(t, "Talk to a human", parley.ToolEscalateToHuman, parley.EscalateConfig{HandoffMessage: "Marie will answer within the hour."})
	url := hook.URL
	tool.WebhookURL = &url
	deps := tools.Deps{
		EscalatorFor: func(t parley.Tool) tools.Escalator {
			return tools.WebhookEscalator{URL: *t.WebhookURL, Secret: secret, Client: hook.Client()}
		},
		EscalationContext: map[string]any{"conversationId": "conv-1"},
	}
	srv, p := engineFixture(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "esc", Name: "talk_to_a_human", Arguments: []string{`{"reason":"wants a refund","contact":"ada@example.com"}`}}}},
		llmtest.Turn{Text: []string{"Marie will answer within the hour."}},
	)
	res, err := RunTurn(context.Background(), p, userAsks("human please"), tools.NewRegistry([]parley.Tool{tool}, deps), 0, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("signature verifies independently", func(t *testing.T) {
		d := <-got
		sig := d.header.Get("X-Service-Signature")
		ts, v1, ok := strings.Cut(sig, ",v1=")
		if !ok || !strings.HasPrefix(ts, "t=") {
			t.Fatalf("signature header %q", sig)
		}
		ts = strings.TrimPrefix(ts, "t=")
		unix, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || time.Since(time.Unix(unix, 0)).Abs() > 300*time.Second {
			t.Fatalf("timestamp %q", ts)
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(ts + "."))
		mac.Write(d.body)
		want := hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(v1), []byte(want)) {
			t.Fatalf("v1 %s, want %s", v1, want)
		}
		if d.header.Get("X-Service-Event") != tools.EscalationEvent || d.header.Get("X-Service-Delivery-Id") == "" {
			t.Fatalf("headers %v", d.header)
		}
		var payload struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal(d.body, &payload); err != nil || payload.Event != tools.EscalationEvent ||
			payload.Data["reason"] != "wants a refund" || payload.Data["contact"] != "ada@example.com" || payload.Data["conversationId"] != "conv-1" {
			t.Fatalf("payload %s: %v", d.body, err)
		}
	})
	t.Run("execution escalated", func(t *testing.T) {
		ex := res.Executions[0]
		if !ex.Success || !ex.Escalated || ex.ToolType != parley.ToolEscalateToHuman || !res.Escalated() {
			t.Fatalf("execution %+v", ex)
		}
		// A lead: the submission holds what the model gave; the envelope's data does not.
		if s := ex.Submission; s == nil || s.ToolType != parley.ToolEscalateToHuman || s.Input["reason"] != "wants a refund" || s.Input["contact"] != "ada@example.com" {
			t.Errorf("submission %+v", ex.Submission)
		}
		if _, leaked := ex.Data["reason"]; leaked || ex.Data["escalated"] != true {
			t.Errorf("envelope data %v", ex.Data)
		}
		msgs := srv.Requests()[1].Chat.Messages
		if last := msgs[len(msgs)-1]; last.ToolCallID != "esc" || !strings.Contains(string(last.Content), "Marie will answer") {
			t.Fatalf("tool message %+v", last)
		}
	})
	t.Run("webhook failure is not escalated", func(t *testing.T) {
		t.Parallel()
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
		t.Cleanup(down.Close)
		reg := tools.NewRegistry([]parley.Tool{tool}, tools.Deps{EscalatorFor: func(parley.Tool) tools.Escalator {
			return tools.WebhookEscalator{URL: down.URL, Secret: secret, Client: down.Client()}
		}})
		ex := execute(t, reg, "talk_to_a_human", `{"reason":"x"}`)
		if ex.Success || ex.Escalated || ex.Err == nil || !strings.Contains(ex.Err.Error(), "HTTP 500") {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("reason required", func(t *testing.T) {
		t.Parallel()
		reg := tools.NewRegistry([]parley.Tool{tool}, tools.Deps{EscalatorFor: func(parley.Tool) tools.Escalator {
			return escalatorFunc(func() error { return errors.New("must not be called") })
		}})
		if ex := execute(t, reg, "talk_to_a_human", `{}`); ex.Success || ex.Escalated || ex.Err != nil {
			t.Fatalf("execution %+v", ex)
		}
	})
}

type escalatorFunc func() error

func (f escalatorFunc) Escalate(context.Context, string, map[string]any) error { return f() }
