package listing

import (
	"cmp"
	"math"
	"slices"

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
// (person_replied, which the statement storing a person's message keeps,
// so that no message is read).
const handedOffSQL = `(c.status IN ('ESCALATED', 'HUMAN') OR c.escalated_at IS NOT NULL OR c.taken_at IS NOT NULL OR c.person_replied)`

// outcomeColumnsSQL are the aggregates of the outcomes of a group of
// conversations c, added to the breakdowns' and the timeline's scans:
// resolved, handed_off, votes_up and votes_down.
const outcomeColumnsSQL = `count(*) FILTER (WHERE c.answered AND NOT ` + handedOffSQL + ` AND c.feedback_negative = 0 AND NOT c.repeated_question) AS resolved,
	count(*) FILTER (WHERE ` + handedOffSQL + `) AS handed_off,
	coalesce(sum(c.feedback_positive), 0)::int AS votes_up, coalesce(sum(c.feedback_negative), 0)::int AS votes_down`

// outcomeColumns are outcomeColumnsSQL, or zeros when q computes no
// resolution (the overview's timeline, the benchmark's "before").
func outcomeColumns(q StatsQuery) string {
	if q.noResolution {
		return `0 AS resolved, 0 AS handed_off, 0 AS votes_up, 0 AS votes_down`
	}
	return outcomeColumnsSQL
}

// add adds o to r.
func (r *ResolutionCounts) add(o ResolutionCounts) {
	r.Conversations += o.Conversations
	r.Resolved += o.Resolved
	r.HandedOff += o.HandedOff
	r.VotesUp += o.VotesUp
	r.VotesDown += o.VotesDown
}

// outcomes sum the outcomes of the breakdowns' groups by channel and by
// segment.
type outcomes struct {
	all                ResolutionCounts
	channels, segments map[string]ResolutionCounts
}

func newOutcomes() *outcomes {
	return &outcomes{channels: map[string]ResolutionCounts{}, segments: map[string]ResolutionCounts{}}
}

// add counts the group o of channel and segment.
func (s *outcomes) add(channel, segment string, o ResolutionCounts) {
	s.all.add(o)
	c, g := s.channels[channel], s.segments[segment]
	c.add(o)
	g.add(o)
	s.channels[channel], s.segments[segment] = c, g
}

// resolution is the stats' resolution: overall, by bucket of timeline
// (every bucket present), by channel (every channel present) and by
// segment (every one of slugs present, NoSegment when there are some).
func (s *outcomes) resolution(timeline []StatsBucket, slugs []string) *StatsResolution {
	res := &StatsResolution{ResolutionCounts: s.all.withRates()}
	res.Timeline = make([]ResolutionBucket, 0, len(timeline))
	for _, b := range timeline {
		res.Timeline = append(res.Timeline, ResolutionBucket{Date: b.Date, ResolutionCounts: b.outcomes.withRates()})
	}
	res.ByChannel = []ResolutionChannel{}
	for _, ch := range []string{parley.ChannelWeb, parley.ChannelAgent, parley.ChannelVoice, parley.ChannelAPI} {
		res.ByChannel = append(res.ByChannel, ResolutionChannel{Channel: ch, ResolutionCounts: s.channels[ch].withRates()})
	}
	for _, slug := range slugs {
		if _, ok := s.segments[slug]; !ok {
			s.segments[slug] = ResolutionCounts{}
		}
	}
	res.BySegment = []ResolutionSegment{}
	for slug, c := range s.segments {
		res.BySegment = append(res.BySegment, ResolutionSegment{Segment: slug, ResolutionCounts: c.withRates()})
	}
	// Most conversations first, then by slug; conversations without a
	// segment last.
	slices.SortFunc(res.BySegment, func(a, b ResolutionSegment) int {
		return cmp.Or(cmp.Compare(boolInt(a.Segment == NoSegment), boolInt(b.Segment == NoSegment)),
			cmp.Compare(b.Conversations, a.Conversations), cmp.Compare(a.Segment, b.Segment))
	})
	return res
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
