package listing

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// StatsQuery is what conversation stats are computed over: the filter's
// window (From and To set), channel and segment; the timeline's buckets in
// the time zone Location (an IANA name) by Granularity (day, week or month);
// AllTime adds the totals of every conversation under the same channel and
// segment.
type StatsQuery struct {
	Filter      ConversationFilter
	Granularity string
	Location    string
	AllTime     bool
	// Top is how many entries topTools, byPage and topIntents keep (StatsTop when 0).
	Top int

	// noResolution leaves Resolution out, and its counts out of the SQL:
	// the overview's timeline, and the benchmark's "before", the stats as
	// they were without it.
	noResolution bool
}

// maxQuestionRunes bounds the wording shown for an intent.
const maxQuestionRunes = 200

// StatsTop is how many entries topTools, byPage and topIntents keep by default.
const StatsTop = 10

// NoSegment is the bySegment key of conversations without a segment (its
// segment was deleted): not a valid slug, so it names no segment.
const NoSegment = "_none"

// StatsTotals are the counts of the conversations of a window.
type StatsTotals struct {
	Conversations              int     `json:"conversations"`
	Messages                   int     `json:"messages"`
	Escalated                  int     `json:"escalated"`
	AvgMessagesPerConversation float64 `json:"avgMessagesPerConversation"`
	WithToolCalls              int     `json:"withToolCalls"`
	ToolCallsTotal             int     `json:"toolCallsTotal"`
	// TakenOver counts the conversations a person of the team replied in;
	// AvgFirstHumanReplySeconds is, over them, how long the visitor waited
	// for the person's first reply since their last message before it
	// (nil when none).
	TakenOver                 int      `json:"takenOver"`
	AvgFirstHumanReplySeconds *float64 `json:"avgFirstHumanReplySeconds"`
	// MedianFirstHumanReplySeconds and P90FirstHumanReplySeconds are the
	// median and 90th percentile of the same waits (nil when none).
	MedianFirstHumanReplySeconds *float64 `json:"medianFirstHumanReplySeconds"`
	P90FirstHumanReplySeconds    *float64 `json:"p90FirstHumanReplySeconds"`
}

// StatsSatisfaction counts the visitors' votes; Rate is positive over all
// votes, nil when there is none.
type StatsSatisfaction struct {
	Positive int      `json:"positive"`
	Negative int      `json:"negative"`
	Rate     *float64 `json:"rate"`
}

// StatsBucket is one step of the timeline: Date is the bucket's first day
// (YYYY-MM-DD) in the tenant's time zone.
type StatsBucket struct {
	Date          string `json:"date"`
	Conversations int    `json:"conversations"`
	Messages      int    `json:"messages"`
	// outcomes are the bucket's counts of the resolution's timeline.
	outcomes ResolutionCounts
}

// StatsTool is a tool and how many times it ran.
type StatsTool struct {
	// Name is the function name the model called (the tool history's).
	Name  string `json:"name"`
	Calls int    `json:"calls"`
	// DisplayName is the owner's name of the tool at its latest run with
	// one, nil for the built-in tools: for the dashboard.
	DisplayName *string `json:"-"`
}

// StatsPage is a page and how many conversations started on it.
type StatsPage struct {
	Page          string `json:"page"`
	Conversations int    `json:"conversations"`
}

// StatsIntent is a group of similar first questions: Question is the most
// frequent wording of the group.
type StatsIntent struct {
	Question string `json:"question"`
	Count    int    `json:"count"`
}

// StatsAllTime is the totals and satisfaction of every conversation.
type StatsAllTime struct {
	Totals       StatsTotals       `json:"totals"`
	Satisfaction StatsSatisfaction `json:"satisfaction"`
}

// ConversationStats are the analytics of a window.
type ConversationStats struct {
	Totals        StatsTotals
	Satisfaction  StatsSatisfaction
	Timeline      []StatsBucket
	ByChannel     map[string]int
	BySegment     map[string]int
	ByStatus      map[string]int
	ByVisitorType map[string]int
	TopTools      []StatsTool
	ByPage        []StatsPage
	TopIntents    []StatsIntent
	AllTime       *StatsAllTime
	// Resolution is nil from ConversationTimeline, which does not count it.
	Resolution *StatsResolution
}

// ConversationStats computes the analytics of the tenant's conversations
// started in the query's window.
func (d *Listings) ConversationStats(ctx context.Context, tenantID string, q StatsQuery) (ConversationStats, error) {
	st := ConversationStats{
		ByChannel:     map[string]int{parley.ChannelWeb: 0, parley.ChannelAgent: 0, parley.ChannelVoice: 0, parley.ChannelAPI: 0},
		BySegment:     map[string]int{},
		ByStatus:      map[string]int{parley.StatusBot: 0, parley.StatusEscalated: 0, parley.StatusHuman: 0, parley.StatusClosed: 0},
		ByVisitorType: map[string]int{parley.VisitorHuman: 0, parley.VisitorAgent: 0},
	}
	var err error
	if st.Totals, st.Satisfaction, err = d.statsTotals(ctx, tenantID, q.Filter); err != nil {
		return ConversationStats{}, err
	}
	if q.AllTime {
		all := q.Filter
		all.From, all.To = time.Time{}, time.Time{}
		var a StatsAllTime
		if a.Totals, a.Satisfaction, err = d.statsTotals(ctx, tenantID, all); err != nil {
			return ConversationStats{}, err
		}
		st.AllTime = &a
	}
	where, args := conversationWhere(tenantID, q.Filter)
	top := cmp.Or(q.Top, StatsTop)

	// Breakdowns: every segment of the tenant, zero when it has none.
	rows, _ := d.pool.Query(ctx, `SELECT slug FROM segments WHERE tenant_id = $1`, tenantID)
	slugs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return ConversationStats{}, fmt.Errorf("listing segments: %w", err)
	}
	for _, s := range slugs {
		st.BySegment[s] = 0
	}
	// The same scan counts the outcomes by channel and segment, for the
	// resolution.
	outcomes := newOutcomes()
	rows, _ = d.pool.Query(ctx, `SELECT c.channel, c.status, c.visitor_type, coalesce(s.slug, '`+NoSegment+`'), count(*), `+outcomeColumns(q)+`
		FROM conversations c LEFT JOIN segments s ON s.tenant_id = c.tenant_id AND s.id = c.segment_id`+where+
		` GROUP BY 1, 2, 3, 4`, args...)
	var channel, status, visitorType, segment string
	var n int
	var o ResolutionCounts
	if _, err := pgx.ForEachRow(rows, []any{&channel, &status, &visitorType, &segment, &n, &o.Resolved, &o.HandedOff, &o.VotesUp, &o.VotesDown}, func() error {
		st.ByChannel[channel] += n
		st.ByStatus[status] += n
		st.ByVisitorType[visitorType] += n
		st.BySegment[segment] += n
		o.Conversations = n
		outcomes.add(channel, segment, o)
		return nil
	}); err != nil {
		return ConversationStats{}, fmt.Errorf("counting conversations by kind: %w", err)
	}

	if st.Timeline, err = d.statsTimeline(ctx, where, args, q); err != nil {
		return ConversationStats{}, err
	}

	rows, _ = d.pool.Query(ctx, `SELECT th.tool_name, count(*),
			(array_agg(th.tool_display_name ORDER BY th.seq DESC) FILTER (WHERE th.tool_display_name IS NOT NULL))[1]
		FROM tool_history th
		JOIN conversations c ON c.tenant_id = th.tenant_id AND c.id = th.conversation_id`+where+` AND th.tenant_id = $1
		GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT `+fmt.Sprint(top), args...)
	if st.TopTools, err = pgx.CollectRows(rows, pgx.RowToStructByPos[StatsTool]); err != nil {
		return ConversationStats{}, fmt.Errorf("counting tools: %w", err)
	}

	// A page is its URL without query string or fragment: tracking
	// parameters do not split it.
	rows, _ = d.pool.Query(ctx, `SELECT split_part(split_part(c.page_url, '#', 1), '?', 1), count(*) FROM conversations c`+where+
		` AND c.page_url IS NOT NULL AND c.page_url <> '' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT `+fmt.Sprint(top), args...)
	if st.ByPage, err = pgx.CollectRows(rows, pgx.RowToStructByPos[StatsPage]); err != nil {
		return ConversationStats{}, fmt.Errorf("counting pages: %w", err)
	}

	if st.TopIntents, err = d.statsIntents(ctx, where, args, top); err != nil {
		return ConversationStats{}, err
	}
	if !q.noResolution {
		st.Resolution = outcomes.resolution(st.Timeline, slugs)
	}
	return st, nil
}

// ConversationTimeline computes only the totals, satisfaction and timeline
// of the query's window: what the dashboard's overview shows on every visit,
// without the breakdowns and the grouping of intents.
func (d *Listings) ConversationTimeline(ctx context.Context, tenantID string, q StatsQuery) (ConversationStats, error) {
	q.noResolution = true
	var st ConversationStats
	var err error
	if st.Totals, st.Satisfaction, err = d.statsTotals(ctx, tenantID, q.Filter); err != nil {
		return ConversationStats{}, err
	}
	where, args := conversationWhere(tenantID, q.Filter)
	if st.Timeline, err = d.statsTimeline(ctx, where, args, q); err != nil {
		return ConversationStats{}, err
	}
	return st, nil
}

// statsTotals counts the conversations of f and their votes.
func (d *Listings) statsTotals(ctx context.Context, tenantID string, f ConversationFilter) (StatsTotals, StatsSatisfaction, error) {
	where, args := conversationWhere(tenantID, f)
	var t StatsTotals
	var s StatsSatisfaction
	err := d.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(c.message_count), 0), count(*) FILTER (WHERE c.status = 'ESCALATED' OR c.escalated_at IS NOT NULL),
			count(*) FILTER (WHERE c.tool_calls_count > 0), coalesce(sum(c.tool_calls_count), 0),
			coalesce(sum(c.feedback_positive), 0), coalesce(sum(c.feedback_negative), 0)
		FROM conversations c`+where, args...).Scan(&t.Conversations, &t.Messages, &t.Escalated, &t.WithToolCalls, &t.ToolCallsTotal,
		&s.Positive, &s.Negative)
	if err != nil {
		return t, s, fmt.Errorf("counting conversation totals: %w", err)
	}
	// The takeovers: each conversation's first reply of a person (the
	// partial index messages_human) and the visitor's last message before it.
	err = d.pool.QueryRow(ctx, `SELECT count(*), avg(w.s), percentile_cont(0.5) WITHIN GROUP (ORDER BY w.s),
			percentile_cont(0.9) WITHIN GROUP (ORDER BY w.s)
		FROM conversations c
		CROSS JOIN LATERAL (SELECT m.seq, m.created_at FROM messages m
			WHERE m.conversation_id = c.id AND m.role = 'human' ORDER BY m.seq LIMIT 1) h
		LEFT JOIN LATERAL (SELECT m.created_at FROM messages m
			WHERE m.conversation_id = c.id AND m.role = 'user' AND m.seq < h.seq ORDER BY m.seq DESC LIMIT 1) u ON true
		CROSS JOIN LATERAL (SELECT extract(epoch FROM h.created_at - u.created_at)::float8 AS s) w`+where,
		args...).Scan(&t.TakenOver, &t.AvgFirstHumanReplySeconds, &t.MedianFirstHumanReplySeconds, &t.P90FirstHumanReplySeconds)
	if err != nil {
		return t, s, fmt.Errorf("counting takeovers: %w", err)
	}
	for _, a := range []*float64{t.AvgFirstHumanReplySeconds, t.MedianFirstHumanReplySeconds, t.P90FirstHumanReplySeconds} {
		if a != nil {
			*a = math.Round(*a*10) / 10
		}
	}
	if t.Conversations > 0 {
		t.AvgMessagesPerConversation = math.Round(float64(t.Messages)/float64(t.Conversations)*100) / 100
	}
	if votes := s.Positive + s.Negative; votes > 0 {
		rate := math.Round(float64(s.Positive)/float64(votes)*10000) / 10000
		s.Rate = &rate
	}
	return t, s, nil
}

// statsTimeline counts the conversations and their messages by bucket of
// the window, every bucket present. Buckets are cut on the wall clock of
// the time zone, so a day of a DST change is one bucket of 23 or 25 hours.
func (d *Listings) statsTimeline(ctx context.Context, where string, args []any, q StatsQuery) ([]StatsBucket, error) {
	args = slices.Clone(args)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	g, tz := arg(q.Granularity), arg(q.Location)
	from, to := arg(q.Filter.From), arg(q.Filter.To)
	rows, _ := d.pool.Query(ctx, `WITH b AS (
			SELECT generate_series(date_trunc(`+g+`, `+from+`::timestamptz AT TIME ZONE `+tz+`),
				(`+to+`::timestamptz AT TIME ZONE `+tz+`) - interval '1 microsecond', ('1 ' || `+g+`)::interval) AS bucket),
		counts AS (
			SELECT date_trunc(`+g+`, c.created_at AT TIME ZONE `+tz+`) AS bucket, count(*) AS conversations,
				sum(c.message_count) AS messages, `+outcomeColumns(q)+`
			FROM conversations c`+where+` GROUP BY 1)
		SELECT to_char(b.bucket, 'YYYY-MM-DD'), coalesce(counts.conversations, 0), coalesce(counts.messages, 0)::int,
			coalesce(counts.resolved, 0), coalesce(counts.handed_off, 0), coalesce(counts.votes_up, 0), coalesce(counts.votes_down, 0)
		FROM b LEFT JOIN counts USING (bucket) ORDER BY b.bucket`, args...)
	var buckets []StatsBucket
	var sb StatsBucket
	o := &sb.outcomes
	if _, err := pgx.ForEachRow(rows, []any{&sb.Date, &sb.Conversations, &sb.Messages, &o.Resolved, &o.HandedOff, &o.VotesUp, &o.VotesDown}, func() error {
		o.Conversations = sb.Conversations
		buckets = append(buckets, sb)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("counting the timeline: %w", err)
	}
	return buckets, nil
}

// statsIntents groups the first questions of the window by parley.Intent:
// questions that differ only in case, punctuation, symbols or spacing (or
// past their first line or 100th character) are one intent. The database
// groups identical texts; the groups merge here, at most one row per
// distinct first message.
func (d *Listings) statsIntents(ctx context.Context, where string, args []any, top int) ([]StatsIntent, error) {
	rows, _ := d.pool.Query(ctx, `SELECT left(c.first_user_message, 500), count(*) FROM conversations c`+where+
		` AND c.first_user_message IS NOT NULL GROUP BY 1`, args...)
	type group struct {
		StatsIntent
		best int // count of the most frequent wording
	}
	groups := map[string]*group{}
	var text string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&text, &n}, func() error {
		key := parley.Intent(text)
		if key == "" {
			return nil
		}
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
		}
		g.Count += n
		wording, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		if r := []rune(wording); len(r) > maxQuestionRunes {
			wording = string(r[:maxQuestionRunes]) + "…"
		}
		if n > g.best || n == g.best && wording < g.Question {
			g.best, g.Question = n, wording
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("grouping intents: %w", err)
	}
	out := make([]StatsIntent, 0, len(groups))
	for _, g := range groups {
		out = append(out, g.StatsIntent)
	}
	slices.SortFunc(out, func(a, b StatsIntent) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Question, b.Question))
	})
	return out[:min(len(out), top)], nil
}
