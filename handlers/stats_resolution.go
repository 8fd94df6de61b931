package handlers

import (
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/views"
)

// ResolutionRow is counts as the analytics page shows them, named label and
// linked to href (none when "").
func ResolutionRow(label, href string, r listing.ResolutionCounts) views.ResolutionRow {
	return views.ResolutionRow{Label: label, Href: href, Conversations: r.Conversations,
		Resolved: r.Resolved, HandedOff: r.HandedOff, VotesUp: r.VotesUp, VotesDown: r.VotesDown,
		ResolvedRate:  views.RatePercent(r.Resolved, r.Conversations),
		HandedOffRate: views.RatePercent(r.HandedOff, r.Conversations)}
}

// ResolutionView is the stats' resolution res as the analytics page shows
// it: the timeline's buckets named by labels (the timeline chart's, same
// buckets), channels and segments by their options (the segments' Label of
// a slug; a segment not among them, deleted since, as "No segment"), each
// row linked by link (key and value of the inbox's filter).
func ResolutionView(res listing.StatsResolution, labels []string, channels, segments []views.Option, link func(key, value string) string) views.ResolutionView {
	v := views.ResolutionView{Totals: ResolutionRow("All", "", res.ResolutionCounts)}
	for i, b := range res.Timeline {
		label := b.Date
		if i < len(labels) {
			label = labels[i]
		}
		v.Timeline = append(v.Timeline, ResolutionRow(label, "", b.ResolutionCounts))
	}
	channelLabel := map[string]string{}
	for _, o := range channels {
		channelLabel[o.Value] = o.Label
	}
	for _, ch := range res.ByChannel {
		v.ByChannel = append(v.ByChannel, ResolutionRow(NonBlankOr(channelLabel[ch.Channel], ch.Channel), link("channel", ch.Channel), ch.ResolutionCounts))
	}
	segmentLabel := map[string]string{}
	for _, o := range segments {
		segmentLabel[o.Value] = o.Label
	}
	for _, sg := range res.BySegment {
		if label, ok := segmentLabel[sg.Segment]; ok {
			v.BySegment = append(v.BySegment, ResolutionRow(label, link("segment", sg.Segment), sg.ResolutionCounts))
		} else {
			v.BySegment = append(v.BySegment, ResolutionRow("No segment", "", sg.ResolutionCounts))
		}
	}
	return v
}
