package db

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The transaction-level steps, for the tests of the package's rules; the
// application goes through the store's methods.
var (
	AppendMessage         = appendMessage
	AppendToolHistory     = appendToolHistory
	SetConversationStatus = setConversationStatus
)

// InTx runs fn in one transaction (tests only).
var InTx = (*DB).inTx

// CreateSubmissionInTx stores a submission in tx (tests only).
var CreateSubmissionInTx = (*DB).createSubmissionInTx

// SetSearchIndexFirstMax sets how many matching messages a search reads off
// the trigram index at most before it walks the conversations instead
// (negative: always walk).
func (d *DB) SetSearchIndexFirstMax(n int) { d.indexFirstMax = n }

// AsyncCommit is the FROM item that turns synchronous_commit off for its
// statement's transaction (tests only).
const AsyncCommit = asyncCommit

// Pipeline runs txs (statements without arguments) as pipeline does (tests only).
func (d *DB) Pipeline(ctx context.Context, txs [][]string, read func(tx, i int, rows pgx.Rows)) error {
	sts := make([][]statement, len(txs))
	for i, tx := range txs {
		for _, sql := range tx {
			sts[i] = append(sts[i], statement{sql: sql})
		}
	}
	return d.pipeline(ctx, sts, read)
}

// ErrSkipped is the error of a pipeline's statement that did not run (tests only).
var ErrSkipped = errSkipped

// RateWindowsPlan is PostgreSQL's plan for the rate windows' statement
// (hitWithinSQL) over windows, as a connection that prepared it while
// rate_counters was empty and analyzed would keep it: in a transaction,
// rolled back, that empties the table and analyzes it first, then runs
// byIndex before it when byIndexFirst.
func (d *DB) RateWindowsPlan(ctx context.Context, windows []Window, now time.Time, byIndexFirst bool) (string, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, sql := range []string{"TRUNCATE rate_counters", "ANALYZE rate_counters", "SET LOCAL plan_cache_mode = force_generic_plan"} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return "", err
		}
	}
	if byIndexFirst {
		if _, err := tx.Exec(ctx, byIndex.sql); err != nil {
			return "", err
		}
	}
	st := hitWithinSQL(windows, now, "", nil, "")
	rows, _ := tx.Query(ctx, "EXPLAIN "+st.sql, st.args...)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}
