package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/audit"
)

// AuditPruneInterval is how often the audit log is pruned: an entry lives
// at most Keep and this long.
const AuditPruneInterval = 6 * time.Hour

// AuditPruneArgs asks for the audit log's entries older than audit.Keep
// (90 days) to be deleted.
type AuditPruneArgs struct{}

// Kind names the job.
func (AuditPruneArgs) Kind() string { return "audit_prune" }

// AuditPruneWorker deletes every tenant's audit entries past audit.Keep.
type AuditPruneWorker struct {
	river.WorkerDefaults[AuditPruneArgs]
	DB *db.DB
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Work prunes.
func (w *AuditPruneWorker) Work(ctx context.Context, job *river.Job[AuditPruneArgs]) error {
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	_, err := w.DB.PruneAudit(ctx, now.Add(-audit.Keep))
	return err
}
