package db

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// The chat's configuration cache. A chat turn reads, before its model is
// called, its tenant and segment (gates, prompt) and its prompt data (corpus,
// tools, flags): five statements of the ten of a turn, which change when an
// owner edits something, a few times a day. This instance keeps what it read
// and serves the next turns from it, once proven current: every committed
// change to those rows gives the tenant a new config_version, from one
// sequence, so that no two tenants share one (migration 00030's
// triggers); the per-address rate limit's statement, which every
// chat message runs first, returns the tenant's version as well
// (HitWithinForTenant); a tenant served from the cache at another version
// is read afresh before any gate uses it (handlers' publicGates), and
// prompt data older than the tenant's version is read afresh too (agent's
// readStore). So a turn answers from its tenant's configuration as it was
// when the request came in, as when every turn read it, without the two
// statements of the tenant's read or the three of the prompt batch.
//
// Entries expire after chatConfigTTL, which only bounds the memory they
// keep; there are at most chatConfigEntries of each kind, and the prompt
// data kept weighs at most chatPromptBytes (a prompt's corpus may hold 200
// entries of 50,000 characters): the cache is emptied when full, and
// tenants come back at the cost of one read each. Prompt data heavier than
// a sixteenth of the budget is not kept: read each time, as before.
const (
	chatConfigTTL     = 5 * time.Minute
	chatConfigEntries = 4096
	chatPromptBytes   = 64 << 20
)

type chatConfigCache struct {
	mu          sync.Mutex
	tenants     map[tenantKey]cachedTenant
	prompts     map[promptKey]cachedPrompt
	promptBytes int // the weight of prompts (promptWeight)
}

type tenantKey struct{ slug, segment string }

type cachedTenant struct {
	tenant  parley.Tenant
	segment *parley.Segment
	at      time.Time
}

type promptKey struct {
	tenantID, segmentID, lang string
	limit                     int
}

type cachedPrompt struct {
	data   parley.PromptData // without memory
	at     time.Time
	weight int
}

// promptWeight is about the bytes prompt data keeps: its texts, and a
// little for each row.
func promptWeight(p parley.PromptData) int {
	n := 0
	for _, c := range p.Corpus {
		n += 256 + len(c.Title) + len(c.Content)
		if c.Summary != nil {
			n += len(*c.Summary)
		}
	}
	for _, t := range p.Tools {
		n += 256 + len(t.Name) + len(t.Description) + len(t.Config)
	}
	return n
}

func (c *chatConfigCache) tenant(k tenantKey, now time.Time) (cachedTenant, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tenants[k]
	if !ok || now.Sub(e.at) > chatConfigTTL {
		return cachedTenant{}, false
	}
	return e, true
}

func (c *chatConfigCache) keepTenant(k tenantKey, e cachedTenant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tenants == nil || len(c.tenants) >= chatConfigEntries {
		c.tenants = make(map[tenantKey]cachedTenant)
	}
	c.tenants[k] = e
}

func (c *chatConfigCache) prompt(k promptKey, now time.Time) (cachedPrompt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.prompts[k]
	if !ok || now.Sub(e.at) > chatConfigTTL {
		return cachedPrompt{}, false
	}
	return e, true
}

func (c *chatConfigCache) keepPrompt(k promptKey, e cachedPrompt) {
	e.weight = promptWeight(e.data)
	if e.weight > chatPromptBytes/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.prompts[k]; ok {
		c.promptBytes -= old.weight
		delete(c.prompts, k)
	}
	if c.prompts == nil || len(c.prompts) >= chatConfigEntries || c.promptBytes+e.weight > chatPromptBytes {
		c.prompts, c.promptBytes = make(map[promptKey]cachedPrompt), 0
	}
	c.prompts[k] = e
	c.promptBytes += e.weight
}

// ChatTenantAndSegment is TenantAndSegment for a chat turn: served from this
// instance's cache (cached true) unless fresh, or read (then kept) when the
// cache has none. The tenant's ConfigVersion says what it was read at: a
// cached one is used once found current (see the cache's comment above).
// A tenant or segment that is not found is never kept.
func (d *DB) ChatTenantAndSegment(ctx context.Context, slug, ref string, fresh bool) (t parley.Tenant, seg *parley.Segment, cached bool, err error) {
	k := tenantKey{slug, ref}
	if !fresh {
		if e, ok := d.chat.tenant(k, time.Now()); ok {
			return e.tenant, cloneSegment(e.segment), true, nil
		}
	}
	t, seg, err = d.TenantAndSegment(ctx, slug, ref)
	if err == nil && seg != nil {
		d.chat.keepTenant(k, cachedTenant{tenant: t, segment: cloneSegment(seg), at: time.Now()})
	}
	return t, seg, false, err
}

func cloneSegment(s *parley.Segment) *parley.Segment {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// ChatPromptData is PromptData for a chat turn: everything but the
// visitor's memory served from this instance's cache unless fresh, or read
// (then kept) when the cache has none; the memory of visitorID ("" for
// none) is read each time. Its ConfigVersion says what the cached part was
// read at.
func (d *DB) ChatPromptData(ctx context.Context, tenantID, segmentID, locale, visitorID string, limit int, fresh bool) (parley.PromptData, error) {
	k := promptKey{tenantID, segmentID, localeLanguage(locale), limit}
	if !fresh {
		if e, ok := d.chat.prompt(k, time.Now()); ok {
			p := e.data
			// The slices are the turn's to change: copies of the cached ones.
			p.Corpus, p.Tools = slices.Clone(p.Corpus), slices.Clone(p.Tools)
			if visitorID != "" {
				rows, _ := d.pool.Query(ctx, memoryFactsSQL, tenantID, visitorID)
				facts, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.MemoryFact])
				if err != nil {
					return parley.PromptData{}, fmt.Errorf("listing memory: %w", err)
				}
				p.Memory = facts
			}
			return p, nil
		}
	}
	p, err := d.PromptData(ctx, tenantID, segmentID, locale, visitorID, limit)
	if err == nil {
		kept := p
		kept.Memory = nil
		kept.Corpus, kept.Tools = slices.Clone(p.Corpus), slices.Clone(p.Tools)
		d.chat.keepPrompt(k, cachedPrompt{data: kept, at: time.Now()})
	}
	return p, err
}
