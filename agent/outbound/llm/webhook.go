package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/parley/parley/agent/outbound"
)

// WebhookEvent is the X-Service-Event and `event` of a call to a tenant's
// reply endpoint.
const WebhookEvent = "chat.message"

// WebhookTimeout bounds a whole call to a tenant's reply endpoint.
const WebhookTimeout = 30 * time.Second

// webhookLLMHistory is how many user and assistant turns a call carries.
const webhookLLMHistory = 20

// webhookLLMMaxReply bounds the answer read from a reply endpoint.
const webhookLLMMaxReply = 1 << 20

// WebhookTurn is what a reply endpoint is told about the message beyond the
// request's messages and passages.
type WebhookTurn struct {
	Tenant         string // the tenant's slug
	SessionID      string
	ConversationID string
	Message        string // the visitor's latest message
	Visitor        *WebhookVisitor
	Locale         string // "" when unknown
	Segment        string // the segment's slug
	PageURL        string // "" when unknown
}

// WebhookVisitor is the visitor of a turn, as a reply endpoint sees it.
type WebhookVisitor struct {
	ID          string  `json:"id"`
	ExternalID  *string `json:"externalId"`
	Email       *string `json:"email"`
	DisplayName *string `json:"displayName"`
}

// WebhookConfig configures a tenant's reply endpoint as a provider.
type WebhookConfig struct {
	URL string
	// Key signs each call (X-Service-Signature); it is the tenant's visitor
	// signing key, unsealed.
	Key []byte
	// HTTPClient sends the call; the URL is the tenant's, so it must be the
	// SSRF-guarded client, (*outbound.Guard).Client.
	HTTPClient *http.Client
	Timeout    time.Duration    // 0: WebhookTimeout
	Now        func() time.Time // nil: time.Now
	Turn       WebhookTurn
}

// Webhook is the provider of a tenant that answers chat with its own
// backend: one signed POST per message, whose JSON answer's `reply` (or
// `message`) is the agent's answer. It never calls tools and ignores the
// system prompt: the tenant's backend decides what to say.
type Webhook struct {
	cfg WebhookConfig
}

// NewWebhook builds the provider for one chat message.
func NewWebhook(cfg WebhookConfig) *Webhook {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = WebhookTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Webhook{cfg: cfg}
}

// Name returns "webhook".
func (p *Webhook) Name() string { return "webhook" }

// Model returns "": a reply endpoint names no model.
func (p *Webhook) Model() string { return "" }

// webhookLLMBody is the JSON a reply endpoint receives.
type webhookLLMBody struct {
	Event          string             `json:"event"`
	Tenant         string             `json:"tenant"`
	SessionID      string             `json:"sessionId"`
	ConversationID string             `json:"conversationId"`
	Message        string             `json:"message"`
	Messages       []webhookLLMTurn   `json:"messages"`
	Visitor        *WebhookVisitor    `json:"visitor"`
	Locale         *string            `json:"locale"`
	Segment        string             `json:"segment"`
	PageURL        *string            `json:"pageUrl"`
	Passages       []webhookLLMSource `json:"passages"`
}

type webhookLLMTurn struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

type webhookLLMSource struct {
	Title   string `json:"title"`
	Content string `json:"content"`
	// Ref is the passage's citation marker: a reply that writes "[ref]"
	// after a sentence cites it (the marker is not shown to the visitor).
	Ref int `json:"ref,omitempty"`
}

// webhookLLMAnswer is what a reply endpoint answers; message is accepted as
// another name of reply.
type webhookLLMAnswer struct {
	Reply   *string `json:"reply"`
	Message *string `json:"message"`
}

// body returns the JSON the endpoint receives for req.
func (p *Webhook) body(req Request) ([]byte, error) {
	t := p.cfg.Turn
	b := webhookLLMBody{
		Event: WebhookEvent, Tenant: t.Tenant, SessionID: t.SessionID, ConversationID: t.ConversationID,
		Message: t.Message, Messages: []webhookLLMTurn{}, Visitor: t.Visitor, Segment: t.Segment,
		Passages: []webhookLLMSource{},
	}
	if t.Locale != "" {
		b.Locale = &t.Locale
	}
	if t.PageURL != "" {
		b.PageURL = &t.PageURL
	}
	for _, m := range req.Messages {
		if (m.Role == RoleUser || m.Role == RoleAssistant) && m.Content != "" {
			b.Messages = append(b.Messages, webhookLLMTurn{Role: m.Role, Content: m.Content})
		}
	}
	if n := len(b.Messages); n > webhookLLMHistory {
		b.Messages = b.Messages[n-webhookLLMHistory:]
	}
	if b.Message == "" && len(b.Messages) > 0 && b.Messages[len(b.Messages)-1].Role == RoleUser {
		b.Message = b.Messages[len(b.Messages)-1].Content
	}
	for _, s := range req.Passages {
		b.Passages = append(b.Passages, webhookLLMSource(s))
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encoding the reply webhook call: %w", err)
	}
	return body, nil
}

// Stream calls the endpoint and, when it answers, yields the reply as one
// text event, then done. Every failure comes back from Stream itself.
func (p *Webhook) Stream(ctx context.Context, req Request) (Stream, error) {
	reply, err := p.call(ctx, req)
	if err != nil {
		return nil, err
	}
	return func(yield func(Event, error) bool) {
		if yield(Event{Kind: EventText, Text: reply}, nil) {
			yield(Event{Kind: EventDone, StopReason: StopEnd}, nil)
		}
	}, nil
}

func (p *Webhook) call(ctx context.Context, req Request) (string, error) {
	body, err := p.body(req)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	hr, err := outbound.NewSignedPostBody(ctx, p.cfg.URL, WebhookEvent, p.cfg.Key, p.cfg.Now(), body)
	if err != nil {
		return "", &Error{Kind: Unreachable, Provider: p.Name(), Detail: "the reply endpoint URL is not valid", Err: err}
	}
	hr.Header.Set("Accept", "application/json")
	resp, err := p.cfg.HTTPClient.Do(hr)
	if err != nil {
		return "", transportError(ctx, p.Name(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, webhookLLMMaxReply+1))
	if err != nil {
		return "", transportError(ctx, p.Name(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", &Error{Kind: statusKind(resp.StatusCode), Provider: p.Name(), Status: resp.StatusCode,
			Err: fmt.Errorf("reply endpoint answered HTTP %d", resp.StatusCode)}
	}
	if len(raw) > webhookLLMMaxReply {
		return "", &Error{Kind: Upstream, Provider: p.Name(), Err: errors.New("reply endpoint answered more than 1 MiB")}
	}
	var ans webhookLLMAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return "", &Error{Kind: Upstream, Provider: p.Name(),
			Err: fmt.Errorf("reply endpoint answer is not a JSON object with a string reply: %w", err)}
	}
	for _, s := range []*string{ans.Reply, ans.Message} {
		if s != nil && strings.TrimSpace(*s) != "" {
			return *s, nil
		}
	}
	return "", &Error{Kind: Upstream, Provider: p.Name(), Err: errors.New("reply endpoint answered no reply")}
}
