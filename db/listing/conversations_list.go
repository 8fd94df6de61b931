package listing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// ConversationFilter filters and pages a conversations list. Empty strings
// and zero times filter nothing; Page is 1-based.
type ConversationFilter struct {
	From      time.Time // created at or after
	To        time.Time // created before
	Channel   string
	SegmentID string
	VisitorID string
	// ToolType keeps the conversations that ran a tool of this type.
	ToolType string
	Status   string
	// Search is a case-insensitive substring of one of the conversation's messages.
	Search string
	// HasFeedback keeps the conversations with at least one vote on an answer.
	HasFeedback bool
	// HasSubmission keeps the conversations that produced a submission.
	HasSubmission bool
	Page          int
	Limit         int

	// searchHits, when not nil, are all the conversations whose messages
	// hold Search, read off the trigram index: the search then filters
	// by them instead of probing each conversation's messages.
	searchHits []string
}

// ConversationItem is a conversation as lists show it: with its segment,
// the start of its last message, and its tool history.
type ConversationItem struct {
	parley.Conversation
	SegmentSlug *string `db:"segment_slug"`
	SegmentName *string `db:"segment_name"`
	// Preview is the start of the last message, at most PreviewRunes+1
	// characters: one more says that it was cut.
	Preview     *string           `db:"preview"`
	ToolHistory []parley.ToolCall `db:"-"`
}

// PreviewRunes is how much of the last message a list shows.
const PreviewRunes = 160

// ConversationPage is one page of a conversations list; Total counts the
// matches of every page.
type ConversationPage struct {
	Conversations []ConversationItem
	Total         int
	// TotalCapped says that a search matched more than SearchTotalCap
	// conversations: Total is then SearchTotalCap, a lower bound.
	TotalCapped bool
}

// SearchTotalCap is how many matches of a search are counted. Counting them
// all reads every message holding a common word (200 ms at a million
// messages); counting up to the cap stops after a few hundred conversations.
const SearchTotalCap = 500

// conversationWhere is the WHERE clause of f over conversations c, $1 being
// the tenant's id; args holds $1 and the values it refers to.
func conversationWhere(tenantID string, f ConversationFilter) (string, []any) {
	args := []any{tenantID}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var where strings.Builder
	// The owner's rehearsals in the dashboard's test chat are not visitors'
	// conversations: lists, exports and stats leave them out.
	where.WriteString(" WHERE c.tenant_id = $1 AND NOT c.is_test")
	if !f.From.IsZero() {
		where.WriteString(" AND c.created_at >= " + arg(f.From))
	}
	if !f.To.IsZero() {
		where.WriteString(" AND c.created_at < " + arg(f.To))
	}
	if f.Channel != "" {
		where.WriteString(" AND c.channel = " + arg(pgbase.StorableKey(f.Channel)))
	}
	if f.Status != "" {
		where.WriteString(" AND c.status = " + arg(pgbase.StorableKey(f.Status)))
	}
	for _, id := range []struct{ column, value string }{{"segment_id", f.SegmentID}, {"visitor_id", f.VisitorID}} {
		switch {
		case id.value == "":
		case pgbase.LooksLikeUUID(id.value):
			where.WriteString(" AND c." + id.column + " = " + arg(id.value))
		default:
			where.WriteString(" AND false") // no row has such an id
		}
	}
	if f.ToolType != "" {
		where.WriteString(` AND EXISTS (SELECT 1 FROM tool_history th WHERE th.tenant_id = $1 AND th.conversation_id = c.id
			AND th.tool_type = ` + arg(strings.ToUpper(pgbase.StorableKey(f.ToolType))) + `)`)
	}
	if f.searchHits != nil {
		where.WriteString(" AND c.id = ANY(" + arg(f.searchHits) + "::uuid[])")
	} else if f.Search != "" {
		where.WriteString(` AND EXISTS (SELECT 1 FROM messages m WHERE m.tenant_id = $1 AND m.conversation_id = c.id
			AND m.content ILIKE ` + arg("%"+pgbase.EscapeLike(pgbase.StorableKey(f.Search))+"%") + `)`)
	}
	if f.HasFeedback {
		where.WriteString(" AND c.feedback_positive + c.feedback_negative > 0")
	}
	if f.HasSubmission {
		where.WriteString(" AND EXISTS (SELECT 1 FROM submissions sub WHERE sub.tenant_id = $1 AND sub.conversation_id = c.id)")
	}
	return where.String(), args
}

// conversationItemSQL selects ConversationItems of conversations c, the
// WHERE clause to follow.
var conversationItemSQL = `SELECT ` + pgbase.Qualified("c", pgbase.ConversationColumns) + `,
		s.slug AS segment_slug, s.name AS segment_name, last.preview
	FROM conversations c
	LEFT JOIN segments s ON s.tenant_id = c.tenant_id AND s.id = c.segment_id
	LEFT JOIN LATERAL (SELECT left(m.content, ` + fmt.Sprint(PreviewRunes+1) + `) AS preview FROM messages m
		WHERE m.tenant_id = c.tenant_id AND m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1) last ON true`

// Searching messages takes one of two ways, chosen by how many messages
// PostgreSQL estimates hold the words (its statistics of the trigram index,
// through EXPLAIN, about a millisecond):
//
//   - few (up to searchIndexFirstMax): read the matching messages off the
//     trigram index first, then filter, count and page the conversations
//     they belong to by id;
//   - many: walk the conversations newest first, probing each one's
//     messages, as a common word is met early.
//
// Left to itself, the planner walks for every word: for a word in a few
// percent of conversations, counting 501 matches probed 9,000
// conversations (62 ms) where the index gives the 4,000 messages that hold
// it. Reading 100,000 matches of a common word off the index would take as
// long; the walk meets them at once (BENCHMARKS.md, "Conversations list").
const searchIndexFirstMax = 20000

// searchHitsFor returns the conversations of the tenant whose messages hold
// search, when few messages do (see searchIndexFirstMax); nil otherwise,
// when the search should walk the conversations instead.
func (d *Listings) searchHitsFor(ctx context.Context, tenantID, search string) ([]string, error) {
	if utf8.RuneCountInString(strings.TrimSpace(search)) < 3 {
		return nil, nil // no trigram to look up: the index cannot narrow it
	}
	pattern := "%" + pgbase.EscapeLike(pgbase.StorableKey(search)) + "%"
	const matching = `SELECT m.conversation_id FROM messages m WHERE m.tenant_id = $1 AND m.content ILIKE $2`
	// An unnamed statement is planned with these values: the estimate is
	// for this pattern, not a generic plan's guess.
	var plan []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if err := d.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+matching, pgx.QueryExecModeExec, tenantID, pattern).Scan(&plan); err != nil {
		return nil, fmt.Errorf("estimating a search: %w", err)
	}
	limit := float64(searchIndexFirstMax)
	if d.indexFirstMax != 0 {
		limit = float64(d.indexFirstMax)
	}
	if len(plan) == 0 || plan[0].Plan.Rows > limit {
		return nil, nil
	}
	// Should the estimate be far off, stop reading and walk instead.
	const most = 2 * searchIndexFirstMax
	rows, _ := d.pool.Query(ctx, matching+fmt.Sprintf(" LIMIT %d", most+1), pgx.QueryExecModeExec, tenantID, pattern)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("searching messages: %w", err)
	}
	if len(ids) > most {
		return nil, nil
	}
	hits := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			hits = append(hits, id)
		}
	}
	return hits, nil
}

// ListConversations returns a page of the tenant's conversations, most
// recently started first, with the number of matches.
func (d *Listings) ListConversations(ctx context.Context, tenantID string, f ConversationFilter) (ConversationPage, error) {
	if f.Search != "" {
		hits, err := d.searchHitsFor(ctx, tenantID, f.Search)
		if err != nil {
			return ConversationPage{}, err
		}
		f.searchHits = hits
	}
	where, args := conversationWhere(tenantID, f)
	if f.searchHits != nil {
		return d.listSearchHits(ctx, tenantID, f, where, args)
	}
	var page ConversationPage
	count := `SELECT count(*) FROM conversations c` + where
	walking := f.Search != "" && f.searchHits == nil // else the hits make an exact count cheap
	if walking {
		count = fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM conversations c%s LIMIT %d) capped`, where, SearchTotalCap+1)
	}
	if err := d.pool.QueryRow(ctx, count, args...).Scan(&page.Total); err != nil {
		return ConversationPage{}, fmt.Errorf("counting conversations: %w", err)
	}
	if page.Total > SearchTotalCap && walking {
		page.Total, page.TotalCapped = SearchTotalCap, true
	}
	args = append(args, f.Limit, (f.Page-1)*f.Limit)
	var err error
	page.Conversations, err = d.conversationItems(ctx, tenantID, conversationItemSQL+where+
		fmt.Sprintf(` ORDER BY c.created_at DESC, c.id DESC LIMIT $%d OFFSET $%d`, len(args)-1, len(args)), args...)
	return page, err
}

// listSearchHits is ListConversations for a search read off the trigram
// index (f.searchHits): the conversations among the hits that pass the
// other filters are read once, id and start only, then counted, ordered and
// paged here, and only the page's are read whole. Counting and paging in
// two statements looked each hit up twice.
func (d *Listings) listSearchHits(ctx context.Context, tenantID string, f ConversationFilter, where string, args []any) (ConversationPage, error) {
	type match struct {
		id string
		at time.Time
	}
	rows, _ := d.pool.Query(ctx, `SELECT c.id::text, c.created_at FROM conversations c`+where, args...)
	matches, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (match, error) {
		var m match
		return m, r.Scan(&m.id, &m.at)
	})
	if err != nil {
		return ConversationPage{}, fmt.Errorf("searching conversations: %w", err)
	}
	// The list's order: newest first, then by id descending (a uuid's text
	// sorts as PostgreSQL sorts the uuid).
	slices.SortFunc(matches, func(a, b match) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	page := ConversationPage{Total: len(matches), Conversations: []ConversationItem{}}
	lo := min((f.Page-1)*f.Limit, len(matches))
	hi := min(lo+f.Limit, len(matches))
	if lo == hi {
		return page, nil
	}
	ids := make([]string, 0, hi-lo)
	for _, m := range matches[lo:hi] {
		ids = append(ids, m.id)
	}
	page.Conversations, err = d.conversationItems(ctx, tenantID, conversationItemSQL+` WHERE c.tenant_id = $1 AND c.id = ANY($2::uuid[])
		ORDER BY c.created_at DESC, c.id DESC`, tenantID, ids)
	return page, err
}

// conversationItems runs a query of conversationItemSQL and attaches the
// tool history of the conversations it lists.
func (d *Listings) conversationItems(ctx context.Context, tenantID, sql string, args ...any) ([]ConversationItem, error) {
	rows, _ := d.pool.Query(ctx, sql, args...)
	items, err := pgx.CollectRows(rows, pgx.RowToStructByName[ConversationItem])
	if err != nil {
		return nil, fmt.Errorf("listing conversations: %w", err)
	}
	if err := d.attachToolHistory(ctx, tenantID, items); err != nil {
		return nil, err
	}
	return items, nil
}

// attachToolHistory reads the tool history of the listed conversations in
// one query, oldest run first.
func (d *Listings) attachToolHistory(ctx context.Context, tenantID string, items []ConversationItem) error {
	ids := make([]string, len(items))
	at := make(map[string]int, len(items))
	for i, it := range items {
		ids[i], at[it.ID] = it.ID, i
		items[i].ToolHistory = []parley.ToolCall{}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT conversation_id, tool_name, tool_display_name, tool_type, input, result, created_at FROM tool_history
		WHERE tenant_id = $1 AND conversation_id = ANY($2::uuid[]) ORDER BY conversation_id, seq`, tenantID, ids)
	var conversationID string
	var call parley.ToolCall
	_, err := pgx.ForEachRow(rows, []any{&conversationID, &call.ToolName, &call.ToolDisplayName, &call.ToolType, &call.Input, &call.Result, &call.Timestamp}, func() error {
		i := at[conversationID]
		items[i].ToolHistory = append(items[i].ToolHistory, call)
		// The next row's JSON and display name get their own memory.
		call.Input, call.Result, call.ToolDisplayName = nil, nil, nil
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading tool history: %w", err)
	}
	return nil
}

// ConversationDetail is one conversation with every message, oldest first.
type ConversationDetail struct {
	ConversationItem
	Messages []parley.Message
}

// ConversationDetail returns one of the tenant's conversations with its
// messages and tool history; an id of another tenant's, or not a uuid, is
// NotFound.
func (d *Listings) ConversationDetail(ctx context.Context, tenantID, id string) (ConversationDetail, error) {
	if !pgbase.LooksLikeUUID(id) {
		return ConversationDetail{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	rows, _ := d.pool.Query(ctx, conversationItemSQL+` WHERE c.tenant_id = $1 AND c.id = $2`, tenantID, id)
	item, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConversationItem])
	if err != nil {
		return ConversationDetail{}, pgbase.NotFound(err, "Conversation")
	}
	items := []ConversationItem{item}
	if err := d.attachToolHistory(ctx, tenantID, items); err != nil {
		return ConversationDetail{}, err
	}
	rows, _ = d.pool.Query(ctx, `SELECT `+pgbase.MessageColumns+` FROM messages
		WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY seq`, tenantID, id)
	msgs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		return ConversationDetail{}, fmt.Errorf("reading messages: %w", err)
	}
	return ConversationDetail{ConversationItem: items[0], Messages: msgs}, nil
}

// ConversationExportRow is a conversation as exports write it.
type ConversationExportRow struct {
	ID               string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Channel          string
	Status           string
	VisitorType      string
	SegmentSlug      *string
	PageURL          *string
	MessageCount     int
	ToolCallsCount   int
	FirstUserMessage *string
}

// EachConversation calls fn with the tenant's conversations matching f, most
// recently started first, at most f.Limit (Page is ignored), one by one as
// they arrive from the database: memory stays flat however many there are.
// An error of fn stops the reading and is returned.
func (d *Listings) EachConversation(ctx context.Context, tenantID string, f ConversationFilter, fn func(ConversationExportRow) error) error {
	where, args := conversationWhere(tenantID, f)
	args = append(args, f.Limit)
	rows, _ := d.pool.Query(ctx, `SELECT c.id, c.created_at, c.updated_at, c.channel, c.status, c.visitor_type, s.slug,
			c.page_url, c.message_count, c.tool_calls_count, c.first_user_message
		FROM conversations c
		LEFT JOIN segments s ON s.tenant_id = c.tenant_id AND s.id = c.segment_id`+where+
		fmt.Sprintf(` ORDER BY c.created_at DESC, c.id DESC LIMIT $%d`, len(args)), args...)
	var r ConversationExportRow
	_, err := pgx.ForEachRow(rows, []any{&r.ID, &r.CreatedAt, &r.UpdatedAt, &r.Channel, &r.Status, &r.VisitorType, &r.SegmentSlug,
		&r.PageURL, &r.MessageCount, &r.ToolCallsCount, &r.FirstUserMessage}, func() error { return fn(r) })
	if err != nil {
		return fmt.Errorf("exporting conversations: %w", err)
	}
	return nil
}
