package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// ConversationsUsed is how many conversations the tenant started in the
// calendar month (UTC) of now, deleted ones included: what the monthly limit
// is measured against.
func (d *DB) ConversationsUsed(ctx context.Context, tenantID string, now time.Time) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, `SELECT coalesce((SELECT count FROM conversation_usage WHERE tenant_id = $1 AND month = $2), 0)`,
		tenantID, MonthStart(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting conversations: %w", err)
	}
	return n, nil
}

// startOKSQL begins the statements that count and start a conversation: CTE
// "ok" has one row, true when the conversation's segment ($2) and visitor
// ($3) are the tenant's ($1).
const startOKSQL = `WITH ok AS (
		SELECT ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM segments WHERE tenant_id = $1 AND id = $2))
		   AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM visitors WHERE tenant_id = $1 AND id = $3)) AS ok)`

// countStartSQL counts a conversation about to start against the month's
// usage of tenant $1 while under the limit $4, when its segment and visitor
// are the tenant's (startOKSQL). It returns ok and the month counted, NULL
// when not counted. It commits without waiting for the disk (pgbase.AsyncCommit):
// the usage row is locked only while the statement runs, not across a WAL
// flush as well, so that the new conversations of a busy tenant do not queue
// behind one another's flush; the conversation's insert, which commits
// synchronously, flushes the count with it.
const countStartSQL = startOKSQL + `,
	counted AS (
		INSERT INTO conversation_usage (tenant_id, month, count)
		SELECT $1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1 FROM ok, ` + pgbase.AsyncCommit + ` WHERE ok AND $4 > 0
		ON CONFLICT (tenant_id, month) DO UPDATE SET count = conversation_usage.count + 1
		WHERE conversation_usage.count < $4
		RETURNING month)
	SELECT ok.ok, counted.month FROM ok LEFT JOIN counted ON true`

// uncountStartSQL takes back a count of countStartSQL ($2 its month) whose
// conversation was not started after all.
const uncountStartSQL = `UPDATE conversation_usage SET count = count - 1 FROM ` + pgbase.AsyncCommit + `
	WHERE tenant_id = $1 AND month = $2 AND count > 0`

// startArgs are the parameters of the insert after startOKSQL, but its last
// (the first message).
func startArgs(p *parley.ConversationStart) []any {
	return []any{p.TenantID, p.SegmentID, p.VisitorID, p.SessionID, p.Channel, p.VisitorType, p.AgentModel,
		p.PageURL, p.Locale, p.Metadata, p.Test}
}

// startRefused says why a start inserted nothing: a segment or visitor of
// another tenant, else the monthly limit.
func startRefused(ctx context.Context, q pgbase.Querier, p parley.ConversationStart) error {
	if err := belongsToTenant(ctx, q, "segments", "Segment", p.TenantID, p.SegmentID); err != nil {
		return err
	}
	if err := belongsToTenant(ctx, q, "visitors", "Visitor", p.TenantID, p.VisitorID); err != nil {
		return err
	}
	var used int
	var monthStart time.Time
	if err := q.QueryRow(ctx, `SELECT coalesce((SELECT count FROM conversation_usage WHERE tenant_id = $1
			AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0),
		date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`, p.TenantID).Scan(&used, &monthStart); err != nil {
		return fmt.Errorf("reading conversation usage: %w", err)
	}
	return &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED",
		Message: "Monthly conversation limit reached",
		Details: parley.LimitDetails{Current: used, Limit: max(p.Limit, 0), NextResetAt: monthStart.UTC().AddDate(0, 1, 0)}}
}

func conversationBySession(ctx context.Context, q pgbase.Querier, tenantID, sessionID string) (parley.Conversation, error) {
	rows, _ := q.Query(ctx, `SELECT `+pgbase.ConversationColumns+` FROM conversations WHERE tenant_id = $1 AND session_id = $2`, tenantID, sessionID)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return parley.Conversation{}, pgbase.NotFound(err, "Conversation")
	}
	return c, nil
}

// Conversation returns one of the tenant's conversations.
func (d *DB) Conversation(ctx context.Context, tenantID, id string) (parley.Conversation, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Conversation{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.ConversationColumns+` FROM conversations WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return parley.Conversation{}, pgbase.NotFound(err, "Conversation")
	}
	return c, nil
}

// belongsToTenant checks that the row of table with id (when not nil) is the tenant's.
func belongsToTenant(ctx context.Context, q pgbase.Querier, table, what, tenantID string, id *string) error {
	if id == nil {
		return nil
	}
	if !pgbase.LooksLikeUUID(*id) {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE tenant_id = $1 AND id = $2)`, tenantID, *id).Scan(&ok); err != nil {
		return fmt.Errorf("finding %s: %w", strings.ToLower(what), err)
	}
	if !ok {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	return nil
}

// appendMessage stores a message of the conversation ($5 the knowledge its
// prompt held, $6 and $7 its gap signals and question key, for an answer:
// never a key in a test conversation, which the knowledge gaps leave out) and, in the same statement, counts it, moves
// last_message_at, keeps the first user message and keeps the resolution's
// marks (migration 00058): answered by an answer, repeated_question by a
// visitor's message that repeats one of theirs (question_repeated). Every
// statement that stores a message keeps them itself, as this one does, in
// its update of the conversation's row (migration 00060 dropped the trigger
// that did, one plpgsql call and one more update a message;
// TestMessageWritersKeepResolution lists them).
const appendMessageSQL = `WITH ` + appendMessageCTE

// appendMessageCTE is appendMessageSQL after its WITH, for statements that
// add a step before it (saveReplySQL).
const appendMessageCTE = `c AS (
		UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			first_user_message = CASE WHEN $3 = 'user' THEN coalesce(first_user_message, $4) ELSE first_user_message END,
			answered = answered OR $3 = 'assistant',
			repeated_question = repeated_question OR ($3 = 'user' AND question_repeated(id, $4))
		WHERE tenant_id = $1 AND id = $2 RETURNING id, tenant_id, is_test)
	INSERT INTO messages (tenant_id, conversation_id, role, content, knowledge, gap_signals, question_key)
	SELECT tenant_id, id, $3, $4, $5, $6::smallint, CASE WHEN NOT is_test THEN nullif($7::text, '') END FROM c
	RETURNING ` + pgbase.MessageColumns

// knowledgeArg is the knowledge of a message as appendMessageSQL stores it: NULL for none.
func knowledgeArg(k []parley.KnowledgeRef) any {
	if len(k) == 0 {
		return nil
	}
	return k
}

// questionKeyArg is a question key as appendMessageSQL stores it: clipped
// to the column's 200 bytes at a word's end.
func questionKeyArg(key string) string {
	key = pgbase.StorableKey(key)
	for len(key) > 200 {
		i := strings.LastIndexByte(key[:200], ' ')
		if i < 0 {
			return ""
		}
		key = key[:i]
	}
	return key
}

func appendMessage(ctx context.Context, q pgbase.Querier, tenantID, conversationID, role, content string, knowledge []parley.KnowledgeRef, gap int, key string) (parley.Message, error) {
	if role != "user" && role != "assistant" {
		return parley.Message{}, &parley.Error{Kind: parley.KindInvalid, Message: "role must be user or assistant"}
	}
	if !pgbase.LooksLikeUUID(conversationID) {
		return parley.Message{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	rows, _ := q.Query(ctx, appendMessageSQL, tenantID, conversationID, role, pgbase.StorableKey(content), knowledgeArg(knowledge), gap, questionKeyArg(key))
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		return parley.Message{}, pgbase.NotFound(err, "Conversation")
	}
	return m, nil
}

// appendToolHistory records a tool run of the conversation (its name, the
// function the model called, lowercased; the tool's display name as the run
// had it, kept through later renames) and counts it. A nil Input is stored
// as {}, a nil Result as null.
func appendToolHistory(ctx context.Context, q pgbase.Querier, tenantID, conversationID string, call parley.ToolCall) error {
	if !pgbase.LooksLikeUUID(conversationID) {
		return parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	input := call.Input
	if input == nil {
		input = json.RawMessage("{}")
	}
	var result any // nil is SQL NULL
	if call.Result != nil {
		result = call.Result
	}
	if !json.Valid(input) || call.Result != nil && !json.Valid(call.Result) {
		return &parley.Error{Kind: parley.KindInvalid, Message: "tool input and result must be JSON"}
	}
	var display *string
	if call.ToolDisplayName != nil {
		d := pgbase.StorableKey(*call.ToolDisplayName)
		display = &d
	}
	tag, err := q.Exec(ctx, `WITH c AS (
			UPDATE conversations SET tool_calls_count = tool_calls_count + 1, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 RETURNING id, tenant_id)
		INSERT INTO tool_history (tenant_id, conversation_id, tool_name, tool_type, input, result, tool_display_name)
		SELECT tenant_id, id, $3, $4, $5, $6, $7 FROM c`,
		tenantID, conversationID, strings.ToLower(pgbase.StorableKey(call.ToolName)), pgbase.StorableKey(call.ToolType), input, result, display)
	if err != nil {
		return fmt.Errorf("storing tool history: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	return nil
}

// RecentTurns returns the last n user and assistant messages of the
// conversation, oldest first.
func (d *DB) RecentTurns(ctx context.Context, tenantID, conversationID string, n int) ([]parley.Turn, error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return nil, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	if n <= 0 {
		return []parley.Turn{}, nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT role, content, created_at FROM (
			SELECT seq, CASE role WHEN 'human' THEN 'assistant' ELSE role END AS role, content, created_at FROM messages
			WHERE tenant_id = $1 AND conversation_id = $2 AND role IN ('user', 'assistant', 'human')
			ORDER BY seq DESC LIMIT $3) t
		ORDER BY seq`, tenantID, conversationID, n)
	turns, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Turn])
	if err != nil {
		return nil, fmt.Errorf("reading recent turns: %w", err)
	}
	return turns, nil
}

// RecordFeedback stores the visitor's vote (1 or -1) on an assistant message
// and keeps the conversation's counts in step: changing a vote moves it from
// one count to the other, repeating it changes nothing.
func (d *DB) RecordFeedback(ctx context.Context, tenantID, messageID string, value int) error {
	if value != 1 && value != -1 {
		return &parley.Error{Kind: parley.KindInvalid, Message: "feedback must be 1 or -1", Details: map[string]string{"value": "must be 1 or -1"}}
	}
	if !pgbase.LooksLikeUUID(messageID) {
		return parley.Errorf(parley.KindNotFound, "Message not found")
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var role, conversationID string
		var old *int
		err := tx.QueryRow(ctx, `SELECT role, conversation_id, feedback FROM messages WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
			tenantID, messageID).Scan(&role, &conversationID, &old)
		if err != nil {
			return pgbase.NotFound(err, "Message")
		}
		if role != "assistant" {
			return &parley.Error{Kind: parley.KindInvalid, Message: "Only assistant messages take feedback"}
		}
		if old != nil && *old == value {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE messages SET feedback = $2 WHERE id = $1`, messageID, value); err != nil {
			return fmt.Errorf("storing feedback: %w", err)
		}
		var dPos, dNeg int
		if value == 1 {
			dPos++
		} else {
			dNeg++
		}
		if old != nil { // the old vote was the other one
			if *old == 1 {
				dPos--
			} else {
				dNeg--
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE conversations SET feedback_positive = feedback_positive + $2,
			feedback_negative = feedback_negative + $3, updated_at = now() WHERE id = $1`, conversationID, dPos, dNeg); err != nil {
			return fmt.Errorf("counting feedback: %w", err)
		}
		return nil
	})
}

// CheckSessionMessage reports NotFound unless the message belongs to the
// tenant's conversation of that session: a visitor votes only on the
// answers of their own conversation.
func (d *DB) CheckSessionMessage(ctx context.Context, tenantID, sessionID, messageID string) error {
	if !pgbase.LooksLikeUUID(messageID) || !pgbase.Storable(sessionID) {
		return parley.Errorf(parley.KindNotFound, "Message not found")
	}
	var ok bool
	err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE m.tenant_id = $1 AND m.id = $2 AND c.tenant_id = $1 AND c.session_id = $3)`, tenantID, messageID, sessionID).Scan(&ok)
	if err != nil {
		return fmt.Errorf("finding message: %w", err)
	}
	if !ok {
		return parley.Errorf(parley.KindNotFound, "Message not found")
	}
	return nil
}
