package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// statement is one SQL statement of a pipeline, with its arguments.
type statement struct {
	sql  string
	args []any
}

// pipeline sends several transactions to PostgreSQL on one connection in
// one round trip (the protocol's pipelining), all before one Sync: each
// transaction but the last is a block of its own (BEGIN, its statements,
// COMMIT), the last the implicit transaction the Sync ends. So each commits,
// or rolls back on an error, on its own, in order, and a later one sees
// what an earlier one committed; a failed statement skips the rest of the
// pipeline, later transactions included (their statements read
// errSkipped). One Sync rather than one a transaction: PostgreSQL sends
// all the results at once, so the client waits for, and wakes to, one
// answer, not one a transaction (BENCHMARKS.md, issue 41). pgx's Batch, by
// contrast, runs all its statements in one transaction. A transaction's
// statements can therefore depend on
// an earlier transaction only through the database (a row it wrote, or a
// setting of the session: see set_config), never on what it returned, which
// the client reads only once all have run.
//
// read is called for each statement in order, with the transaction's index,
// the statement's index in it and its rows; it may stop reading early (the
// rest are drained). A statement that failed, or that was skipped because
// an earlier one of the pipeline failed, gets rows whose Err is the
// failure (for a skipped one, errSkipped). pipeline's own error is the
// connection's or the protocol's, never a statement's.
//
// The statements are prepared on the connection once (pgx keeps them by
// their text, as it does its own statement cache), so a pipeline costs one
// round trip once its connection has run it before.
//
// A tracer of the pool's connections (pgx.BatchTracer) sees a pipeline as
// one batch of its statements.
func (d *DB) pipeline(ctx context.Context, txs [][]statement, read func(tx, i int, rows pgx.Rows)) (err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquiring a connection: %w", err)
	}
	defer conn.Release()
	c := conn.Conn()
	tracer, _ := c.Config().Tracer.(pgx.BatchTracer)
	if tracer != nil {
		b := &pgx.Batch{}
		for _, tx := range txs {
			for _, st := range tx {
				b.Queue(st.sql, st.args...)
			}
		}
		ctx = tracer.TraceBatchStart(ctx, c, pgx.TraceBatchStartData{Batch: b})
		defer func() { tracer.TraceBatchEnd(ctx, c, pgx.TraceBatchEndData{Err: err}) }()
	}
	sds := make([][]*pgconn.StatementDescription, len(txs))
	for i, tx := range txs {
		sds[i] = make([]*pgconn.StatementDescription, len(tx))
		for j, st := range tx {
			// Prepared by name = text: a map look-up once the connection has it.
			if sds[i][j], err = c.Prepare(ctx, st.sql, st.sql); err != nil {
				return fmt.Errorf("preparing a statement: %w", err)
			}
		}
	}
	var begin, commit *pgconn.StatementDescription
	if len(txs) > 1 {
		if begin, err = c.Prepare(ctx, "BEGIN", "BEGIN"); err == nil {
			commit, err = c.Prepare(ctx, "COMMIT", "COMMIT")
		}
		if err != nil {
			return fmt.Errorf("preparing a statement: %w", err)
		}
	}
	last := len(txs) - 1
	p := c.PgConn().StartPipeline(ctx)
	var eqb pgx.ExtendedQueryBuilder
	for i, tx := range txs {
		if i < last {
			p.SendQueryPrepared(begin.Name, nil, nil, nil)
		}
		for j, st := range tx {
			if err := eqb.Build(c.TypeMap(), sds[i][j], st.args); err != nil {
				_ = p.Close()
				return fmt.Errorf("encoding the arguments of a statement: %w", err)
			}
			// By name, with the portal described: a skipped statement's
			// description is then never taken for the next one's (pgconn
			// keeps SendQueryStatement's descriptions in a queue that a
			// failure before a Sync leaves misaligned).
			p.SendQueryPrepared(sds[i][j].Name, eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
		}
		if i < last {
			p.SendQueryPrepared(commit.Name, nil, nil, nil)
		}
	}
	p.SendPipelineSync()
	if err := p.Flush(); err != nil {
		_ = p.Close()
		return fmt.Errorf("sending a pipeline: %w", err)
	}
	failed := error(nil)
	// control reads the result of a BEGIN or COMMIT, unless the pipeline
	// failed before it.
	control := func() error {
		if failed != nil {
			return nil
		}
		res, err := p.GetResults()
		switch rr, ok := res.(*pgconn.ResultReader); {
		case err != nil && !isPgError(err):
			_ = p.Close()
			return fmt.Errorf("pipeline: %w", err)
		case err != nil:
			failed = err
		case ok:
			if _, err := rr.Close(); err != nil {
				failed = err
			}
		default:
			_ = p.Close()
			return fmt.Errorf("pipeline: a transaction's BEGIN or COMMIT was %T", res)
		}
		return nil
	}
	for i, tx := range txs {
		if i < last {
			if err := control(); err != nil {
				return err
			}
		}
		for j := range tx {
			var rows pgx.Rows
			if failed != nil {
				rows = errRows{errSkipped}
			} else {
				res, err := p.GetResults()
				switch rr, ok := res.(*pgconn.ResultReader); {
				case err != nil && !isPgError(err):
					_ = p.Close() // the connection failed: pgconn closes it
					return fmt.Errorf("pipeline: %w", err)
				case err != nil:
					failed = err
					rows = errRows{err}
				case ok:
					rows = pgx.RowsFromResultReader(c.TypeMap(), rr)
				default:
					err = fmt.Errorf("pipeline: a statement's result was %T", res)
					_ = p.Close()
					return err
				}
			}
			read(i, j, rows)
			rows.Close()
			if tracer != nil {
				tracer.TraceBatchQuery(ctx, c, pgx.TraceBatchQueryData{SQL: tx[j].sql, Args: tx[j].args,
					CommandTag: rows.CommandTag(), Err: rows.Err()})
			}
			// PostgreSQL failed the statement while sending its rows: it
			// skips the rest of the pipeline. An error of the client's
			// (decoding a value) stops nothing on the server.
			if err := rows.Err(); err != nil && failed == nil && isPgError(err) {
				failed = err
			}
		}
		if i < last {
			if err := control(); err != nil {
				return err
			}
		}
	}
	// The Sync's ReadyForQuery; after a failure, PostgreSQL skipped the
	// pipeline's other statements and pgconn their results.
	if res, err := p.GetResults(); err == nil {
		if _, ok := res.(*pgconn.PipelineSync); !ok {
			_ = p.Close()
			return fmt.Errorf("pipeline: expected the end of a pipeline, got %T", res)
		}
	} else if failed == nil {
		_ = p.Close()
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := p.Close(); err != nil && !isPgError(err) { // a statement's error was read already
		return fmt.Errorf("closing a pipeline: %w", err)
	}
	// A failure inside a transaction's block leaves the block open and
	// failed at the Sync: end it, for the connection to go back to the pool
	// usable.
	if c.PgConn().TxStatus() == 'E' {
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return fmt.Errorf("ending a failed pipeline: %w", err)
		}
	}
	return nil
}

// isPgError reports whether err is PostgreSQL's refusal of a statement
// (rather than the connection's failure, or the client's).
func isPgError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

// errSkipped is the error of a pipeline's statement that did not run
// because an earlier statement of its transaction failed.
var errSkipped = errors.New("not run: an earlier statement of its transaction failed")

// errRows are the rows of a statement that failed or did not run.
type errRows struct{ err error }

func (r errRows) Close()                                       {}
func (r errRows) Err() error                                   { return r.err }
func (r errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (r errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (r errRows) Next() bool                                   { return false }
func (r errRows) Scan(...any) error                            { return r.err }
func (r errRows) Values() ([]any, error)                       { return nil, r.err }
func (r errRows) RawValues() [][]byte                          { return nil }
func (r errRows) Conn() *pgx.Conn                              { return nil }
func (r errRows) TypeMap() *pgtype.Map                         { return nil }
