package visitors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// SessionVerification returns how the session's conversation verified its
// visitor, or nil when it did not (or there is no conversation yet). The
// visitor verified is never Anonymous: it was proved to be someone.
func (d *Visitors) SessionVerification(ctx context.Context, tenantID, sessionID string) (*parley.SessionVerification, error) {
	rows, _ := d.pool.Query(ctx, `SELECT c.verified_by, v.id, v.tenant_id, v.email, v.display_name, v.phone,
			v.auth_provider, v.external_id, v.metadata, v.created_at, v.updated_at
		FROM conversations c LEFT JOIN visitors v ON v.id = c.verified_visitor_id
		WHERE c.tenant_id = $1 AND c.session_id = $2 AND c.verified_at IS NOT NULL`, tenantID, sessionID)
	var (
		sv parley.SessionVerification
		id *string
		v  parley.Visitor
	)
	found := false
	_, err := pgx.ForEachRow(rows, []any{&sv.By, &id, &v.TenantID, &v.Email, &v.DisplayName, &v.Phone,
		&v.AuthProvider, &v.ExternalID, &v.Metadata, &v.CreatedAt, &v.UpdatedAt}, func() error {
		found = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the session's verification: %w", err)
	}
	if !found {
		return nil, nil
	}
	if id != nil {
		v.ID = *id
		sv.Visitor = &v
	}
	return &sv, nil
}

// SaveVerificationCode stores the code just made for the conversation,
// replacing the one before with fresh tries, unless a code went to the
// conversation or to this address within throttle: it then stores nothing
// and returns how long to wait. Saves of one tenant take turns (a
// transaction lock), so that requests racing for one address or one
// conversation cannot each read "nothing sent yet" and each send a code.
func (d *Visitors) SaveVerificationCode(ctx context.Context, tenantID, conversationID string, code parley.VerificationCode, now time.Time, throttle time.Duration) (time.Duration, error) {
	var wait time.Duration
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('verification:' || $1::text, 0))`, tenantID); err != nil {
			return fmt.Errorf("waiting for the tenant's verification codes: %w", err)
		}
		var last *time.Time
		if err := tx.QueryRow(ctx, `SELECT max(sent_at) FROM verification_codes
			WHERE tenant_id = $1 AND (conversation_id = $2 OR lower(email) = lower($3))`,
			tenantID, conversationID, code.Email).Scan(&last); err != nil {
			return fmt.Errorf("reading the last verification code: %w", err)
		}
		if last != nil && last.After(now.Add(-throttle)) {
			wait = max(last.Add(throttle).Sub(now), time.Second)
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO verification_codes (conversation_id, tenant_id, email, code_hash, salt, attempts, sent_at, expires_at)
			VALUES ($2, $1, $3, $4, $5, 0, $6, $7)
			ON CONFLICT (conversation_id) DO UPDATE SET email = EXCLUDED.email, code_hash = EXCLUDED.code_hash,
				salt = EXCLUDED.salt, attempts = 0, sent_at = EXCLUDED.sent_at, expires_at = EXCLUDED.expires_at`,
			tenantID, conversationID, code.Email, code.Hash, code.Salt, now, code.ExpiresAt); err != nil {
			return fmt.Errorf("storing a verification code: %w", err)
		}
		return nil
	})
	return wait, err
}

// DeleteVerificationCode forgets the conversation's code (one that could
// not be sent).
func (d *Visitors) DeleteVerificationCode(ctx context.Context, tenantID, conversationID string) error {
	_, err := d.pool.Exec(ctx, `DELETE FROM verification_codes WHERE tenant_id = $1 AND conversation_id = $2`, tenantID, conversationID)
	return err
}

// TryVerificationCode counts one try of the conversation's code and returns
// it for the caller to compare, with parley.CodeTryOK; when no try can be
// counted it says why (parley.CodeTry...).
func (d *Visitors) TryVerificationCode(ctx context.Context, tenantID, conversationID string, now time.Time, maxTries int) (parley.VerificationCode, string, error) {
	var c parley.VerificationCode
	err := d.pool.QueryRow(ctx, `UPDATE verification_codes SET attempts = attempts + 1
		WHERE tenant_id = $1 AND conversation_id = $2 AND attempts < $3 AND expires_at > $4
		RETURNING email, code_hash, salt, attempts, expires_at`, tenantID, conversationID, maxTries, now).
		Scan(&c.Email, &c.Hash, &c.Salt, &c.Attempts, &c.ExpiresAt)
	if err == nil {
		return c, parley.CodeTryOK, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return c, "", fmt.Errorf("counting a verification code try: %w", err)
	}
	err = d.pool.QueryRow(ctx, `SELECT attempts, expires_at FROM verification_codes WHERE tenant_id = $1 AND conversation_id = $2`,
		tenantID, conversationID).Scan(&c.Attempts, &c.ExpiresAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return c, parley.CodeTryNone, nil
	case err != nil:
		return c, "", fmt.Errorf("reading a verification code: %w", err)
	case !c.ExpiresAt.After(now):
		return c, parley.CodeTryExpired, nil
	default:
		return c, parley.CodeTryExhausted, nil
	}
}

// VerifyConversationByCode makes the conversation the verified one of the
// tenant's visitor with this email (found, else created), links the
// conversation's anonymous visitor to it (linkAnonymous), and forgets the
// code, in one transaction. Other tenants' visitors are never looked at.
func (d *Visitors) VerifyConversationByCode(ctx context.Context, tenantID, conversationID, email string, now time.Time) (parley.Visitor, error) {
	email = strings.TrimSpace(email)
	var v parley.Visitor
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO visitors (tenant_id, email, auth_provider) VALUES ($1, $2, 'email')
			ON CONFLICT (tenant_id, lower(email)) WHERE email IS NOT NULL DO NOTHING`, tenantID, email); err != nil {
			return fmt.Errorf("creating the verified visitor: %w", err)
		}
		rows, _ := tx.Query(ctx, `SELECT `+visitorColumns+` FROM visitors WHERE tenant_id = $1 AND lower(email) = lower($2)`, tenantID, email)
		var err error
		if v, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Visitor]); err != nil {
			return fmt.Errorf("reading the verified visitor: %w", err)
		}
		// The anonymous visitor the conversation had, if any, is the
		// verified visitor's from now on: linked, its facts moved.
		if err := linkConversationAnonymous(ctx, tx, tenantID, conversationID, v.ID, now); err != nil {
			return err
		}
		if err := markVerified(ctx, tx, tenantID, conversationID, &v.ID, parley.VerifiedByCode, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM verification_codes WHERE tenant_id = $1 AND conversation_id = $2`, tenantID, conversationID)
		return err
	})
	return v, err
}

// TryVerificationChallenge counts one answer to the context webhook's
// challenge id in the conversation, reporting false when maxTries answers
// were given already.
func (d *Visitors) TryVerificationChallenge(ctx context.Context, tenantID, conversationID, challengeID string, maxTries int) (bool, error) {
	tag, err := d.pool.Exec(ctx, `INSERT INTO verification_challenges (conversation_id, challenge_id, attempts)
		SELECT id, $3, 1 FROM conversations WHERE tenant_id = $1 AND id = $2
		ON CONFLICT (conversation_id, challenge_id) DO UPDATE SET attempts = verification_challenges.attempts + 1
		WHERE verification_challenges.attempts < $4`, tenantID, conversationID, pgbase.StorableKey(challengeID), maxTries)
	if err != nil {
		return false, fmt.Errorf("counting a challenge answer: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// VerifyConversationByChallenge marks the conversation verified by the
// context webhook's challenge, for its visitor (nil when anonymous).
func (d *Visitors) VerifyConversationByChallenge(ctx context.Context, tenantID, conversationID string, visitorID *string, now time.Time) error {
	return markVerified(ctx, d.pool, tenantID, conversationID, visitorID, parley.VerifiedByChallenge, now)
}

func markVerified(ctx context.Context, q pgbase.Querier, tenantID, conversationID string, visitorID *string, by string, now time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE conversations SET verified_visitor_id = $3, verified_by = $4, verified_at = $5,
			visitor_id = coalesce($3, visitor_id), updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenantID, conversationID, visitorID, by, now)
	if err != nil {
		return fmt.Errorf("marking the conversation verified: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	return nil
}
