package knowledge

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// A tenant's own embedding endpoint (issue 34, migration 00038): its
// settings on its tenants row, and how far its entries are embedded.

// tenantEmbedModelSQL is parley.EmbeddingModelKey of the tenant t's own
// endpoint in SQL (NULL without one): a test holds the two the same.
const tenantEmbedModelSQL = `CASE WHEN t.embeddings_dimensions IS NULL THEN t.embeddings_model
	ELSE t.embeddings_model || '@' || t.embeddings_dimensions END`

// EmbeddingSettings is the tenant's own embedding endpoint; the key stays
// sealed. A nil URL is none.
type EmbeddingSettings struct {
	URL          *string
	SealedAPIKey []byte
	Model        *string
	Dimensions   *int
}

// ModelKey names the vectors of the tenant's endpoint as stored
// (parley.EmbeddingModelKey), "" without one.
func (s EmbeddingSettings) ModelKey() string {
	if s.URL == nil || s.Model == nil {
		return ""
	}
	dims := 0
	if s.Dimensions != nil {
		dims = *s.Dimensions
	}
	return parley.EmbeddingModelKey(*s.Model, dims)
}

const embeddingSettingsColumns = `embeddings_url, embeddings_api_key, embeddings_model, embeddings_dimensions`

func (s *EmbeddingSettings) scan(row pgx.Row) error {
	return row.Scan(&s.URL, &s.SealedAPIKey, &s.Model, &s.Dimensions)
}

// EmbeddingSettings reads the tenant's own embedding endpoint.
func (d *Knowledge) EmbeddingSettings(ctx context.Context, tenantID string) (EmbeddingSettings, error) {
	var s EmbeddingSettings
	if err := s.scan(d.pool.QueryRow(ctx, `SELECT `+embeddingSettingsColumns+` FROM tenants WHERE id = $1`, tenantID)); err != nil {
		return s, pgbase.NotFound(err, "Tenant")
	}
	return s, nil
}

// ETag is the ETag of the stored settings (GET and PUT
// /tenants/{slug}/embeddings): the key as sealed, so that a new key is a
// new tag.
func (s EmbeddingSettings) ETag() string { return pgbase.ETag(s) }

// SaveEmbeddingSettings sets the tenant's endpoint (dimensions nil for the
// model's own); the key changes only when apiKey is set. Under an If-Match
// (pgbase.WithIfMatch), only on the settings as the client read them. The tenant's
// embedding job is enqueued in the same transaction: its entries are
// embedded at the new endpoint at once, and those whose vector is of
// another model again.
func (d *Knowledge) SaveEmbeddingSettings(ctx context.Context, tenantID, url, model string, dimensions *int, apiKey parley.Opt[[]byte]) (EmbeddingSettings, error) {
	var s EmbeddingSettings
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.CheckLocked(ctx, tx, func(tx pgx.Tx) (string, error) {
			var cur EmbeddingSettings
			if err := cur.scan(tx.QueryRow(ctx, `SELECT `+embeddingSettingsColumns+` FROM tenants WHERE id = $1 FOR UPDATE`, tenantID)); err != nil {
				return "", pgbase.NotFound(err, "Tenant")
			}
			return cur.ETag(), nil
		}); err != nil {
			return err
		}
		err := s.scan(tx.QueryRow(ctx, `UPDATE tenants SET embeddings_url = $2, embeddings_model = $3, embeddings_dimensions = $4,
			embeddings_api_key = CASE WHEN $5 THEN $6 ELSE embeddings_api_key END, updated_at = now()
			WHERE id = $1 RETURNING `+embeddingSettingsColumns, tenantID, url, model, dimensions, apiKey.Set, apiKey.Ptr()))
		if err != nil {
			return pgbase.NotFound(err, "Tenant")
		}
		return d.insertEmbedJob(ctx, tx, tenantID)
	})
	if err != nil {
		return s, fmt.Errorf("saving embedding settings: %w", err)
	}
	return s, nil
}

// ClearEmbeddingSettings removes the tenant's endpoint (and key). With the
// operator's endpoint, the tenant's job is enqueued in the same
// transaction, to embed its entries there; without one, the stored vectors
// stay unread until an endpoint of their model is configured again.
func (d *Knowledge) ClearEmbeddingSettings(ctx context.Context, tenantID string) error {
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE tenants SET embeddings_url = NULL, embeddings_api_key = NULL,
			embeddings_model = NULL, embeddings_dimensions = NULL, updated_at = now() WHERE id = $1`, tenantID); err != nil {
			return err
		}
		if !d.embeddings {
			return nil
		}
		return d.insertEmbedJob(ctx, tx, tenantID)
	})
	if err != nil {
		return fmt.Errorf("clearing embedding settings: %w", err)
	}
	return nil
}

// EmbeddingStatus is how far a tenant's knowledge base is embedded by one
// model, and the embedding job's last outcome with it.
type EmbeddingStatus struct {
	// Entries is how many active entries the tenant has; Embedded how many
	// of them have a vector of the model for their current text.
	Entries  int
	Embedded int
	// LastError is the endpoint's last failure, nil since a success;
	// FailedAt when it failed; EmbeddedAt when the job last saved vectors.
	LastError  *string
	FailedAt   *time.Time
	EmbeddedAt *time.Time
}

// EmbeddingStatus reads how far the tenant's active entries are embedded
// by model, in one statement. It hashes every active entry's text.
func (d *Knowledge) EmbeddingStatus(ctx context.Context, tenantID, model string) (EmbeddingStatus, error) {
	var s EmbeddingStatus
	err := d.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM corpus_entries c WHERE c.tenant_id = $1 AND c.is_active),
			(SELECT count(*) FROM corpus_entries c JOIN corpus_embeddings e ON e.entry_id = c.id AND e.tenant_id = $1
				AND e.model = $2 AND e.text_hash = `+embeddingHashSQL+`
			 WHERE c.tenant_id = $1 AND c.is_active),
			st.last_error, st.failed_at, st.embedded_at
		FROM (SELECT 1) one LEFT JOIN corpus_embedding_state st ON st.tenant_id = $1 AND st.model = $2`,
		tenantID, model).Scan(&s.Entries, &s.Embedded, &s.LastError, &s.FailedAt, &s.EmbeddedAt)
	if err != nil {
		return s, fmt.Errorf("reading the embedding status: %w", err)
	}
	return s, nil
}

// maxEmbedErrorText bounds the failure kept for the owner to read.
const maxEmbedErrorText = 500

// RecordEmbedOutcome keeps the embedding job's outcome with model for the
// tenant: a failure (failure not nil) and its time are kept until the next
// success clears them; saved says the job saved vectors (when it last did
// is kept while the model stays).
func (d *Knowledge) RecordEmbedOutcome(ctx context.Context, tenantID, model string, saved bool, failure error) error {
	var msg *string
	if failure != nil {
		m := parley.Clip(failure.Error(), maxEmbedErrorText)
		msg = &m
	}
	_, err := d.pool.Exec(ctx, `INSERT INTO corpus_embedding_state AS s (tenant_id, model, last_error, failed_at, embedded_at)
		SELECT id, $2, $3, CASE WHEN $3::text IS NOT NULL THEN now() END, CASE WHEN $4 THEN now() END FROM tenants WHERE id = $1
		ON CONFLICT (tenant_id) DO UPDATE SET
			last_error = excluded.last_error,
			failed_at = excluded.failed_at,
			embedded_at = CASE WHEN $4 THEN now() WHEN s.model = excluded.model THEN s.embedded_at END,
			model = excluded.model`,
		tenantID, model, msg, saved)
	if err != nil {
		return fmt.Errorf("recording the embedding outcome: %w", err)
	}
	return nil
}
