package handlers

import (
	"context"
	"sync"

	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
)

// promptData is what the prompt and the tool registry of a turn are built
// from. None of it depends on the conversation, so it is read while the turn
// waits for its session's lease and stores the visitor's message: each read
// on its own pool connection, at once, rather than one round trip after
// another before the first byte can be sent.
type promptData struct {
	wg           sync.WaitGroup
	corpus       []db.CorpusEntry
	hasSummaries bool
	memory       []db.MemoryFact
	tools        []db.Tool
	hasProducts  bool // read only when a RECOMMEND_PRODUCT tool is active
	errs         [4]error
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
