package agent

import (
	"context"
	"sync"

	"github.com/parley/parley"
)

// promptReads is what the prompt and the tool registry of a turn are built
// from. None of it depends on the conversation, so it is read while the turn
// waits for its session's lease and stores the visitor's message: each read
// on its own pool connection, at once, rather than one round trip after
// another before the first byte can be sent.
type promptReads struct {
	wg           sync.WaitGroup
	corpus       []parley.CorpusEntry
	hasSummaries bool
	memory       []parley.MemoryFact
	tools        []parley.Tool
	hasProducts  bool // read only when a RECOMMEND_PRODUCT tool is active
	// calendar is the tenant's calendar connector, read only when a
	// BOOK_MEETING tool is active; nil when it has none.
	calendar *parley.CalendarConnector
	// visitorContext is the tenant's context webhook's answer; a failed
	// call leaves it empty and is logged: the chat goes on without it.
	visitorContext string
	// challenge is the context webhook's challenge, nil when none.
	challenge *Challenge
	// payment is the tenant's active payment connector, read off the voice
	// channel only; a failed read is logged and the turn goes on without it.
	payment *parley.PaymentConnector
	// mcpTools are the tenant's MCP server's tools; a failed discovery
	// leaves them empty and is logged: the chat goes on without them.
	mcpTools []MCPTool
	errs     [5]error
}

// readPrompt starts the reads of the turn's prompt data.
func (e *Engine) readPrompt(ctx context.Context, in *TurnInput) *promptReads {
	p := &promptReads{}
	t, seg := in.Tenant, in.Segment
	read := func(i int, f func() error) {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.errs[i] = f()
		}()
	}
	read(0, func() (err error) {
		p.corpus, err = e.Store.PromptCorpus(ctx, t.ID, seg.ID, in.Locale, PromptCorpusLimit)
		return err
	})
	read(1, func() (err error) {
		p.hasSummaries, err = e.Store.HasCorpusSummaries(ctx, t.ID, seg.ID, in.Locale)
		return err
	})
	if in.memoryAllowed() {
		read(2, func() (err error) {
			p.memory, err = e.Store.ListMemory(ctx, t.ID, in.Visitor.ID)
			return err
		})
	}
	if t.VisitorContextURL != nil && *t.VisitorContextURL != "" && e.Outbound != nil && e.Secrets != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.visitorContext, p.challenge = e.visitorContext(ctx, in)
		}()
	}
	// The tenant's reply endpoint, when it answers, runs no tools.
	replyEndpoint := in.LLM == nil && t.LLMWebhookURL != nil && *t.LLMWebhookURL != ""
	if MCPConfigured(t) && e.MCP != nil && !replyEndpoint {
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
	read(3, func() (err error) {
		if p.tools, err = e.Store.ListTools(ctx, t.ID); err != nil {
			return err
		}
		if e.Calendar != nil && HasToolType(p.tools, ToolBookMeeting) {
			read(4, func() (err error) {
				p.calendar, err = e.Calendar.CalendarConnector(ctx, t.ID)
				return err
			})
		}
		// The payment connector is read after the tools, in their goroutine:
		// a read of its own would hold one more pool connection at once per
		// message.
		if e.Payments != nil && e.Stripe != nil && in.Channel != parley.ChannelVoice {
			var perr error
			if p.payment, perr = e.Payments.ActivePaymentConnector(ctx, t.ID); perr != nil && ctx.Err() == nil {
				in.logger(e).Warn("reading the payment connector; answering without payments", "err", perr)
			}
		}
		if !HasToolType(p.tools, ToolRecommendProduct) {
			return nil
		}
		p.hasProducts, err = e.Store.HasActiveProducts(ctx, t.ID)
		return err
	})
	return p
}

// wait returns once every read is done, with the first error.
func (p *promptReads) wait() error {
	p.wg.Wait()
	for _, err := range p.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// visitorContext calls the tenant's context webhook for this message. The
// visitor's identity is sent only when the visitor may have memory (known,
// and verified when the tenant set a visitor auth mode): an id alone proves
// nothing, and the tenant's systems must not describe someone to whoever
// claims their id.
func (e *Engine) visitorContext(ctx context.Context, in *TurnInput) (string, *Challenge) {
	t := in.Tenant
	key, err := e.Secrets.Open(t.VisitorSigningKey)
	if err != nil {
		in.logger(e).Error("opening the visitor signing key for the context webhook", "err", err)
		return "", nil
	}
	q := VisitorContextQuery{Verified: in.Verified}
	if v := in.Visitor; v != nil && in.memoryAllowed() {
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
		if err := got.Challenge.check(e.now()); err != nil {
			in.logger(e).Warn("context webhook: challenge ignored", "err", err)
			got.Challenge = nil
		}
	}
	return got.Context, got.Challenge
}
