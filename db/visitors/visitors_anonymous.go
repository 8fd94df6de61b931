package visitors

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// anonymousKey is what is stored of an anonymous id: its SHA-256. The id
// itself, which is all a browser needs to be taken for that visitor, is
// kept nowhere but in the browser.
func anonymousKey(anonymousID string) []byte {
	k := sha256.Sum256([]byte(anonymousID))
	return k[:]
}

// AnonymousKey is what is stored of an anonymous id (anonymousKey): the
// argument $2 of ResolveAnonymousSQL.
func AnonymousKey(anonymousID string) []byte { return anonymousKey(anonymousID) }

// ResolveAnonymousSQL is ResolveAnonymousVisitor's statement: the visitor
// of tenant $1 whose anonymous id has the key $2, inserted when there is
// none; one row, or none when a concurrent first message inserted it after
// the statement began (its snapshot does not see the row its insert waited
// for). With a condition (an SQL boolean over later arguments, "" for none),
// it inserts and reads nothing unless the condition holds.
func ResolveAnonymousSQL(cond string) string {
	where, and := "", ""
	if cond != "" {
		where, and = " WHERE "+cond, " AND "+cond
	}
	return `WITH ins AS (
			INSERT INTO visitors (tenant_id, anonymous_key, auth_provider) SELECT $1, $2, 'anonymous'` + where + `
			ON CONFLICT (tenant_id, anonymous_key) WHERE anonymous_key IS NOT NULL DO NOTHING
			RETURNING ` + visitorColumns + `)
		SELECT * FROM ins
		UNION ALL
		SELECT ` + visitorColumns + ` FROM visitors WHERE tenant_id = $1 AND anonymous_key = $2` + and + `
		LIMIT 1`
}

// ResolveAnonymousVisitor finds the tenant's visitor of this anonymous id
// (parley.ValidAnonymousID), creating it on the id's first message (with
// authProvider "anonymous"), in one round trip. Another tenant's visitor of
// the same id is another visitor.
func (d *Visitors) ResolveAnonymousVisitor(ctx context.Context, tenantID, anonymousID string) (parley.Visitor, error) {
	if !parley.ValidAnonymousID(anonymousID) {
		return parley.Visitor{}, parley.InvalidAnonymousID()
	}
	key := anonymousKey(anonymousID)
	// The statement's snapshot does not see a row a concurrent first
	// message inserted after it began, which its insert waited for: no row
	// then, and the second try reads the winner's.
	for range 2 {
		rows, _ := d.pool.Query(ctx, ResolveAnonymousSQL(""), tenantID, key)
		v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Visitor])
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return parley.Visitor{}, fmt.Errorf("resolving an anonymous visitor: %w", err)
		}
		return v, nil
	}
	return parley.Visitor{}, errors.New("resolving an anonymous visitor: no row after two tries")
}

// LinkAnonymousVisitor links the tenant's anonymous visitor of this
// anonymous id, if there is one, to the verified visitor visitorID: the
// link is recorded on the anonymous visitor and its memory facts move to
// the verified one (linkAnonymous). It costs one read when there is nothing
// to do: no such anonymous visitor, or one linked to visitorID already with
// no fact left to move.
func (d *Visitors) LinkAnonymousVisitor(ctx context.Context, tenantID, anonymousID, visitorID string, now time.Time) error {
	if !parley.ValidAnonymousID(anonymousID) {
		return parley.InvalidAnonymousID()
	}
	if !pgbase.LooksLikeUUID(visitorID) {
		return parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	var anonID string
	var done bool
	err := d.pool.QueryRow(ctx, `SELECT id, linked_visitor_id IS NOT DISTINCT FROM $3::uuid
			AND NOT EXISTS (SELECT 1 FROM memory_facts m WHERE m.visitor_id = v.id)
		FROM visitors v
		WHERE tenant_id = $1 AND anonymous_key = $2 AND email IS NULL AND external_id IS NULL AND id <> $3::uuid`,
		tenantID, anonymousKey(anonymousID), visitorID).Scan(&anonID, &done)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && done {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading an anonymous visitor: %w", err)
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		return linkAnonymous(ctx, tx, tenantID, anonID, visitorID, now)
	})
}

// linkAnonymous links the anonymous visitor anonID to the verified visitor
// visitorID, both the tenant's: the anonymous visitor records the link
// (linked_visitor_id, linked_at), and its memory facts move to the verified
// visitor, but for the keys the verified visitor has already (its own value
// wins) and those beyond its maxFactsPerVisitor, which stay with the
// anonymous visitor. Both rows are locked, in id order, as UpsertMemory
// locks one.
func linkAnonymous(ctx context.Context, tx pgx.Tx, tenantID, anonID, visitorID string, now time.Time) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM visitors WHERE tenant_id = $1 AND id IN ($2, $3)
		ORDER BY id FOR UPDATE) AS locked`, tenantID, anonID, visitorID).Scan(&n); err != nil {
		return fmt.Errorf("locking the visitors to link: %w", err)
	}
	if n != 2 {
		return nil // either was deleted meanwhile
	}
	if _, err := tx.Exec(ctx, `WITH moved AS (
			INSERT INTO memory_facts (tenant_id, visitor_id, key, value, updated_at)
			SELECT $1::uuid, $3::uuid, a.key, a.value, a.updated_at FROM memory_facts a
			WHERE a.visitor_id = $2::uuid
			  AND NOT EXISTS (SELECT 1 FROM memory_facts v WHERE v.visitor_id = $3 AND v.key = a.key)
			ORDER BY a.updated_at DESC, a.key
			LIMIT greatest($4 - (SELECT count(*) FROM memory_facts v WHERE v.visitor_id = $3), 0)
			ON CONFLICT (visitor_id, key) DO NOTHING
			RETURNING key)
		DELETE FROM memory_facts WHERE visitor_id = $2 AND key IN (SELECT key FROM moved)`,
		tenantID, anonID, visitorID, maxFactsPerVisitor); err != nil {
		return fmt.Errorf("moving an anonymous visitor's memory: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE visitors SET linked_visitor_id = $3, linked_at = $4, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenantID, anonID, visitorID, now); err != nil {
		return fmt.Errorf("linking an anonymous visitor: %w", err)
	}
	return nil
}

// linkConversationAnonymous links the conversation's visitor, when it is an
// anonymous one, to the visitor the conversation was just verified as.
func linkConversationAnonymous(ctx context.Context, tx pgx.Tx, tenantID, conversationID, visitorID string, now time.Time) error {
	var anonID string
	err := tx.QueryRow(ctx, `SELECT a.id FROM conversations c JOIN visitors a ON a.id = c.visitor_id
		WHERE c.tenant_id = $1 AND c.id = $2 AND a.tenant_id = $1 AND a.id <> $3
		  AND a.anonymous_key IS NOT NULL AND a.email IS NULL AND a.external_id IS NULL`,
		tenantID, conversationID, visitorID).Scan(&anonID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the conversation's anonymous visitor: %w", err)
	}
	return linkAnonymous(ctx, tx, tenantID, anonID, visitorID, now)
}
