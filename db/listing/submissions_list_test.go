package listing_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/listing"
)

// addSubmission creates a submission of f changed by mod and backdates it to created.
func addSubmission(t *testing.T, f *dbtest.SubFixture, created time.Time, mod func(*parley.NewSubmission)) parley.Submission {
	t.Helper()
	s := f.NewSubmission()
	if mod != nil {
		mod(&s)
	}
	sub, _, err := f.Store.CreateSubmission(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.Pool().Exec(context.Background(), `UPDATE submissions SET created_at = $2 WHERE id = $1`, sub.ID, created); err != nil {
		t.Fatal(err)
	}
	sub.CreatedAt = created
	return sub
}

func ids(subs []parley.Submission) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.ID
	}
	return out
}

func TestListSubmissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond) // what Postgres stores

	t.Run("MostRecentFirst", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		old := addSubmission(t, f, now.Add(-3*time.Hour), nil)
		recent := addSubmission(t, f, now.Add(-time.Hour), nil)
		same1 := addSubmission(t, f, now.Add(-2*time.Hour), nil)
		same2 := addSubmission(t, f, now.Add(-2*time.Hour), nil)
		tied := []string{same1.ID, same2.ID}
		slices.Sort(tied)
		page, err := f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{recent.ID, tied[1], tied[0], old.ID}
		if got := ids(page.Submissions); !slices.Equal(got, want) || page.Total != 4 {
			t.Errorf("order %v, want %v (total %d)", got, want, page.Total)
		}
		page, err = f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Page: 2, Limit: 3})
		if err != nil || !slices.Equal(ids(page.Submissions), []string{old.ID}) || page.Total != 4 {
			t.Errorf("page 2: %v total %d, %v", ids(page.Submissions), page.Total, err)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		form := addSubmission(t, f, now.Add(-time.Hour), func(s *parley.NewSubmission) {
			s.Channel, s.ToolID, s.ConversationID = "form", nil, nil
		})
		booking := addSubmission(t, f, now.Add(-2*time.Hour), func(s *parley.NewSubmission) {
			s.ToolType, s.ToolName, s.Channel, s.ToolID = "BOOK_MEETING", "Demo", "voice", nil
		})
		web := addSubmission(t, f, now.Add(-50*time.Hour), nil)
		if _, _, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, web.ID, "CONTACTED"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name   string
			filter listing.SubmissionFilter
			want   []string
		}{
			{"None", listing.SubmissionFilter{}, []string{form.ID, booking.ID, web.ID}},
			{"ToolType", listing.SubmissionFilter{ToolType: "BOOK_MEETING"}, []string{booking.ID}},
			{"ToolTypeLowerCase", listing.SubmissionFilter{ToolType: "submit_form"}, []string{form.ID, web.ID}},
			{"ToolTypeUnknown", listing.SubmissionFilter{ToolType: "GENERATE_QUOTE"}, nil},
			{"ToolID", listing.SubmissionFilter{ToolID: f.Tool.ID}, []string{web.ID}},
			{"ToolIDNotUUID", listing.SubmissionFilter{ToolID: "nope"}, nil},
			{"Status", listing.SubmissionFilter{Status: "CONTACTED"}, []string{web.ID}},
			{"StatusNew", listing.SubmissionFilter{Status: "NEW"}, []string{form.ID, booking.ID}},
			{"Channel", listing.SubmissionFilter{Channel: "voice"}, []string{booking.ID}},
			{"From", listing.SubmissionFilter{From: now.Add(-2 * time.Hour)}, []string{form.ID, booking.ID}},
			{"ToExclusive", listing.SubmissionFilter{To: now.Add(-2 * time.Hour)}, []string{web.ID}},
			{"Window", listing.SubmissionFilter{From: now.Add(-3 * time.Hour), To: now.Add(-90 * time.Minute)}, []string{booking.ID}},
			{"Combined", listing.SubmissionFilter{ToolType: "SUBMIT_FORM", Status: "NEW", Channel: "form"}, []string{form.ID}},
		} {
			tc.filter.Page, tc.filter.Limit = 1, 10
			page, err := f.Store.ListSubmissions(ctx, f.Tenant.ID, tc.filter)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := ids(page.Submissions); !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) || page.Total != len(tc.want) {
				t.Errorf("%s: %v (total %d), want %v", tc.name, got, page.Total, tc.want)
			}
		}
	})

	t.Run("SearchEscapesWildcards", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		input := func(raw string) func(*parley.NewSubmission) {
			return func(s *parley.NewSubmission) { s.Input = json.RawMessage(raw) }
		}
		percent := addSubmission(t, f, now.Add(-1*time.Minute), input(`{"note":"100% Sure"}`))
		digits := addSubmission(t, f, now.Add(-2*time.Minute), input(`{"note":"1000 sure"}`))
		underscore := addSubmission(t, f, now.Add(-3*time.Minute), input(`{"code":"a_b"}`))
		letter := addSubmission(t, f, now.Add(-4*time.Minute), input(`{"code":"axb"}`))
		backslash := addSubmission(t, f, now.Add(-5*time.Minute), input(`{"path":"C:\\temp"}`))
		nested := addSubmission(t, f, now.Add(-6*time.Minute), input(`{"address":{"city":"Zürich"},"tags":["vip"]}`))
		for search, want := range map[string][]string{
			"0%":     {percent.ID},
			"SURE":   {percent.ID, digits.ID},
			"a_b":    {underscore.ID},
			"x":      {letter.ID},
			`:\`:     {backslash.ID},
			"zürich": {nested.ID},
			"vip":    {nested.ID},
			"note":   nil, // field names are not collected values
			"%":      {percent.ID},
			"_":      {underscore.ID},
		} {
			page, err := f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Search: search, Page: 1, Limit: 10})
			if err != nil {
				t.Fatalf("%q: %v", search, err)
			}
			if got := ids(page.Submissions); !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
				t.Errorf("search %q: %v, want %v", search, got, want)
			}
		}
	})

	t.Run("StatsOnPageOneHonouringToolTypeOnly", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		addSubmission(t, f, now, func(s *parley.NewSubmission) { s.Channel = "api" })
		addSubmission(t, f, now.Add(-48*time.Hour), nil) // not today
		addSubmission(t, f, now, func(s *parley.NewSubmission) {
			s.ToolType, s.Channel, s.ToolID = "BOOK_MEETING", "voice", nil
		})
		contacted := addSubmission(t, f, now, func(s *parley.NewSubmission) { s.Channel = "form"; s.ToolID = nil })
		if _, _, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, contacted.ID, "CONTACTED"); err != nil {
			t.Fatal(err)
		}
		// another tenant's submissions count for nobody else
		g := dbtest.SetupSubmissions(t)
		addSubmission(t, g, now, nil)

		page, err := f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Status: "CONTACTED", Channel: "form", Search: "zz", Page: 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := listing.SubmissionStats{Total: 4, New: 3, Today: 3, ByChannel: map[string]int{"web": 1, "voice": 1, "api": 1, "form": 1}}
		if page.Stats == nil || !statsEqual(*page.Stats, want) || page.Total != 0 {
			t.Errorf("stats %+v total %d, want %+v", page.Stats, page.Total, want)
		}
		page, err = f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{ToolType: "SUBMIT_FORM", Page: 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		want = listing.SubmissionStats{Total: 3, New: 2, Today: 2, ByChannel: map[string]int{"web": 1, "voice": 0, "api": 1, "form": 1}}
		if page.Stats == nil || !statsEqual(*page.Stats, want) || page.Total != 3 || len(page.Submissions) != 1 {
			t.Errorf("SUBMIT_FORM stats %+v total %d, want %+v", page.Stats, page.Total, want)
		}
		page, err = f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Page: 2, Limit: 1})
		if err != nil || page.Stats != nil || len(page.Submissions) != 1 {
			t.Errorf("page 2: stats %+v, %d rows, %v", page.Stats, len(page.Submissions), err)
		}
		empty, err := f.Store.ListSubmissions(ctx, f.Other.ID, listing.SubmissionFilter{Page: 1, Limit: 10})
		zero := listing.SubmissionStats{ByChannel: map[string]int{"web": 0, "voice": 0, "api": 0, "form": 0}}
		if err != nil || empty.Total != 0 || empty.Stats == nil || !statsEqual(*empty.Stats, zero) {
			t.Errorf("empty tenant: %+v, %v", empty, err)
		}
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		mine := addSubmission(t, f, now, nil)
		g := dbtest.SetupSubmissions(t)
		addSubmission(t, g, now, nil)
		page, err := f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{Page: 1, Limit: 10})
		if err != nil || !slices.Equal(ids(page.Submissions), []string{mine.ID}) || page.Stats.Total != 1 {
			t.Errorf("listed %v, stats %+v, %v", ids(page.Submissions), page.Stats, err)
		}
		// filtering by the other tenant's tool finds nothing
		page, err = f.Store.ListSubmissions(ctx, f.Tenant.ID, listing.SubmissionFilter{ToolID: g.Tool.ID, Page: 1, Limit: 10})
		if err != nil || page.Total != 0 {
			t.Errorf("other tenant's tool: %v, %v", ids(page.Submissions), err)
		}
	})
}

func statsEqual(a, b listing.SubmissionStats) bool {
	if a.Total != b.Total || a.New != b.New || a.Today != b.Today || len(a.ByChannel) != len(b.ByChannel) {
		return false
	}
	for k, v := range b.ByChannel {
		if n, ok := a.ByChannel[k]; !ok || n != v {
			return false
		}
	}
	return true
}

func TestDeleteSubmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("RemovesEventsKeepsConversation", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		sub, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, sub.ID, "CONTACTED"); err != nil {
			t.Fatal(err)
		}
		kept, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 3 {
			t.Fatalf("%d events before delete", len(evs))
		}
		if err := f.Store.DeleteSubmission(ctx, f.Tenant.ID, sub.ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.Store.Submission(ctx, f.Tenant.ID, sub.ID)
		dbtest.WantKind(t, err, parley.KindNotFound)
		evs := f.Events(t, f.Tenant.ID)
		if len(evs) != 1 || *evs[0].SubmissionID != kept.ID {
			t.Errorf("events left %+v", evs)
		}
		var n int
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE payload::text LIKE '%' || $1 || '%'`, sub.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d payloads still name the submission, %v", n, err)
		}
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM conversations WHERE id = $1`, f.Conversation.ID).Scan(&n); err != nil || n != 1 {
			t.Errorf("conversation gone: %d, %v", n, err)
		}
		dbtest.WantKind(t, f.Store.DeleteSubmission(ctx, f.Tenant.ID, sub.ID), parley.KindNotFound)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		sub, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, id := range map[string]string{"NotAUUID": "nope", "Unknown": "00000000-0000-0000-0000-000000000000"} {
			err := f.Store.DeleteSubmission(ctx, f.Tenant.ID, id)
			if e, ok := err.(*parley.Error); !ok || e.Kind != parley.KindNotFound || e.Message != "Submission not found" {
				t.Errorf("%s: %v", name, err)
			}
		}
		dbtest.WantKind(t, f.Store.DeleteSubmission(ctx, f.Other.ID, sub.ID), parley.KindNotFound)
		if _, err := f.Store.Submission(ctx, f.Tenant.ID, sub.ID); err != nil {
			t.Errorf("another tenant's delete removed it: %v", err)
		}
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 1 {
			t.Errorf("%d events left", len(evs))
		}
	})
}
