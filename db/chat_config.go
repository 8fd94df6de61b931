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
	tenants keptMap[tenantKey, cachedTenant]
	prompts keptMap[promptKey, parley.PromptData] // without memory
}

type tenantKey struct{ slug, segment string }

type cachedTenant struct {
	tenant  parley.Tenant
	segment *parley.Segment
}

type promptKey struct {
	tenantID, segmentID, lang string
	limit                     int
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

// keptMap is one kind of the cache's entries: at most chatConfigEntries,
// weighing at most budget in all (0: no budget), each served for
// chatConfigTTL after it was kept. It is emptied when the next entry would
// pass either bound; an entry heavier than a sixteenth of the budget is not
// kept.
type keptMap[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]keptEntry[V]
	weight  int // of the entries
}

type keptEntry[V any] struct {
	v      V
	at     time.Time
	weight int
}

func (m *keptMap[K, V]) get(k K, now time.Time) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || now.Sub(e.at) > chatConfigTTL {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (m *keptMap[K, V]) keep(k K, v V, weight, budget int, now time.Time) {
	if budget > 0 && weight > budget/16 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.entries[k]; ok {
		m.weight -= old.weight
		delete(m.entries, k)
	}
	if m.entries == nil || len(m.entries) >= chatConfigEntries || budget > 0 && m.weight+weight > budget {
		m.entries, m.weight = make(map[K]keptEntry[V]), 0
	}
	m.entries[k] = keptEntry[V]{v: v, at: now, weight: weight}
	m.weight += weight
}

// ChatTenantAndSegment is TenantAndSegment for a chat turn: served from this
// instance's cache (cached true) unless fresh, or read (then kept) when the
// cache has none. The tenant's ConfigVersion says what it was read at: a
// cached one is used once found current (see the cache's comment above).
// A tenant or segment that is not found is never kept.
func (d *DB) ChatTenantAndSegment(ctx context.Context, slug, ref string, fresh bool) (t parley.Tenant, seg *parley.Segment, cached bool, err error) {
	k := tenantKey{slug, ref}
	if !fresh {
		if e, ok := d.chat.tenants.get(k, time.Now()); ok {
			return e.tenant, cloneSegment(e.segment), true, nil
		}
	}
	t, seg, err = d.TenantAndSegment(ctx, slug, ref)
	if err == nil && seg != nil {
		d.chat.tenants.keep(k, cachedTenant{tenant: t, segment: cloneSegment(seg)}, 0, 0, time.Now())
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
// visitor's memory served from this instance's cache when it was read at
// version atLeast of the tenant's configuration or later, else read (then
// kept); the memory of visitorID ("" for none) is read each time. Its
// ConfigVersion says what the rest was read at.
func (d *DB) ChatPromptData(ctx context.Context, tenantID, segmentID, locale, visitorID string, limit int, atLeast int64) (parley.PromptData, error) {
	k := promptKey{tenantID, segmentID, parley.LocaleLanguage(locale), limit}
	if p, ok := d.chat.prompts.get(k, time.Now()); ok && p.ConfigVersion >= atLeast {
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
	p, err := d.PromptData(ctx, tenantID, segmentID, locale, visitorID, limit)
	if err == nil {
		kept := p
		kept.Memory = nil
		kept.Corpus, kept.Tools = slices.Clone(p.Corpus), slices.Clone(p.Tools)
		d.chat.prompts.keep(k, kept, promptWeight(kept), chatPromptBytes, time.Now())
	}
	return p, err
}
