package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/db/webhooks"
)

// EventPayload is the webhook body of a submission's event.
type EventPayload = webhooks.Payload[EventData]

// EventData is the submission as a webhook sees it. Messages is present only
// when the caller had the turns; PreviousStatus only on submission.updated,
// next to Status (the new status).
type EventData struct {
	ID             string          `json:"id"`
	ToolID         *string         `json:"toolId"`
	ToolType       string          `json:"toolType"`
	ToolName       string          `json:"toolName"`
	Channel        string          `json:"channel"`
	Status         string          `json:"status"`
	PreviousStatus string          `json:"previousStatus,omitempty"`
	Input          json.RawMessage `json:"input"`
	Result         json.RawMessage `json:"result"`
	ConversationID *string         `json:"conversationId"`
	Messages       []parley.Turn   `json:"messages,omitempty"`
	VisitorUserID  *string         `json:"visitorUserId"`
	PageURL        *string         `json:"pageUrl"`
	CreatedAt      time.Time       `json:"createdAt"`
}

// maxPayloadTurns is how many turns a webhook payload carries.
const maxPayloadTurns = 10

// jsonObject returns raw, or {} when nil, and false when it is not a JSON object.
func jsonObject(raw json.RawMessage) (json.RawMessage, bool) {
	if raw == nil {
		return json.RawMessage("{}"), true
	}
	if !json.Valid(raw) || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil, false
	}
	return raw, true
}

// createSubmissionInTx stores a NEW submission and, in tx, its submission.created
// event with the frozen webhook payload; both exist or neither does. messages
// are the conversation's recent turns when the caller has them: only user and
// assistant turns are kept, the last 10. Linked tool, conversation and
// visitor must be the tenant's.
func (d *DB) createSubmissionInTx(ctx context.Context, tx pgx.Tx, s parley.NewSubmission, messages []parley.Turn) (parley.Submission, webhooks.Event, error) {
	fe := parley.FieldErrors{}
	input, ok := jsonObject(s.Input)
	if !ok {
		fe.Add("input", "must be a JSON object")
	}
	result, ok := jsonObject(s.Result)
	if !ok {
		fe.Add("result", "must be a JSON object")
	}
	switch s.Channel {
	case parley.ChannelWeb, parley.ChannelVoice, parley.ChannelAPI, parley.ChannelForm:
	default:
		fe.Add("channel", "must be web, voice, api or form")
	}
	if s.ToolType == "" {
		fe.Add("toolType", "is required")
	}
	if s.ToolName == "" {
		fe.Add("toolName", "is required")
	}
	if err := fe.Err(); err != nil {
		return parley.Submission{}, webhooks.Event{}, err
	}
	if err := belongsToTenant(ctx, tx, "tools", "Tool", s.TenantID, s.ToolID); err != nil {
		return parley.Submission{}, webhooks.Event{}, err
	}
	if err := belongsToTenant(ctx, tx, "conversations", "Conversation", s.TenantID, s.ConversationID); err != nil {
		return parley.Submission{}, webhooks.Event{}, err
	}
	if err := belongsToTenant(ctx, tx, "visitors", "Visitor", s.TenantID, s.VisitorID); err != nil {
		return parley.Submission{}, webhooks.Event{}, err
	}
	if s.Contact != nil && s.VisitorID != nil {
		if err := visitors.NoteContactInTx(ctx, tx, s.TenantID, *s.VisitorID, *s.Contact); err != nil {
			return parley.Submission{}, webhooks.Event{}, err
		}
	}
	rows, _ := tx.Query(ctx, `INSERT INTO submissions (tenant_id, tool_id, tool_type, tool_name, conversation_id,
		visitor_id, channel, input, result, page_url) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		RETURNING `+pgbase.SubmissionColumns,
		s.TenantID, s.ToolID, pgbase.StorableKey(s.ToolType), pgbase.StorableKey(s.ToolName), s.ConversationID, s.VisitorID,
		s.Channel, input, result, s.PageURL)
	sub, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return parley.Submission{}, webhooks.Event{}, fmt.Errorf("inserting submission: %w", err)
	}
	data := eventData(sub)
	data.Messages = payloadTurns(messages)
	ev, err := d.recordEvent(ctx, tx, sub, webhooks.EventSubmissionCreated, sub.CreatedAt, data)
	return sub, ev, err
}

// CreateSubmission runs createSubmissionInTx in its own transaction.
func (d *DB) CreateSubmission(ctx context.Context, s parley.NewSubmission, messages []parley.Turn) (sub parley.Submission, ev webhooks.Event, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		sub, ev, err = d.createSubmissionInTx(ctx, tx, s, messages)
		return err
	})
	return sub, ev, err
}

// payloadTurns keeps the last user and assistant turns a payload carries.
func payloadTurns(messages []parley.Turn) []parley.Turn {
	var turns []parley.Turn
	for _, m := range messages {
		if m.Role == "user" || m.Role == "assistant" {
			turns = append(turns, m)
		}
	}
	if len(turns) > maxPayloadTurns {
		turns = turns[len(turns)-maxPayloadTurns:]
	}
	return turns
}

func eventData(s parley.Submission) EventData {
	return EventData{ID: s.ID, ToolID: s.ToolID, ToolType: s.ToolType, ToolName: s.ToolName, Channel: s.Channel,
		Status: s.Status, Input: s.Input, Result: s.Result, ConversationID: s.ConversationID,
		VisitorUserID: s.VisitorID, PageURL: s.PageURL, CreatedAt: s.CreatedAt.UTC()}
}

// recordEvent records the submission's event of typ (webhooks.RecordEvent):
// its frozen payload and, in the same transaction, its webhook deliveries.
func (d *DB) recordEvent(ctx context.Context, tx pgx.Tx, s parley.Submission, typ string, at time.Time, data EventData) (webhooks.Event, error) {
	return webhooks.RecordEvent(ctx, tx, d.jobs, webhooks.NewEvent{TenantID: s.TenantID, Type: typ, SubmissionID: &s.ID, At: at, Data: data})
}

// Submission returns one of the tenant's submissions.
func (d *DB) Submission(ctx context.Context, tenantID, id string) (parley.Submission, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Submission{}, parley.Errorf(parley.KindNotFound, "Submission not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return parley.Submission{}, pgbase.NotFound(err, "Submission")
	}
	return s, nil
}

// UpdateSubmissionStatus moves a submission to status (NEW, CONTACTED or
// RESOLVED; anything else is KindInvalid) and, in its transaction, records its
// submission.updated event carrying status and previousStatus. Setting the
// status it already has changes nothing and records no event (ev is zero).
func (d *DB) UpdateSubmissionStatus(ctx context.Context, tenantID, id, status string) (sub parley.Submission, ev webhooks.Event, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		sub, ev, err = d.updateSubmissionStatus(ctx, tx, tenantID, id, status)
		return err
	})
	return sub, ev, err
}

func (d *DB) updateSubmissionStatus(ctx context.Context, tx pgx.Tx, tenantID, id, status string) (sub parley.Submission, ev webhooks.Event, err error) {
	switch status {
	case parley.SubmissionNew, parley.SubmissionContacted, parley.SubmissionResolved:
	default:
		return parley.Submission{}, webhooks.Event{}, &parley.Error{Kind: parley.KindInvalid, Message: "status must be NEW, CONTACTED or RESOLVED",
			Details: map[string]string{"status": "must be NEW, CONTACTED or RESOLVED"}}
	}
	if !pgbase.LooksLikeUUID(id) {
		return parley.Submission{}, webhooks.Event{}, parley.Errorf(parley.KindNotFound, "Submission not found")
	}
	var previous string
	if err := tx.QueryRow(ctx, `SELECT status FROM submissions WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
		tenantID, id).Scan(&previous); err != nil {
		return parley.Submission{}, webhooks.Event{}, pgbase.NotFound(err, "Submission")
	}
	if previous == status {
		rows, _ := tx.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions WHERE id = $1`, id)
		sub, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Submission])
		if err != nil {
			return parley.Submission{}, webhooks.Event{}, fmt.Errorf("reading submission: %w", err)
		}
		return sub, webhooks.Event{}, nil
	}
	rows, _ := tx.Query(ctx, `UPDATE submissions SET status = $2, updated_at = now() WHERE id = $1 RETURNING `+pgbase.SubmissionColumns, id, status)
	sub, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return parley.Submission{}, webhooks.Event{}, fmt.Errorf("updating submission status: %w", err)
	}
	data := eventData(sub)
	data.PreviousStatus = previous
	ev, err = d.recordEvent(ctx, tx, sub, webhooks.EventSubmissionUpdated, sub.UpdatedAt, data)
	return sub, ev, err
}
