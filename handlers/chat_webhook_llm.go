package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
)

// checkSignedCallURL refuses a tenant endpoint the service calls with
// requests signed by the visitor signing key (the reply endpoint, the
// context webhook) when it must not call it: credentials in the URL, plain
// http to a host the operator did not exempt (PARLEY_SSRF_ALLOW), or a host
// that is or resolves to a private or reserved address. Length and shape
// were checked with the other fields.
func (h *Handler) checkSignedCallURL(ctx context.Context, errs parley.FieldErrors, field, raw string) {
	if _, bad := errs[field]; bad {
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		errs.Add(field, "must be an absolute URL such as https://example.com/path")
	case u.User != nil:
		errs.Add(field, "must not contain credentials; calls are signed with the visitor signing key")
	case h.plainHTTPRefused(ctx, u, raw):
		errs.Add(field, "must use https")
	default:
		h.checkOutboundURL(ctx, errs, field, raw)
	}
}

// webhookLLM returns the provider that calls the tenant's reply endpoint for
// this turn, or nil when the tenant has none. Calls are signed with the
// tenant's visitor signing key and go through the SSRF-guarded client.
func (h *Handler) webhookLLM(turn *chatTurn) (agent.Provider, error) {
	t := turn.tenant
	if t.LLMWebhookURL == nil || *t.LLMWebhookURL == "" {
		return nil, nil
	}
	if h.Outbound == nil || h.Box == nil {
		return nil, errors.New("no outbound client or secret box for the reply webhook")
	}
	key, err := h.Box.Open(t.VisitorSigningKey)
	if err != nil {
		return nil, fmt.Errorf("opening the visitor signing key: %w", err)
	}
	wt := agent.WebhookTurn{
		Tenant: t.Slug, SessionID: turn.req.SessionID, ConversationID: turn.conv.ID, Message: turn.req.Message,
		Locale: turn.locale, Segment: turn.segment.Slug, PageURL: turn.req.PageURL,
	}
	if v := turn.visitor; v != nil {
		wt.Visitor = &agent.WebhookVisitor{ID: v.ID, ExternalID: v.ExternalID, Email: v.Email, DisplayName: v.DisplayName}
	}
	return agent.NewWebhookLLM(agent.WebhookLLMConfig{
		URL: *t.LLMWebhookURL, Key: key, HTTPClient: h.Outbound.Client(agent.WebhookLLMTimeout), Now: h.Now, Turn: wt,
	}), nil
}
