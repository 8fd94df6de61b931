package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// RecentConversations returns the tenant's n most recently active conversations, newest first.
func (d *DB) RecentConversations(ctx context.Context, tenantID string, n int) ([]parley.Conversation, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.ConversationColumns+` FROM conversations
		WHERE tenant_id = $1 AND NOT is_test ORDER BY last_message_at DESC, id LIMIT $2`, tenantID, n)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return nil, fmt.Errorf("listing recent conversations: %w", err)
	}
	return cs, nil
}
