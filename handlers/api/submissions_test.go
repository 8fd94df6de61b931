package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestSubmissions(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()

	t.Run("ListOrderFiltersAndShape", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		now := time.Now().UTC()
		ada := b.AddSubmission(t, st, now.Add(-time.Hour), nil)
		grace := b.AddSubmission(t, st, now.Add(-2*time.Hour), func(s *parley.NewSubmission) {
			s.ToolType, s.ToolName, s.Channel, s.ToolID = "BOOK_MEETING", "Demo booking", "voice", nil
			s.Input = json.RawMessage(`{"name":"Grace Hopper","slot":"Thursday 10:00"}`)
		})
		january := b.AddSubmission(t, st, time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), func(s *parley.NewSubmission) {
			s.Channel, s.ToolID, s.ConversationID, s.PageURL = "form", nil, nil, nil
			s.Input = json.RawMessage(`{"email":"100%@shop.test"}`)
		})
		quote := b.AddSubmission(t, st, now.Add(-30*time.Minute), func(s *parley.NewSubmission) {
			s.ToolType, s.ToolName, s.Channel, s.ToolID = "GENERATE_QUOTE", "Quote", "api", nil
			s.Input = json.RawMessage(`{"total":"1_000 EUR"}`)
		})
		if _, _, err := b.DB.UpdateSubmissionStatus(ctx, st.ID, quote.ID, "CONTACTED"); err != nil {
			t.Fatal(err)
		}

		status, body := b.Do(t, "GET", st.Base, st.Token, nil)
		if status != http.StatusOK || !slices.Equal(idsOf(body, "submissions"), []string{quote.ID, ada.ID, grace.ID, january.ID}) {
			t.Fatalf("GET submissions: %d %v", status, body)
		}
		if p := body["pagination"].(map[string]any); p["page"] != float64(1) || p["limit"] != float64(30) || p["total"] != float64(4) || p["pages"] != float64(1) {
			t.Errorf("pagination %v", p)
		}
		first := body["submissions"].([]any)[1].(map[string]any)
		tool, _ := first["tool"].(map[string]any)
		input, _ := first["input"].(map[string]any)
		if first["id"] != ada.ID || first["channel"] != "web" || first["status"] != "NEW" || first["conversationId"] != st.ConversationID ||
			first["toolId"] != st.ToolID || first["visitorUserId"] != nil || first["pageUrl"] != "https://example.com/pricing" ||
			tool["name"] != "Contact form" || tool["type"] != "SUBMIT_FORM" || input["work_email"] != "ada@example.com" ||
			first["result"].(map[string]any)["success"] != true || first["createdAt"] == nil || first["updatedAt"] == nil {
			t.Errorf("item %v", first)
		}
		last := body["submissions"].([]any)[3].(map[string]any)
		if v, ok := last["conversationId"]; !ok || v != nil {
			t.Errorf("standalone form: conversationId %v present %v", v, ok)
		}

		for q, want := range map[string][]string{
			"?toolType=SUBMIT_FORM":                        {ada.ID, january.ID},
			"?toolType=submit_form":                        {ada.ID, january.ID},
			"?toolType=COLLECT_PAYMENT":                    nil,
			"?type=BOOK_MEETING":                           {quote.ID, ada.ID, grace.ID, january.ID},
			"?toolId=" + st.ToolID:                         {ada.ID},
			"?toolId=00000000-0000-0000-0000-000000000000": nil,
			"?status=CONTACTED":                            {quote.ID},
			"?status=NEW":                                  {ada.ID, grace.ID, january.ID},
			"?channel=voice":                               {grace.ID},
			"?channel=form":                                {january.ID},
			"?search=ADA":                                  {ada.ID},
			"?search=%20hopper%20":                         {grace.ID},
			"?search=0%25":                                 {january.ID},
			"?search=1_0":                                  {quote.ID},
			"?search=10":                                   {grace.ID, january.ID},
			"?search=work_email":                           nil,
			"?from=2026-01-15&to=2026-01-15":               {january.ID},
			"?from=2026-01-16":                             {quote.ID, ada.ID, grace.ID},
			"?to=2026-01-15T12:00:00Z":                     nil,
			"?to=2026-01-15T13:00:00%2B01:00":              nil,
			"?from=2026-01-15T12:00:00Z&to=2026-01-16":     {january.ID},
			"?toolType=SUBMIT_FORM&status=NEW&channel=web": {ada.ID},
		} {
			status, body := b.Do(t, "GET", st.Base+q, st.Token, nil)
			if got := idsOf(body, "submissions"); status != http.StatusOK || !slices.Equal(got, want) || body["pagination"].(map[string]any)["total"] != float64(len(want)) {
				t.Errorf("GET %s: %d %v, want %v", q, status, got, want)
			}
		}

		status, body = b.Do(t, "GET", st.Base+"?limit=3", st.Token, nil)
		if p := body["pagination"].(map[string]any); status != http.StatusOK || len(idsOf(body, "submissions")) != 3 || p["pages"] != float64(2) || p["total"] != float64(4) {
			t.Errorf("limit 3: %d %v", status, body)
		}
		status, body = b.Do(t, "GET", st.Base+"?limit=3&page=2", st.Token, nil)
		if status != http.StatusOK || !slices.Equal(idsOf(body, "submissions"), []string{january.ID}) {
			t.Errorf("page 2: %d %v", status, body)
		}
		if _, ok := body["stats"]; ok {
			t.Errorf("page 2 has stats: %v", body["stats"])
		}
		status, body = b.Do(t, "GET", st.Base+"?page=3", st.Token, nil)
		if items, ok := body["submissions"].([]any); status != http.StatusOK || !ok || len(items) != 0 {
			t.Errorf("past the last page: %d %v", status, body)
		}
	})

	t.Run("QueryValidation", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		for _, q := range []string{
			"?limit=0", "?limit=101", "?limit=abc", "?page=0", "?page=x",
			"?status=new", "?status=DONE", "?channel=fax", "?channel=WEB", "?toolId=nope", "?toolType=NOPE",
			"?search=a", "?search=%20a%20", "?search=", "?search=" + strings.Repeat("s", 201),
			"?from=yesterday", "?to=2026-13-01", "?from=2026-03-02&to=2026-03-01", "?from=2026-03-02T10:00:00Z&to=2026-03-02T10:00:00Z",
		} {
			status, body := b.Do(t, "GET", st.Base+q, st.Token, nil)
			if status != http.StatusBadRequest || body["error"] == "" {
				t.Errorf("GET %s: %d %v", q, status, body)
			}
		}
		status, body := b.Do(t, "GET", st.Base+"?search=a", st.Token, nil)
		if body["error"] != "search must be 2 to 200 characters" {
			t.Errorf("search of 1 char: %d %v", status, body)
		}
		for _, q := range []string{"?limit=100", "?limit=1", "?search=ab", "?search=" + strings.Repeat("s", 200), "?from=2026-03-01T10:00:00.5%2B02:00"} {
			if status, body := b.Do(t, "GET", st.Base+q, st.Token, nil); status != http.StatusOK {
				t.Errorf("GET %s: %d %v", q, status, body)
			}
		}
	})

	t.Run("StatsOnPageOneHonouringToolType", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		b.AddSubmission(t, st, time.Time{}, nil)
		b.AddSubmission(t, st, time.Now().Add(-72*time.Hour), func(s *parley.NewSubmission) { s.Channel = "form" })
		booking := b.AddSubmission(t, st, time.Time{}, func(s *parley.NewSubmission) {
			s.ToolType, s.ToolName, s.Channel, s.ToolID = "BOOK_MEETING", "Demo", "voice", nil
		})
		if _, _, err := b.DB.UpdateSubmissionStatus(ctx, st.ID, booking.ID, "RESOLVED"); err != nil {
			t.Fatal(err)
		}
		other := b.NewSubTenant(t)
		b.AddSubmission(t, other, time.Time{}, nil)

		stats := func(q string) map[string]any {
			t.Helper()
			status, body := b.Do(t, "GET", st.Base+q, st.Token, nil)
			s, _ := body["stats"].(map[string]any)
			if status != http.StatusOK || s == nil {
				t.Fatalf("GET %s: %d %v", q, status, body)
			}
			return s
		}
		// the other filters do not apply to the stats
		s := stats("?status=NEW&channel=web&search=nobody&from=2026-01-01")
		if s["total"] != float64(3) || s["new"] != float64(2) || s["today"] != float64(2) {
			t.Errorf("stats %v", s)
		}
		byChannel, _ := s["byChannel"].(map[string]any)
		if len(byChannel) != 4 || byChannel["web"] != float64(1) || byChannel["voice"] != float64(1) || byChannel["form"] != float64(1) || byChannel["api"] != float64(0) {
			t.Errorf("byChannel %v", byChannel)
		}
		s = stats("?toolType=SUBMIT_FORM")
		if byChannel, _ := s["byChannel"].(map[string]any); s["total"] != float64(2) || s["new"] != float64(2) || s["today"] != float64(1) || byChannel["voice"] != float64(0) {
			t.Errorf("SUBMIT_FORM stats %v", s)
		}
		s = stats("?type=SUBMIT_FORM")
		if s["total"] != float64(3) {
			t.Errorf("type is not ignored by the stats: %v", s)
		}
		status, body := b.Do(t, "GET", st.Base+"?page=2", st.Token, nil)
		if _, ok := body["stats"]; status != http.StatusOK || ok {
			t.Errorf("page 2: %d %v", status, body)
		}
	})

	t.Run("UpdateStatus", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		sub := b.AddSubmission(t, st, time.Time{}, nil)
		path := st.Base + "/" + sub.ID
		previous := "NEW"
		// forwards, skipping a state, and back
		for i, next := range []string{"CONTACTED", "RESOLVED", "NEW", "RESOLVED"} {
			status, body := b.Do(t, "PUT", path, st.Token, map[string]any{"status": next})
			if status != http.StatusOK || body["status"] != next || body["id"] != sub.ID || body["tool"].(map[string]any)["type"] != "SUBMIT_FORM" {
				t.Fatalf("PUT %s: %d %v", next, status, body)
			}
			evs := b.SubmissionEvents(t, sub.ID)
			if len(evs) != i+2 {
				t.Fatalf("after PUT %s: %d events", next, len(evs))
			}
			ev := evs[len(evs)-1]
			if ev.Event != "submission.updated" || ev.Data.Status != next || ev.Data.PreviousStatus != previous || ev.Data.ID != sub.ID {
				t.Errorf("event after PUT %s: %+v", next, ev)
			}
			previous = next
		}
		before, _ := b.DB.Submission(ctx, st.ID, sub.ID)
		status, body := b.Do(t, "PUT", path, st.Token, map[string]any{"status": "RESOLVED"})
		if status != http.StatusOK || body["status"] != "RESOLVED" {
			t.Errorf("PUT the same status: %d %v", status, body)
		}
		if evs := b.SubmissionEvents(t, sub.ID); len(evs) != 5 {
			t.Errorf("PUT the same status recorded an event: %d events", len(evs))
		}
		if after, _ := b.DB.Submission(ctx, st.ID, sub.ID); !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("PUT the same status changed updatedAt")
		}

		for what, req := range map[string]any{
			"Done": map[string]any{"status": "DONE"}, "LowerCase": map[string]any{"status": "new"},
			"Number": map[string]any{"status": 2}, "Null": map[string]any{"status": nil}, "Missing": map[string]any{},
			"Other": map[string]any{"state": "NEW"}, "Array": map[string]any{"status": []string{"NEW"}},
		} {
			status, body := b.Do(t, "PUT", path, st.Token, req)
			if status != http.StatusBadRequest || body["error"] != "status must be NEW, CONTACTED or RESOLVED" {
				t.Errorf("PUT %s: %d %v", what, status, body)
			}
		}
		for what, raw := range map[string]string{"NotJSON": "status=NEW", "NotAnObject": `"NEW"`, "Malformed": `{"status":`} {
			if status, body := b.Do(t, "PUT", path, st.Token, raw); status != http.StatusBadRequest {
				t.Errorf("PUT %s: %d %v", what, status, body)
			}
		}
		if evs := b.SubmissionEvents(t, sub.ID); len(evs) != 5 {
			t.Errorf("refused PUTs recorded events: %d", len(evs))
		}
		if got, _ := b.DB.Submission(ctx, st.ID, sub.ID); got.Status != "RESOLVED" {
			t.Errorf("status %s after refused PUTs", got.Status)
		}

		other := b.NewSubTenant(t)
		for what, p := range map[string]string{
			"OtherTenant": other.Base + "/" + sub.ID, "NotAUUID": st.Base + "/nope", "Unknown": st.Base + "/00000000-0000-0000-0000-000000000000",
		} {
			tok := st.Token
			if what == "OtherTenant" {
				tok = other.Token
			}
			if status, body := b.Do(t, "PUT", p, tok, map[string]any{"status": "CONTACTED"}); status != http.StatusNotFound || body["error"] != "Submission not found" {
				t.Errorf("PUT %s: %d %v", what, status, body)
			}
		}
	})

	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		sub := b.AddSubmission(t, st, time.Time{}, nil)
		kept := b.AddSubmission(t, st, time.Time{}, nil)
		if _, _, err := b.DB.UpdateSubmissionStatus(ctx, st.ID, sub.ID, "CONTACTED"); err != nil {
			t.Fatal(err)
		}
		other := b.NewSubTenant(t)
		if status, body := b.Do(t, "DELETE", other.Base+"/"+sub.ID, other.Token, nil); status != http.StatusNotFound || body["error"] != "Submission not found" {
			t.Errorf("DELETE another tenant's: %d %v", status, body)
		}
		if status, body := b.Do(t, "DELETE", st.Base+"/nope", st.Token, nil); status != http.StatusNotFound {
			t.Errorf("DELETE not a uuid: %d %v", status, body)
		}
		if evs := b.SubmissionEvents(t, sub.ID); len(evs) != 2 {
			t.Fatalf("%d events before DELETE", len(evs))
		}

		status, body := b.Do(t, "DELETE", st.Base+"/"+sub.ID, st.Token, nil)
		if status != http.StatusOK || body["deleted"] != true || body["id"] != sub.ID || len(body) != 2 {
			t.Fatalf("DELETE: %d %v", status, body)
		}
		if evs := b.SubmissionEvents(t, sub.ID); len(evs) != 0 {
			t.Errorf("%d events left", len(evs))
		}
		if evs := b.SubmissionEvents(t, kept.ID); len(evs) != 1 {
			t.Errorf("the other submission's events: %d", len(evs))
		}
		var n int
		if err := b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM conversations WHERE id = $1`, st.ConversationID).Scan(&n); err != nil || n != 1 {
			t.Errorf("conversation: %d, %v", n, err)
		}
		if status, body := b.Do(t, "PUT", st.Base+"/"+sub.ID, st.Token, map[string]any{"status": "RESOLVED"}); status != http.StatusNotFound || body["error"] != "Submission not found" {
			t.Errorf("PUT after DELETE: %d %v", status, body)
		}
		if status, _ := b.Do(t, "DELETE", st.Base+"/"+sub.ID, st.Token, nil); status != http.StatusNotFound {
			t.Errorf("DELETE again: %d", status)
		}
		if _, body := b.Do(t, "GET", st.Base, st.Token, nil); !slices.Equal(idsOf(body, "submissions"), []string{kept.ID}) {
			t.Errorf("listed after DELETE: %v", idsOf(body, "submissions"))
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		st := b.NewSubTenant(t)
		sub := b.AddSubmission(t, st, time.Time{}, nil)
		path := st.Base + "/" + sub.ID
		read := b.Token(t, st.ID, auth.ScopeConversationsRead)
		if status, body := b.Do(t, "GET", st.Base, read, nil); status != http.StatusOK {
			t.Errorf("GET with conversations:read: %d %v", status, body)
		}
		if status, body := b.Do(t, "PUT", path, read, map[string]any{"status": "CONTACTED"}); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:write" {
			t.Errorf("PUT with conversations:read: %d %v", status, body)
		}
		if status, body := b.Do(t, "DELETE", path, read, nil); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:write" {
			t.Errorf("DELETE with conversations:read: %d %v", status, body)
		}
		visitors := b.Token(t, st.ID, auth.ScopeVisitorsRead, auth.ScopeVisitorsWrite)
		if status, body := b.Do(t, "GET", st.Base, visitors, nil); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:read" {
			t.Errorf("GET with visitors scopes: %d %v", status, body)
		}
		if status, _ := b.Do(t, "GET", st.Base, "", nil); status != http.StatusUnauthorized {
			t.Errorf("GET without credentials: %d", status)
		}
		if got, _ := b.DB.Submission(ctx, st.ID, sub.ID); got.Status != "NEW" {
			t.Errorf("status %s after forbidden PUT", got.Status)
		}
	})
}

// TestOpenAPISubmissionResponses validates submissions requests and responses against the document.
func TestOpenAPISubmissionResponses(t *testing.T) {
	t.Parallel()
	_, c, schema := webtest.OpenAPIHarness(t, webtest.Setup(t))
	b := c.B
	st := b.NewSubTenant(t)
	first := b.AddSubmission(t, st, time.Now().Add(-time.Minute), nil)
	b.AddSubmission(t, st, time.Time{}, func(s *parley.NewSubmission) {
		s.ToolType, s.ToolName, s.Channel, s.ToolID, s.ConversationID, s.PageURL = "COLLECT_PAYMENT", "Payment link", "form", nil, nil, nil
	})
	list, item := schema("SubmissionList"), schema("Submission")
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }

	status, body := c.Exchange("GET", st.Base, st.Token, nil, true)
	if status != http.StatusOK || len(obj(body)["submissions"].([]any)) != 2 {
		t.Fatalf("GET submissions: %d %v", status, body)
	}
	webtest.SameKeys(t, "GET submissions", list, body)
	webtest.DocumentedKeys(t, "GET submissions", list, body)
	for _, it := range obj(body)["submissions"].([]any) {
		webtest.SameKeys(t, "GET submissions item", item, it)
		webtest.DocumentedKeys(t, "GET submissions item", item, it)
	}
	status, body = c.Exchange("GET", st.Base+"?limit=1&page=2&toolType=SUBMIT_FORM&status=NEW&channel=web&search=ada&from=2026-01-01&to=2099-01-01T00:00:00Z&toolId="+st.ToolID, st.Token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET page 2: %d %v", status, body)
	}
	webtest.DocumentedKeys(t, "GET page 2", list, body)

	for _, q := range []string{"?limit=101", "?limit=0", "?search=a", "?status=new", "?channel=fax", "?from=yesterday", "?toolType=NOPE", "?page=0"} {
		if status, body = c.Exchange("GET", st.Base+q, st.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d %v", q, status, body)
		}
	}

	path := st.Base + "/" + first.ID
	status, body = c.Exchange("PUT", path, st.Token, map[string]any{"status": "CONTACTED"}, true)
	if status != http.StatusOK || obj(body)["status"] != "CONTACTED" {
		t.Fatalf("PUT: %d %v", status, body)
	}
	webtest.SameKeys(t, "PUT", item, body)
	webtest.DocumentedKeys(t, "PUT", item, body)
	for what, req := range map[string]any{"done": map[string]any{"status": "DONE"}, "lower": map[string]any{"status": "new"},
		"number": map[string]any{"status": 1}, "missing": map[string]any{}, "string": "CONTACTED"} {
		if status, body = c.Exchange("PUT", path, st.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("PUT %s: %d %v", what, status, body)
		}
	}
	if status, body = c.Exchange("PUT", path, st.Token, map[string]any{"status": strings.Repeat("x", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT a large body: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", st.Base+"/00000000-0000-0000-0000-000000000000", st.Token, map[string]any{"status": "NEW"}, true); status != http.StatusNotFound {
		t.Errorf("PUT unknown: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", path, b.Token(t, st.ID, auth.ScopeConversationsRead), map[string]any{"status": "NEW"}, true); status != http.StatusForbidden {
		t.Errorf("PUT with conversations:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", st.Base, b.Token(t, st.ID, auth.ScopeStatsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with stats:read: %d %v", status, body)
	}

	status, body = c.Exchange("DELETE", path, st.Token, nil, true)
	if status != http.StatusOK || obj(body)["id"] != first.ID {
		t.Fatalf("DELETE: %d %v", status, body)
	}
	webtest.SameKeys(t, "DELETE", schema("SubmissionDeletion"), body)
	if status, body = c.Exchange("DELETE", path, st.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("DELETE again: %d %v", status, body)
	}
}
