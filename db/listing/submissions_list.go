package listing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// SubmissionFilter filters and pages a submissions list. Empty strings and
// zero times filter nothing; Page is 1-based.
type SubmissionFilter struct {
	ToolType string // compared upper-cased
	ToolID   string
	Status   string
	Channel  string
	// Search is a case-insensitive substring of one of the collected values
	// (the values of input, not its field names).
	Search string
	From   time.Time // created at or after
	To     time.Time // created before
	Page   int
	Limit  int
}

// SubmissionStats counts the tenant's submissions of the filtered tool type
// (all types when none). Today counts those created since midnight UTC.
// ByChannel has every channel, zero when it has none.
type SubmissionStats struct {
	Total     int            `json:"total"`
	New       int            `json:"new"`
	Today     int            `json:"today"`
	ByChannel map[string]int `json:"byChannel"`
}

// SubmissionPage is one page of a submissions list. Total counts the matches
// of every page; Stats is computed for page 1 only (nil on other pages).
type SubmissionPage struct {
	Submissions []parley.Submission
	Total       int
	Stats       *SubmissionStats
}

// submissionWhere is the WHERE clause of the tenant's submissions matching f
// (its page and limit aside) and its arguments, to which arg adds more.
type submissionWhere struct {
	sql  string
	args []any
}

func (w *submissionWhere) arg(v any) string {
	w.args = append(w.args, v)
	return fmt.Sprintf("$%d", len(w.args))
}

func newSubmissionWhere(tenantID string, f SubmissionFilter) *submissionWhere {
	w := &submissionWhere{args: []any{tenantID}}
	var where strings.Builder
	where.WriteString(" WHERE tenant_id = $1")
	if f.ToolType != "" {
		where.WriteString(" AND tool_type = " + w.arg(strings.ToUpper(pgbase.StorableKey(f.ToolType))))
	}
	if f.ToolID != "" {
		if pgbase.LooksLikeUUID(f.ToolID) {
			where.WriteString(" AND tool_id = " + w.arg(f.ToolID))
		} else {
			where.WriteString(" AND false") // no tool has such an id
		}
	}
	if f.Status != "" {
		where.WriteString(" AND status = " + w.arg(pgbase.StorableKey(f.Status)))
	}
	if f.Channel != "" {
		where.WriteString(" AND channel = " + w.arg(pgbase.StorableKey(f.Channel)))
	}
	if f.Search != "" {
		where.WriteString(" AND EXISTS (SELECT 1 FROM jsonb_each_text(input) e WHERE e.value ILIKE " +
			w.arg("%"+pgbase.EscapeLike(pgbase.StorableKey(f.Search))+"%") + ")")
	}
	if !f.From.IsZero() {
		where.WriteString(" AND created_at >= " + w.arg(f.From))
	}
	if !f.To.IsZero() {
		where.WriteString(" AND created_at < " + w.arg(f.To))
	}
	w.sql = where.String()
	return w
}

// ListSubmissions returns a page of the tenant's submissions, most recent
// first, with the number of matches and, on page 1, the stats.
func (d *Listings) ListSubmissions(ctx context.Context, tenantID string, f SubmissionFilter) (SubmissionPage, error) {
	w := newSubmissionWhere(tenantID, f)
	page := SubmissionPage{}
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM submissions`+w.sql, w.args...).Scan(&page.Total); err != nil {
		return SubmissionPage{}, fmt.Errorf("counting submissions: %w", err)
	}
	limit := w.arg(f.Limit)
	offset := w.arg((f.Page - 1) * f.Limit)
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions`+w.sql+
		` ORDER BY created_at DESC, id DESC LIMIT `+limit+` OFFSET `+offset, w.args...)
	subs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return SubmissionPage{}, fmt.Errorf("listing submissions: %w", err)
	}
	page.Submissions = subs
	if f.Page == 1 {
		stats, err := d.submissionStats(ctx, tenantID, f.ToolType)
		if err != nil {
			return SubmissionPage{}, err
		}
		page.Stats = &stats
	}
	return page, nil
}

// SubmissionInputKeys lists the field names in the input of the tenant's
// submissions matching f (its page and limit aside), in the order they were
// first used.
func (d *Listings) SubmissionInputKeys(ctx context.Context, tenantID string, f SubmissionFilter) ([]string, error) {
	w := newSubmissionWhere(tenantID, f)
	rows, _ := d.pool.Query(ctx, `SELECT k FROM submissions, jsonb_object_keys(input) k`+w.sql+`
		GROUP BY k ORDER BY min(created_at), k`, w.args...)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing submission fields: %w", err)
	}
	return keys, nil
}

// EachSubmission calls fn with each of the tenant's submissions matching f
// (its page and limit aside), newest first, reading them as fn goes: an
// export of any size holds one row at a time. An error of fn stops it.
func (d *Listings) EachSubmission(ctx context.Context, tenantID string, f SubmissionFilter, fn func(parley.Submission) error) error {
	w := newSubmissionWhere(tenantID, f)
	rows, err := d.pool.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions`+w.sql+` ORDER BY created_at DESC, id DESC`, w.args...)
	if err != nil {
		return fmt.Errorf("reading submissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := pgx.RowToStructByName[parley.Submission](rows)
		if err != nil {
			return fmt.Errorf("reading a submission: %w", err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading submissions: %w", err)
	}
	return nil
}

// submissionStats counts the whole tenant, of one tool type when toolType is set.
func (d *Listings) submissionStats(ctx context.Context, tenantID, toolType string) (SubmissionStats, error) {
	s := SubmissionStats{ByChannel: map[string]int{}}
	var web, voice, api, form int
	err := d.pool.QueryRow(ctx, `SELECT count(*),
		count(*) FILTER (WHERE status = 'NEW'),
		count(*) FILTER (WHERE created_at >= date_trunc('day', now(), 'UTC')),
		count(*) FILTER (WHERE channel = 'web'),
		count(*) FILTER (WHERE channel = 'voice'),
		count(*) FILTER (WHERE channel = 'api'),
		count(*) FILTER (WHERE channel = 'form')
		FROM submissions WHERE tenant_id = $1 AND ($2 = '' OR tool_type = $2)`,
		tenantID, strings.ToUpper(pgbase.StorableKey(toolType))).Scan(&s.Total, &s.New, &s.Today, &web, &voice, &api, &form)
	if err != nil {
		return SubmissionStats{}, fmt.Errorf("counting submission stats: %w", err)
	}
	s.ByChannel[parley.ChannelWeb], s.ByChannel[parley.ChannelVoice], s.ByChannel[parley.ChannelAPI], s.ByChannel[parley.ChannelForm] = web, voice, api, form
	return s, nil
}

// DeleteSubmission erases one of the tenant's submissions and its recorded
// events, whose frozen webhook payloads hold the same contact details (their
// webhook deliveries go with them). The conversation it came from stays.
func (d *Listings) DeleteSubmission(ctx context.Context, tenantID, id string) error {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Errorf(parley.KindNotFound, "Submission not found")
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// Locked first so that a concurrent status change cannot record an
		// event after its events are deleted (it would outlive the submission).
		var found string
		if err := tx.QueryRow(ctx, `SELECT id FROM submissions WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
			tenantID, id).Scan(&found); err != nil {
			return pgbase.NotFound(err, "Submission")
		}
		if _, err := tx.Exec(ctx, `DELETE FROM events WHERE tenant_id = $1 AND submission_id = $2`, tenantID, id); err != nil {
			return fmt.Errorf("deleting submission events: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM submissions WHERE tenant_id = $1 AND id = $2`, tenantID, id); err != nil {
			return fmt.Errorf("deleting submission: %w", err)
		}
		return nil
	})
}
