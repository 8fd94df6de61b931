package handlers

import (
	"context"
	"sync"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
)

// promptData is what the prompt and the tool registry of a turn are built
// from. None of it depends on the conversation, so it is read while the turn
// waits for its session's lease and stores the visitor's message: each read
// on its own pool connection, at once, rather than one round trip after
// another before the first byte can be sent.
type promptData struct {
	wg           sync.WaitGroup
	corpus       []parley.CorpusEntry
	hasSummaries bool
	memory       []parley.MemoryFact
	tools        []parley.Tool
	hasProducts  bool // read only when a RECOMMEND_PRODUCT tool is active
	// visitorContext is the tenant's context webhook's answer; a failed
	// call leaves it empty and is logged: the chat goes on without it.
	visitorContext string
	errs           [4]error
}

// prefetchPrompt starts the reads of the turn's prompt data.
func (h *Handler) prefetchPrompt(ctx context.Context, turn *chatTurn) *promptData {
	p := &promptData{}
	t, seg := turn.tenant, turn.segment
	read := func(i int, f func() error) {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.errs[i] = f()
		}()
	}
	read(0, func() (err error) {
		p.corpus, err = h.DB.PromptCorpus(ctx, t.ID, seg.ID, turn.locale, agent.PromptCorpusLimit)
		return err
	})
	read(1, func() (err error) {
		p.hasSummaries, err = h.DB.HasCorpusSummaries(ctx, t.ID, seg.ID, turn.locale)
		return err
	})
	if turn.memoryAllowed() {
		read(2, func() (err error) {
			p.memory, err = h.DB.ListMemory(ctx, t.ID, turn.visitor.ID)
			return err
		})
	}
	if t.VisitorContextURL != nil && *t.VisitorContextURL != "" && h.Outbound != nil && h.Box != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.visitorContext = h.visitorContext(ctx, turn)
		}()
	}
	read(3, func() (err error) {
		if p.tools, err = h.DB.ListTools(ctx, t.ID); err != nil || !agent.HasToolType(p.tools, agent.ToolRecommendProduct) {
			return err
		}
		p.hasProducts, err = h.DB.HasActiveProducts(ctx, t.ID)
		return err
	})
	return p
}

// wait returns once every read is done, with the first error.
func (p *promptData) wait() error {
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
func (h *Handler) visitorContext(ctx context.Context, turn *chatTurn) string {
	t := turn.tenant
	key, err := h.Box.Open(t.VisitorSigningKey)
	if err != nil {
		h.Logger.Error("opening the visitor signing key for the context webhook", "tenant", t.Slug, "err", err)
		return ""
	}
	q := agent.VisitorContextQuery{Verified: turn.verified}
	if v := turn.visitor; v != nil && turn.memoryAllowed() {
		q.VisitorID, q.ExternalID, q.Email = &v.ID, v.ExternalID, v.Email
	}
	got, err := agent.FetchVisitorContext(ctx, h.Outbound.Client(agent.VisitorContextTimeout), *t.VisitorContextURL, key, h.now(), q)
	if err != nil {
		if ctx.Err() == nil {
			h.Logger.Warn("chat context webhook failed; answering without it", "tenant", t.Slug, "err", err)
		}
		return ""
	}
	return got
}
