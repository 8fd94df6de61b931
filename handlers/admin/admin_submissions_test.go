package admin_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/web/webtest"
)

// eventCount counts the recorded events of a submission, of type typ when set.
func eventCount(t *testing.T, b *webtest.Bundle, submissionID, typ string) int {
	t.Helper()
	var n int
	webtest.MustStep(t, "counting events", b.DB.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE submission_id = $1 AND ($2 = '' OR type = $2)`, submissionID, typ).Scan(&n))
	return n
}

// rowIDs returns the ids of the listed submission rows, in order.
func rowIDs(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return webtest.MustRunStep(ctx, t, "listed rows", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#submissions tbody tr')).map(r => r.id.replace('submission-', ''))`))
}

func TestBrowserSubmissions(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "scale")
	bg := context.Background()

	conv, _, _, err := b.DB.StartTurn(bg, parley.ConversationStart{TenantID: ten.ID, SessionID: "inbox", Limit: 1000},
		"Can someone call me about pricing?", nil)
	webtest.MustStep(t, "starting a conversation", err)
	_, err = b.DB.SaveTurn(bg, parley.TurnRecord{TenantID: ten.ID, ConversationID: conv.ID, Reply: "Of course. What is your name and email?"})
	webtest.MustStep(t, "storing the reply", err)
	now := time.Now().UTC()
	old := webtest.InboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"old@example.com"}`, now.Add(-48*time.Hour), nil)
	ada := webtest.InboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Contact form",
		`{"full_name":"Ada Lovelace","work_email":"ada@example.com","message":"Call me"}`, webtest.EarlierToday(now, 4*time.Minute, 4*time.Minute),
		func(ns *parley.NewSubmission) { ns.ConversationID = &conv.ID })
	grace := webtest.InboxSubmission(t, b, ten.ID, "form", "SUBMIT_FORM", "Contact form", `{"name":"Grace Hopper","phone":"+1 555 0100"}`, webtest.EarlierToday(now, 4*time.Minute, 3*time.Minute), nil)
	demo := webtest.InboxSubmission(t, b, ten.ID, "voice", "BOOK_MEETING", "Demo booking", `{"date":"2026-12-01","company":"Initech"}`, webtest.EarlierToday(now, 4*time.Minute, 2*time.Minute), nil)
	quote := webtest.InboxSubmission(t, b, ten.ID, "api", "GENERATE_QUOTE", "Quote", `{"email":"linus@example.org","seats":12}`, webtest.EarlierToday(now, 4*time.Minute, time.Minute), nil)
	_, _, err = b.DB.UpdateSubmissionStatus(bg, ten.ID, grace.ID, parley.SubmissionContacted)
	webtest.MustStep(t, "contacting grace", err)
	_, _, err = b.DB.UpdateSubmissionStatus(bg, ten.ID, demo.ID, parley.SubmissionResolved)
	webtest.MustStep(t, "resolving the demo", err)
	// Another tenant's submission is never counted nor listed.
	other := b.NewTenant(t, "scale")
	theirs := webtest.InboxSubmission(t, b, other.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"theirs@example.com"}`, time.Time{}, nil)

	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")
	list := b.TS.URL + "/admin/submissions"

	t.Run("CountersAndOrder", func(t *testing.T) {
		webtest.MustStep(t, "opening the inbox", chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`nav a[href="/admin/submissions"]`)), chromedp.WaitVisible(chromedp.ID("submissions"))))
		for id, want := range map[string]string{"stat-total": "5", "stat-new": "3", "stat-today": "4",
			"stat-channel-web": "2", "stat-channel-voice": "1", "stat-channel-api": "1", "stat-channel-form": "1"} {
			if got := webtest.MustRunStep(ctx, t, id, chromedp.Text(chromedp.ID(id))); got != want {
				t.Errorf("%s = %q, want %s", id, got, want)
			}
		}
		want := []string{quote.ID, demo.ID, grace.ID, ada.ID, old.ID}
		if got := rowIDs(ctx, t); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("rows = %v, want newest first %v", got, want)
		}
		for sub, want := range map[string]string{
			ada.ID: "ada@example.com · Ada Lovelace", grace.ID: "Grace Hopper · +1 555 0100",
			demo.ID: "2026-12-01 · Initech", quote.ID: "linus@example.org",
		} {
			if got := webtest.MustRunStep(ctx, t, "summary", chromedp.Text(chromedp.CSS("#submission-"+sub+" td.summary"))); got != want {
				t.Errorf("summary of %s = %q, want %q", sub, got, want)
			}
		}
		if got := webtest.MustRunStep(ctx, t, "tool", chromedp.Text(chromedp.CSS("#submission-"+demo.ID+" td.tool"))); got != "Demo booking Meeting booking" {
			t.Errorf("tool cell = %q", got)
		}
		if html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("main"))); strings.Contains(html, theirs.ID) {
			t.Error("another tenant's submission is listed")
		}
	})

	t.Run("FilterByStatus", func(t *testing.T) {
		webtest.MustStep(t, "choosing a status", chromedp.Do(ctx, chromedp.Navigate(list), chooseOption("status", "CONTACTED")))
		if status := webtest.SubmitForm(ctx, t, "#apply-filters"); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		if got := rowIDs(ctx, t); len(got) != 1 || got[0] != grace.ID {
			t.Errorf("contacted rows = %v, want grace's", got)
		}
		if got := webtest.MustRunStep(ctx, t, "select", chromedp.Value(chromedp.ID("status"))); got != "CONTACTED" {
			t.Errorf("the status filter shows %q after filtering", got)
		}
		if got := webtest.MustRunStep(ctx, t, "total", chromedp.Text(chromedp.ID("stat-total"))); got != "5" {
			t.Errorf("counters follow the status filter: total %q", got)
		}
	})

	t.Run("FilterByChannelAcrossPages", func(t *testing.T) {
		webtest.MustStep(t, "choosing a channel", chromedp.Do(ctx, chromedp.Navigate(list+"?limit=1"), chooseOption("channel", "web")))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := rowIDs(ctx, t); len(got) != 1 || got[0] != ada.ID {
			t.Errorf("first web page = %v, want ada's", got)
		}
		if status := webtest.SubmitForm(ctx, t, `a[rel="next"]`); status != http.StatusOK {
			t.Fatalf("next page: status %d", status)
		}
		if got := rowIDs(ctx, t); len(got) != 1 || got[0] != old.ID {
			t.Errorf("second web page = %v, want the old one", got)
		}
		if got := webtest.MustRunStep(ctx, t, "channel", chromedp.Value(chromedp.ID("channel"))); got != "web" {
			t.Errorf("page 2 lost the channel filter: %q", got)
		}
		if got := webtest.MustRunStep(ctx, t, "pager", chromedp.Text(chromedp.ID("submissions-total"))); got != "2 submissions · page 2 of 2" {
			t.Errorf("pager = %q", got)
		}
		if got := webtest.MustRunStep(ctx, t, "new", chromedp.Text(chromedp.ID("stat-new"))); got != "3" {
			t.Errorf("page 2 counters: new %q", got)
		}
		webtest.MustStep(t, "voice", chromedp.Do(ctx, chooseOption("channel", "voice")))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := rowIDs(ctx, t); len(got) != 1 || got[0] != demo.ID {
			t.Errorf("voice rows = %v, want the demo", got)
		}
	})

	t.Run("FilterByTypeAndDate", func(t *testing.T) {
		today := now.Format(time.DateOnly)
		webtest.MustStep(t, "filtering", chromedp.Do(ctx, chromedp.Navigate(list), chooseOption("toolType", "SUBMIT_FORM"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('from').value = `+webtest.JSString(today))))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := rowIDs(ctx, t); strings.Join(got, ",") != grace.ID+","+ada.ID {
			t.Errorf("SUBMIT_FORM rows from today = %v", got)
		}
		if got := webtest.MustRunStep(ctx, t, "total", chromedp.Text(chromedp.ID("stat-total"))); got != "3" {
			t.Errorf("counters of SUBMIT_FORM: total %q, want 3", got)
		}
	})

	t.Run("Search", func(t *testing.T) {
		webtest.MustStep(t, "searching", chromedp.Do(ctx, chromedp.Navigate(list), webtest.FillField("search", "GRACE")))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := rowIDs(ctx, t); len(got) != 1 || got[0] != grace.ID {
			t.Errorf("search rows = %v, want grace's", got)
		}
		webtest.MustStep(t, "searching one letter", chromedp.Do(ctx, webtest.FillField("search", "a")))
		if status := webtest.SubmitForm(ctx, t, "#apply-filters"); status != http.StatusUnprocessableEntity {
			t.Errorf("too short a search: status %d, want 422", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-search"))); msg != "search must be 2 to 200 characters" {
			t.Errorf("search error = %q", msg)
		}
		if got := webtest.MustRunStep(ctx, t, "search", chromedp.Value(chromedp.ID("search"))); got != "a" {
			t.Errorf("the search box lost what was typed: %q", got)
		}
		if n := len(rowIDs(ctx, t)); n != 0 {
			t.Errorf("%d rows listed under an invalid search", n)
		}
	})

	t.Run("StatusInPlace", func(t *testing.T) {
		webtest.MustStep(t, "opening the inbox", chromedp.Do(ctx, chromedp.Navigate(list)))
		webtest.MustStep(t, "marking ada contacted", chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`),
			chooseOption("status-"+ada.ID, "CONTACTED"),
			chromedp.WaitVisible(chromedp.CSS("#submission-"+ada.ID+" select.status-contacted"))))
		if ok := webtest.MustRunStep(ctx, t, "same page", chromedp.Evaluate[bool](`window.notReloaded === true`)); !ok {
			t.Error("the page reloaded")
		}
		got, err := b.DB.Submission(bg, ten.ID, ada.ID)
		webtest.MustStep(t, "reading ada", err)
		if got.Status != parley.SubmissionContacted {
			t.Errorf("stored status = %s", got.Status)
		}
		if n := eventCount(t, b, ada.ID, webhooks.EventSubmissionUpdated); n != 1 {
			t.Errorf("%d submission.updated events, want 1", n)
		}
		// The counters come with the row: ada is no longer new.
		webtest.WaitUntil(ctx, t, "the counters", `document.getElementById('stat-new').textContent === '2'`)

		// A value outside the three is refused in the row, which keeps the stored status.
		webtest.MustStep(t, "choosing a forged status", chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#status-`+ada.ID+` option[value=RESOLVED]').value = 'DONE'`),
			chooseOption("status-"+ada.ID, "DONE")))
		webtest.WaitUntil(ctx, t, "the refusal", `document.getElementById('status-error-`+ada.ID+`').textContent !== ''`)
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("status-error-"+ada.ID))); msg != "status must be NEW, CONTACTED or RESOLVED" {
			t.Errorf("refusal = %q", msg)
		}
		if v := webtest.MustRunStep(ctx, t, "select", chromedp.Value(chromedp.ID("status-"+ada.ID))); v != "CONTACTED" {
			t.Errorf("the row shows %q after a refusal", v)
		}

		// Deleted behind the page's back: the row says so.
		webtest.MustStep(t, "deleting the quote", b.DB.DeleteSubmission(bg, ten.ID, quote.ID))
		webtest.MustStep(t, "resolving the quote", chromedp.Do(ctx, chooseOption("status-"+quote.ID, "RESOLVED")))
		webtest.WaitUntil(ctx, t, "the refusal", `document.getElementById('status-error-`+quote.ID+`').textContent !== ''`)
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("status-error-"+quote.ID))); msg != "Submission not found" {
			t.Errorf("refusal = %q", msg)
		}
	})

	t.Run("KeyboardBrowsingDoesNotSave", func(t *testing.T) {
		sel := "#status-" + old.ID
		value := func() string { return webtest.MustRunStep(ctx, t, "select", chromedp.Value(chromedp.CSS(sel))) }
		stored := func() string {
			got, err := b.DB.Submission(bg, ten.ID, old.ID)
			webtest.MustStep(t, "reading the old one", err)
			return got.Status
		}
		webtest.MustStep(t, "opening the inbox", chromedp.Do(ctx, chromedp.Navigate(list), chromedp.WaitVisible(chromedp.CSS(sel))))
		newBefore := webtest.MustRunStep(ctx, t, "new", chromedp.Text(chromedp.ID("stat-new")))
		webtest.MustStep(t, "browsing with the arrow keys", chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(sel)),
			chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown)))
		if v := value(); v != parley.SubmissionResolved {
			t.Fatalf("two arrow presses show %q, want RESOLVED (the keys did not reach the select)", v)
		}
		time.Sleep(300 * time.Millisecond) // a save, if one were sent, would have landed
		if st, n := stored(), eventCount(t, b, old.ID, webhooks.EventSubmissionUpdated); st != parley.SubmissionNew || n != 0 {
			t.Errorf("browsing saved: stored %s, %d submission.updated events", st, n)
		}
		if !webtest.MustRunStep(ctx, t, "hint", chromedp.Evaluate[bool](`getComputedStyle(document.getElementById('status-pending-`+old.ID+`')).display !== 'none'`)) {
			t.Error("the unsaved choice is not marked")
		}

		webtest.MustStep(t, "undoing with Escape", chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)))
		if v := value(); v != parley.SubmissionNew {
			t.Errorf("after Escape the select shows %q, want NEW", v)
		}

		webtest.MustStep(t, "choosing with Enter", chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter)))
		webtest.WaitUntil(ctx, t, "the saved row", `!!document.querySelector('#submission-`+old.ID+` select.status-contacted')`)
		if st, n := stored(), eventCount(t, b, old.ID, webhooks.EventSubmissionUpdated); st != parley.SubmissionContacted || n != 1 {
			t.Errorf("Enter: stored %s, %d submission.updated events, want CONTACTED and 1", st, n)
		}
		if got := webtest.MustRunStep(ctx, t, "new", chromedp.Text(chromedp.ID("stat-new"))); got == newBefore {
			t.Errorf("New still %s after saving", got)
		}

		webtest.MustStep(t, "browsing then leaving the field", chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(sel)),
			chromedp.KeyEvent(kb.ArrowDown), chromedp.Focus(chromedp.ID("search"))))
		webtest.WaitUntil(ctx, t, "the saved row", `!!document.querySelector('#submission-`+old.ID+` select.status-resolved')`)
		if st, n := stored(), eventCount(t, b, old.ID, webhooks.EventSubmissionUpdated); st != parley.SubmissionResolved || n != 2 {
			t.Errorf("leaving the field: stored %s, %d submission.updated events, want RESOLVED and 2", st, n)
		}
	})

	t.Run("Detail", func(t *testing.T) {
		webtest.MustStep(t, "opening ada's", chromedp.Do(ctx, chromedp.Navigate(list),
			chromedp.Click(chromedp.CSS("#submission-"+ada.ID+" td.summary a")), chromedp.WaitVisible(chromedp.ID("submission"))))
		for sel, want := range map[string]string{
			`dd[data-field="full_name"]`:  "Ada Lovelace",
			`dd[data-field="work_email"]`: "ada@example.com",
			`dd[data-field="message"]`:    "Call me",
			"#submission-channel":         "Chat widget",
			"#submission-page":            "https://shop.example/pricing",
			"#submission-visitor":         "anonymous",
		} {
			if got := webtest.MustRunStep(ctx, t, sel, chromedp.Text(chromedp.CSS(sel))); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if r := webtest.MustRunStep(ctx, t, "result", chromedp.Text(chromedp.CSS(`#submission-result dd[data-result="message"]`))); r != "Thanks, we will call you." {
			t.Errorf("result = %q", r)
		}
		msgs := webtest.MustRunStep(ctx, t, "messages", chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#messages .content')).map(m => m.textContent)`))
		if len(msgs) != 2 || msgs[0] != "Can someone call me about pricing?" || msgs[1] != "Of course. What is your name and email?" {
			t.Errorf("messages = %q", msgs)
		}

		before := webtest.MustRunStep(ctx, t, "updated", chromedp.Text(chromedp.ID("submission-updated")))
		webtest.MustStep(t, "resolving", chromedp.Do(ctx, chooseOption("status-"+ada.ID, "RESOLVED"),
			chromedp.WaitVisible(chromedp.CSS("#status-control select.status-resolved"))))
		if got, _ := b.DB.Submission(bg, ten.ID, ada.ID); got.Status != parley.SubmissionResolved {
			t.Errorf("stored status = %s", got.Status)
		}
		if after := webtest.MustRunStep(ctx, t, "updated", chromedp.Text(chromedp.ID("submission-updated"))); after == "" || before == "" {
			t.Errorf("updated = %q then %q", before, after)
		}

		webtest.MustStep(t, "opening grace's", chromedp.Do(ctx, chromedp.Navigate(list+"/"+grace.ID)))
		if note := webtest.MustRunStep(ctx, t, "note", chromedp.Text(chromedp.ID("no-conversation"))); note != "Sent through the lead form before any chat message, or from a form on your site: no conversation." {
			t.Errorf("form note = %q", note)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		webtest.MustStep(t, "opening ada's", chromedp.Do(ctx, chromedp.Navigate(list+"/"+ada.ID)))
		if msg := webtest.ClickAndConfirm(ctx, t, "#delete-submission"); !strings.Contains(msg, "Delete this submission?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.WaitUntil(ctx, t, "the list", `location.pathname === '/admin/submissions' && !!document.querySelector('.flash.ok')`)
		if flash := webtest.OkFlash(ctx, t); flash != "Submission deleted; the conversation is kept." {
			t.Errorf("flash = %q", flash)
		}
		if _, err := b.DB.Submission(bg, ten.ID, ada.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the submission is still stored: %v", err)
		}
		if n := eventCount(t, b, ada.ID, ""); n != 0 {
			t.Errorf("%d events of the deleted submission left", n)
		}
		if _, err := b.DB.Conversation(bg, ten.ID, conv.ID); err != nil {
			t.Errorf("the conversation went with the submission: %v", err)
		}
		if ids := rowIDs(ctx, t); strings.Contains(strings.Join(ids, ","), ada.ID) {
			t.Error("the deleted submission is still listed")
		}
	})
}

func TestAdminSubmissionsIsolation(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	mine, theirs := b.OwnedTenant(t, "scale"), b.NewTenant(t, "scale")
	sub := webtest.InboxSubmission(t, b, theirs.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"theirs@example.com"}`, time.Time{}, nil)
	c := b.NewAdminClient(t)
	c.SignIn(mine)
	c.Get("/admin/submissions")

	c.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "Show", Method: "GET", Path: "/admin/submissions/" + sub.ID, Form: nil, HX: false},
		{Name: "Status", Method: "POST", Path: "/admin/submissions/" + sub.ID + "/status", Form: url.Values{"status": {"RESOLVED"}}, HX: false},
		{Name: "StatusHTMX", Method: "POST", Path: "/admin/submissions/" + sub.ID + "/status", Form: url.Values{"status": {"RESOLVED"}, "view": {"row"}}, HX: true},
		{Name: "Delete", Method: "POST", Path: "/admin/submissions/" + sub.ID + "/delete", Form: url.Values{}, HX: false},
		{Name: "DeleteHTMX", Method: "POST", Path: "/admin/submissions/" + sub.ID + "/delete", Form: url.Values{}, HX: true},
		{Name: "NotAnID", Method: "GET", Path: "/admin/submissions/not-a-uuid", Form: nil, HX: false},
	})

	if p := c.Get("/admin/submissions"); p.Text("#stat-total") != "0" || strings.Contains(p.Body, sub.ID) {
		t.Errorf("their submission shows: total %q", p.Text("#stat-total"))
	}
	got, err := b.DB.Submission(context.Background(), theirs.ID, sub.ID)
	webtest.MustStep(t, "reading their submission", err)
	if got.Status != parley.SubmissionNew || eventCount(t, b, sub.ID, "") != 1 {
		t.Errorf("their submission changed: %s, %d events", got.Status, eventCount(t, b, sub.ID, ""))
	}
}

func TestAdminSubmissionsForms(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	sub := webtest.InboxSubmission(t, b, ten.ID, "form", "SUBMIT_FORM", "Contact form", `{"email":"bo@example.com"}`, time.Time{}, nil)
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	t.Run("InvalidFilters", func(t *testing.T) {
		for q, field := range map[string]string{"status=DONE": "status", "channel=fax": "channel", "toolType=NOPE": "toolType",
			"from=yesterday": "from", "from=2026-02-02&to=2026-01-01": "to", "search=%20x%20": "search"} {
			p := c.As(t).Get("/admin/submissions?" + q)
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+field) == "" || p.Doc.Find("#submissions").Length() != 0 {
				t.Errorf("%s: %d, error %q", q, p.Status, p.Text("#err-"+field))
			}
		}
		if p := c.As(t).Get("/admin/submissions?page=0"); p.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(p.Text("#filter-error"), "page must be an integer between 1 and") {
			t.Errorf("page=0: %d %q", p.Status, p.Text("#filter-error"))
		}
		if p := c.As(t).Get("/admin/submissions?search=&status="); p.Status != http.StatusOK || p.Doc.Find("#submissions tbody tr").Length() != 1 {
			t.Errorf("empty filters: %d", p.Status)
		}
	})

	t.Run("TypeFilterOffersKindsOfSubmission", func(t *testing.T) {
		p := c.As(t).Get("/admin/submissions")
		var got []string
		p.Doc.Find("#toolType option").Each(func(_ int, o *goquery.Selection) {
			got = append(got, o.AttrOr("value", "")+"="+strings.TrimSpace(o.Text()))
		})
		want := []string{"=Any type", "SUBMIT_FORM=Lead capture", "GENERATE_QUOTE=Quote", "BOOK_MEETING=Meeting booking",
			"ESCALATE_TO_HUMAN=Handover to a person"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("type options = %q, want %q (only the types that produce submissions)", got, want)
		}
		p = c.As(t).Get("/admin/submissions?toolType=GENERATE_QUOTE")
		if scope := p.Text("#stats-scope"); !strings.HasPrefix(scope, "Counters cover the Quote submissions only") {
			t.Errorf("scope = %q", scope)
		}
		if p.Status != http.StatusOK || p.Text("#stat-total") != "0" {
			t.Errorf("quotes: %d, total %q", p.Status, p.Text("#stat-total"))
		}
	})

	t.Run("StatusWithoutJavaScript", func(t *testing.T) {
		cc := c.As(t)
		cc.Get("/admin/submissions/" + sub.ID)
		p := cc.Submit("/admin/submissions/"+sub.ID+"/status", url.Values{"status": {"CONTACTED"}, "view": {"detail"}, "next": {"/admin/submissions/" + sub.ID}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/submissions/"+sub.ID {
			t.Fatalf("%d to %q", p.Status, p.Location())
		}
		if got := cc.Get(p.Location()); got.Text(".flash.ok") != "Status set to CONTACTED." || got.Doc.Find(`#status-control option[selected]`).AttrOr("value", "") != "CONTACTED" {
			t.Errorf("after the change: flash %q", got.Text(".flash.ok"))
		}
		p = cc.Submit("/admin/submissions/"+sub.ID+"/status", url.Values{"status": {"CONTACTED"}, "next": {"https://evil.example/"}})
		if p.Location() != "/admin/submissions" {
			t.Errorf("next outside the dashboard followed: %q", p.Location())
		}
		if n := eventCount(t, b, sub.ID, webhooks.EventSubmissionUpdated); n != 1 {
			t.Errorf("%d submission.updated events, want 1 (the same status again fires none)", n)
		}
	})

	t.Run("DeleteWithoutConversation", func(t *testing.T) {
		cc := c.As(t)
		cc.Get("/admin/submissions/" + sub.ID)
		if p := cc.Submit("/admin/submissions/"+sub.ID+"/delete", nil); p.Status != http.StatusSeeOther || p.Location() != "/admin/submissions" {
			t.Fatalf("%d to %q", p.Status, p.Location())
		}
		if p := cc.Get("/admin/submissions"); p.Text(".flash.ok") != "Submission deleted." {
			t.Errorf("flash = %q", p.Text(".flash.ok"))
		}
		if n := eventCount(t, b, sub.ID, ""); n != 0 {
			t.Errorf("%d events left", n)
		}
	})
}

func TestAdminSubmissionDetailLabels(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	bg := context.Background()
	tool, err := b.DB.CreateTool(bg, ten.ID, db.ToolWrite{Name: parley.Some("Bike fitting"), Type: parley.Some("SUBMIT_FORM"),
		Config: parley.Some(json.RawMessage(`{"fields":[{"name":"work_email","label":"Your work email","type":"email","required":true},
			{"name":"bike_size","label":"Frame size","type":"text","required":false}]}`))})
	webtest.MustStep(t, "creating the tool", err)
	_, err = b.DB.UpdateSegment(bg, ten.ID, "default", db.SegmentWrite{FormConfig: parley.Some(&parley.FormConfig{Enabled: true,
		Intent: "Contact us", Fields: []parley.FormField{{Name: "fullName", Label: "Name and surname", Type: "text"}}})})
	webtest.MustStep(t, "setting the segment's form", err)
	byTool := webtest.InboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Bike fitting",
		`{"work_email":"ada@example.com","bike_size":"56 cm","newsletter":true,"seats":12,"extras":["lock","bell"],"address":{"city":"Lyon","zip":"69001"},"note":null}`,
		time.Time{}, func(ns *parley.NewSubmission) { ns.ToolID = &tool.ID })
	byForm := webtest.InboxSubmission(t, b, ten.ID, "form", "SUBMIT_FORM", "Contact us", `{"fullName":"Grace Hopper"}`, time.Time{}, nil)
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	fields := func(p webtest.AdminPage) map[string]string {
		got := map[string]string{}
		p.Doc.Find("#submission-input dl.input-fields dt").Each(func(_ int, dt *goquery.Selection) {
			got[strings.TrimSpace(dt.Text())] = strings.TrimSpace(dt.Next().Text())
		})
		return got
	}
	p := c.Get("/admin/submissions/" + byTool.ID)
	want := map[string]string{"Your work email": "ada@example.com", "Frame size": "56 cm", "Newsletter": "Yes", "Seats": "12",
		"Extras": "lock, bell", "Address": "City: Lyon\nZip: 69001", "Note": "—"}
	if got := fields(p); !maps.Equal(got, want) {
		t.Errorf("fields = %q, want %q", got, want)
	}
	if txt := p.Doc.Find("#submission-input dl").Text(); strings.ContainsAny(txt, "{}[\"") || strings.Contains(txt, "work_email") {
		t.Errorf("raw keys or JSON shown: %q", txt)
	}
	result := map[string]string{}
	p.Doc.Find("#submission-result dt").Each(func(_ int, dt *goquery.Selection) {
		result[strings.TrimSpace(dt.Text())] = strings.TrimSpace(dt.Next().Text())
	})
	if want := map[string]string{"Success": "Yes", "Message": "Thanks, we will call you."}; !maps.Equal(result, want) {
		t.Errorf("outcome = %q, want %q", result, want)
	}
	if p.Doc.Find("#submission-raw[open]").Length() != 0 || !strings.Contains(p.Doc.Find("#submission-raw pre").First().Text(), `"work_email": "ada@example.com"`) {
		t.Error("the JSON is not kept, closed, for developers")
	}

	if got := fields(c.Get("/admin/submissions/" + byForm.ID)); !maps.Equal(got, map[string]string{"Name and surname": "Grace Hopper"}) {
		t.Errorf("standalone form fields = %q, want the segment form's label", got)
	}

	// The tool gone, names are put in words.
	webtest.MustStep(t, "deleting the tool", b.DB.DeleteTool(bg, ten.ID, tool.ID))
	if got := fields(c.Get("/admin/submissions/" + byTool.ID)); got["Work email"] != "ada@example.com" || got["Bike size"] != "56 cm" {
		t.Errorf("fields without the tool = %q", got)
	}
}

func TestAdminSubmissionsExport(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	now := time.Now().UTC()
	evil := webtest.InboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Contact form",
		`{"full_name":"=HYPERLINK(\"https://evil.example\",\"click\")","phone":"+1 555 0100","note":"Hello, \"shop\"\nsecond line","handle":"@ada"}`,
		webtest.EarlierToday(now, 4*time.Minute, 2*time.Minute), nil)
	plain := webtest.InboxSubmission(t, b, ten.ID, "web", "GENERATE_QUOTE", "Quote", `{"email":"bo@example.com","seats":-3,"paid":true}`, webtest.EarlierToday(now, 4*time.Minute, time.Minute), nil)
	webtest.InboxSubmission(t, b, ten.ID, "form", "SUBMIT_FORM", "Contact form", `{"email":"form@example.com"}`, now, nil)
	other := b.NewTenant(t, "scale")
	webtest.InboxSubmission(t, b, other.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"theirs@example.com"}`, now, nil)
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	if href := c.Get("/admin/submissions?channel=web&limit=1").Doc.Find("#export-csv").AttrOr("href", ""); href != "/admin/submissions/export.csv?channel=web" {
		t.Errorf("export button = %q, want the filters without the page size", href)
	}
	p := c.Get("/admin/submissions/export.csv?channel=web")
	if p.Status != http.StatusOK || p.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(p.Header.Get("Content-Disposition"), `attachment; filename="submissions-`+ten.Slug+`-`) {
		t.Fatalf("export: %d %q %q", p.Status, p.Header.Get("Content-Type"), p.Header.Get("Content-Disposition"))
	}
	body, ok := strings.CutPrefix(p.Body, "\uFEFF")
	if !ok {
		t.Error("no byte order mark: spreadsheets misread accents")
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("not RFC 4180 CSV: %v\n%s", err, body)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want a header and the 2 web submissions:\n%s", len(recs), body)
	}
	rows := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		rows[row["Submission"]] = row
	}
	wantHeader := "Created (UTC),Status,Channel,Type,Tool,Page,Visitor,Conversation,Submission,Full name,Handle,Note,Phone,Email,Paid,Seats"
	if got := strings.Join(recs[0], ","); got != wantHeader {
		t.Errorf("header = %s\nwant     %s", got, wantHeader)
	}
	for sub, want := range map[string]map[string]string{
		evil.ID: {"Full name": `'=HYPERLINK("https://evil.example","click")`, "Phone": "'+1 555 0100", "Handle": "'@ada",
			"Note": "Hello, \"shop\"\nsecond line", "Status": "New", "Channel": "Chat widget", "Type": "Lead capture", "Email": ""},
		plain.ID: {"Email": "bo@example.com", "Seats": "'-3", "Paid": "Yes", "Type": "Quote", "Tool": "Quote",
			"Page": "https://shop.example/pricing", "Full name": ""},
	} {
		for col, v := range want {
			if got := rows[sub][col]; got != v {
				t.Errorf("%s of %s = %q, want %q", col, sub, got, v)
			}
		}
	}
	if strings.Contains(body, "theirs@example.com") || strings.Contains(body, "form@example.com") {
		t.Error("the export holds rows outside the filter or the tenant")
	}

	if p := c.Get("/admin/submissions/export.csv?status=DONE"); p.Status < 400 || strings.Contains(p.Header.Get("Content-Type"), "csv") {
		t.Errorf("invalid filter: %d %q", p.Status, p.Header.Get("Content-Type"))
	}
	anon := b.NewAdminClient(t)
	if p := anon.Get("/admin/submissions/export.csv"); strings.Contains(p.Body, "bo@example.com") {
		t.Error("exported without signing in")
	}
}
