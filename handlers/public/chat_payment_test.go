package public_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/outbound/stripe/stripetest"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// lockedBuffer is a log sink several goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setupPayments is SetupChat with a fake Stripe, logs kept (at debug) to be
// searched for the key, and Stripe's timeout shortened.
func setupPayments(t *testing.T) (*webtest.Bundle, *llmtest.OpenAI, *stripetest.Server, *lockedBuffer) {
	t.Helper()
	stripe := stripetest.Start(t)
	model := llmtest.NewOpenAI(t)
	store := dbtest.New(t)
	cfg := webtest.Config(t, webtest.ChatEnv(model.URL), map[string]string{"PARLEY_STRIPE_API_URL": stripe.URL})
	logs := &lockedBuffer{}
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	srv.Base.Stripe.Timeout = 300 * time.Millisecond // the engine's client too: one client
	return webtest.NewBundle(t, srv, store), model, stripe, logs
}

// COLLECT_PAYMENT through real chat requests against a fake Stripe: a link
// for a quote of the same turn and, later, the same link again without a
// second one; a link for the connector's fixed amount; the amount never the
// model's; Stripe's errors (key refused, rate limit, card error, timeout)
// told to the model, the key nowhere in answers, tool history or logs; not
// offered without a connector, while paused, or on the voice channel; and
// another tenant's quotes out of reach.
func TestChatCollectPayment(t *testing.T) {
	t.Parallel()
	b, model, stripe, logs := setupPayments(t)
	stripe.AddKey(webtest.StripeTestKey, "Acme")
	stripe.AddKey(webtest.OtherStripeKey, "Other")
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	quoteTool := map[string]any{"name": "Quote", "description": "Price an order", "type": "GENERATE_QUOTE", "config": map[string]any{
		"currency": "EUR", "taxRate": 20, "validityDays": 30,
		"items": []any{map[string]any{"name": "Widget", "unitPrice": 12.5, "currency": "EUR"}}}}
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, quoteTool)

	// turn sends one message whose model calls the tools, then answers; it
	// returns the model's requests of the turn.
	turn := func(t *testing.T, path, session string, calls ...llmtest.ToolCall) []llmtest.Received {
		t.Helper()
		model.Push(llmtest.Turn{ToolCalls: calls}, llmtest.Turn{Text: []string{"Here you go."}})
		n := len(model.Requests())
		r := b.Chat(t, path, map[string]any{"message": "I want to pay", "sessionId": session}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		reqs := model.Requests()[n:]
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2", len(reqs))
		}
		return reqs
	}
	payResult := func(t *testing.T, req llmtest.Received) map[string]any {
		t.Helper()
		res := webtest.ToolResults(req)
		var out map[string]any
		if err := json.Unmarshal([]byte(res[len(res)-1]), &out); err != nil {
			t.Fatalf("tool result %q", res)
		}
		return out
	}

	// Without a connector: not offered.
	model.Push(llmtest.Turn{Text: []string{"Hello."}})
	n := len(model.Requests())
	b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "pay-none"}, webtest.AgentHeaders)
	if offered(model.Requests()[n], "collect_payment") {
		t.Fatalf("collect_payment offered without a connector")
	}

	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug+"/integrations/payments", ten.Token, map[string]any{
		"secretKey": webtest.StripeTestKey, "successMessage": "Thanks, see you soon!"})

	t.Run("QuoteOfTheTurn", func(t *testing.T) {
		reqs := turn(t, path, "pay-quote",
			webtest.Call("q1", "quote", `{"items":[{"name":"Widget","quantity":4}]}`),
			webtest.Call("p1", "collect_payment", `{}`))
		if !offered(reqs[0], "collect_payment") || !offered(reqs[0], "quote") {
			t.Fatalf("tools offered: %v", webtest.OfferedTools(reqs[0]))
		}
		desc := ""
		for _, tool := range reqs[0].Chat.Tools {
			if tool.Function.Name == "collect_payment" {
				desc = tool.Function.Description
			}
		}
		if !strings.Contains(desc, "test mode") || !strings.Contains(desc, "make a quote first") {
			t.Errorf("collect_payment's description: %q", desc)
		}
		out := payResult(t, reqs[1])
		result, _ := out["result"].(map[string]any)
		url, _ := result["paymentUrl"].(string)
		if out["success"] != true || !strings.HasPrefix(url, "https://buy.stripe.com/test_plink_fake") || result["amount"] != "60.00" ||
			result["currency"] != "EUR" || result["mode"] != "test" || !strings.Contains(out["summary"].(string), url) {
			t.Fatalf("payment result %v", out)
		}
		got := stripe.Received()
		link := got[len(got)-1]
		if link.Path != "/v1/payment_links" || link.Key != webtest.StripeTestKey || link.IdempotencyKey == "" || link.Version == "" || link.HostInfo != "" ||
			link.Form.Get("line_items[0][price_data][unit_amount]") != "6000" || link.Form.Get("line_items[0][price_data][currency]") != "eur" ||
			link.Form.Get("line_items[0][quantity]") != "1" || link.Form.Get("restrictions[completed_sessions][limit]") != "1" ||
			link.Form.Get("after_completion[hosted_confirmation][custom_message]") != "Thanks, see you soon!" ||
			!strings.HasPrefix(link.Form.Get("line_items[0][price_data][product_data][name]"), "Quote Q-") {
			t.Errorf("Stripe got %+v", link)
		}
		// One submission with no tools row, its webhook event in the same write.
		var subID string
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT s.id FROM submissions s JOIN conversations c ON c.id = s.conversation_id
			WHERE s.tenant_id = $1 AND c.session_id = 'pay-quote' AND s.tool_type = 'COLLECT_PAYMENT' AND s.tool_id IS NULL
			AND s.tool_name = 'Payment link' AND s.result->>'paymentUrl' = $2 AND s.input->>'amountFrom' = 'quote'`, ten.ID, url).Scan(&subID); err != nil {
			t.Fatalf("the payment's submission: %v", err)
		}
		if n := b.Count(t, `SELECT count(*) FROM events WHERE submission_id = $1 AND type = 'submission.created'`, subID); n != 1 {
			t.Errorf("%d submission.created events, want 1", n)
		}
		st, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/submissions?toolType=COLLECT_PAYMENT", ten.Token, nil)
		if subs, _ := body["submissions"].([]any); st != 200 || len(subs) != 1 {
			t.Errorf("submissions of COLLECT_PAYMENT: %d %v", st, body)
		}

		// The next message asks again: the same link, no second one.
		calls := len(stripe.Received())
		reqs = turn(t, path, "pay-quote", webtest.Call("p2", "collect_payment", `{}`))
		out = payResult(t, reqs[1])
		if again, _ := out["result"].(map[string]any); out["success"] != true || again["paymentUrl"] != url {
			t.Errorf("second ask: %v, want %s again", out, url)
		}
		if len(stripe.Received()) != calls {
			t.Errorf("the second ask called Stripe")
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND tool_type = 'COLLECT_PAYMENT'`, ten.ID); n != 1 {
			t.Errorf("%d payment submissions, want 1", n)
		}

		// A quote of an earlier message, named by its id.
		quoteID := strings.TrimPrefix(link.Form.Get("line_items[0][price_data][product_data][name]"), "Quote ")
		turn(t, path, "pay-quote-2", webtest.Call("q1", "quote", `{"items":[{"name":"Widget","quantity":2}]}`))
		reqs = turn(t, path, "pay-quote-2", webtest.Call("p1", "collect_payment", `{"quoteId":"`+quoteID+`"}`))
		if out := payResult(t, reqs[1]); out["success"] != false || !strings.Contains(out["summary"].(string), "no quote "+quoteID) {
			t.Errorf("another conversation's quote: %v", out)
		}
		reqs = turn(t, path, "pay-quote-2", webtest.Call("p1", "collect_payment", `{}`))
		if out := payResult(t, reqs[1]); out["success"] != true || out["result"].(map[string]any)["amount"] != "30.00" {
			t.Errorf("the latest quote of an earlier message: %v", out)
		}
	})

	t.Run("FixedAmount", func(t *testing.T) {
		reqs := turn(t, path, "pay-fixed-0", webtest.Call("p1", "collect_payment", `{}`))
		if out := payResult(t, reqs[1]); out["success"] != false || !strings.Contains(out["summary"].(string), "no quote and the business set no fixed amount") {
			t.Errorf("no quote, no fixed amount: %v", out)
		}
		b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug+"/integrations/payments", ten.Token, map[string]any{
			"currency": "EUR", "defaultAmount": 49.5, "defaultDescription": "Consultation deposit"})
		reqs = turn(t, path, "pay-fixed", webtest.Call("p1", "collect_payment", `{}`))
		out := payResult(t, reqs[1])
		if result, _ := out["result"].(map[string]any); out["success"] != true || result["amount"] != "49.50" || result["description"] != "Consultation deposit" {
			t.Fatalf("fixed amount: %v", out)
		}
		got := stripe.Received()
		if f := got[len(got)-1].Form; f.Get("line_items[0][price_data][unit_amount]") != "4950" ||
			f.Get("line_items[0][price_data][product_data][name]") != "Consultation deposit" {
			t.Errorf("Stripe got %v", f)
		}
	})

	t.Run("BadInputs", func(t *testing.T) {
		calls := len(stripe.Received())
		for _, tc := range []struct{ args, want string }{
			{`{"amount":1}`, `"amount" is not a parameter`},
			{`{"quoteId":5}`, "quoteId must be a string"},
			{`{"quoteId":"` + strings.Repeat("Q", 65) + `"}`, "quoteId is too long"},
			{`{"quoteId":"` + strings.Repeat("Q", 64) + `"}`, "there is no quote"},
			{`{"quoteId":"Q-00000000"}`, "there is no quote Q-00000000"},
			{`[1]`, "not a valid JSON object"},
		} {
			reqs := turn(t, path, "pay-bad", webtest.Call("p1", "collect_payment", tc.args))
			if out := payResult(t, reqs[1]); out["success"] != false || !strings.Contains(out["summary"].(string), tc.want) {
				t.Errorf("%s: %v, want %q", tc.args, out, tc.want)
			}
		}
		if len(stripe.Received()) != calls {
			t.Errorf("bad arguments reached Stripe")
		}
		// A quote in a currency Stripe does not charge.
		b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/tools", other.Token, map[string]any{"name": "Quote", "description": "Price", "type": "GENERATE_QUOTE",
			"config": map[string]any{"currency": "XYZ", "items": []any{map[string]any{"name": "Thing", "unitPrice": 3, "currency": "XYZ"}}}})
		b.MustDo(t, 200, "PUT", "/tenants/"+other.Slug+"/integrations/payments", other.Token, map[string]any{"secretKey": webtest.OtherStripeKey})
		reqs := turn(t, "/chat/"+other.Slug, "pay-xyz", webtest.Call("q1", "quote", `{"items":[{"name":"Thing","quantity":1}]}`), webtest.Call("p1", "collect_payment", `{}`))
		if out := payResult(t, reqs[1]); out["success"] != false || !strings.Contains(out["summary"].(string), "XYZ, a currency Stripe cannot charge") {
			t.Errorf("quote in XYZ: %v", out)
		}
		// Another tenant's session of the same id sees none of ten's quotes.
		reqs = turn(t, "/chat/"+other.Slug, "pay-quote", webtest.Call("p1", "collect_payment", `{}`))
		if out := payResult(t, reqs[1]); out["success"] != false || !strings.Contains(out["summary"].(string), "no quote") {
			t.Errorf("another tenant's quote was charged: %v", out)
		}
	})

	t.Run("StripeErrors", func(t *testing.T) {
		for _, tc := range []struct {
			fail func()
			want string
		}{
			{func() {
				stripe.FailNext(401, "invalid_request_error", "", "Invalid API Key provided: "+webtest.StripeTestKey)
			}, "refused the connection"},
			{func() { stripe.FailNext(429, "rate_limit_error", "rate_limit", "Too many requests") }, "too many requests"},
			{func() { stripe.FailNext(402, "card_error", "card_declined", "Your card was declined.") }, "Stripe refused it (Your card was declined.)"},
			{func() { stripe.FailNext(500, "api_error", "", "Something went wrong on Stripe's end.") }, "Stripe is unavailable"},
			{func() { stripe.SetDelay(time.Second) }, "did not answer in time"},
		} {
			tc.fail()
			reqs := turn(t, path, "pay-err", webtest.Call("p1", "collect_payment", `{}`))
			stripe.SetDelay(0)
			out := payResult(t, reqs[1])
			if out["success"] != false || !strings.Contains(out["summary"].(string), tc.want) {
				t.Errorf("%s: %v", tc.want, out)
			}
			if strings.Contains(webtest.ToJSON(out), "51FakeKey") {
				t.Errorf("%s: the key reached the model: %v", tc.want, out)
			}
		}
		if n := b.Count(t, `SELECT count(*) FROM tool_history WHERE input::text LIKE '%51FakeKey%' OR result::text LIKE '%51FakeKey%'`); n != 0 {
			t.Errorf("the key is in the tool history")
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE result::text LIKE '%51FakeKey%' OR input::text LIKE '%51FakeKey%'`); n != 0 {
			t.Errorf("the key is in a submission")
		}
		if !strings.Contains(logs.String(), "tool failed") {
			t.Errorf("the failures were not logged")
		}
		if strings.Contains(logs.String(), "51FakeKey") {
			t.Errorf("the key is in the logs")
		}
	})

	t.Run("PausedAndVoice", func(t *testing.T) {
		b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug+"/integrations/payments", ten.Token, map[string]any{"isActive": false})
		model.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(model.Requests())
		b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "pay-paused"}, webtest.AgentHeaders)
		if offered(model.Requests()[n], "collect_payment") {
			t.Errorf("collect_payment offered while paused")
		}
		b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug+"/integrations/payments", ten.Token, map[string]any{"isActive": true})

		// A voice turn, as the voice channel runs it: the same engine.
		ctx := context.Background()
		tenant, err := b.DB.TenantBySlug(ctx, ten.Slug)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := b.DB.DefaultSegment(ctx, tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, channel := range []string{parley.ChannelVoice, parley.ChannelWeb} {
			model.Push(llmtest.Turn{Text: []string{"Hello."}})
			n := len(model.Requests())
			in := &agent.TurnInput{Tenant: tenant, Segment: seg, SessionID: "pay-" + channel, Message: "Can I pay now?",
				Channel: channel, VisitorType: parley.VisitorHuman}
			if _, err := b.Srv.Base.Engine.Reply(ctx, in, func(llm.Event) {}); err != nil {
				t.Fatal(err)
			}
			if got := offered(model.Requests()[n], "collect_payment"); got != (channel != parley.ChannelVoice) {
				t.Errorf("%s: collect_payment offered %v", channel, got)
			}
		}
	})
}
