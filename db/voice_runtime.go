package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// VoiceCall is a call's row: the orchestrator's call id, the conversation
// its turns went into, and what the events said about it.
type VoiceCall struct {
	ID             string
	CallID         string
	ConversationID *string
	Status         string
}

// voiceCallUpsert inserts the call's row unless it exists, then updates it
// with the SET list that follows; $1 tenant, $2 call id, $3 caller number
// (may be NULL).
const voiceCallUpsert = `INSERT INTO voice_calls (tenant_id, call_id, caller_number) VALUES ($1, $2, $3)
	ON CONFLICT ON CONSTRAINT voice_calls_call DO UPDATE
	SET caller_number = COALESCE(voice_calls.caller_number, EXCLUDED.caller_number), updated_at = now()`

// OpenVoiceCall returns the row of the tenant's call callID, creating it on
// the call's first request; the later turns of a call only read it. Call
// ids are the tenant's own: another tenant's call with the same id is
// another row.
func (d *DB) OpenVoiceCall(ctx context.Context, tenantID, callID string, callerNumber *string) (VoiceCall, error) {
	c := VoiceCall{CallID: callID}
	callID = pgbase.StorableKey(callID)
	// Two first requests of a call at once: the one whose insert lost finds
	// nothing in its snapshot, and reads the winner's row on the second round.
	for range 2 {
		err := d.pool.QueryRow(ctx, `WITH found AS (
				SELECT id, conversation_id, status FROM voice_calls WHERE tenant_id = $1 AND call_id = $2),
			created AS (
				INSERT INTO voice_calls (tenant_id, call_id, caller_number) SELECT $1, $2, $3
				WHERE NOT EXISTS (SELECT 1 FROM found) ON CONFLICT DO NOTHING RETURNING id, conversation_id, status)
			SELECT * FROM found UNION ALL SELECT * FROM created`,
			tenantID, callID, callerNumber).Scan(&c.ID, &c.ConversationID, &c.Status)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return c, fmt.Errorf("opening voice call: %w", err)
		}
		return c, nil
	}
	return c, errors.New("opening voice call: its row was neither found nor created")
}

// LinkVoiceCall records the conversation of the call's turns.
func (d *DB) LinkVoiceCall(ctx context.Context, tenantID, id, conversationID string) error {
	_, err := d.pool.Exec(ctx, `UPDATE voice_calls SET conversation_id = $3, updated_at = now()
		WHERE tenant_id = $1 AND id = $2 AND conversation_id IS DISTINCT FROM $3`, tenantID, id, conversationID)
	if err != nil {
		return fmt.Errorf("linking voice call: %w", err)
	}
	return nil
}

// SetVoiceCallStatus records a status-update: the call's state and, once
// ended, why and when.
func (d *DB) SetVoiceCallStatus(ctx context.Context, tenantID, callID, status string, endedReason *string, at time.Time) error {
	_, err := d.pool.Exec(ctx, voiceCallUpsert+`, status = $4,
		started_at = CASE WHEN $4 = 'in-progress' THEN COALESCE(voice_calls.started_at, $6) ELSE voice_calls.started_at END,
		ended_at = CASE WHEN $4 = 'ended' THEN COALESCE(voice_calls.ended_at, $6) ELSE voice_calls.ended_at END,
		ended_reason = COALESCE($5, voice_calls.ended_reason)`,
		tenantID, pgbase.StorableKey(callID), nil, pgbase.StorableKey(status), endedReason, at)
	if err != nil {
		return fmt.Errorf("recording voice call status: %w", err)
	}
	return nil
}

// SaveVoiceToolRuns stores, in one transaction, the tool runs of a voice
// call's tool-calls event: their submissions (with their submission.created
// events and deliveries) and, when the call has a conversation, its tool
// history and, after an escalation, its ESCALATED status with its
// conversation.escalated event.
func (d *DB) SaveVoiceToolRuns(ctx context.Context, tenantID string, conversationID *string, runs []parley.ToolRun, escalated bool) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		for _, r := range runs {
			if conversationID != nil {
				if err := appendToolHistory(ctx, tx, tenantID, *conversationID, r.Call); err != nil {
					return err
				}
			}
			if s := r.Submission; s != nil {
				s.TenantID, s.ConversationID = tenantID, conversationID
				if _, _, err := d.createSubmissionInTx(ctx, tx, *s, nil); err != nil {
					return err
				}
			}
		}
		if escalated && conversationID != nil {
			return d.escalateConversation(ctx, tx, tenantID, *conversationID)
		}
		return nil
	})
}

// VoiceCallReport is what the end-of-call report says of a call.
type VoiceCallReport struct {
	EndedReason     *string
	StartedAt       *time.Time
	EndedAt         *time.Time
	DurationSeconds *float64
	Cost            *float64
	Summary         *string
	Transcript      *string
	RecordingURL    *string
}

// SaveVoiceCallReport stores the end-of-call report on the call's row: the
// call is ended. A field the report leaves out keeps what was recorded.
func (d *DB) SaveVoiceCallReport(ctx context.Context, tenantID, callID string, r VoiceCallReport) error {
	clip := func(s *string) *string {
		if s == nil {
			return nil
		}
		v := pgbase.StorableKey(*s)
		return &v
	}
	_, err := d.pool.Exec(ctx, voiceCallUpsert+`, status = 'ended',
		ended_reason = COALESCE($4, voice_calls.ended_reason), started_at = COALESCE($5, voice_calls.started_at),
		ended_at = COALESCE($6, voice_calls.ended_at, now()),
		duration_seconds = COALESCE($7, voice_calls.duration_seconds), cost = COALESCE($8, voice_calls.cost),
		summary = COALESCE($9, voice_calls.summary), transcript = COALESCE($10, voice_calls.transcript),
		recording_url = COALESCE($11, voice_calls.recording_url)`,
		tenantID, pgbase.StorableKey(callID), nil, clip(r.EndedReason), r.StartedAt, r.EndedAt, r.DurationSeconds, r.Cost,
		clip(r.Summary), clip(r.Transcript), clip(r.RecordingURL))
	if err != nil {
		return fmt.Errorf("saving end-of-call report: %w", err)
	}
	return nil
}

// VoiceCallOfConversation returns the call of a voice conversation, nil
// when the conversation is not a call's.
func (d *DB) VoiceCallOfConversation(ctx context.Context, tenantID, conversationID string) (*VoiceCallRow, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+voiceCallRowColumns+` FROM voice_calls
		WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY created_at DESC LIMIT 1`, tenantID, conversationID)
	v, err := pgx.CollectOneRow(rows, pgx.RowToStructByName[VoiceCallRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading voice call: %w", err)
	}
	return &v, nil
}
