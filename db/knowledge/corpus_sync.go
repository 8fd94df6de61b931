package knowledge

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// CorpusSync is what a successful fetch of an entry's URL stores.
type CorpusSync struct {
	Title        string // the page's own title: used on create when the caller gave none
	Content      string
	ETag         string // empty when the server sent none
	LastModified string // empty when the server sent none
	At           time.Time
}

// CorpusSyncDue names an entry whose URL is due for a refresh.
type CorpusSyncDue struct {
	TenantID string
	ID       string
}

func emptyNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CorpusEntryBySourceURL returns the tenant's entry synced from url: the one
// that was synced, else the oldest, when several carry that sourceUrl.
func (d *Knowledge) CorpusEntryBySourceURL(ctx context.Context, tenantID, url string) (parley.CorpusEntry, error) {
	return corpusEntryBySourceURL(ctx, d.pool, tenantID, url)
}

func corpusEntryBySourceURL(ctx context.Context, q pgbase.Querier, tenantID, url string) (parley.CorpusEntry, error) {
	rows, _ := q.Query(ctx, `SELECT `+corpusColumns+corpusFrom+` WHERE c.tenant_id = $1 AND c.source_url = $2
		ORDER BY c.synced_at IS NULL, c.created_at, c.id LIMIT 1`, tenantID, url)
	e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return parley.CorpusEntry{}, pgbase.NotFound(err, "Corpus entry")
	}
	return e, nil
}

// SyncCorpus stores a fetched page as the tenant's entry for url: it updates
// the entry that already has that sourceUrl (w's fields that are set, the
// content and the sync state), or creates one within the plan's limit with
// source "url" and, without a title in w, the page's title. One transaction
// under the tenant lock, so two syncs of one URL make one entry.
func (d *Knowledge) SyncCorpus(ctx context.Context, tenantID string, limit int, url string, w CorpusWrite, s CorpusSync) (parley.CorpusEntry, UpsertResult, error) {
	var e parley.CorpusEntry
	var res UpsertResult
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		w.Content = parley.Some(s.Content)
		w.SourceURL = parley.Some(url)
		w.ExternalID = parley.Opt[string]{}
		existing, err := corpusEntryBySourceURL(ctx, tx, tenantID, url)
		switch {
		case err == nil:
			if _, err := updateCorpus(ctx, tx, tenantID, existing.ID, w); err != nil {
				return err
			}
			e.ID, res = existing.ID, Updated
		case parley.ErrorKind(err) == parley.KindNotFound:
			if !w.Title.Set {
				w.Title = parley.Some(s.Title)
			}
			if !w.Source.Set {
				w.Source = parley.Some("url")
			}
			if e, res, err = upsertCorpus(ctx, tx, tenantID, limit, w); err != nil {
				return err
			}
		default:
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE corpus_entries SET sync_etag = $3, sync_last_modified = $4,
			synced_at = $5, sync_error = NULL, sync_error_at = NULL WHERE tenant_id = $1 AND id = $2`,
			tenantID, e.ID, emptyNull(s.ETag), emptyNull(s.LastModified), s.At); err != nil {
			return fmt.Errorf("recording corpus sync: %w", err)
		}
		if e, err = corpusEntry(ctx, tx, tenantID, e.ID); err != nil {
			return err
		}
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	return e, res, err
}

// SaveCorpusSync stores the refreshed content of a synced entry and its new
// validators, and clears any sync error. The title is left alone: the
// caller or an admin may have chosen it. updated_at moves only when the
// content changed.
func (d *Knowledge) SaveCorpusSync(ctx context.Context, tenantID, id string, s CorpusSync) error {
	tag, err := d.pool.Exec(ctx, `UPDATE corpus_entries SET
		updated_at = CASE WHEN content IS DISTINCT FROM $3 THEN now() ELSE updated_at END,
		content = $3, sync_etag = $4, sync_last_modified = $5, synced_at = $6,
		sync_error = NULL, sync_error_at = NULL
		WHERE tenant_id = $1 AND id = $2`,
		tenantID, id, s.Content, emptyNull(s.ETag), emptyNull(s.LastModified), s.At)
	if err := syncUpdated(tag.RowsAffected(), err, "saving corpus sync"); err != nil {
		return err
	}
	return d.enqueueEmbedAfter(ctx, tenantID)
}

// TouchCorpusSync records that a synced entry's page is unchanged (a 304).
func (d *Knowledge) TouchCorpusSync(ctx context.Context, tenantID, id string, at time.Time) error {
	tag, err := d.pool.Exec(ctx, `UPDATE corpus_entries SET synced_at = $3, sync_error = NULL, sync_error_at = NULL
		WHERE tenant_id = $1 AND id = $2`, tenantID, id, at)
	return syncUpdated(tag.RowsAffected(), err, "touching corpus sync")
}

// RecordCorpusSyncError records why the latest refresh of an entry failed;
// the content of the last good fetch stays.
func (d *Knowledge) RecordCorpusSyncError(ctx context.Context, tenantID, id, msg string, at time.Time) error {
	tag, err := d.pool.Exec(ctx, `UPDATE corpus_entries SET sync_error = $3, sync_error_at = $4
		WHERE tenant_id = $1 AND id = $2`, tenantID, id, msg, at)
	return syncUpdated(tag.RowsAffected(), err, "recording corpus sync error")
}

func syncUpdated(n int64, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return parley.Errorf(parley.KindNotFound, "Corpus entry not found")
	}
	return nil
}

// DueCorpusSyncs lists synced entries, of every tenant, last fetched
// successfully before before: oldest first, at most limit.
func (d *Knowledge) DueCorpusSyncs(ctx context.Context, before time.Time, limit int) ([]CorpusSyncDue, error) {
	rows, _ := d.pool.Query(ctx, `SELECT tenant_id, id FROM corpus_entries
		WHERE source_url IS NOT NULL AND synced_at IS NOT NULL AND synced_at < $1
		ORDER BY synced_at LIMIT $2`, before, limit)
	due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (CorpusSyncDue, error) {
		var c CorpusSyncDue
		err := r.Scan(&c.TenantID, &c.ID)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing due corpus syncs: %w", err)
	}
	return due, nil
}
