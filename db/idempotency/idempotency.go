// Package idempotency is the store of the management API's idempotency
// keys (migration 00059): a create sent with an Idempotency-Key claims the
// key for its tenant and credential (ClaimIdempotencyKey), and its answer
// is kept under it (KeepIdempotentAnswer) or the key given back
// (ReleaseIdempotencyKey) when the answer is not to be replayed (a 5xx). A
// key sent again finds the answer kept, the request still running, or
// another request's fingerprint. Keys live Kept (24 h); each claim deletes
// a few of the tenant's expired keys, so the table holds about a day of
// keys without a job. Every query filters by tenant. db.DB embeds its
// store, so that its methods are the DB's.
package idempotency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley/db/internal/pgbase"
)

// Kept is how long a key and its answer are kept: a request sent again
// later runs again.
const Kept = 24 * time.Hour

// Abandoned is how long a key may stay claimed by a request that never
// kept nor released it (its instance stopped, the database was out of
// reach as it ended): after it, the key is claimed afresh.
const Abandoned = 5 * time.Minute

// purgeBatch bounds the expired keys one claim deletes: about one a claim
// is added, so a tenant's expired keys never pile up.
const purgeBatch = 20

// Request is one request's claim on a key: the tenant, the credential's
// scope ("token:<id>", "oauth:<client id>"), the key, the SHA-256 of the
// request (method, path, body), and the time of the claim.
type Request struct {
	TenantID    string
	Scope       string
	Key         string
	Fingerprint [32]byte
	Now         time.Time
}

// Answer is a kept answer: its status, the headers replayed with it and
// its body, sealed by the caller with the secret box (a create's answer
// may hold a secret shown once: db/sealed lists the column).
type Answer struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// Outcome is what a claim found.
type Outcome int

// The outcomes of a claim.
const (
	// Claimed: the key is this request's now; run it, then Keep or Release.
	Claimed Outcome = iota
	// Replay: the key's request was answered; its Answer is the answer.
	Replay
	// Reused: the key was claimed by a request of another fingerprint.
	Reused
	// InUse: the key's request is still running.
	InUse
)

// Keys is the store of the idempotency keys.
type Keys struct{ pool *pgxpool.Pool }

// New makes the store over pool.
func New(pool *pgxpool.Pool) *Keys { return &Keys{pool: pool} }

// ClaimIdempotencyKey claims r's key for r, or says what holds it: one round trip. A key
// older than Kept, or claimed and left running for longer than Abandoned,
// is claimed afresh. The tenant's expired keys are deleted with it, a few
// at a time.
func (k *Keys) ClaimIdempotencyKey(ctx context.Context, r Request) (Outcome, Answer, error) {
	expired, abandoned := r.Now.Add(-Kept), r.Now.Add(-Abandoned)
	b := &pgx.Batch{}
	// The claim commits without waiting for the disk: a crash of
	// PostgreSQL can lose it only with nothing the request wrote after it
	// (the request's own synchronous commit flushes it first), and a
	// request that wrote nothing answers the same when run again.
	b.Queue(`SELECT ` + pgbase.AsyncCommit)
	b.Queue(`DELETE FROM idempotency_keys WHERE tenant_id = $1 AND (scope, key) IN (
		SELECT scope, key FROM idempotency_keys WHERE tenant_id = $1 AND created_at < $2 LIMIT $3)`, r.TenantID, expired, purgeBatch)
	var claimed bool
	var fp []byte
	var state *string
	var a Answer
	b.Queue(`WITH claim AS (
			INSERT INTO idempotency_keys AS k (tenant_id, scope, key, fingerprint, state, created_at)
			VALUES ($1, $2, $3, $4, 'running', $5)
			ON CONFLICT (tenant_id, scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, state = 'running',
				status = NULL, headers = NULL, body = NULL, created_at = EXCLUDED.created_at
			WHERE k.created_at < $6 OR (k.state = 'running' AND k.created_at < $7)
			RETURNING 1)
		SELECT EXISTS (SELECT FROM claim), k.fingerprint, k.state, coalesce(k.status, 0), k.headers, k.body
		FROM (SELECT) AS one LEFT JOIN idempotency_keys k ON k.tenant_id = $1 AND k.scope = $2 AND k.key = $3`,
		r.TenantID, r.Scope, r.Key, r.Fingerprint[:], r.Now, expired, abandoned).QueryRow(func(row pgx.Row) error {
		return row.Scan(&claimed, &fp, &state, &a.Status, &a.Headers, &a.Body)
	})
	if err := k.pool.SendBatch(ctx, b).Close(); err != nil {
		return 0, Answer{}, fmt.Errorf("claiming an idempotency key: %w", err)
	}
	switch {
	case claimed:
		return Claimed, Answer{}, nil
	case state == nil:
		// Claimed by a request that committed after this statement's
		// snapshot was taken: it runs now.
		return InUse, Answer{}, nil
	case !bytes.Equal(fp, r.Fingerprint[:]):
		return Reused, Answer{}, nil
	case *state == "running":
		return InUse, Answer{}, nil
	}
	return Replay, a, nil
}

// errLost is a kept or released claim that was not r's any more (claimed
// afresh after Abandoned).
var errLost = errors.New("the idempotency key was claimed again")

// KeepIdempotentAnswer keeps the answer a of r's claimed request, for requests sent again
// with its key.
func (k *Keys) KeepIdempotentAnswer(ctx context.Context, r Request, a Answer) error {
	tag, err := k.pool.Exec(ctx, `UPDATE idempotency_keys SET state = 'done', status = $6, headers = $7, body = $8
		WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND fingerprint = $4 AND created_at = $5 AND state = 'running'`,
		r.TenantID, r.Scope, r.Key, r.Fingerprint[:], r.Now, a.Status, a.Headers, a.Body)
	if err == nil && tag.RowsAffected() == 0 {
		err = errLost
	}
	if err != nil {
		return fmt.Errorf("keeping an idempotent answer: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey gives r's claimed key back: the same request sent again runs
// again.
func (k *Keys) ReleaseIdempotencyKey(ctx context.Context, r Request) error {
	_, err := k.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND fingerprint = $4 AND created_at = $5 AND state = 'running'`,
		r.TenantID, r.Scope, r.Key, r.Fingerprint[:], r.Now)
	if err != nil {
		return fmt.Errorf("releasing an idempotency key: %w", err)
	}
	return nil
}
