package listing

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// ResolutionCounts are the outcomes of a set of conversations.
//
// A conversation is resolved by the assistant when the assistant answered in
// it at least once, it was not handed to a person, no answer in it was voted
// down, and the visitor did not ask the same question again (see migration
// 00058: the same first line once case, spacing and punctuation are
// ignored, or a pg_trgm similarity of at least 0.8, for messages of three
// words and 15 characters or more). It is handed to a person when it was
// escalated (the assistant or the visitor asked for a person) or a person
// took it over or replied in it. The rates are over Conversations, the
// share up over the votes; each nil when its denominator is 0.
type ResolutionCounts struct {
	Conversations int      `json:"conversations"`
	Resolved      int      `json:"resolved"`
	ResolvedRate  *float64 `json:"resolvedRate"`
	HandedOff     int      `json:"handedOff"`
	HandedOffRate *float64 `json:"handedOffRate"`
	VotesUp       int      `json:"votesUp"`
	VotesDown     int      `json:"votesDown"`
	VotesUpRate   *float64 `json:"votesUpRate"`
}

// ResolutionBucket is one step of the resolution's timeline (Date as
// StatsBucket's).
type ResolutionBucket struct {
	Date string `json:"date"`
	ResolutionCounts
}

// ResolutionChannel is the resolution of a channel's conversations.
type ResolutionChannel struct {
	Channel string `json:"channel"`
	ResolutionCounts
}

// ResolutionSegment is the resolution of a segment's conversations (Segment
// its slug, NoSegment for those whose segment was deleted).
type ResolutionSegment struct {
	Segment string `json:"segment"`
	ResolutionCounts
}

// StatsResolution is how the conversations of a window ended: overall, by
// bucket of the timeline, by channel and by segment.
type StatsResolution struct {
	ResolutionCounts
	Timeline  []ResolutionBucket  `json:"timeline"`
	ByChannel []ResolutionChannel `json:"byChannel"`
	BySegment []ResolutionSegment `json:"bySegment"`
}

// share is n over of, to four decimals; nil when of is 0.
func share(n, of int) *float64 {
	if of == 0 {
		return nil
	}
	r := math.Round(float64(n)/float64(of)*10000) / 10000
	return &r
}

// withRates fills the rates of the counts.
func (r ResolutionCounts) withRates() ResolutionCounts {
	r.ResolvedRate, r.HandedOffRate = share(r.Resolved, r.Conversations), share(r.HandedOff, r.Conversations)
	r.VotesUpRate = share(r.VotesUp, r.VotesUp+r.VotesDown)
	return r
}

// handedOffSQL is true of a conversation c handed to a person: escalated
// (the stats' escalated count), held by a person, or with a person's reply
// (the partial index messages_human).
const handedOffSQL = `(c.status IN ('ESCALATED', 'HUMAN') OR c.escalated_at IS NOT NULL OR c.taken_at IS NOT NULL
	OR EXISTS (SELECT 1 FROM messages hm WHERE hm.conversation_id = c.id AND hm.role = 'human'))`

// statsResolution counts the outcomes of the window's conversations in one
// scan, grouped four ways: all, by bucket of timeline (whose dates it
// keeps, every bucket present), by channel (every channel present) and by
// segment (every one of slugs present, NoSegment when there are some).
func (d *Listings) statsResolution(ctx context.Context, where string, args []any, q StatsQuery, timeline []StatsBucket, slugs []string) (*StatsResolution, error) {
	args = slices.Clone(args)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	g, tz := arg(q.Granularity), arg(q.Location)
	rows, _ := d.pool.Query(ctx, `SELECT grouping(r.bucket, r.channel, r.segment), coalesce(to_char(r.bucket, 'YYYY-MM-DD'), ''),
			coalesce(r.channel, ''), coalesce(r.segment, ''), count(*), count(*) FILTER (WHERE r.resolved),
			count(*) FILTER (WHERE r.handed), coalesce(sum(r.up), 0)::int, coalesce(sum(r.down), 0)::int
		FROM (SELECT date_trunc(`+g+`, c.created_at AT TIME ZONE `+tz+`) AS bucket, c.channel::text AS channel,
				coalesce(s.slug::text, '`+NoSegment+`') AS segment, c.feedback_positive AS up, c.feedback_negative AS down,
				h.handed, c.answered AND NOT h.handed AND c.feedback_negative = 0 AND NOT c.repeated_question AS resolved
			FROM conversations c LEFT JOIN segments s ON s.tenant_id = c.tenant_id AND s.id = c.segment_id
			CROSS JOIN LATERAL (SELECT `+handedOffSQL+` AS handed) h`+where+`) r
		GROUP BY GROUPING SETS ((), (r.bucket), (r.channel), (r.segment))`, args...)
	res := &StatsResolution{}
	buckets, channels, segments := map[string]ResolutionCounts{}, map[string]ResolutionCounts{}, map[string]ResolutionCounts{}
	var grouping int
	var date, channel, segment string
	var n ResolutionCounts
	if _, err := pgx.ForEachRow(rows, []any{&grouping, &date, &channel, &segment, &n.Conversations, &n.Resolved, &n.HandedOff, &n.VotesUp, &n.VotesDown}, func() error {
		// grouping's bits, most significant first: bucket, channel, segment
		// (1 when not grouped by it).
		switch grouping {
		case 0b111:
			res.ResolutionCounts = n.withRates()
		case 0b011:
			buckets[date] = n.withRates()
		case 0b101:
			channels[channel] = n.withRates()
		case 0b110:
			segments[segment] = n.withRates()
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("counting resolutions: %w", err)
	}
	res.ResolutionCounts = res.withRates()
	res.Timeline = make([]ResolutionBucket, 0, len(timeline))
	for _, b := range timeline {
		res.Timeline = append(res.Timeline, ResolutionBucket{Date: b.Date, ResolutionCounts: buckets[b.Date].withRates()})
	}
	res.ByChannel = []ResolutionChannel{}
	for _, ch := range []string{parley.ChannelWeb, parley.ChannelAgent, parley.ChannelVoice, parley.ChannelAPI} {
		res.ByChannel = append(res.ByChannel, ResolutionChannel{Channel: ch, ResolutionCounts: channels[ch].withRates()})
	}
	for _, s := range slugs {
		if _, ok := segments[s]; !ok {
			segments[s] = ResolutionCounts{}.withRates()
		}
	}
	res.BySegment = []ResolutionSegment{}
	for s, c := range segments {
		res.BySegment = append(res.BySegment, ResolutionSegment{Segment: s, ResolutionCounts: c})
	}
	// Most conversations first, then by slug; conversations without a
	// segment last.
	slices.SortFunc(res.BySegment, func(a, b ResolutionSegment) int {
		return cmp.Or(cmp.Compare(boolInt(a.Segment == NoSegment), boolInt(b.Segment == NoSegment)),
			cmp.Compare(b.Conversations, a.Conversations), cmp.Compare(a.Segment, b.Segment))
	})
	return res, nil
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
