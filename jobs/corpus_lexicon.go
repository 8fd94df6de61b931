package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley/db"
)

// Lexicon scans: how often tenants' lexicons are checked, and how many are
// rebuilt a run. A lexicon only prunes and corrects the question search's
// words (db.RefreshCorpusLexicon), so one that lags a corpus change by a
// scan still finds every entry by the words it holds.
const (
	LexiconInterval = 20 * time.Second
	lexiconBatch    = 50
)

// CorpusLexiconScanArgs asks for the lexicons of tenants whose corpus moved
// to be rebuilt.
type CorpusLexiconScanArgs struct{}

// Kind names the job.
func (CorpusLexiconScanArgs) Kind() string { return "corpus_lexicon_scan" }

// InsertOpts keeps one scan a period.
func (CorpusLexiconScanArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: LexiconInterval}}
}

// CorpusLexiconScanWorker rebuilds the stale lexicons (db.StaleCorpusLexicons),
// the longest waiting first, at most lexiconBatch a run; a tenant whose
// rebuild fails does not hold up the others, and the job fails with its
// error so that River retries it.
type CorpusLexiconScanWorker struct {
	river.WorkerDefaults[CorpusLexiconScanArgs]
	DB *db.DB
}

// Work rebuilds the stale lexicons.
func (w *CorpusLexiconScanWorker) Work(ctx context.Context, job *river.Job[CorpusLexiconScanArgs]) error {
	stale, err := w.DB.StaleCorpusLexicons(ctx, lexiconBatch)
	if err != nil {
		return err
	}
	var errs []error
	for _, tenantID := range stale {
		if ctx.Err() != nil {
			break
		}
		errs = append(errs, w.DB.RefreshCorpusLexicon(ctx, tenantID))
	}
	return errors.Join(append(errs, ctx.Err())...)
}
