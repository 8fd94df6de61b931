// Package db is Parley's data access: a pgx pool, transactions and one file of
// SQL per aggregate. Every query on tenant-owned data filters by tenant.
//
// The aggregates with few ties to the rest have a package of their own below
// db, with their store and the write and read shapes they own: knowledge (the
// knowledge base), webhooks (endpoints, events and deliveries), accounts
// (users, tokens, OAuth), visitors, and listing (the listings and stats of
// conversations and submissions). DB embeds their stores, so their methods
// are DB's. What their SQL shares is db/internal/pgbase. Here stay the
// tenants, segments, tools, products and connectors' settings, the
// conversations and their turns (the session lease, the pipeline of
// OpenTurn, the rate counters, instances), submissions, voice, the chat's
// configuration cache, and the bulk seeding of conversations that the
// benchmarks and the listing's tests use (CopySeedConversations).
package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/db/gaps"
	"github.com/parley/parley/db/idempotency"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/db/origins"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/db/typing"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/db/webhooks"
)

// DB is the handle every store method hangs off.
type DB struct {
	pool *pgxpool.Pool
	// jobs inserts River jobs (a submission's webhook deliveries) inside the
	// transactions that change the data they are about; the stores below db
	// share it.
	jobs *river.Client[pgx.Tx]
	// chat is the chat's configuration cache (ChatTenantAndSegment,
	// ChatPromptData).
	chat chatConfigCache
	// replies writes the replies of concurrent turns together (saveReply).
	replies writeQueue[*pendingReply]
	// opens writes the visitors' messages of concurrent turns together
	// (OpenTurn).
	opens writeQueue[*pendingOpen]

	// The stores of the aggregates that have a package of their own: their
	// methods are the DB's.
	*knowledge.Knowledge
	*webhooks.Webhooks
	*accounts.Accounts
	*visitors.Visitors
	*listing.Listings
	*business.Business
	*typing.Typing
	*origins.Origins
	*idempotency.Keys
	*testset.Store
	*audit.Log
	*gaps.Gaps
}

// JobFetchCooldown is River's FetchCooldown, for the working client (jobs.NewClient)
// and the insert-only one alike. A queue fetches at most this often, so its
// workers over it bound its throughput (River's default, 100 ms, held 100
// delivery workers to 1,000 deliveries a second); and an instance notifies a
// queue of inserts at most this often, which bounds how long a new job waits
// to be fetched.
const JobFetchCooldown = 20 * time.Millisecond

// NewJobClient returns an insert-only River client: it inserts and cancels jobs
// inside our transactions, runs nothing and needs no pool of its own. mw is
// River's middleware around its inserts (the traces').
func NewJobClient(mw ...rivertype.Middleware) (*river.Client[pgx.Tx], error) {
	c, err := river.NewClient(riverpgxv5.New(nil), &river.Config{FetchCooldown: JobFetchCooldown, Middleware: mw})
	if err != nil {
		return nil, fmt.Errorf("building the River insert-only client: %w", err)
	}
	return c, nil
}

// Option is a choice of Open and New beyond the database's address: what
// traces the pool's statements and the jobs' inserts.
type Option func(*options)

type options struct {
	tracer pgx.QueryTracer
	jobMW  []rivertype.Middleware
}

// WithQueryTracer traces the pool's statements with t (pgx's QueryTracer,
// and BatchTracer when t implements it); nil traces nothing.
func WithQueryTracer(t pgx.QueryTracer) Option {
	return func(o *options) { o.tracer = t }
}

// WithJobMiddleware runs mw around the jobs the stores insert (River's
// JobInsertMiddleware: the traces' carries the inserting request's trace
// into the job).
func WithJobMiddleware(mw ...rivertype.Middleware) Option {
	return func(o *options) { o.jobMW = mw }
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Open connects a pool to url and checks that the database answers.
// maxConns overrides the pool size when positive.
func Open(ctx context.Context, url string, maxConns int32, opts ...Option) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if o := collect(opts); o.tracer != nil {
		cfg.ConnConfig.Tracer = o.tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to database: %w", err)
	}
	d, err := New(pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

// New makes the store of an open pool, with its own insert-only River
// client (NewJobClient): built here, never at package initialisation. Of
// opts, New uses the jobs' middleware (the query tracer is the pool's:
// Open's).
func New(pool *pgxpool.Pool, opts ...Option) (*DB, error) {
	c, err := NewJobClient(collect(opts).jobMW...)
	if err != nil {
		return nil, err
	}
	return &DB{pool: pool, jobs: c,
		Knowledge: knowledge.New(pool, c),
		Webhooks:  webhooks.New(pool, c),
		Accounts:  accounts.New(pool, c),
		Visitors:  visitors.New(pool),
		Listings:  listing.New(pool),
		Business:  business.New(pool),
		Typing:    typing.New(pool, ConversationChannel),
		Origins:   origins.New(pool),
		Keys:      idempotency.New(pool),
		Store:     testset.New(pool, c),
		Log:       audit.New(pool),
		Gaps:      gaps.New(pool),
	}, nil
}

// Pool is the store's connection pool, for the libraries that bring their
// own SQL (River's driver, the admin session store, goose). Our reads and
// writes are the store's methods: nothing outside db writes SQL.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Close releases the pool.
func (d *DB) Close() { d.pool.Close() }

// Ping reports whether the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.pool.Ping(ctx) }
