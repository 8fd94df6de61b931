package manage_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/manage"
)

// The listings through the operations: the rules' 400 naming the
// parameter, the segment resolved among the tenant's own only, and the
// defaults a page is read with.
func TestListings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	s := &manage.Service{DB: store}
	mine, _ := newTenant(t, store)
	theirs, _ := newTenant(t, store)
	seg, err := s.CreateSegment(ctx, theirs, parley.SegmentInput{Slug: parley.Some("shop"), Name: parley.Some("Shop"), SystemPrompt: parley.Some("Sell.")})
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid := func(t *testing.T, err error, field, message string) {
		t.Helper()
		if fe := invalidFields(err); fe[field] == "" || err.Error() != message {
			t.Errorf("%v (%v), want %s: %s", err, fe, field, message)
		}
	}

	t.Run("Conversations", func(t *testing.T) {
		page, err := s.ListConversations(ctx, mine.ID, parley.NewConversationListing())
		if err != nil || page.Total != 0 {
			t.Fatalf("%v %+v", err, page)
		}
		l := parley.NewConversationListing()
		l.Limit = 101
		_, err = s.ListConversations(ctx, mine.ID, l)
		wantInvalid(t, err, "limit", "limit must be an integer between 1 and 100")
		l = parley.NewConversationListing()
		l.Scope.Segment = seg.Slug // theirs
		_, err = s.ListConversations(ctx, mine.ID, l)
		wantInvalid(t, err, "segment", "segment must be the slug of one of the tenant's segments")
		if _, err := s.ListConversations(ctx, theirs.ID, l); err != nil {
			t.Errorf("own segment: %v", err)
		}
		if _, err := s.ConversationFilter(ctx, mine.ID, parley.ConversationScope{Segment: seg.ID}); invalidFields(err)["segment"] == "" {
			t.Errorf("their segment's id in an export: %v", err)
		}
	})

	t.Run("Stats", func(t *testing.T) {
		now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
		q, st, err := s.ConversationStats(ctx, mine.ID, parley.StatsListing{Window: "all"}, now)
		if err != nil || st.Totals.Conversations != 0 || st.AllTime == nil || q.Granularity != "day" || q.Location != "UTC" ||
			!q.Filter.To.Equal(time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%v %+v %+v", err, q, st)
		}
		_, _, err = s.ConversationStats(ctx, mine.ID, parley.StatsListing{Granularity: "hour"}, now)
		wantInvalid(t, err, "granularity", "granularity must be day, week or month")
	})

	t.Run("Visitors", func(t *testing.T) {
		if vs, total, err := s.ListVisitorPage(ctx, mine.ID, parley.NewVisitorListing()); err != nil || total != 0 || len(vs) != 0 {
			t.Errorf("%v %d %v", err, total, vs)
		}
		l := parley.NewVisitorListing()
		l.Offset = -1
		_, _, err := s.ListVisitorPage(ctx, mine.ID, l)
		wantInvalid(t, err, "offset", "offset must be an integer of at least 0")
	})

	t.Run("Corpus", func(t *testing.T) {
		if res, err := s.ListCorpus(ctx, mine.ID, manage.NewCorpusListing()); err != nil || res.Total != 0 {
			t.Errorf("%v %+v", err, res)
		}
		l := manage.NewCorpusListing()
		l.Page = 0
		_, err := s.ListCorpus(ctx, mine.ID, l)
		wantInvalid(t, err, "page", "page must be an integer between 1 and 1000000")
		l = manage.NewCorpusListing()
		l.Segment = seg.Slug
		_, err = s.ListCorpus(ctx, mine.ID, l)
		wantInvalid(t, err, "segmentSlug", `No segment with slug "shop"`)
	})
}
