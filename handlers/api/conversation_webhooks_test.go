package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/webtest"
)

// receivedHook is one request a test receiver got.
type receivedHook struct {
	header http.Header
	body   []byte
}

// hookReceiver is a receiver of webhooks on 127.0.0.1, answering 204; it
// returns the URL to register (host hooks.test, which WebhookHosts resolves
// to it) and the requests it gets.
func hookReceiver(t *testing.T) (string, <-chan receivedHook) {
	t.Helper()
	got := make(chan receivedHook, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- receivedHook{r.Header.Clone(), body}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(receiver.URL, "http://"))
	return "http://hooks.test:" + port + "/hook", got
}

// verifySignature checks a delivery as the document tells a receiver to:
// X-Service-Signature is t=<unix seconds>,v1=<hex>, v1 the hex HMAC-SHA256
// of "<t>.<raw body>" keyed with the secret as shown (whsec_ included),
// compared in constant time, and t within 300 seconds of now.
func verifySignature(secret string, h http.Header, body []byte, now time.Time) error {
	parts := strings.Split(h.Get("X-Service-Signature"), ",")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "t=") || !strings.HasPrefix(parts[1], "v1=") {
		return fmt.Errorf("malformed signature %q", h.Get("X-Service-Signature"))
	}
	ts, err := strconv.ParseInt(strings.TrimPrefix(parts[0], "t="), 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if math.Abs(float64(now.Unix()-ts)) > 300 {
		return fmt.Errorf("timestamp %d is more than 300 s from now", ts)
	}
	got, err := hex.DecodeString(strings.TrimPrefix(parts[1], "v1="))
	if err != nil {
		return fmt.Errorf("v1: %w", err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.%s", ts, body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("v1 does not verify")
	}
	return nil
}

// TestConversationWebhooks: an integrator subscribed to a conversation's
// events hears, signed as documented, that a person took the conversation
// by replying, and what they wrote; an endpoint subscribed to submissions
// only hears nothing of it.
func TestConversationWebhooks(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	w := newWebhookAPI(t, b)
	_, _, schema := webtest.OpenAPIHarness(t, b)
	ctx := context.Background()
	hookURL, got := hookReceiver(t)
	ep, secret := w.create(t, map[string]any{"url": hookURL,
		"events": []string{"conversation.taken", "message.created", "conversation.closed"}})
	submissionsOnly, _ := w.create(t, map[string]any{"url": "https://public.test/submissions",
		"events": []string{"submission.created", "submission.updated"}})

	page := "https://shop.example/pricing"
	conv, _, _, err := b.DB.StartTurn(ctx, parley.ConversationStart{TenantID: w.ten.ID, SessionID: "hooks-1", Channel: parley.ChannelWeb,
		Limit: 1000, PageURL: &page}, "Can a person help me?", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The reply of POST /tenants/{slug}/conversations/{id}/messages: a
	// person the integrator names, through the service the route calls.
	reply, _, err := b.Srv.Base.Manage.ReplyAsPerson(ctx, w.ten.ID, conv.ID,
		manage.PersonReplyInput{Content: "Hi, I'm Ana: happy to help.", AuthorName: "Ana"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	if ds, _ := w.deliveries(t, submissionsOnly["id"].(string), ""); len(ds) != 0 {
		t.Errorf("an endpoint subscribed to submissions got %v", ds)
	}
	ds, _ := w.deliveries(t, ep["id"].(string), "")
	if len(ds) != 2 {
		t.Fatalf("deliveries: %v", ds)
	}
	now := time.Now()
	worker := &jobs.WebhookDeliveryWorker{DB: b.DB, Box: b.Box, Client: b.Srv.Base.Outbound.Client(jobs.DeliveryTimeout), Now: func() time.Time { return now }}
	byEvent := map[string]map[string]any{}
	for _, d := range ds {
		id := webtest.Obj(d)["id"].(string)
		job := &river.Job[deliveryargs.Args]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 6}, Args: deliveryargs.Args{DeliveryID: id}}
		if err := worker.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if err := verifySignature(secret, r.header, r.body, time.Now()); err != nil {
			t.Errorf("delivery %s: %v", id, err)
		}
		if err := verifySignature("whsec_"+strings.Repeat("0", 64), r.header, r.body, time.Now()); err == nil {
			t.Error("another secret verifies the delivery")
		}
		if err := verifySignature(secret, r.header, append(r.body, ' '), time.Now()); err == nil {
			t.Error("a changed body verifies")
		}
		event := r.header.Get("X-Service-Event")
		if r.header.Get("X-Service-Delivery-Id") != id || event != webtest.Obj(d)["event"] {
			t.Errorf("headers %v of delivery %v", r.header, d)
		}
		var payload map[string]any
		if err := json.Unmarshal(r.body, &payload); err != nil || payload["event"] != event {
			t.Fatalf("body %s: %v", r.body, err)
		}
		byEvent[event] = payload
	}

	taken := byEvent["conversation.taken"]
	if err := schema("ConversationTakenEvent").VisitJSON(taken); err != nil {
		t.Errorf("conversation.taken does not fit the document: %v", err)
	}
	webtest.DocumentedKeys(t, "conversation.taken", schema("ConversationEvent"), taken)
	if d := webtest.Obj(taken["data"]); d["id"] != conv.ID || d["sessionId"] != "hooks-1" || d["status"] != "HUMAN" || d["previousStatus"] != "BOT" ||
		d["assignee"] != "Ana" || d["takenAt"] == nil || d["pageUrl"] != "https://shop.example/pricing" || d["channel"] != "web" {
		t.Errorf("conversation.taken data %v", d)
	}
	msg := byEvent["message.created"]
	if err := schema("MessageCreatedEvent").VisitJSON(msg); err != nil {
		t.Errorf("message.created does not fit the document: %v", err)
	}
	webtest.DocumentedKeys(t, "message.created", schema("MessageCreatedEvent"), msg)
	if d := webtest.Obj(msg["data"]); d["id"] != reply.ID || d["conversationId"] != conv.ID || d["role"] != "human" ||
		d["content"] != "Hi, I'm Ana: happy to help." || d["authorName"] != "Ana" || webtest.Obj(d["conversation"])["status"] != "HUMAN" {
		t.Errorf("message.created data %v", d)
	}
	if ds, _ := w.deliveries(t, ep["id"].(string), "?status=succeeded"); len(ds) != 2 {
		t.Errorf("succeeded deliveries: %v", ds)
	}
}
