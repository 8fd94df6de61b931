package db

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db/internal/pgbase"
)

// SeedConversation is a generated conversation with its rows, written by
// CopySeedConversations for load tests. Its counters (message_count,
// tool_calls_count, feedback) are derived from Messages and Tools there, so
// they always agree with the rows.
type SeedConversation struct {
	ID               [16]byte
	SegmentID        *string
	SessionID        string
	Channel          string
	Status           string
	VisitorType      string
	AgentModel       *string
	PageURL          *string
	FirstUserMessage string
	Locale           string
	CreatedAt        time.Time
	Messages         []SeedMessage
	Tools            []SeedToolCall
}

// SeedMessage is one message of a SeedConversation, in order.
type SeedMessage struct {
	Role      string
	Content   string
	Feedback  *int16
	CreatedAt time.Time
}

// SeedToolCall is one run of a tool; Submission also stores a submission of
// it (for the tools that produce one).
type SeedToolCall struct {
	Name, Type string
	Input      []byte // JSON
	Result     []byte // JSON
	Submission bool
	CreatedAt  time.Time
}

// CopySeedConversations writes a batch of generated conversations of a
// tenant with COPY, in one transaction: the conversations, their messages,
// tool history and submissions, and the months' conversation_usage (seeded
// conversations count as started, as they would have). It returns the
// number of messages written.
func (d *DB) CopySeedConversations(ctx context.Context, tenantID string, convs []SeedConversation) (int, error) {
	var tenant [16]byte
	if err := parseUUID(tenantID, &tenant); err != nil {
		return 0, err
	}
	var convRows, msgRows, toolRows, subRows [][]any
	usage := map[time.Time]int{}
	for _, c := range convs {
		var pos, neg int
		for _, m := range c.Messages {
			if m.Feedback != nil {
				if *m.Feedback > 0 {
					pos++
				} else {
					neg++
				}
			}
			msgRows = append(msgRows, []any{tenant, c.ID, m.Role, m.Content, m.Feedback, m.CreatedAt})
		}
		last := c.CreatedAt
		if n := len(c.Messages); n > 0 {
			last = c.Messages[n-1].CreatedAt
		}
		var segment *[16]byte
		if c.SegmentID != nil {
			segment = new([16]byte)
			if err := parseUUID(*c.SegmentID, segment); err != nil {
				return 0, err
			}
		}
		convRows = append(convRows, []any{c.ID, tenant, segment, c.SessionID, c.Channel, c.Status, c.VisitorType,
			c.AgentModel, c.PageURL, c.FirstUserMessage, c.Locale, len(c.Messages), len(c.Tools), pos, neg,
			c.CreatedAt, last, last})
		for _, t := range c.Tools {
			toolRows = append(toolRows, []any{tenant, c.ID, t.Name, t.Type, t.Input, t.Result, t.CreatedAt})
			if t.Submission {
				channel := c.Channel
				if channel == "agent" { // submissions have no agent channel
					channel = "api"
				}
				subRows = append(subRows, []any{tenant, t.Type, t.Name, c.ID, channel, t.Input, t.Result, c.PageURL, t.CreatedAt, t.CreatedAt})
			}
		}
		u := c.CreatedAt.UTC()
		usage[time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)]++
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	copies := []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"conversations", []string{"id", "tenant_id", "segment_id", "session_id", "channel", "status", "visitor_type",
			"agent_model", "page_url", "first_user_message", "locale", "message_count", "tool_calls_count",
			"feedback_positive", "feedback_negative", "created_at", "updated_at", "last_message_at"}, convRows},
		{"messages", []string{"tenant_id", "conversation_id", "role", "content", "feedback", "created_at"}, msgRows},
		{"tool_history", []string{"tenant_id", "conversation_id", "tool_name", "tool_type", "input", "result", "created_at"}, toolRows},
		{"submissions", []string{"tenant_id", "tool_type", "tool_name", "conversation_id", "channel", "input", "result",
			"page_url", "created_at", "updated_at"}, subRows},
	}
	for _, c := range copies {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, pgx.CopyFromRows(c.rows)); err != nil {
			return 0, fmt.Errorf("copying %s: %w", c.table, err)
		}
	}
	ids := make([][16]byte, len(convs))
	for i, c := range convs {
		ids[i] = c.ID
	}
	if _, err := tx.Exec(ctx, seedResolutionSQL, ids); err != nil {
		return 0, fmt.Errorf("marking the resolution: %w", err)
	}
	for month, n := range usage {
		if _, err := tx.Exec(ctx, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, $2, $3)
			ON CONFLICT (tenant_id, month) DO UPDATE SET count = conversation_usage.count + excluded.count`,
			tenantID, month, n); err != nil {
			return 0, fmt.Errorf("counting usage: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return len(msgRows), nil
}

// AnalyzeConversations refreshes the planner's statistics of the
// conversation tables, after a bulk load.
func (d *DB) AnalyzeConversations(ctx context.Context) error {
	if _, err := d.pool.Exec(ctx, `ANALYZE conversations, messages, tool_history, submissions`); err != nil {
		return fmt.Errorf("analyzing: %w", err)
	}
	return nil
}

// NewSeedID is a random (version 4) uuid for a SeedConversation's ID.
func NewSeedID() (id [16]byte) {
	_, _ = rand.Read(id[:])
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	return id
}

// parseUUID parses a uuid's text into its 16 bytes, as COPY's binary
// format takes uuids.
func parseUUID(id string, out *[16]byte) error {
	if !pgbase.LooksLikeUUID(id) {
		return fmt.Errorf("%q is not a uuid", id)
	}
	if _, err := hex.Decode(out[:], []byte(strings.ReplaceAll(id, "-", ""))); err != nil {
		return fmt.Errorf("%q: %w", id, err)
	}
	return nil
}

// seedResolutionSQL sets the resolution's marks (migration 00058) of the
// conversations $1 that CopySeedConversations copied: what the statements
// that store messages one at a time keep as they go (appendMessageSQL),
// with the same test of a question asked again (question_repeated, against
// the visitor's messages before each one).
const seedResolutionSQL = `UPDATE conversations c SET
		answered = EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'assistant'),
		person_replied = EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'human'),
		repeated_question = EXISTS (SELECT 1 FROM messages a
			WHERE a.conversation_id = c.id AND a.role = 'user' AND question_repeated(c.id, a.content, a.seq))
	WHERE c.id = ANY($1::uuid[])`
