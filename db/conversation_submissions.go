package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// ConversationSubmissions returns the submissions a conversation of the
// tenant produced, oldest first.
func (d *DB) ConversationSubmissions(ctx context.Context, tenantID, conversationID string) ([]parley.Submission, error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return nil, nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions
		WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY created_at, id`, tenantID, conversationID)
	subs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return nil, fmt.Errorf("listing the conversation's submissions: %w", err)
	}
	return subs, nil
}

// DayCount is how many of something a day (YYYY-MM-DD) had.
type DayCount struct {
	Date  string
	Count int
}

// SubmissionsPerDay counts the tenant's leads created in [from, to) by day
// of the time zone location (an IANA name), every day present, zero when it
// had none. A lead is a submission other than a hand-over to a person
// (ESCALATE_TO_HUMAN's, which is a request for help, not a lead).
func (d *DB) SubmissionsPerDay(ctx context.Context, tenantID string, from, to time.Time, location string) ([]DayCount, error) {
	rows, _ := d.pool.Query(ctx, `WITH days AS (
			SELECT generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE $4),
				($3::timestamptz AT TIME ZONE $4) - interval '1 microsecond', interval '1 day') AS day),
		counts AS (
			SELECT date_trunc('day', created_at AT TIME ZONE $4) AS day, count(*) AS n FROM submissions
			WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 AND tool_type <> $5 GROUP BY 1)
		SELECT to_char(days.day, 'YYYY-MM-DD'), coalesce(counts.n, 0)::int FROM days LEFT JOIN counts USING (day) ORDER BY days.day`,
		tenantID, from, to, location, parley.ToolEscalateToHuman)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[DayCount])
	if err != nil {
		return nil, fmt.Errorf("counting submissions by day: %w", err)
	}
	return out, nil
}
