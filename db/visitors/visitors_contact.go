package visitors

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// NoteContactInTx gives the tenant's visitor the name and email typed into
// a lead form, in the form's transaction tx, so that the team knows who
// wrote. The email goes to contact_email, never to the visitor's identity
// (email, externalId). The name replaces the display name of a visitor
// known by nothing else (no email, no externalId); a visitor whose
// identity is known keeps the name it has, and takes the form's only when
// it has none. Empty values change nothing.
func NoteContactInTx(ctx context.Context, tx pgx.Tx, tenantID, visitorID string, c parley.FormContact) error {
	if c.Name == "" && c.Email == "" {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE visitors SET
		display_name = CASE WHEN $3 = '' THEN display_name
			WHEN email IS NULL AND external_id IS NULL THEN $3
			ELSE coalesce(nullif(display_name, ''), $3) END,
		contact_email = coalesce(nullif($4, ''), contact_email), updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenantID, visitorID, pgbase.StorableKey(c.Name), pgbase.StorableKey(c.Email))
	if err != nil {
		return fmt.Errorf("noting a visitor's contact: %w", err)
	}
	return nil
}

// SessionConversation returns the id of the tenant's conversation of this
// chat session and its visitor's id (nil when it has none), or "" when
// the tenant has no conversation of that session (none yet, another
// tenant's, or a test chat's, which is never a visitor's).
func (d *Visitors) SessionConversation(ctx context.Context, tenantID, sessionID string) (string, *string, error) {
	if sessionID == "" || !pgbase.Storable(sessionID) {
		return "", nil, nil
	}
	var id string
	var visitor *string
	err := d.pool.QueryRow(ctx, `SELECT id, visitor_id FROM conversations
		WHERE tenant_id = $1 AND session_id = $2 AND NOT is_test`, tenantID, sessionID).Scan(&id, &visitor)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading a session's conversation: %w", err)
	}
	return id, visitor, nil
}
