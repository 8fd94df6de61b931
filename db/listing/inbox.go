package listing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// maxInboxAttention bounds the inbox's top section: a team with more
// conversations waiting than this has them in the list below as well.
const maxInboxAttention = 100

// InboxItem is a conversation of the inbox's top section: waiting for a
// person (ESCALATED) or held by one (HUMAN).
type InboxItem struct {
	parley.Conversation
	// Unanswered is how many of the visitor's messages nobody answered yet:
	// the visitor's messages stored after the last message of the assistant
	// or of a person (all of them when neither wrote). It is what the inbox
	// shows as the conversation's unread messages.
	Unanswered int `db:"unanswered"`
	// LastMessage is the start of the conversation's last message
	// (PreviewRunes characters and one more when it is longer).
	LastMessage *string `db:"last_message"`
}

// InboxAttention lists the tenant's conversations waiting for a person or
// held by one: the waiting first, then the held, each most recently active
// first; at most maxInboxAttention. It reads the partial index of migration
// 00061 (conversations_attention), sorting them itself.
func (d *Listings) InboxAttention(ctx context.Context, tenantID string) ([]InboxItem, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.ConversationColumns+`,
			(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.tenant_id = c.tenant_id AND m.role = 'user'
				AND m.seq > COALESCE((SELECT max(r.seq) FROM messages r
					WHERE r.conversation_id = c.id AND r.tenant_id = c.tenant_id AND r.role <> 'user'), 0)) AS unanswered,
			(SELECT left(l.content, `+fmt.Sprint(PreviewRunes+1)+`) FROM messages l WHERE l.conversation_id = c.id AND l.tenant_id = c.tenant_id
				ORDER BY l.seq DESC LIMIT 1) AS last_message
		FROM conversations c
		WHERE c.tenant_id = $1 AND c.status IN ('ESCALATED', 'HUMAN')
		ORDER BY c.status = 'HUMAN', c.last_message_at DESC
		LIMIT $2`, tenantID, maxInboxAttention)
	items, err := pgx.CollectRows(rows, pgx.RowToStructByName[InboxItem])
	if err != nil {
		return nil, fmt.Errorf("listing the inbox's conversations waiting for a person: %w", err)
	}
	return items, nil
}

// InboxVersion says whether the inbox's top section changed, in one read
// of the partial index (the cost of a poll that finds nothing new).
type InboxVersion struct {
	// Waiting and Held count the conversations waiting for a person and
	// those a person holds.
	Waiting, Held int
	// Changed is the latest change of any of them (a message, a move).
	Changed time.Time
	// LatestEscalation is when the most recently escalated of those
	// waiting was escalated (zero: none waits).
	LatestEscalation time.Time
}

// Key is the version as a string: equal keys, an unchanged top section.
func (v InboxVersion) Key() string {
	return fmt.Sprintf("%d-%d-%d-%d", v.Waiting, v.Held, v.Changed.UnixMicro(), v.LatestEscalation.UnixMicro())
}

// InboxVersion reads the version of the tenant's inbox top section. A
// conversation that leaves it changes the counts; one that enters it, or
// changes in it, moves Changed forward (every message and every move sets
// updated_at).
func (d *Listings) InboxVersion(ctx context.Context, tenantID string) (InboxVersion, error) {
	var (
		v                 InboxVersion
		changed, escalate *time.Time
	)
	err := d.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'ESCALATED'), count(*) FILTER (WHERE status = 'HUMAN'),
			max(GREATEST(updated_at, last_message_at)), max(escalated_at) FILTER (WHERE status = 'ESCALATED')
		FROM conversations WHERE tenant_id = $1 AND status IN ('ESCALATED', 'HUMAN')`, tenantID).
		Scan(&v.Waiting, &v.Held, &changed, &escalate)
	if err != nil {
		return InboxVersion{}, fmt.Errorf("reading the inbox's version: %w", err)
	}
	if changed != nil {
		v.Changed = *changed
	}
	if escalate != nil {
		v.LatestEscalation = *escalate
	}
	return v, nil
}
