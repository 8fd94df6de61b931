package db

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
	"github.com/parley/parley/db/knowledge"
)

// The transaction-level steps, for the tests of the package's rules; the
// application goes through the store's methods.
var AppendToolHistory = appendToolHistory

// AppendMessage is appendMessage of a message with no sign of a knowledge
// gap.
func AppendMessage(ctx context.Context, q pgbase.Querier, tenantID, conversationID, role, content string, knowledge []parley.KnowledgeRef) (parley.Message, error) {
	return appendMessage(ctx, q, tenantID, conversationID, role, content, knowledge, 0, "")
}

// AppendAnswer is appendMessage of an answer with its signs of a knowledge
// gap and its question's key.
var AppendAnswer = appendMessage

// EscalateConversationTx is escalateConversation: the escalation of a
// turn, in the turn's transaction (tests only).
var EscalateConversationTx = (*DB).escalateConversation

// EscalateConversation marks one of the tenant's conversations as waiting
// for a person, as the model's ESCALATE_TO_HUMAN does, in a transaction of
// its own (tests only).
func (d *DB) EscalateConversation(ctx context.Context, tenantID, id string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return d.escalateConversation(ctx, tx, tenantID, id) })
}

// InTx runs fn in one transaction of d's pool (tests only).
func InTx(d *DB, ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, d.pool, fn)
}

// CreateSubmissionInTx stores a submission in tx (tests only).
var CreateSubmissionInTx = (*DB).createSubmissionInTx

// AsyncCommit is the FROM item that turns synchronous_commit off for its
// statement's transaction (tests only).
const AsyncCommit = pgbase.AsyncCommit

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
	st := hitWithinSQL(windows, now, "", "", 0)
	rows, _ := tx.Query(ctx, "EXPLAIN "+st.sql, st.args...)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// Hit counts one event against key in the fixed window of length window that
// contains now, and returns the count including this one (tests only): the
// production statement, HitWithin's, with one window whose limit no count
// reaches.
func (d *DB) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int, error) {
	counts, _, err := d.HitWithin(ctx, []Window{{Key: key, Length: window, Limit: math.MaxInt32}}, now)
	if err != nil {
		return 0, err
	}
	return counts[0], nil
}

// TakeSessionLease is OpenTurn without the message (tests only): it takes
// the lease of (tenant, session) for holder, a turn of instance (the id
// RegisterInstance gave; "" for none), when nobody holds it, its holder's
// lease expired, or its holder's instance is no longer alive (its heartbeat
// went stale or it shut down), reporting whether it did; then it reads the
// session's state with up to turns recent turns, in the same round trip. It
// holds no lock or connection once it returns.
//
// count, when not nil, is the conversation that the turn will start should
// the session have none (not a test: a test is never counted): the lease's
// statement then counts it against the monthly limit (see
// takeLeaseCountingSQL), and the state says in which month
// (SessionState.Counted), for StartTurn (ConversationStart.Counted), which
// starts the conversation on that count or takes it back.
func (d *DB) TakeSessionLease(ctx context.Context, tenantID, sessionID, holder, instance string, ttl time.Duration, turns int, count *parley.ConversationStart) (bool, parley.SessionState, error) {
	if count != nil && count.Test {
		count = nil
	}
	l, err := d.takeLease(ctx, tenantID, sessionID, holder, instance, ttl, turns, count, nil, "", nil)
	return d.settleTurn(ctx, tenantID, "", l, err)
}

// HasCorpusSummaries reports whether any active entry applying to the
// segment and the locale (as PromptCorpus) has a summary, a blank one
// counting as none, in a statement of its own (tests only): what PromptData
// reads in its batch (HasSummaries), which TestPromptData holds to it.
func (d *DB) HasCorpusSummaries(ctx context.Context, tenantID, segmentID, locale string) (bool, error) {
	seg, err := knowledge.PromptSegment(segmentID)
	if err != nil {
		return false, err
	}
	var found bool
	err = d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM corpus_entries c`+knowledge.PromptScope+fmt.Sprintf(knowledge.LocaleCondition, 3)+`
		AND btrim(c.summary) <> '')`, tenantID, seg, parley.LocaleLanguage(locale)).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("checking corpus summaries: %w", err)
	}
	return found, nil
}

// SaveReplies writes recs' replies as DB.replies writes a batch of them
// (one statement, else each alone), returning each one's message and error.
func (d *DB) SaveReplies(ctx context.Context, recs []parley.TurnRecord) ([]parley.Message, []error) {
	batch := pendingReplies(recs)
	d.writeReplies(ctx, batch)
	ms, errs := make([]parley.Message, len(recs)), make([]error, len(recs))
	for i, p := range batch {
		ms[i], errs[i] = p.m, p.err
	}
	return ms, errs
}

// SaveRepliesTogether is SaveReplies' one statement alone: its error when it
// wrote nothing.
func (d *DB) SaveRepliesTogether(ctx context.Context, recs []parley.TurnRecord) error {
	return d.writeRepliesTogether(ctx, pendingReplies(recs))
}

// pendingReplies is recs as a batch of DB.replies.
func pendingReplies(recs []parley.TurnRecord) []*pendingReply {
	batch := make([]*pendingReply, len(recs))
	for i, r := range recs {
		batch[i] = &pendingReply{r: r}
	}
	return batch
}

// HoldOpens takes the lead of the queue of visitors' messages, as a turn
// whose message is being written does: OpenTurn's meanwhile queue theirs
// (tests only). release hands on, and the first queued writes them all.
func (d *DB) HoldOpens() (release func(), ok bool) {
	if !d.opens.lead() {
		return nil, false
	}
	return d.opens.handOn, true
}

// OpensQueued is how many visitors' messages wait in the queue (tests only).
func (d *DB) OpensQueued() int {
	d.opens.mu.Lock()
	defer d.opens.mu.Unlock()
	return len(d.opens.queue)
}

// WriteOpens stores the messages of turns holding their sessions' leases
// (holders[i]; the lease counted the new conversation when counted[i]) as
// a batch of the queue does (tests only): whether each was stored, and each
// one's error.
func (d *DB) WriteOpens(ctx context.Context, ps []parley.ConversationStart, message string, holders []string, counted []bool) ([]bool, []error) {
	batch := make([]*pendingOpen, len(ps))
	for i := range ps {
		_ = ps[i].Validate()
		batch[i] = &pendingOpen{p: &ps[i], content: message, holder: holders[i], counted: counted[i]}
	}
	d.writeOpens(ctx, batch)
	stored, errs := make([]bool, len(ps)), make([]error, len(ps))
	for i, o := range batch {
		stored[i], errs[i] = o.opened != nil, o.err
	}
	return stored, errs
}
