package web_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// metricsToken is the metrics token of the tests' servers.
const metricsToken = "metrics-token-0123456789abcdef0123456789"

// scrape reads url's metrics with token (none when ""), failing the test
// unless they answer 200; it returns the text and its samples by their
// name and labels as printed (name{label="value",...}).
func scrape(t testing.TB, client *http.Client, url, token string) (string, map[string]float64) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s %.300s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return string(body), samples
}

// TestMetrics drives real requests through a server whose metrics are on
// behind a token (a chat turn with the scripted model, a tool call that
// hands over to a person and queues webhook deliveries, a per-address
// refusal) and reads /metrics: the counters moved, with bounded labels,
// and the text passes promtool's check.
func TestMetrics(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, map[string]string{"PARLEY_METRICS_TOKEN": metricsToken})
	ten := b.NewTenant(t, "scale")
	for _, tool := range []map[string]any{
		{"name": "Human", "description": "Hand over to the team", "type": "ESCALATE_TO_HUMAN"},
	} {
		if st, resp := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, tool); st != 201 {
			t.Fatalf("tool: %d %v", st, resp)
		}
	}
	if st, resp := b.Do(t, "POST", "/tenants/"+ten.Slug+"/webhooks", ten.Token,
		map[string]any{"url": "http://127.0.0.1:1/parley-hook"}); st != 201 {
		t.Fatalf("webhook endpoint: %d %v", st, resp)
	}
	path := "/chat/" + ten.Slug

	llm.Push(llmtest.Turn{Text: []string{"Hello", ", how can I help?"}, PromptTokens: 12, CompletionTokens: 5})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "m-1"}, nil); r.Status != 200 {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	llm.Push(llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("h1", "human", `{"reason":"wants a person"}`)}},
		llmtest.Turn{Text: []string{"Someone will join you."}})
	if r := b.Chat(t, path, map[string]any{"message": "A person, please", "sessionId": "m-2", "stream": false}, nil); r.Status != 200 || r.Body["status"] != "escalated" {
		t.Fatalf("escalation: %d %v", r.Status, r.Body)
	}
	addr := webtest.NewChatAddr()
	if r := b.Chat(t, path, "[1]", map[string]string{"X-Forwarded-For": addr}); r.Status != 400 {
		t.Fatalf("a JSON array: %d %v, want 400", r.Status, r.Body)
	}
	b.Exec(t, `UPDATE rate_counters SET count = 1000 WHERE key = $1`, "chat:ip:min:"+addr)
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "m-3"}, map[string]string{"X-Forwarded-For": addr}); r.Status != 429 {
		t.Fatalf("at the per-address limit: %d %v, want 429", r.Status, r.Body)
	}

	// The month's conversations used up (a new session is refused), and a
	// plan without the chat.
	full := b.NewTenant(t, "starter")
	b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1000)`, full.ID)
	if r := b.Chat(t, "/chat/"+full.Slug, map[string]any{"message": "Hi", "sessionId": "m-4"}, webtest.AgentHeaders); r.Status != 429 {
		t.Fatalf("at the monthly limit: %d %v, want 429", r.Status, r.Body)
	}
	free := b.NewTenant(t, "free")
	if r := b.Chat(t, "/chat/"+free.Slug, map[string]any{"message": "Hi", "sessionId": "m-5"}, nil); r.Status != 402 {
		t.Fatalf("a plan without the chat: %d %v, want 402", r.Status, r.Body)
	}

	text, got := scrape(t, b.TS.Client(), b.TS.URL+"/metrics", metricsToken)
	for sample, atLeast := range map[string]float64{
		`parley_chat_turns_total{channel="web",outcome="answered"}`:                         1,
		`parley_chat_turns_total{channel="web",outcome="escalated"}`:                        1,
		`parley_chat_time_to_first_token_seconds_count{channel="web"}`:                      2,
		`parley_model_calls_total{provider="openai",result="ok"}`:                           3,
		`parley_model_call_duration_seconds_count{provider="openai"}`:                       3,
		`parley_model_tokens_total{direction="input",provider="openai"}`:                    12,
		`parley_model_tokens_total{direction="output",provider="openai"}`:                   5,
		`parley_tool_calls_total{outcome="success",tool_type="ESCALATE_TO_HUMAN"}`:          1,
		`parley_limit_refusals_total{limit="per_address"}`:                                  1,
		`parley_limit_refusals_total{limit="monthly_conversations"}`:                        1,
		`parley_limit_refusals_total{limit="not_in_plan"}`:                                  1,
		`parley_chat_turns_total{channel="agent",outcome="limit_reached"}`:                  1,
		`parley_http_requests_total{code="200",method="POST",route="/chat/:slug"}`:          2,
		`parley_http_requests_total{code="429",method="POST",route="/chat/:slug"}`:          1,
		`parley_http_requests_total{code="201",method="POST",route="/tenants/:slug/tools"}`: 1,
		`parley_http_request_duration_seconds_count{method="POST",route="/chat/:slug"}`:     3,
		`parley_job_queue_depth{queue="webhooks",state="available"}`:                        1,
		`parley_db_pool_max_connections`:                                                    1,
		`parley_visitor_streams_open`:                                                       0,
		`go_goroutines`:                                                                     1,
	} {
		v, ok := got[sample]
		if !ok || v < atLeast {
			t.Errorf("%s = %v (present %v), want at least %v", sample, v, ok, atLeast)
		}
	}
	// The message refused at the per-address limit was not a turn, though
	// its count was made with the turn's first round trip.
	if v := got[`parley_chat_turns_total{channel="web",outcome="failed"}`]; v != 0 {
		t.Errorf("%v web turns counted failed, want none", v)
	}
	if got[`parley_webhook_oldest_pending_delivery_age_seconds`] < 0 || !strings.Contains(text, "parley_webhook_oldest_pending_delivery_age_seconds ") {
		t.Errorf("no age of the oldest pending delivery")
	}
	// No label carries a URL, a slug or the visitor's words.
	for _, leak := range []string{ten.Slug, full.Slug, free.Slug, "parley-hook", "A person, please", addr} {
		if strings.Contains(text, leak) {
			t.Errorf("the metrics hold %q", leak)
		}
	}
	if st, _ := b.RawDo(t, "GET", "/no/such/page", "", nil); st != 404 {
		t.Fatalf("unknown path: %d", st)
	}
	text, got = scrape(t, b.TS.Client(), b.TS.URL+"/metrics", metricsToken)
	if got[`parley_http_requests_total{code="404",method="GET",route="other"}`] < 1 || strings.Contains(text, "/no/such/page") {
		t.Errorf("an unknown path is not counted as route other")
	}
	promtoolCheck(t, text)

	t.Run("Token", func(t *testing.T) {
		for _, auth := range []string{"", "Bearer wrong-token", "Basic " + metricsToken, metricsToken} {
			req, _ := http.NewRequest("GET", b.TS.URL+"/metrics", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := b.TS.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 || !strings.Contains(string(body), `"error":"Missing or wrong metrics token`) {
				t.Errorf("Authorization %q: %d %s, want 401", auth, resp.StatusCode, body)
			}
		}
	})
}

// promtoolCheck runs `promtool check metrics` (Debian's prometheus
// package, which .ci/run installs) on a scrape's text.
func promtoolCheck(t *testing.T, text string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: apt-get install prometheus (its package), as .ci/run does")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsOff checks that /metrics is not public: with neither
// PARLEY_METRICS_ADDR nor PARLEY_METRICS_TOKEN the server counts nothing
// and answers 404 in the error shape, token or not.
func TestMetricsOff(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	if b.Srv.Metrics != nil || b.Srv.Base.Engine.Observer != nil {
		t.Fatal("metrics on without PARLEY_METRICS_ADDR or PARLEY_METRICS_TOKEN")
	}
	for _, token := range []string{"", metricsToken} {
		st, body := b.Do(t, "GET", "/metrics", token, nil)
		if st != 404 || body["code"] != "METRICS_OFF" {
			t.Errorf("token %q: %d %v, want 404 METRICS_OFF", token, st, body)
		}
	}
}

// TestMetricsOwnAddress serves the metrics on their own listener
// (PARLEY_METRICS_ADDR) beside the main one, started by Run: there they
// need no token, and the main address's /metrics stays 404. Not
// parallel: Run starts River, which would work the jobs other tests queue
// in the binary's database.
func TestMetricsOwnAddress(t *testing.T) {
	store := dbtest.New(t)
	cfg := webtest.Config(t, map[string]string{"PARLEY_ADDR": "127.0.0.1:0", "PARLEY_METRICS_ADDR": "127.0.0.1:0"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	main, metricsAddr := make(chan net.Addr, 1), make(chan net.Addr, 1)
	srv.Listening = func(a net.Addr) { main <- a }
	srv.MetricsListening = func(a net.Addr) { metricsAddr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	var mainURL, metricsURL string
	for mainURL == "" || metricsURL == "" {
		select {
		case a := <-main:
			mainURL = "http://" + a.String()
		case a := <-metricsAddr:
			metricsURL = "http://" + a.String()
		case err := <-done:
			t.Fatalf("Run: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the server did not listen")
		}
	}
	client := &http.Client{Transport: &webtest.ValidatingTransport{TB: t, Base: &http.Transport{}}}
	if resp, err := client.Get(mainURL + "/healthz"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	_, got := scrape(t, client, metricsURL+"/metrics", "")
	if got[`parley_http_requests_total{code="200",method="GET",route="/healthz"}`] != 1 {
		t.Errorf("the health check is not counted")
	}
	resp, err := client.Get(mainURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("/metrics on the main address: %d, want 404 (no token configured)", resp.StatusCode)
	}
}
