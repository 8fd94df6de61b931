package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
)

// Embedding the corpus, when an embedding endpoint is configured (issue 34):
// the operator's (PARLEY_EMBEDDINGS_*) or a tenant's own, which wins for its
// entries. Every corpus write of a tenant with an endpoint enqueues its job
// (knowledge.EmbedCorpusArgs, in the write's transaction), and a periodic scan
// enqueues the job of any tenant with entries left to embed (entries
// written before the endpoint was configured, a model changed, a job given
// up on).
const (
	// EmbedWorkers is how many tenants' jobs an instance runs at once, each
	// one request to the endpoint at a time.
	EmbedWorkers = 2
	// embedBatch is how many entries one request embeds (agent.EmbedBatch).
	embedBatch = 64
	// embedBudget is how long a job starts new requests for; what is left
	// then goes to the job's next run, at once. A request may take
	// embedRequestTimeout more, within JobTimeout.
	embedBudget         = 10 * time.Second
	embedRequestTimeout = 15 * time.Second
	// embedScanInterval is how often every tenant's entries are checked
	// for one left to embed; the scan hashes every active entry's text.
	embedScanInterval = 15 * time.Minute
	embedScanBatch    = 1000
)

// Embedder makes the vectors of texts: llm.Embedder (jobs does not
// import the model clients: web passes them in).
type Embedder interface {
	// Model names the vectors, as stored.
	Model() string
	// Embed returns a unit-length vector per input, in order.
	Embed(ctx context.Context, inputs []string) ([][]float32, error)
}

// Embeddings are the endpoints the jobs embed at.
type Embeddings struct {
	// Operator is the operator's endpoint; nil for none.
	Operator Embedder
	// Own builds the embedder of a tenant's own endpoint, for a tenant
	// that set one (llm.EmbedderFor); nil leaves tenants' endpoints
	// unused.
	Own func(t parley.Tenant) (Embedder, error)
}

// on says whether any endpoint may be used: the jobs are registered.
func (e Embeddings) on() bool { return e.Operator != nil || e.Own != nil }

// of is the embedder of the tenant's entries: its own endpoint's, else the
// operator's; nil for none.
func (e Embeddings) of(ctx context.Context, store *db.DB, tenantID string) (Embedder, error) {
	if e.Own != nil {
		t, err := store.TenantByID(ctx, tenantID)
		if err != nil {
			return nil, err
		}
		if t.EmbeddingsURL != nil {
			return e.Own(t)
		}
	}
	return e.Operator, nil
}

// EmbedCorpusWorker embeds a tenant's active entries whose vector is
// missing or of an older text (or of another model), in batches; an
// unchanged entry is never sent again. A failed request fails the job,
// which River retries later (the batches saved before it stay saved); the
// failure is kept for the owner to see (db.RecordEmbedOutcome).
type EmbedCorpusWorker struct {
	river.WorkerDefaults[knowledge.EmbedCorpusArgs]
	DB         *db.DB
	Embeddings Embeddings
}

// Work embeds the tenant's entries, and snoozes at once to go on where
// embedBudget ran out.
func (w *EmbedCorpusWorker) Work(ctx context.Context, job *river.Job[knowledge.EmbedCorpusArgs]) error {
	_, done, err := w.EmbedTenant(ctx, job.Args.TenantID, embedBudget)
	if err != nil {
		return err
	}
	if !done {
		return river.JobSnooze(0)
	}
	return nil
}

// EmbedTenant embeds the tenant's entries left to embed, starting new
// requests for budget; it reports how many it embedded and whether none
// is left. It reads again after each batch until it finds none, so that
// entries written while it runs, whose writes found this job already
// running and enqueued none, are taken too.
func (w *EmbedCorpusWorker) EmbedTenant(ctx context.Context, tenantID string, budget time.Duration) (int, bool, error) {
	embedder, err := w.Embeddings.of(ctx, w.DB, tenantID)
	if err != nil {
		if parley.ErrorKind(err) == parley.KindNotFound {
			return 0, true, nil // the tenant was deleted
		}
		return 0, false, err
	}
	if embedder == nil {
		return 0, true, nil
	}
	model := embedder.Model()
	n, done, err := w.embed(ctx, embedder, tenantID, budget)
	if rerr := w.DB.RecordEmbedOutcome(ctx, tenantID, model, n > 0, err); rerr != nil && err == nil {
		err = rerr
	}
	return n, done, err
}

func (w *EmbedCorpusWorker) embed(ctx context.Context, embedder Embedder, tenantID string, budget time.Duration) (int, bool, error) {
	model := embedder.Model()
	start, n := time.Now(), 0
	for time.Since(start) < budget {
		entries, err := w.DB.EntriesToEmbed(ctx, tenantID, model, embedBatch)
		if err != nil {
			return n, false, err
		}
		if len(entries) == 0 {
			return n, true, nil
		}
		texts := make([]string, len(entries))
		for i, e := range entries {
			texts[i] = e.Text
		}
		rctx, cancel := context.WithTimeout(ctx, embedRequestTimeout)
		vectors, err := embedder.Embed(rctx, texts)
		cancel()
		if err != nil {
			return n, false, fmt.Errorf("embedding %d entries: %w", len(entries), err)
		}
		if err := w.DB.SaveEmbeddings(ctx, tenantID, model, entries, vectors); err != nil {
			return n, false, err
		}
		n += len(entries)
	}
	return n, false, nil
}

// EmbedScanArgs asks for the embedding job of every tenant with entries
// left to embed.
type EmbedScanArgs struct{}

// Kind names the job.
func (EmbedScanArgs) Kind() string { return "corpus_embed_scan" }

// EmbedScanWorker enqueues the embedding job of up to embedScanBatch
// tenants with entries left to embed (the next scan takes the others).
type EmbedScanWorker struct {
	river.WorkerDefaults[EmbedScanArgs]
	DB *db.DB
	// Operator is the operator's endpoint, nil for none: the scan then
	// looks at the tenants with one of their own only.
	Operator Embedder
}

// Work enqueues the jobs.
func (w *EmbedScanWorker) Work(ctx context.Context, job *river.Job[EmbedScanArgs]) error {
	model := ""
	if w.Operator != nil {
		model = w.Operator.Model()
	}
	tenants, err := w.DB.TenantsToEmbed(ctx, model, embedScanBatch)
	if err != nil {
		return err
	}
	return w.DB.EnqueueEmbeds(ctx, tenants)
}

// addEmbedWorkers registers the embedding workers when an endpoint may be
// used (embed.on); NewClient's client then gets their queue and scan
// (addEmbedQueue).
func addEmbedWorkers(workers *river.Workers, store *db.DB, embed Embeddings) {
	if !embed.on() {
		return
	}
	river.AddWorker(workers, &EmbedCorpusWorker{DB: store, Embeddings: embed})
	river.AddWorker(workers, &EmbedScanWorker{DB: store, Operator: embed.Operator})
}

// addEmbedQueue adds the embedding queue and the periodic scan to client,
// when an endpoint may be used. The scan runs at start too: entries
// written before the endpoint was configured are embedded then.
func addEmbedQueue(client *river.Client[pgx.Tx], embed Embeddings) error {
	if !embed.on() {
		return nil
	}
	if err := client.Queues().Add(knowledge.EmbedQueue, river.QueueConfig{MaxWorkers: EmbedWorkers}); err != nil {
		return fmt.Errorf("adding the embedding queue: %w", err)
	}
	client.PeriodicJobs().Add(river.NewPeriodicJob(river.PeriodicInterval(embedScanInterval),
		func() (river.JobArgs, *river.InsertOpts) { return EmbedScanArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true}))
	return nil
}
