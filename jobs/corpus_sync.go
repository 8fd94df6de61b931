package jobs

import (
	"context"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/fetch"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
)

// Timing of the corpus URL refresh.
const (
	// RefreshAfter is how old a synced entry's last successful fetch gets before it is refreshed.
	RefreshAfter = 24 * time.Hour

	scanInterval = time.Hour
	scanBatch    = 1000
)

// CorpusSyncArgs asks for one synced corpus entry to be refreshed from its URL.
type CorpusSyncArgs struct {
	TenantID string `json:"tenant_id"`
	EntryID  string `json:"entry_id"`
}

// Kind names the job.
func (CorpusSyncArgs) Kind() string { return "corpus_sync" }

// InsertOpts makes at most one refresh of an entry per hour; a failed fetch
// is recorded on the entry rather than retried by River, so attempts only
// cover database trouble.
func (CorpusSyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: scanInterval}}
}

// CorpusSyncWorker refreshes a synced entry with a conditional request: a
// 304 only moves synced_at; new content replaces the old and clears the
// sync error; a failure keeps the last good content and records the error.
type CorpusSyncWorker struct {
	river.WorkerDefaults[CorpusSyncArgs]
	DB     *db.DB
	Client *http.Client
}

// Work refreshes the entry; an entry deleted or no longer synced is skipped.
func (w *CorpusSyncWorker) Work(ctx context.Context, job *river.Job[CorpusSyncArgs]) error {
	e, err := w.DB.CorpusEntry(ctx, job.Args.TenantID, job.Args.EntryID)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if e.SourceURL == nil || e.SyncedAt == nil {
		return nil
	}
	doc, err := fetch.Document(ctx, w.Client, *e.SourceURL, deref(e.SyncETag), deref(e.SyncLastModified))
	now := time.Now()
	switch {
	case err != nil:
		err = w.DB.RecordCorpusSyncError(ctx, e.TenantID, e.ID, err.Error(), now)
	case doc.NotModified:
		err = w.DB.TouchCorpusSync(ctx, e.TenantID, e.ID, now)
	default:
		err = w.DB.SaveCorpusSync(ctx, e.TenantID, e.ID, knowledge.CorpusSync{Content: doc.Content,
			ETag: doc.ETag, LastModified: doc.LastModified, At: now})
	}
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil // deleted while it was being fetched
	}
	return err
}

// CorpusSyncScanArgs asks for synced entries due for a refresh to be queued.
type CorpusSyncScanArgs struct{}

// Kind names the job.
func (CorpusSyncScanArgs) Kind() string { return "corpus_sync_scan" }

// CorpusSyncScanWorker queues a CorpusSyncArgs job for every synced entry,
// of any tenant, whose last successful fetch is older than RefreshAfter. An
// entry whose refreshes fail stays due, so it is retried at each scan.
type CorpusSyncScanWorker struct {
	river.WorkerDefaults[CorpusSyncScanArgs]
	DB *db.DB
}

// Work queues the due refreshes, oldest first, at most scanBatch a run.
func (w *CorpusSyncScanWorker) Work(ctx context.Context, job *river.Job[CorpusSyncScanArgs]) error {
	due, err := w.DB.DueCorpusSyncs(ctx, time.Now().Add(-RefreshAfter), scanBatch)
	if err != nil || len(due) == 0 {
		return err
	}
	params := make([]river.InsertManyParams, len(due))
	for i, d := range due {
		params[i] = river.InsertManyParams{Args: CorpusSyncArgs{TenantID: d.TenantID, EntryID: d.ID}}
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	_, err = client.InsertMany(ctx, params)
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
