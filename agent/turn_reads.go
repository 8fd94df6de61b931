package agent

import (
	"context"
	"sync"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/tools"
)

// promptReads is what the prompt and the tool registry of a turn are built
// from. None of it depends on the conversation, so it is read while the turn
// waits for its session's lease and stores the visitor's message: the
// store's reads in one round trip (Store.PromptData), the tenant's context
// webhook beside them.
type promptReads struct {
	wg sync.WaitGroup
	parley.PromptData
	// calendar is the tenant's calendar connector, read only when it has
	// one (readsCalendar); nil otherwise.
	calendar *parley.CalendarConnector
	// payment is the tenant's active payment connector, read off the voice
	// channel only; a failed read is logged and the turn goes on without it.
	payment *parley.PaymentConnector
	// mcpTools are the tenant's MCP server's tools; a failed discovery
	// leaves them empty and is logged: the chat goes on without them.
	mcpTools []mcpclient.Tool
	// visitorContext is the tenant's context webhook's answer; a failed
	// call leaves it empty and is logged: the chat goes on without it.
	visitorContext string
	// challenge is the context webhook's challenge, nil when none.
	challenge *tools.Challenge
	err       error
}

// readsCalendar says whether a turn with data reads the calendar
// connector: the tenant has one, and this engine can open its password and
// reach its server. That is the connector being active: CHECK_AVAILABILITY
// is offered then, whether or not a BOOK_MEETING tool is.
func (e *Engine) readsCalendar(data parley.PromptData) bool {
	return data.HasCalendar && e.Calendar != nil && e.Outbound != nil && e.Secrets != nil
}

// readsContext says whether readPrompt calls the tenant's context webhook
// for in: the tenant has one, and this engine can sign and send the call.
func (e *Engine) readsContext(in *TurnInput) bool {
	t := in.Tenant
	return t.VisitorContextURL != nil && *t.VisitorContextURL != "" && e.Outbound != nil && e.Secrets != nil
}

// readsMCP says whether readPrompt lists the tenant's MCP server's tools
// for in: the tenant has a server, and the turn may offer its tools (the
// tenant's reply endpoint, when it answers, runs no tools; a voice call is
// offered none of the MCP server's).
func (e *Engine) readsMCP(in *TurnInput) bool {
	t := in.Tenant
	replyEndpoint := in.LLM == nil && t.LLMWebhookURL != nil && *t.LLMWebhookURL != ""
	return mcpclient.Configured(t) && e.MCP != nil && !replyEndpoint && in.Channel != parley.ChannelVoice
}

// readsOutside says whether readPrompt calls the tenant's servers for in.
func (e *Engine) readsOutside(in *TurnInput) bool { return e.readsContext(in) || e.readsMCP(in) }

// readPrompt starts the reads of the turn's prompt data.
func (e *Engine) readPrompt(ctx context.Context, in *TurnInput) *promptReads {
	p := &promptReads{}
	t := in.Tenant
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.err = e.readStore(ctx, in, p)
	}()
	if e.readsContext(in) {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.visitorContext, p.challenge = e.visitorContext(ctx, in)
		}()
	}
	if e.readsMCP(in) {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			tools, err := e.MCP.Tools(ctx, t)
			if err != nil {
				if ctx.Err() == nil {
					in.logger(e).Warn("MCP server's tools not listed; answering without them", "err", err)
				}
				return
			}
			p.mcpTools = tools
		}()
	}
	return p
}

// ConfigCache is the store's side of the chat's configuration cache
// (TurnInput.CachedConfig), which db.DB implements: PromptData served from
// the cache when read at configuration version atLeast or later.
type ConfigCache interface {
	ChatPromptData(ctx context.Context, tenantID, segmentID, locale, visitorID string, limit int, atLeast int64) (parley.PromptData, error)
}

// readStore reads the store's part of the turn's prompt data into p: the
// prompt data (through the configuration cache when the turn may, as recent
// as the tenant's configuration), then the connectors the tenant has.
func (e *Engine) readStore(ctx context.Context, in *TurnInput, p *promptReads) error {
	t, seg := in.Tenant, in.Segment
	visitorID := ""
	if in.memoryAllowed() {
		visitorID = in.Visitor.ID
	}
	var err error
	if cc, ok := e.Store.(ConfigCache); ok && in.CachedConfig {
		p.PromptData, err = cc.ChatPromptData(ctx, t.ID, seg.ID, in.Locale, visitorID, PromptCorpusLimit, t.ConfigVersion)
	} else {
		p.PromptData, err = e.Store.PromptData(ctx, t.ID, seg.ID, in.Locale, visitorID, PromptCorpusLimit)
	}
	if err != nil {
		return err
	}
	// The connectors are read only by the tenants that have them (the
	// batch says which), after it: one round trip more for them, none
	// for the others.
	if e.readsCalendar(p.PromptData) {
		if p.calendar, err = e.Calendar.CalendarConnector(ctx, t.ID); err != nil {
			return err
		}
	}
	if p.HasPayment && e.Payments != nil && e.Stripe != nil && in.Channel != parley.ChannelVoice {
		var perr error
		if p.payment, perr = e.Payments.ActivePaymentConnector(ctx, t.ID); perr != nil && ctx.Err() == nil {
			in.logger(e).Warn("reading the payment connector; answering without payments", "err", perr)
		}
	}
	return nil
}

// wait returns once every read is done, with the store's error.
func (p *promptReads) wait() error {
	p.wg.Wait()
	return p.err
}

// visitorContext calls the tenant's context webhook for this message. The
// visitor's identity is sent only when the visitor may have memory (known,
// and verified when the tenant set a visitor auth mode): an id alone proves
// nothing, and the tenant's systems must not describe someone to whoever
// claims their id.
func (e *Engine) visitorContext(ctx context.Context, in *TurnInput) (string, *tools.Challenge) {
	t := in.Tenant
	key, err := e.Secrets.Open(t.VisitorSigningKey)
	if err != nil {
		in.logger(e).Error("opening the visitor signing key for the context webhook", "err", err)
		return "", nil
	}
	q := VisitorContextQuery{Verified: in.Verified}
	if v := in.claimedVisitor(); v != nil && in.memoryAllowed() {
		q.VisitorID, q.ExternalID, q.Email = &v.ID, v.ExternalID, v.Email
	}
	got, err := FetchVisitorContext(ctx, e.Outbound.Client(VisitorContextTimeout), *t.VisitorContextURL, key, e.now(), q)
	if err != nil {
		if ctx.Err() == nil {
			in.logger(e).Warn("context webhook failed; answering without it", "err", err)
		}
		return "", nil
	}
	if got.Challenge != nil {
		if err := got.Challenge.Check(e.now()); err != nil {
			in.logger(e).Warn("context webhook: challenge ignored", "err", err)
			got.Challenge = nil
		}
	}
	return got.Context, got.Challenge
}
