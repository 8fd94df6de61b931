// Package testset is the store of a bot's own test set (migration 00057):
// the tenant's test questions (cases) with the facts their answer must and
// must not contain, the runs of the set, and each run's results per
// question. A run is started with its results waiting ("pending") and its
// River job (RunArgs) in one transaction, one at a time per tenant; the job
// (jobs.TestRunWorker) writes each result as its question is answered, so
// that a run's progress is the count of results no longer pending. Every
// query filters by tenant. db.DB embeds its store, so that its methods are
// the DB's.
package testset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// The test set's limits: cases per tenant, facts per case (must and must
// not together), and the lengths of a question and of a fact.
const (
	MaxCases    = 200
	MaxFacts    = 10
	MaxQuestion = 1000
	MaxFact     = 200
)

// A run's and a result's statuses.
const (
	RunRunning = "running"
	RunDone    = "done"
	RunFailed  = "failed"

	ResultPending = "pending"
	ResultPassed  = "passed"
	ResultFailed  = "failed"
	ResultError   = "error"
)

// Case is one test question.
type Case struct {
	ID             string
	Question       string
	MustContain    []string
	MustNotContain []string
	// SegmentID is the segment (the bot) the question is asked of; nil
	// asks the tenant's default segment.
	SegmentID *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CaseWrite is a case's content, checked by manage.
type CaseWrite struct {
	Question       string
	MustContain    []string
	MustNotContain []string
	SegmentID      *string
}

// Run is one run of a tenant's test set, with its counts so far.
type Run struct {
	ID     string
	Status string
	// Judge says the tenant's model judged each fact too.
	Judge bool
	Total int
	// PreviousRunID is the tenant's last finished run when this one
	// started: its results are what the change since the last run is
	// measured against.
	PreviousRunID *string
	Error         *string
	StartedAt     time.Time
	FinishedAt    *time.Time
	// Done counts the questions answered and checked; Passed and Failed
	// (errors included) split them.
	Done, Passed, Failed int
}

// Check is the verdict on one fact of a result.
type Check struct {
	Fact string `json:"fact"`
	// Must says the answer must contain the fact; false, it must not.
	Must bool `json:"must"`
	// Found is the plain match: the fact is in the answer (case, accents
	// and spacing aside).
	Found bool `json:"found"`
	// Judged is the model's verdict on whether the answer states the fact,
	// nil when no judge was asked (or it could not answer: JudgeError).
	Judged     *bool  `json:"judged,omitempty"`
	JudgeError string `json:"judgeError,omitempty"`
	// Passed is the fact's verdict: the judge's when it gave one, else the
	// plain match's.
	Passed bool `json:"passed"`
}

// Result is one question of a run.
type Result struct {
	Position       int
	CaseID         string
	Question       string
	MustContain    []string
	MustNotContain []string
	SegmentID      *string
	Status         string
	Answer         *string
	Sources        []parley.KnowledgeRef
	Checks         []Check
	Error          *string
	ConversationID *string
	DurationMS     *int
	// Previous is the case's status in the run's previous run, nil when it
	// was not in it.
	Previous *string
}

// Change is how the result moved since the previous run: "now passing",
// "now failing", or "" (unchanged, new, or not finished).
func (r Result) Change() string {
	if r.Previous == nil || r.Status == ResultPending {
		return ""
	}
	was, is := *r.Previous == ResultPassed, r.Status == ResultPassed
	switch {
	case is && !was:
		return "now passing"
	case was && !is:
		return "now failing"
	}
	return ""
}

// Outcome is what the job writes for one question.
type Outcome struct {
	Status         string
	Answer         string
	Sources        []parley.KnowledgeRef
	Checks         []Check
	Error          string
	ConversationID string
	Duration       time.Duration
}

// RunArgs is the River job of a run; db inserts it as the run starts and
// jobs works it.
type RunArgs struct {
	TenantID string `json:"tenantId"`
	RunID    string `json:"runId"`
}

// Kind names the job.
func (RunArgs) Kind() string { return "test_run" }

// Queue is the River queue of test runs, apart from other work, so that a
// set of slow answers holds up no webhook or sync, nor the reverse.
const Queue = "test_runs"

// InsertOpts puts a run on its queue with a few attempts: a run picks up
// where it stopped, answering only the questions still pending.
func (RunArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue, MaxAttempts: 5} }

// CodeRunning is the code of the refusal of a start while a run is going
// (KindConflict); its Details is the running Run when it could be read.
const CodeRunning = "RUN_IN_PROGRESS"

// Store is the test set's store.
type Store struct {
	pool *pgxpool.Pool
	jobs *river.Client[pgx.Tx]
}

// New makes the store over pool, inserting its jobs with jobs.
func New(pool *pgxpool.Pool, jobs *river.Client[pgx.Tx]) *Store {
	return &Store{pool: pool, jobs: jobs}
}

const caseColumns = `id, question, must_contain, must_not_contain, segment_id, created_at, updated_at`

func notFoundCase() error { return parley.Errorf(parley.KindNotFound, "Test question not found") }

func notFoundRun() error { return parley.Errorf(parley.KindNotFound, "Test run not found") }

// TestCases lists the tenant's cases, oldest first.
func (s *Store) TestCases(ctx context.Context, tenantID string) ([]Case, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+caseColumns+` FROM test_cases WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Case])
	if err != nil {
		return nil, fmt.Errorf("listing test cases: %w", err)
	}
	return list, nil
}

// TestCase reads one of the tenant's cases; another tenant's is not found.
func (s *Store) TestCase(ctx context.Context, tenantID, id string) (Case, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Case{}, notFoundCase()
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+caseColumns+` FROM test_cases WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Case])
	if err != nil {
		return Case{}, pgbase.NotFound(err, "Test question")
	}
	return c, nil
}

// CreateTestCase adds a case within MaxCases (KindRateLimited, code
// LIMIT_REACHED, past it), counted under the tenant's lock so that two
// creates cannot both take the last place.
func (s *Store) CreateTestCase(ctx context.Context, tenantID string, w CaseWrite) (Case, error) {
	var c Case
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM test_cases WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
			return fmt.Errorf("counting test cases: %w", err)
		}
		if n >= MaxCases {
			return &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED",
				Message: fmt.Sprintf("Test question limit reached (%d of %d): delete one before adding another", n, MaxCases),
				Details: map[string]int{"current": n, "limit": MaxCases}}
		}
		rows, _ := tx.Query(ctx, `INSERT INTO test_cases (tenant_id, question, must_contain, must_not_contain, segment_id)
			VALUES ($1, $2, $3, $4, $5) RETURNING `+caseColumns, tenantID, w.Question, w.MustContain, w.MustNotContain, w.SegmentID)
		var err error
		if c, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Case]); err != nil {
			return fmt.Errorf("creating a test case: %w", err)
		}
		return nil
	})
	return c, err
}

// UpdateTestCase replaces one of the tenant's cases' content.
func (s *Store) UpdateTestCase(ctx context.Context, tenantID, id string, w CaseWrite) (Case, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Case{}, notFoundCase()
	}
	rows, _ := s.pool.Query(ctx, `UPDATE test_cases SET question = $3, must_contain = $4, must_not_contain = $5, segment_id = $6,
		updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING `+caseColumns,
		tenantID, id, w.Question, w.MustContain, w.MustNotContain, w.SegmentID)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Case])
	if err != nil {
		return Case{}, pgbase.NotFound(err, "Test question")
	}
	return c, nil
}

// DeleteTestCase deletes one of the tenant's cases; the runs keep its
// results.
func (s *Store) DeleteTestCase(ctx context.Context, tenantID, id string) error {
	if !pgbase.LooksLikeUUID(id) {
		return notFoundCase()
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM test_cases WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("deleting a test case: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFoundCase()
	}
	return nil
}

// runColumns reads a run with its counts (the alias r).
const runColumns = `r.id, r.status, r.judge, r.total, r.previous_run_id, r.error, r.started_at, r.finished_at,
	(SELECT count(*) FILTER (WHERE x.status <> 'pending') FROM test_results x WHERE x.run_id = r.id)::int,
	(SELECT count(*) FILTER (WHERE x.status = 'passed') FROM test_results x WHERE x.run_id = r.id)::int,
	(SELECT count(*) FILTER (WHERE x.status IN ('failed', 'error')) FROM test_results x WHERE x.run_id = r.id)::int`

func queryRun(ctx context.Context, q pgbase.Querier, tenantID, where string, args ...any) (Run, error) {
	rows, _ := q.Query(ctx, `SELECT `+runColumns+` FROM test_runs r WHERE r.tenant_id = $1 AND `+where, append([]any{tenantID}, args...)...)
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Run])
}

// StartTestRun starts a run of the tenant's whole set at now: the run, its
// results pending (each case's question and facts as they are now) and its
// job, in one transaction. A run going already refuses it (KindConflict,
// code RUN_IN_PROGRESS, Details the running Run); so does a set without
// questions (KindInvalid).
func (s *Store) StartTestRun(ctx context.Context, tenantID string, judge bool, now time.Time) (Run, error) {
	var run Run
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		if running, err := queryRun(ctx, tx, tenantID, `r.status = 'running'`); err == nil {
			return &parley.Error{Kind: parley.KindConflict, Code: CodeRunning,
				Message: "A run of your tests is going already: wait for it to finish", Details: running}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("reading the running test run: %w", err)
		}
		var id string
		var total int
		err := tx.QueryRow(ctx, `WITH prev AS (
				SELECT id FROM test_runs WHERE tenant_id = $1 AND status = 'done' ORDER BY started_at DESC, id LIMIT 1),
			run AS (
				INSERT INTO test_runs (tenant_id, status, judge, total, previous_run_id, started_at)
				SELECT $1, 'running', $2, (SELECT count(*) FROM test_cases WHERE tenant_id = $1), (SELECT id FROM prev), $3
				WHERE EXISTS (SELECT 1 FROM test_cases WHERE tenant_id = $1)
				RETURNING id, total)
			SELECT id, total FROM run`, tenantID, judge, now).Scan(&id, &total)
		if errors.Is(err, pgx.ErrNoRows) {
			return &parley.Error{Kind: parley.KindInvalid, Message: "Add a test question before running the tests"}
		}
		if err != nil {
			return fmt.Errorf("starting a test run: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO test_results (run_id, position, tenant_id, case_id, question, must_contain, must_not_contain, segment_id, status)
			SELECT $2, row_number() OVER (ORDER BY created_at, id), $1, id, question, must_contain, must_not_contain, segment_id, 'pending'
			FROM test_cases WHERE tenant_id = $1`, tenantID, id); err != nil {
			return fmt.Errorf("listing a test run's questions: %w", err)
		}
		if _, err := s.jobs.InsertTx(ctx, tx, RunArgs{TenantID: tenantID, RunID: id}, nil); err != nil {
			return fmt.Errorf("queueing a test run: %w", err)
		}
		run, err = queryRun(ctx, tx, tenantID, `r.id = $2`, id)
		return err
	})
	if pgbase.IsUniqueViolation(err, "test_runs_one_running") {
		return Run{}, &parley.Error{Kind: parley.KindConflict, Code: CodeRunning, Message: "A run of your tests is going already: wait for it to finish"}
	}
	return run, err
}

// TestRun reads one of the tenant's runs with its counts.
func (s *Store) TestRun(ctx context.Context, tenantID, id string) (Run, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Run{}, notFoundRun()
	}
	r, err := queryRun(ctx, s.pool, tenantID, `r.id = $2`, id)
	if err != nil {
		return Run{}, pgbase.NotFound(err, "Test run")
	}
	return r, nil
}

// TestRuns lists the tenant's limit latest runs, the latest first.
func (s *Store) TestRuns(ctx context.Context, tenantID string, limit int) ([]Run, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+runColumns+` FROM test_runs r WHERE r.tenant_id = $1
		ORDER BY r.started_at DESC, r.id LIMIT $2`, tenantID, limit)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Run])
	if err != nil {
		return nil, fmt.Errorf("listing test runs: %w", err)
	}
	return list, nil
}

// TestResults lists one of the tenant's runs' results in the set's order,
// each with its case's status in the previous run.
func (s *Store) TestResults(ctx context.Context, tenantID, runID string) ([]Result, error) {
	if !pgbase.LooksLikeUUID(runID) {
		return nil, notFoundRun()
	}
	rows, _ := s.pool.Query(ctx, `SELECT x.position, x.case_id, x.question, x.must_contain, x.must_not_contain, x.segment_id, x.status,
			x.answer, x.sources, x.checks, x.error, x.conversation_id, x.duration_ms, p.status
		FROM test_results x JOIN test_runs r ON r.id = x.run_id AND r.tenant_id = $1
		LEFT JOIN LATERAL (SELECT status FROM test_results p WHERE p.run_id = r.previous_run_id AND p.case_id = x.case_id
			ORDER BY p.position LIMIT 1) p ON true
		WHERE x.tenant_id = $1 AND x.run_id = $2 ORDER BY x.position`, tenantID, runID)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Result])
	if err != nil {
		return nil, fmt.Errorf("listing test results: %w", err)
	}
	return list, nil
}

// PendingTestResults lists the results of one of the tenant's runs still
// to answer, in order.
func (s *Store) PendingTestResults(ctx context.Context, tenantID, runID string) ([]Result, error) {
	rows, _ := s.pool.Query(ctx, `SELECT x.position, x.case_id, x.question, x.must_contain, x.must_not_contain, x.segment_id, x.status,
			x.answer, x.sources, x.checks, x.error, x.conversation_id, x.duration_ms, NULL::text
		FROM test_results x WHERE x.tenant_id = $1 AND x.run_id = $2 AND x.status = 'pending' ORDER BY x.position`, tenantID, runID)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Result])
	if err != nil {
		return nil, fmt.Errorf("listing pending test results: %w", err)
	}
	return list, nil
}

// SaveTestResult records the outcome of one question of a run.
func (s *Store) SaveTestResult(ctx context.Context, tenantID, runID string, position int, o Outcome) error {
	var conv *string
	if o.ConversationID != "" {
		conv = &o.ConversationID
	}
	var msg *string
	if o.Error != "" {
		msg = &o.Error
	}
	if o.Sources == nil {
		o.Sources = []parley.KnowledgeRef{}
	}
	if o.Checks == nil {
		o.Checks = []Check{}
	}
	_, err := s.pool.Exec(ctx, `UPDATE test_results SET status = $4, answer = $5, sources = $6, checks = $7, error = $8,
		conversation_id = $9, duration_ms = $10 WHERE tenant_id = $1 AND run_id = $2 AND position = $3`,
		tenantID, runID, position, o.Status, pgbase.StorableKey(o.Answer), o.Sources, o.Checks, msg, conv, int(o.Duration/time.Millisecond))
	if err != nil {
		return fmt.Errorf("saving a test result: %w", err)
	}
	return nil
}

// FinishTestRun ends one of the tenant's running runs: done, or failed
// with a message (the questions not answered then stay pending).
func (s *Store) FinishTestRun(ctx context.Context, tenantID, runID string, failure string, now time.Time) error {
	status, msg := RunDone, (*string)(nil)
	if failure != "" {
		status, msg = RunFailed, &failure
	}
	_, err := s.pool.Exec(ctx, `UPDATE test_runs SET status = $3, error = $4, finished_at = $5
		WHERE tenant_id = $1 AND id = $2 AND status = 'running'`, tenantID, runID, status, msg, now)
	if err != nil {
		return fmt.Errorf("finishing a test run: %w", err)
	}
	return nil
}
