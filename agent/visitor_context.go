package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/parley/parley/agent/outbound"
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

// FetchVisitorContext asks the tenant's context webhook what its systems
// know about the visitor: a POST of q, signed like the service's other
// calls to tenants (X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
// "<t>.<body>"> keyed with the visitor signing key), answered by a 2xx with
// {"context": string}. client must be the SSRF-guarded one, the URL being
// the tenant's.
func FetchVisitorContext(ctx context.Context, client *http.Client, url string, key []byte, now time.Time, q VisitorContextQuery) (string, error) {
	q.Timestamp = now.UTC().Format(time.RFC3339)
	body, err := json.Marshal(q)
	if err != nil {
		return "", fmt.Errorf("encoding the context query: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, VisitorContextTimeout)
	defer cancel()
	req, err := outbound.NewSignedPost(ctx, url, VisitorContextEvent, key, now, body)
	if err != nil {
		return "", fmt.Errorf("context webhook: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("context webhook: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxVisitorContextBody))
	if err != nil {
		return "", fmt.Errorf("context webhook: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("context webhook answered HTTP %d", resp.StatusCode)
	}
	var answer struct {
		Context *string `json:"context"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.Context == nil {
		return "", fmt.Errorf("context webhook: the answer is not a JSON object with a context string")
	}
	return *answer.Context, nil
}
