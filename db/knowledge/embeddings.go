package knowledge

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
)

// The corpus's vectors, when an embedding endpoint is configured (issue 34,
// migration 00036): written by the corpus_embed job (jobs.EmbedCorpusWorker),
// read by the turn for its candidates (CorpusVectors).

// EmbedQueue is the River queue of the embedding jobs: its few workers bound
// the requests an instance makes of the endpoint at once.
const EmbedQueue = "embeddings"

// EmbedCorpusArgs asks for the tenant's active entries whose vector is
// missing or of an older text to be embedded.
type EmbedCorpusArgs struct {
	TenantID string `json:"tenant_id"`
}

// Kind names the job.
func (EmbedCorpusArgs) Kind() string { return "corpus_embed" }

// InsertOpts makes one job per tenant wait at a time: the writes of a burst
// (a bulk load, an import, a sync) enqueue one job, which embeds them all.
// A job already running is one of them too (River requires it), so a write
// that commits while it runs may find no new job enqueued: the job reads
// again until it finds nothing left, and the periodic scan
// (EmbedScanArgs) takes what commits after its last read.
func (EmbedCorpusArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: EmbedQueue, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
}

// EnableEmbeddings makes every corpus write enqueue its tenant's embedding
// job (EmbedCorpusArgs), in its transaction. Call it before serving, when
// the operator's embedding endpoint is configured; without it a write
// enqueues the job only for a tenant with an endpoint of its own, which
// costs the write one statement to know.
func (d *Knowledge) EnableEmbeddings() { d.embeddings = true }

// enqueueEmbed enqueues the tenant's embedding job in tx, the transaction
// that wrote some of its entries, when the operator's endpoint is on or
// the tenant has its own (one statement more to know, only without the
// operator's).
func (d *Knowledge) enqueueEmbed(ctx context.Context, tx pgx.Tx, tenantID string) error {
	if !d.embeddings {
		var own bool
		if err := tx.QueryRow(ctx, `SELECT embeddings_url IS NOT NULL FROM tenants WHERE id = $1`, tenantID).Scan(&own); err != nil {
			return fmt.Errorf("reading the tenant's embedding endpoint: %w", err)
		}
		if !own {
			return nil
		}
	}
	return d.insertEmbedJob(ctx, tx, tenantID)
}

// insertEmbedJob enqueues the tenant's embedding job in tx.
func (d *Knowledge) insertEmbedJob(ctx context.Context, tx pgx.Tx, tenantID string) error {
	if _, err := d.jobs.InsertTx(ctx, tx, EmbedCorpusArgs{TenantID: tenantID}, nil); err != nil {
		return fmt.Errorf("enqueuing the corpus embedding: %w", err)
	}
	return nil
}

// enqueueEmbedAfter enqueues the tenant's embedding job after a write of
// one statement, in a transaction of its own (enqueueEmbed): the periodic
// scan takes the entry should it fail.
func (d *Knowledge) enqueueEmbedAfter(ctx context.Context, tenantID string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return d.enqueueEmbed(ctx, tx, tenantID) })
}

// embeddingTextSQL is parley.EmbeddingText of the entry c in SQL, and
// embeddingHashSQL its SHA-256 (parley.EmbeddingHash): a test holds the
// two the same.
const (
	embeddingTextSQL = `c.title || E'\n' || coalesce(c.summary, '') || E'\n' || c.content`
	embeddingHashSQL = `sha256(convert_to(` + embeddingTextSQL + `, 'UTF8'))`
	// embeddingStaleSQL holds for an entry c whose vector e (left joined) of
	// model $model is missing or of another text.
	embeddingStaleSQL = `(e.entry_id IS NULL OR e.model <> $%d OR e.text_hash <> ` + embeddingHashSQL + `)`
)

// EntryToEmbed is an entry's text to embed, and its hash.
type EntryToEmbed struct {
	ID   string `db:"id"`
	Text string `db:"text"`
	Hash []byte `db:"hash"`
}

// EntriesToEmbed is up to limit of the tenant's active entries without a
// vector of model for their current text, by id.
func (d *Knowledge) EntriesToEmbed(ctx context.Context, tenantID, model string, limit int) ([]EntryToEmbed, error) {
	rows, _ := d.pool.Query(ctx, `SELECT c.id, `+embeddingTextSQL+` AS text, `+embeddingHashSQL+` AS hash
		FROM corpus_entries c LEFT JOIN corpus_embeddings e ON e.entry_id = c.id AND e.tenant_id = $1
		WHERE c.tenant_id = $1 AND c.is_active AND `+fmt.Sprintf(embeddingStaleSQL, 2)+`
		ORDER BY c.id LIMIT $3`, tenantID, model, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[EntryToEmbed])
	if err != nil {
		return nil, fmt.Errorf("listing entries to embed: %w", err)
	}
	return out, nil
}

// SaveEmbeddings stores the vector of model of each entry (vectors[i] of
// entries[i], the text of hash entries[i].Hash), replacing the one it had.
// An entry deleted meanwhile, or not the tenant's, is skipped; one edited
// meanwhile keeps the hash of the text embedded, so it stays to embed.
func (d *Knowledge) SaveEmbeddings(ctx context.Context, tenantID, model string, entries []EntryToEmbed, vectors [][]float32) error {
	if len(entries) != len(vectors) {
		return fmt.Errorf("saving embeddings: %d vectors for %d entries", len(vectors), len(entries))
	}
	ids := make([]string, len(entries))
	hashes := make([][]byte, len(entries))
	blobs := make([][]byte, len(entries))
	for i, e := range entries {
		ids[i], hashes[i], blobs[i] = e.ID, e.Hash, encodeVector(vectors[i])
	}
	_, err := d.pool.Exec(ctx, `INSERT INTO corpus_embeddings AS e (entry_id, tenant_id, model, text_hash, embedding)
		SELECT c.id, c.tenant_id, $2, v.hash, v.embedding
		FROM unnest($3::uuid[], $4::bytea[], $5::bytea[]) AS v (id, hash, embedding)
		JOIN corpus_entries c ON c.id = v.id AND c.tenant_id = $1
		ON CONFLICT (entry_id) DO UPDATE SET model = excluded.model, text_hash = excluded.text_hash,
			embedding = excluded.embedding, embedded_at = now()`,
		tenantID, model, ids, hashes, blobs)
	if err != nil {
		return fmt.Errorf("saving embeddings: %w", err)
	}
	return nil
}

// CorpusVectors reads the vectors of model of those of the tenant's entries
// ids that have one, in one statement (agent.Store).
func (d *Knowledge) CorpusVectors(ctx context.Context, tenantID, model string, ids []string) ([]parley.CorpusVector, error) {
	rows, _ := d.pool.Query(ctx, `SELECT entry_id, text_hash, embedding FROM corpus_embeddings
		WHERE tenant_id = $1 AND model = $2 AND entry_id = ANY($3::uuid[])`, tenantID, model, ids)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (parley.CorpusVector, error) {
		var v parley.CorpusVector
		var blob []byte
		if err := row.Scan(&v.EntryID, &v.TextHash, &blob); err != nil {
			return v, err
		}
		v.Vector = decodeVector(blob)
		return v, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading corpus vectors: %w", err)
	}
	return out, nil
}

// TenantsToEmbed is up to limit tenants with an active entry without a
// vector of their endpoint's model for its current text: the tenant's own
// endpoint's, else operatorModel ("": the operator has none). It is the
// periodic scan's (the writes enqueue their own job), and reads every
// active entry's text of those tenants, to hash it.
func (d *Knowledge) TenantsToEmbed(ctx context.Context, operatorModel string, limit int) ([]string, error) {
	model := `coalesce(` + tenantEmbedModelSQL + `, nullif($1, ''))`
	rows, _ := d.pool.Query(ctx, `SELECT DISTINCT c.tenant_id
		FROM tenants t JOIN corpus_entries c ON c.tenant_id = t.id
		LEFT JOIN corpus_embeddings e ON e.entry_id = c.id
		WHERE (t.embeddings_url IS NOT NULL OR $1 <> '') AND c.is_active
		AND (e.entry_id IS NULL OR e.model <> `+model+` OR e.text_hash <> `+embeddingHashSQL+`) LIMIT $2`, operatorModel, limit)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing tenants to embed: %w", err)
	}
	return out, nil
}

// EnqueueEmbeds enqueues the embedding job of each tenant (one waiting per
// tenant at most: EmbedCorpusArgs.InsertOpts), in one transaction.
func (d *Knowledge) EnqueueEmbeds(ctx context.Context, tenantIDs []string) error {
	if len(tenantIDs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(tenantIDs))
	for i, id := range tenantIDs {
		params[i] = river.InsertManyParams{Args: EmbedCorpusArgs{TenantID: id}}
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := d.jobs.InsertManyTx(ctx, tx, params); err != nil {
			return fmt.Errorf("enqueuing corpus embeddings: %w", err)
		}
		return nil
	})
}

// encodeVector is v as little-endian float32 bytes, the column's format.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads encodeVector's bytes (a trailing partial value is
// dropped).
func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
