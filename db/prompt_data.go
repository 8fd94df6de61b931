package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
)

// PromptData reads what a turn's prompt and tools are built from in one
// round trip (one batch, so one implicit transaction): the entries of
// PromptCorpus (at most limit) for the segment and the locale, and whether
// any active entry among those it could hold has a summary (HasSummaries,
// a blank one counting as none: that content is only reachable through the
// explore_corpus tool, which the chat then offers), the memory of visitorID ("" for none: the facts alone, the
// caller resolved the visitor), the tools of ListTools and
// HasActiveProducts, which connectors the tenant has, and its synonyms. Three or four statements, where the separate reads
// took five or six round trips and as many transactions.
func (d *DB) PromptData(ctx context.Context, tenantID, segmentID, locale, visitorID string, limit int) (parley.PromptData, error) {
	var p parley.PromptData
	seg, err := knowledge.PromptSegment(segmentID)
	if err != nil {
		return p, err
	}
	lang := parley.LocaleLanguage(locale)
	batch := &pgx.Batch{}
	batch.Queue(knowledge.PromptCorpusSQL, tenantID, seg, lang, max(limit, 0))
	batch.Queue(`SELECT EXISTS (SELECT 1 FROM corpus_entries c`+knowledge.PromptScope+fmt.Sprintf(knowledge.LocaleCondition, 3)+`
			AND btrim(c.summary) <> ''),
		EXISTS (SELECT 1 FROM products WHERE tenant_id = $1 AND is_active),
		EXISTS (SELECT 1 FROM calendar_connectors WHERE tenant_id = $1),
		EXISTS (SELECT 1 FROM payment_connectors WHERE tenant_id = $1 AND is_active),
		(SELECT config_version FROM tenants WHERE id = $1),
		(SELECT `+knowledge.SynonymGroupsSQL+`)`, tenantID, seg, lang)
	batch.Queue(`SELECT `+toolColumns+toolFrom+` WHERE t.tenant_id = $1 ORDER BY t.position, t.created_at, t.id`, tenantID)
	if visitorID != "" {
		batch.Queue(memoryFactsSQL, tenantID, visitorID)
	}
	br := d.pool.SendBatch(ctx, batch)
	defer br.Close()
	rows, _ := br.Query()
	if p.Corpus, err = pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry]); err != nil {
		return p, fmt.Errorf("loading prompt corpus: %w", err)
	}
	if err := br.QueryRow().Scan(&p.HasSummaries, &p.HasProducts, &p.HasCalendar, &p.HasPayment, &p.ConfigVersion, &p.Synonyms); err != nil {
		return p, fmt.Errorf("checking corpus summaries, products and connectors: %w", err)
	}
	rows, _ = br.Query()
	if p.Tools, err = pgx.CollectRows(rows, pgx.RowToStructByName[parley.Tool]); err != nil {
		return p, fmt.Errorf("listing tools: %w", err)
	}
	if visitorID != "" {
		rows, _ = br.Query()
		if p.Memory, err = pgx.CollectRows(rows, pgx.RowToStructByName[parley.MemoryFact]); err != nil {
			return p, fmt.Errorf("listing memory: %w", err)
		}
	}
	if limit <= 0 {
		p.Corpus = nil
	}
	if len(p.Synonyms) == 0 {
		p.Synonyms = nil
	}
	return p, br.Close()
}

// memoryFactsSQL lists the facts of visitor $2 of tenant $1 by key.
const memoryFactsSQL = `SELECT key, value, updated_at FROM memory_facts WHERE tenant_id = $1 AND visitor_id = $2 ORDER BY key`
