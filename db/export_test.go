package db

import (
	"context"

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
