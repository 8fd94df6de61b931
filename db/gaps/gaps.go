// Package gaps is the store of the knowledge gaps (issue 40, migration
// 00055): the visitors' questions the assistant could not answer well,
// grouped by their wording (messages.question_key), with what the owner did
// about each group (knowledge_gap_states: answered or dismissed). The signs
// are stored with each answer by the turn that wrote it (gap_signals), and
// a down vote is the answer's feedback. Test conversations are left out.
// Every query filters by tenant. db.DB embeds its store, so that its
// methods are the DB's.
package gaps

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// SignVotedDown is the bit of a group's Signals for a down vote, beside
// parley's Gap* bits (which the answers store).
const SignVotedDown = 8

// The states of a group: Open (nothing done yet: no row), Answered,
// Dismissed; StateAll lists every group, whatever its state.
const (
	StateOpen      = "open"
	StateAnswered  = "answered"
	StateDismissed = "dismissed"
	StateAll       = "all"
)

// Examples is how many of a group's latest questions a listing shows.
const Examples = 3

// Query is what a listing reads: the answers of [From, To) (both required),
// of a segment (SegmentID, "" any) and a channel ("" any), the groups in
// State, one page (Page from 1, Limit per page).
type Query struct {
	From, To  time.Time
	SegmentID string
	Channel   string
	State     string
	Page      int
	Limit     int
}

// Example is one question of a group: the visitor's message, its
// conversation, when it was answered and the signs of that answer.
type Example struct {
	Question       string    `json:"question"`
	ConversationID string    `json:"conversation_id"`
	At             time.Time `json:"at"`
	Signals        int       `json:"signals"`
}

// Group is the questions of one wording.
type Group struct {
	Key string
	// Question is the group's representative question: its latest.
	Question string
	Count    int64
	// Signals are the signs seen on its answers, a bit each (parley.Gap*,
	// SignVotedDown).
	Signals  int
	LastSeen time.Time
	// State is StateOpen, StateAnswered or StateDismissed; EntryID the
	// knowledge-base entry that answered it ("" for none or deleted since).
	State   string
	EntryID string
	// Examples are its latest questions, the latest first.
	Examples []Example
}

// Page is one page of groups and how many groups the query found.
type Page struct {
	Groups []Group
	Total  int
}

// Gaps is the store of the knowledge gaps.
type Gaps struct{ pool *pgxpool.Pool }

// New makes the store over pool.
func New(pool *pgxpool.Pool) *Gaps { return &Gaps{pool: pool} }

// gapFilterSQL is what makes an answer ("a") one of the listing's: an
// answer of the tenant ($1) with a sign of a gap in the window [$2, $3).
// The partial indexes of migration 00055 hold such answers alone; no answer
// of a test conversation has a key (appendMessage), so none is among them.
// With a segment ($4) or a channel ($5) to filter by, gapConversationSQL
// adds the conversation's ("c"); without, the groups read the covering
// index alone.
const gapFilterSQL = `a.tenant_id = $1 AND a.role = 'assistant' AND a.question_key IS NOT NULL
		AND (a.gap_signals <> 0 OR a.feedback = -1) AND a.created_at >= $2 AND a.created_at < $3`

// gapConversationSQL keeps the answers of the conversations of segment $4
// and channel $5 (empty: any), tests aside: for a group's few latest
// questions, a probe of each answer's conversation; the groups join the
// conversations instead (gapJoinSQL), which the planner hashes.
const gapConversationSQL = ` AND EXISTS (SELECT 1 FROM conversations c WHERE c.tenant_id = a.tenant_id AND c.id = a.conversation_id
		AND NOT c.is_test AND ($4 = '' OR c.segment_id = nullif($4, '')::uuid) AND ($5 = '' OR c.channel = $5))`

const gapJoinSQL = ` JOIN conversations c ON c.tenant_id = a.tenant_id AND c.id = a.conversation_id
		AND NOT c.is_test AND ($4 = '' OR c.segment_id = nullif($4, '')::uuid) AND ($5 = '' OR c.channel = $5)`

// gapSignalsSQL is an answer's signs (8: SignVotedDown).
const gapSignalsSQL = `a.gap_signals | CASE WHEN a.feedback = -1 THEN 8 ELSE 0 END`

// listSQL is the listing's statement, with or without the conversations'
// filter (gapConversationSQL): it groups the answers of gapFilterSQL by key,
// keeps the groups in state $6, orders them (most asked first, then the
// most recently seen) and reads one page ($7 limit, $8 offset) with, for
// each, its latest 3 questions (Examples: the visitor's message before
// each answer), read by key through messages_knowledge_gap_keys.
func listSQL(filtered bool) string {
	where := gapFilterSQL + ` AND $4::text = '' AND $5::text = ''` // no filter: a one-time check
	groups, examples := `FROM messages a WHERE `+where, where
	if filtered {
		groups, examples = `FROM messages a`+gapJoinSQL+` WHERE `+gapFilterSQL, gapFilterSQL+gapConversationSQL
	}
	return `WITH groups AS (
		SELECT a.question_key AS key, count(*) AS n, bit_or(` + gapSignalsSQL + `) AS signals, max(a.created_at) AS last_seen
		` + groups + `
		GROUP BY a.question_key),
	page AS (
		SELECT g.*, coalesce(s.state, 'open') AS state, s.entry_id, count(*) OVER () AS total
		FROM groups g LEFT JOIN knowledge_gap_states s ON s.tenant_id = $1 AND s.key = g.key
		WHERE $6 = 'all' OR coalesce(s.state, 'open') = $6
		ORDER BY g.n DESC, g.last_seen DESC, g.key LIMIT $7 OFFSET $8)
	SELECT p.key, p.n, p.signals, p.last_seen, p.state, coalesce(p.entry_id::text, ''), p.total,
		(SELECT json_agg(json_build_object('question', coalesce(q.content, ''), 'conversation_id', e.conversation_id,
				'at', e.created_at, 'signals', e.signals) ORDER BY e.created_at DESC, e.seq DESC)
			FROM (SELECT a.conversation_id, a.seq, a.created_at, ` + gapSignalsSQL + ` AS signals
				FROM messages a WHERE a.question_key = p.key AND ` + examples + `
				ORDER BY a.created_at DESC, a.seq DESC LIMIT 3) e
			LEFT JOIN LATERAL (SELECT u.content FROM messages u
				WHERE u.tenant_id = $1 AND u.conversation_id = e.conversation_id AND u.seq < e.seq AND u.role = 'user'
				ORDER BY u.seq DESC LIMIT 1) q ON true)
	FROM page p ORDER BY p.n DESC, p.last_seen DESC, p.key`
}

// The listing's two statements.
var (
	listAllSQL      = listSQL(false)
	listFilteredSQL = listSQL(true)
)

// ListGaps reads one page of the tenant's groups. The caller checks the
// query (manage.ListKnowledgeGaps).
func (s *Gaps) ListGaps(ctx context.Context, tenantID string, q Query) (Page, error) {
	state := q.State
	if state == "" {
		state = StateOpen
	}
	sql := listAllSQL
	if q.SegmentID != "" || q.Channel != "" {
		sql = listFilteredSQL
	}
	rows, err := s.pool.Query(ctx, sql, tenantID, q.From, q.To, q.SegmentID, q.Channel, state, q.Limit, (q.Page-1)*q.Limit)
	if err != nil {
		return Page{}, fmt.Errorf("listing knowledge gaps: %w", err)
	}
	defer rows.Close()
	out := Page{Groups: []Group{}}
	for rows.Next() {
		var g Group
		var examples []byte
		var total int
		if err := rows.Scan(&g.Key, &g.Count, &g.Signals, &g.LastSeen, &g.State, &g.EntryID, &total, &examples); err != nil {
			return Page{}, fmt.Errorf("listing knowledge gaps: %w", err)
		}
		if err := json.Unmarshal(examples, &g.Examples); err != nil {
			return Page{}, fmt.Errorf("reading a knowledge gap's examples: %w", err)
		}
		if len(g.Examples) > 0 {
			g.Question = g.Examples[0].Question
		}
		out.Groups, out.Total = append(out.Groups, g), total
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("listing knowledge gaps: %w", err)
	}
	return out, nil
}

// SetGapState sets what the owner did about the tenant's group of key:
// StateAnswered (by the entry of entryID, "" none), StateDismissed, or
// StateOpen again (its state forgotten). A key of no group of the tenant
// (no answer of its conversations, tests aside, carries it with a sign) is
// KindNotFound; so is an entry of another tenant's.
func (s *Gaps) SetGapState(ctx context.Context, tenantID, key, state, entryID string) error {
	if key == "" || !pgbase.Storable(key) || len(key) > 200 {
		return parley.Errorf(parley.KindNotFound, "Knowledge gap not found")
	}
	var entry *string
	if entryID != "" {
		if !pgbase.LooksLikeUUID(entryID) {
			return parley.Errorf(parley.KindNotFound, "Entry not found")
		}
		entry = &entryID
	}
	var found, entryFound bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messages a
				WHERE a.tenant_id = $1 AND a.role = 'assistant' AND a.question_key = $2
					AND (a.gap_signals <> 0 OR a.feedback = -1)),
				$3::uuid IS NULL OR EXISTS (SELECT 1 FROM corpus_entries WHERE tenant_id = $1 AND id = $3::uuid)`,
			tenantID, key, entry).Scan(&found, &entryFound); err != nil {
			return err
		}
		if !found || !entryFound {
			return nil
		}
		if state == StateOpen {
			_, err := tx.Exec(ctx, `DELETE FROM knowledge_gap_states WHERE tenant_id = $1 AND key = $2`, tenantID, key)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO knowledge_gap_states (tenant_id, key, state, entry_id) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, key) DO UPDATE SET state = EXCLUDED.state, entry_id = EXCLUDED.entry_id, updated_at = now()`,
			tenantID, key, state, entry)
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("setting a knowledge gap's state: %w", err)
	case !found:
		return parley.Errorf(parley.KindNotFound, "Knowledge gap not found")
	case !entryFound:
		return parley.Errorf(parley.KindNotFound, "Entry not found")
	}
	return nil
}
