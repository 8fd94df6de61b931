package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// VoiceSetup is what a voice setup (managed or linked) stores on the tenant,
// all at once: the orchestrator's assistant, the number (nil: none), the
// voice settings and the sealed secret the orchestrator sends. It turns the
// voice channel on.
type VoiceSetup struct {
	AssistantID  string
	PhoneNumber  *string
	Config       parley.VoiceConfig
	SealedSecret []byte
}

// SaveVoiceSetup writes a voice setup in one statement and returns the
// updated tenant; under an If-Match (WithIfMatch), only to the tenant as
// the client read it (TenantETag).
func (d *DB) SaveVoiceSetup(ctx context.Context, tenantID string, s VoiceSetup) (parley.Tenant, error) {
	cfg, err := json.Marshal(s.Config)
	if err != nil {
		return parley.Tenant{}, fmt.Errorf("encoding voice config: %w", err)
	}
	var t parley.Tenant
	err = pgbase.WriteIfMatch(ctx, d.pool, lockedTenantETag(ctx, tenantID), func(q pgbase.Querier) error {
		rows, _ := q.Query(ctx, `UPDATE tenants SET voice_enabled = true, voice_provider = $2,
			voice_assistant_id = $3, voice_phone_number = $4, voice_config = $5, voice_secret = $6, updated_at = now()
			WHERE id = $1 RETURNING `+tenantColumns,
			tenantID, parley.VoiceProviderVapi, s.AssistantID, s.PhoneNumber, cfg, s.SealedSecret)
		var err error
		if t, err = pgx.CollectExactlyOneRow(rows, scanTenant); err != nil {
			return pgbase.NotFound(err, "Tenant")
		}
		return nil
	})
	if err != nil {
		return parley.Tenant{}, err
	}
	return t, nil
}

// VoiceCallRow is one call of voice_calls as the dashboard and the
// conversations API show it: whether it has a recording, not its URL (the
// recording routes serve it).
type VoiceCallRow struct {
	ID              string     `db:"id"`
	CallID          string     `db:"call_id"`
	ConversationID  *string    `db:"conversation_id"`
	Status          string     `db:"status"`
	CallerNumber    *string    `db:"caller_number"`
	StartedAt       *time.Time `db:"started_at"`
	EndedAt         *time.Time `db:"ended_at"`
	EndedReason     *string    `db:"ended_reason"`
	DurationSeconds *float64   `db:"duration_seconds"`
	Cost            *float64   `db:"cost"`
	Summary         *string    `db:"summary"`
	Transcript      *string    `db:"transcript"`
	HasRecording    bool       `db:"has_recording"`
	CreatedAt       time.Time  `db:"created_at"`
}

const voiceCallRowColumns = `id::text, call_id, conversation_id::text, status, caller_number, started_at, ended_at,
	ended_reason, duration_seconds, cost, summary, transcript, recording_url IS NOT NULL AS has_recording, created_at`

// RecentVoiceCalls lists the tenant's last limit calls, newest first.
func (d *DB) RecentVoiceCalls(ctx context.Context, tenantID string, limit int) ([]VoiceCallRow, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+voiceCallRowColumns+` FROM voice_calls
		WHERE tenant_id = $1 ORDER BY created_at DESC, id LIMIT $2`, tenantID, limit)
	calls, err := pgx.CollectRows(rows, pgx.RowToStructByName[VoiceCallRow])
	if err != nil {
		return nil, fmt.Errorf("listing voice calls: %w", err)
	}
	return calls, nil
}

// VoiceRecordingURL returns the recording address of the tenant's call
// callID (the orchestrator's call id): not found when the tenant has no
// such call, "" when the call has no recording.
func (d *DB) VoiceRecordingURL(ctx context.Context, tenantID, callID string) (string, error) {
	if !pgbase.Storable(callID) {
		return "", parley.Errorf(parley.KindNotFound, "Call not found")
	}
	var u *string
	err := d.pool.QueryRow(ctx, `SELECT recording_url FROM voice_calls WHERE tenant_id = $1 AND call_id = $2`,
		tenantID, callID).Scan(&u)
	if err != nil {
		return "", pgbase.NotFound(err, "Call")
	}
	if u == nil {
		return "", nil
	}
	return *u, nil
}
