package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools"
)

// toolDeps binds the tool executors to the turn's tenant, segment, visitor
// and conversation.
func (e *Engine) toolDeps(t *turn, tt TurnTools) tools.Deps {
	in := t.in
	tenant := in.Tenant
	deps := tools.Deps{
		Products: storeProducts{store: e.Store, tenantID: tenant.ID},
		EscalationContext: map[string]any{
			"conversationId": t.conv.ID, "sessionId": in.SessionID, "pageUrl": in.PageURL,
		},
		Now:    e.Now,
		Tracer: e.tracer(),
		EscalatorFor: func(tool parley.Tool) tools.Escalator {
			if tool.WebhookURL == nil || *tool.WebhookURL == "" || e.Outbound == nil {
				return nil
			}
			var secret []byte
			if len(tool.WebhookSecret) > 0 && e.Secrets != nil {
				s, err := e.Secrets.Open(tool.WebhookSecret)
				if err != nil {
					in.logger(e).Error("cannot open an escalation webhook secret", "tool", tool.ID, "err", err)
					return nil
				}
				secret = s
			}
			return tools.WebhookEscalator{URL: *tool.WebhookURL, Secret: secret, Client: e.Outbound.Client(escalationTimeout), Now: e.Now}
		},
	}
	if in.Channel != parley.ChannelVoice {
		deps.TeamAway = func(ctx context.Context) bool { return e.teamAway(ctx, t) }
	}
	if in.memoryAllowed() {
		deps.Memory = storeMemory{store: e.Store, tenantID: tenant.ID, visitorID: in.Visitor.ID}
	}
	if in.Visitor != nil {
		deps.EscalationContext["visitorId"] = in.Visitor.ID
	}
	if tt.Explore {
		deps.Corpus = storeCorpus{store: e.Store, tenantID: tenant.ID, segmentID: in.Segment.ID, locale: in.Locale, synonyms: t.reads.Synonyms}
	}
	if tt.OTP {
		deps.Codes = &tools.CodeVerification{Store: e.Verification, Mailer: e.Mailer, TenantID: tenant.ID,
			ConversationID: t.conv.ID, BotName: promptDeref(tenant.BotName)}
		if deps.Codes.BotName == "" {
			deps.Codes.BotName = tenant.Name
		}
	}
	if tt.Calendar {
		c := t.reads.calendar
		conn, err := dialCalendar(c, e.Secrets, e.Outbound.Client(caldav.Timeout))
		if err != nil {
			in.logger(e).Error("opening the calendar connector", "err", err)
		} else {
			deps.Calendar = &tools.CalendarBooking{Store: e.Calendar, Server: conn, Path: c.CalendarURL, Hours: c.OfficeHours,
				Loc: tools.TenantLocation(tenant.Timezone), TenantID: tenant.ID, BotName: cmp.Or(promptDeref(tenant.BotName), tenant.Name)}
		}
	}
	if tt.Challenge != nil && e.Outbound != nil && e.Secrets != nil {
		key, err := e.Secrets.Open(tenant.VisitorSigningKey)
		if err != nil {
			in.logger(e).Error("opening the visitor signing key for a challenge", "err", err)
		} else {
			deps.Challenge = &tools.ChallengeVerification{Store: e.Verification, Challenge: *tt.Challenge,
				Client: e.Outbound.Client(tools.ChallengeTimeout), Key: key, TenantID: tenant.ID,
				ConversationID: t.conv.ID, SessionID: in.SessionID, Visitor: in.claimedVisitor()}
		}
	}
	if tt.Payment && t.reads.payment != nil && e.Secrets != nil {
		key, err := e.Secrets.Open(t.reads.payment.SealedKey)
		if err != nil {
			in.logger(e).Error("opening the payment connector's key", "err", err)
		} else {
			deps.Payment = &tools.PaymentCollection{Stripe: e.Stripe, Store: e.Payments, Connector: *t.reads.payment,
				Key: string(key), TenantID: tenant.ID, ConversationID: t.conv.ID}
		}
	}
	return deps
}

// dialCalendar opens the connector's calendar for a turn: the password is
// unsealed, requests go through client.
func dialCalendar(c *parley.CalendarConnector, secrets Secrets, client *http.Client) (*caldav.Client, error) {
	password, err := secrets.Open(c.SealedPassword)
	if err != nil {
		return nil, fmt.Errorf("opening the calendar password: %w", err)
	}
	return caldav.Dial(client, c.ServerURL, c.Username, string(password))
}

// replyEndpoint returns the provider that calls the tenant's reply endpoint
// for this turn, or nil when the tenant has none. Calls are signed with the
// tenant's visitor signing key and go through the SSRF-guarded client.
func (e *Engine) replyEndpoint(t *turn) (llm.Provider, error) {
	in := t.in
	tenant := in.Tenant
	if tenant.LLMWebhookURL == nil || *tenant.LLMWebhookURL == "" {
		return nil, nil
	}
	if e.Outbound == nil || e.Secrets == nil {
		return nil, errors.New("no outbound client or secrets for the reply endpoint")
	}
	key, err := e.Secrets.Open(tenant.VisitorSigningKey)
	if err != nil {
		return nil, fmt.Errorf("opening the visitor signing key: %w", err)
	}
	wt := llm.WebhookTurn{
		Tenant: tenant.Slug, SessionID: in.SessionID, ConversationID: t.conv.ID, Message: in.Message,
		Locale: in.Locale, Segment: in.Segment.Slug, PageURL: in.PageURL,
	}
	if v := in.claimedVisitor(); v != nil {
		wt.Visitor = &llm.WebhookVisitor{ID: v.ID, ExternalID: v.ExternalID, Email: v.Email, DisplayName: v.DisplayName}
	}
	return llm.NewWebhook(llm.WebhookConfig{
		URL: *tenant.LLMWebhookURL, Key: key, HTTPClient: e.Outbound.Client(llm.WebhookTimeout), Now: e.Now, Turn: wt,
	}), nil
}

// storeMemory is REMEMBER_FACT's store for one visitor.
type storeMemory struct {
	store               Store
	tenantID, visitorID string
}

func (m storeMemory) Remember(ctx context.Context, key, value string) error {
	_, err := m.store.UpsertMemory(ctx, m.tenantID, m.visitorID, key, value)
	return err
}

// storeProducts is RECOMMEND_PRODUCT's search of the tenant's active catalog.
type storeProducts struct {
	store    Store
	tenantID string
}

func (p storeProducts) Search(ctx context.Context, query string, limit int) ([]tools.Product, error) {
	found, err := p.store.SearchProducts(ctx, p.tenantID, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]tools.Product, len(found))
	for i, f := range found {
		out[i] = tools.Product{ID: f.ID, Name: f.Name, Description: promptDeref(f.Description), Price: f.Price,
			Currency: promptDeref(f.Currency), URL: promptDeref(f.URL), ImageURL: promptDeref(f.ImageURL)}
	}
	return out, nil
}

// storeCorpus is explore_corpus's reader of the segment's entries, with
// the tenant's synonyms.
type storeCorpus struct {
	store                       Store
	tenantID, segmentID, locale string
	synonyms                    [][]string
}

func (c storeCorpus) Explore(ctx context.Context, query string, limit int) ([]llm.Passage, error) {
	entries, err := c.store.ExploreCorpus(ctx, c.tenantID, c.segmentID, c.locale, query, c.synonyms, limit)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Passage, len(entries))
	for i, e := range entries {
		out[i] = llm.Passage{Title: e.Title, Content: e.Content}
	}
	return out, nil
}
