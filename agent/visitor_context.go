package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/tools"
)

// VisitorContextTimeout bounds a call to a tenant's context webhook. It is
// made for every message, while the message waits for its session and is
// stored, so it delays the answer only when the endpoint is slower than that.
const VisitorContextTimeout = 3 * time.Second

// VisitorContextEvent is the X-Service-Event of a context webhook call.
const VisitorContextEvent = "visitor.context"

// maxVisitorContextBody bounds what is read of a context webhook's answer;
// the prompt keeps at most VisitorContextCap characters of it.
const maxVisitorContextBody = 64 << 10

// VisitorContextQuery is the body POSTed to a tenant's visitorContextUrl:
// who is writing, as far as the service knows (null when unknown), and
// whether a visitor token proved it.
type VisitorContextQuery struct {
	Email      *string `json:"email"`
	ExternalID *string `json:"externalId"`
	VisitorID  *string `json:"visitorId"`
	Verified   bool    `json:"verified"`
	Timestamp  string  `json:"timestamp"`
}

// VisitorContextAnswer is a context webhook's answer: the context for the
// prompt, and optionally a challenge (a second factor) for the visitor.
type VisitorContextAnswer struct {
	Context   string
	Challenge *tools.Challenge
}

// FetchVisitorContext asks the tenant's context webhook what its systems
// know about the visitor: a POST of q, signed like the service's other
// calls signed with the visitor signing key (outbound.NewSignedPostBody:
// X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">,
// v0=<hex HMAC-SHA256 of the body>), answered by a 2xx with
// {"context": string, "challenge"?: object}. client must be the
// SSRF-guarded one, the URL being the tenant's. A challenge is returned as
// received: the caller checks it.
func FetchVisitorContext(ctx context.Context, client *http.Client, url string, key []byte, now time.Time, q VisitorContextQuery) (VisitorContextAnswer, error) {
	status, raw, err := CallVisitorContext(ctx, client, url, key, now, q)
	if err != nil {
		return VisitorContextAnswer{}, fmt.Errorf("context webhook: %w", err)
	}
	if status/100 != 2 {
		return VisitorContextAnswer{}, fmt.Errorf("context webhook answered HTTP %d", status)
	}
	got, err := ParseVisitorContext(raw)
	if err != nil {
		return VisitorContextAnswer{}, fmt.Errorf("context webhook: %w", err)
	}
	return got, nil
}

// CallVisitorContext makes the context webhook's call, signed and bounded
// by VisitorContextTimeout, and returns the status and the first 64 KiB of
// the answer, whatever the status: FetchVisitorContext's call, which the
// dashboard's "Send test" makes too.
func CallVisitorContext(ctx context.Context, client *http.Client, url string, key []byte, now time.Time, q VisitorContextQuery) (int, []byte, error) {
	q.Timestamp = now.UTC().Format(time.RFC3339)
	body, err := json.Marshal(q)
	if err != nil {
		return 0, nil, fmt.Errorf("encoding the context query: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, VisitorContextTimeout)
	defer cancel()
	req, err := outbound.NewSignedPostBody(ctx, url, VisitorContextEvent, key, now, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxVisitorContextBody))
	if err != nil {
		return resp.StatusCode, raw, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, raw, nil
}

// ParseVisitorContext reads a context webhook's 2xx answer.
func ParseVisitorContext(raw []byte) (VisitorContextAnswer, error) {
	var answer struct {
		Context   *string         `json:"context"`
		Challenge json.RawMessage `json:"challenge"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.Context == nil {
		return VisitorContextAnswer{}, errors.New("the answer is not a JSON object with a context string")
	}
	got := VisitorContextAnswer{Context: *answer.Context}
	if len(answer.Challenge) > 0 && string(answer.Challenge) != "null" {
		got.Challenge = &tools.Challenge{}
		// A challenge that does not decode stays empty, and the caller's
		// check refuses it; the context stands.
		_ = json.Unmarshal(answer.Challenge, got.Challenge)
	}
	return got, nil
}
