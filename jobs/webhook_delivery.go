package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/webhooks"
)

// DeliveryTimeout bounds one delivery attempt, response included.
const DeliveryTimeout = 5 * time.Second

// RetryDelays are the waits after each failed attempt: six attempts in all,
// spread over about eight hours.
var RetryDelays = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour}

// DeliveryClient is the HTTP client of deliveries: SSRF-guarded, bounded by
// timeout (DeliveryTimeout in production), keeping an idle connection per
// worker to a busy receiver, and not following redirects. A 3xx is a failed
// attempt: a redirected POST would arrive as a GET without its body, and an
// endpoint that moved should be updated by its owner, who sees "HTTP 301" in
// the deliveries log.
func DeliveryClient(guard *outbound.Guard, timeout time.Duration) *http.Client {
	c := guard.PooledClient(timeout, WebhookWorkers)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// maxErrorLen bounds the last error stored with a delivery.
const maxErrorLen = 500

// WebhookDeliveryWorker makes one attempt of a delivery per job run; River
// runs the job again on the retry schedule until an attempt succeeds or the
// attempts are spent.
type WebhookDeliveryWorker struct {
	river.WorkerDefaults[deliveryargs.Args]
	DB     *db.DB
	Box    *auth.Box
	Client *http.Client // bounded by the attempt's timeout; SSRF-guarded
	Logger *slog.Logger
	// Now is the clock of signatures and of the retry schedule; nil is time.Now.
	Now func() time.Time
	// DeliveryTimeout bounds one attempt, response included; 0 means
	// DeliveryTimeout.
	DeliveryTimeout time.Duration
	// RetryDelays are the waits after each failed attempt, the last one
	// repeated; empty means RetryDelays.
	RetryDelays []time.Duration
	// Observer is told each attempt's outcome; nil observes nothing.
	Observer DeliveryObserver
}

func (w *WebhookDeliveryWorker) deliveryTimeout() time.Duration {
	if w.DeliveryTimeout > 0 {
		return w.DeliveryTimeout
	}
	return DeliveryTimeout
}

// retryDelay is the wait after failed attempt number attempt (1-based).
func (w *WebhookDeliveryWorker) retryDelay(attempt int) time.Duration {
	delays := w.RetryDelays
	if len(delays) == 0 {
		delays = RetryDelays
	}
	return delays[min(max(attempt, 1), len(delays))-1]
}

func (w *WebhookDeliveryWorker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Timeout leaves the attempt's own bound (5 s in production) twice as long
// again to record the outcome.
func (w *WebhookDeliveryWorker) Timeout(*river.Job[deliveryargs.Args]) time.Duration {
	return 3 * w.deliveryTimeout()
}

// NextRetry follows the delivery schedule rather than River's default.
func (w *WebhookDeliveryWorker) NextRetry(job *river.Job[deliveryargs.Args]) time.Time {
	return w.now().Add(w.retryDelay(job.Attempt))
}

// Work attempts the delivery once.
func (w *WebhookDeliveryWorker) Work(ctx context.Context, job *river.Job[deliveryargs.Args]) error {
	d, err := w.DB.DeliveryForAttempt(ctx, job.Args.DeliveryID)
	if errors.Is(err, webhooks.ErrDeliveryGone) {
		return nil // its endpoint or submission was deleted: nothing to send
	}
	if err != nil {
		return err
	}
	if d.Status != webhooks.DeliveryPending {
		return nil // dropped, or already settled by another run
	}
	if !d.EndpointEnabled {
		return w.DB.DropDelivery(ctx, d.ID)
	}
	secret, err := w.Box.Open(d.SecretSealed)
	if err != nil {
		// The service's key changed: no attempt can ever succeed.
		w.record(ctx, job, d.ID, w.now(), nil, "signing secret cannot be opened with the service's key", true)
		return nil
	}
	body, err := RedactPayload(d.Payload, d.PIIFields)
	if err != nil {
		w.record(ctx, job, d.ID, w.now(), nil, "stored payload is not valid JSON", true)
		return nil
	}
	at := w.now()
	// Counted before the request goes out, so that an attempt cut short
	// (a crash, a shutdown) still shows in the log.
	if err := w.DB.StartDeliveryAttempt(ctx, d.ID, at); err != nil {
		return err
	}
	status, sendErr := w.send(ctx, d, secret, body, at)
	if sendErr == nil {
		w.observe(DeliveryDelivered)
		w.recordCounted(ctx, job, d.ID, at, &status, "", false)
		return nil
	}
	var hs *int
	if status != 0 {
		hs = &status
	}
	final := job.Attempt >= job.MaxAttempts
	if final {
		w.observe(DeliveryFailed)
	} else {
		w.observe(DeliveryRetrying)
	}
	if err := w.recordCounted(ctx, job, d.ID, at, hs, sendErr.Error(), final); err != nil {
		return err
	}
	if final {
		return nil // failed: stays inspectable, redeliver queues it again
	}
	return sendErr // River schedules the next attempt with NextRetry
}

// record counts an attempt that sent nothing and stores its outcome; final
// says the failed attempt (errMsg set) was the delivery's last.
func (w *WebhookDeliveryWorker) record(ctx context.Context, job *river.Job[deliveryargs.Args], id string, at time.Time,
	status *int, errMsg string, final bool) error {
	return w.store(ctx, job, id, webhooks.DeliveryAttempt{At: at, HTTPStatus: status, Error: truncateError(errMsg), Succeeded: errMsg == "", Final: final})
}

// recordCounted stores the outcome of an attempt StartDeliveryAttempt counted.
func (w *WebhookDeliveryWorker) recordCounted(ctx context.Context, job *river.Job[deliveryargs.Args], id string, at time.Time,
	status *int, errMsg string, final bool) error {
	return w.store(ctx, job, id, webhooks.DeliveryAttempt{At: at, HTTPStatus: status, Error: truncateError(errMsg), Succeeded: errMsg == "",
		Final: final, Counted: true})
}

// store writes an attempt's outcome, with the next attempt's time after a
// failure that is not the last.
func (w *WebhookDeliveryWorker) store(ctx context.Context, job *river.Job[deliveryargs.Args], id string, a webhooks.DeliveryAttempt) error {
	if a.Error != "" && !a.Final {
		// From now, as NextRetry reckons River's schedule once Work returns,
		// not from the attempt's start: a slow receiver would else show a
		// next attempt up to the attempt's timeout earlier than River's.
		next := w.now().Add(w.retryDelay(job.Attempt))
		a.NextAt = &next
	}
	err := w.DB.RecordDeliveryAttempt(ctx, id, a)
	if err != nil && w.Logger != nil {
		w.Logger.Error("recording webhook delivery attempt", "delivery", id, "err", err)
	}
	return err
}

// send POSTs body, signed at at; it returns the HTTP status (0 when none came)
// and an error for anything but a 2xx.
func (w *WebhookDeliveryWorker) send(ctx context.Context, d webhooks.OutgoingDelivery, secret, body []byte, at time.Time) (int, error) {
	timeout := w.deliveryTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := outbound.NewSignedPost(ctx, d.URL, d.Event, secret, at, body)
	if err != nil {
		return 0, fmt.Errorf("invalid endpoint URL: %v", err)
	}
	req.Header.Set("User-Agent", "Parley-Webhooks/1")
	req.Header.Set("X-Service-Delivery-Id", d.ID)
	resp, err := w.Client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return 0, fmt.Errorf("timed out after %s", timeout)
		}
		return 0, errors.New(outbound.Classify(err, req.URL.Hostname()).Error())
	}
	defer resp.Body.Close()
	snippet, readErr := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp.StatusCode, nil
	}
	msg := "HTTP " + strconv.Itoa(resp.StatusCode)
	if s := strings.TrimSpace(string(snippet)); s != "" && readErr == nil && utf8.ValidString(s) {
		msg += ": " + s
	}
	return resp.StatusCode, errors.New(msg)
}

func truncateError(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	s = s[:maxErrorLen]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// RedactPayload returns the body to send: the stored payload with the
// endpoint's piiFields removed from data.input and, when any are set, what
// was said in the conversation removed entirely (a submission's
// data.messages, a message.created event's data.content). The stored
// payload is not changed.
func RedactPayload(payload []byte, piiFields []string) ([]byte, error) {
	if len(piiFields) == 0 {
		if !json.Valid(payload) {
			return nil, errors.New("invalid payload")
		}
		return payload, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(p["data"], &data); err != nil {
		return nil, err
	}
	delete(data, "messages")
	if string(p["event"]) == `"`+webhooks.EventMessageCreated+`"` {
		delete(data, "content")
	}
	var input map[string]json.RawMessage
	if raw, ok := data["input"]; ok && json.Unmarshal(raw, &input) == nil && input != nil {
		for _, f := range piiFields {
			delete(input, f)
		}
		b, err := json.Marshal(input)
		if err != nil {
			return nil, err
		}
		data["input"] = b
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	p["data"] = b
	return json.Marshal(p)
}
