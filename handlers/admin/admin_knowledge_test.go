package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/web/webtest"
)

// kbConfirmClick clicks sel, accepts the confirmation dialog it opens and returns the dialog's message.
func kbConfirmClick(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	return webtest.ClickAndConfirm(ctx, t, sel)
}

// kbMarkPage leaves a mark in the page's window; kbPageKept reports whether it
// is still there, that is whether no navigation or reload happened since.
func kbMarkPage(ctx context.Context, t *testing.T) {
	t.Helper()
	webtest.MustRunStep(ctx, t, "marking the page", chromedp.Evaluate[string](`window.kbMark = 'kept'`))
}

func kbPageKept(ctx context.Context, t *testing.T) bool {
	t.Helper()
	return webtest.MustRunStep(ctx, t, "reading the page mark", chromedp.Evaluate[string](`window.kbMark || ''`)) == "kept"
}

// kbOnePage fails the test when a fragment swap nested a whole page into the page.
func kbOnePage(ctx context.Context, t *testing.T) {
	t.Helper()
	if n := webtest.MustRunStep(ctx, t, "counting pages", chromedp.Evaluate[int](`document.querySelectorAll('main, aside.sidebar').length`)); n != 2 {
		t.Errorf("%d main and sidebar elements: a swap nested a page", n)
	}
}

// kbCorpusEntry stores an entry directly, for what a test does not create through the pages.
func kbCorpusEntry(t *testing.T, b *webtest.Bundle, tenantID, segmentID, title string) parley.CorpusEntry {
	t.Helper()
	w := knowledge.CorpusWrite{Title: parley.Some(title), Content: parley.Some("Content of " + title)}
	if segmentID != "" {
		w.SegmentID = parley.Some(segmentID)
	}
	e, _, err := b.DB.UpsertCorpus(context.Background(), tenantID, 1000, w)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAdminKnowledgeSegmentsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")
	bg := context.Background()

	t.Run("Nav", func(t *testing.T) {
		labels := webtest.MustRunStep(ctx, t, "nav", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('nav a')).map(a => a.textContent.trim())`))
		want := []string{"Overview", "Conversations", "Analytics", "Submissions", "Segments", "Knowledge base"}
		if len(labels) < len(want) || !slices.Equal(labels[:len(want)], want) {
			t.Errorf("nav = %q, want %q first", labels, want)
		}
	})

	t.Run("DefaultHasNoDelete", func(t *testing.T) {
		webtest.MustStep(t, "opening segments", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/segments")))
		def, err := b.DB.DefaultSegment(bg, ten.ID)
		webtest.MustStep(t, "default segment", err)
		row := "#segment-" + def.ID
		if txt := webtest.MustRunStep(ctx, t, "default badge", chromedp.Text(chromedp.CSS(row+" .badge.default"))); txt != "default" {
			t.Errorf("default badge = %q", txt)
		}
		if n := webtest.MustRunStep(ctx, t, "delete buttons", chromedp.Evaluate[int](`document.querySelectorAll('`+row+` button').length`)); n != 0 {
			t.Errorf("the default segment has %d buttons, want no delete button", n)
		}
	})

	t.Run("Create", func(t *testing.T) {
		webtest.MustStep(t, "opening segments", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/segments")))
		if status := webtest.SubmitForm(ctx, t, "#new-segment"); status != http.StatusOK {
			t.Fatalf("new segment page: status %d", status)
		}
		webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
			webtest.KeyIn(chromedp.ID("name"), "Wholesale buyers"),
			webtest.KeyIn(chromedp.ID("systemPrompt"), "You help wholesale buyers order in bulk."),
			webtest.KeyIn(chromedp.ID("welcomeMessage"), "Hello, buyer!"),
			webtest.KeyIn(chromedp.ID("starter-0-text"), "See bulk prices"),
			webtest.KeyIn(chromedp.ID("starter-0-emoji"), "💰"),
			webtest.KeyIn(chromedp.ID("starter-1-text"), "Talk to sales"),
			chromedp.Click(chromedp.ID("formEnabled")),
			webtest.KeyIn(chromedp.ID("formIntent"), "request a quote"),
			webtest.KeyIn(chromedp.ID("formConfirmation"), "Thanks, we will call you."),
			// Three rows added, the last removed: the builder's add and remove both work.
			chromedp.Click(chromedp.ID("add-field")),
			chromedp.Click(chromedp.ID("add-field")),
			chromedp.Click(chromedp.ID("add-field")),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.0.name"]`), "email"),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.0.label"]`), "Your email"),
			chromedp.SetValue(chromedp.CSS(`select[name="fields.0.type"]`), "email"),
			chromedp.Click(chromedp.CSS(`input[name="fields.0.required"]`)),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.1.name"]`), "company"),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.1.label"]`), "Company"),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.2.name"]`), "dropped"),
			chromedp.Click(chromedp.CSS(`#form-fields tbody tr:nth-child(3) .remove-field`)),
		))
		if n := webtest.MustRunStep(ctx, t, "field rows", chromedp.Evaluate[int](`document.querySelectorAll('#form-fields tbody tr').length`)); n != 2 {
			t.Fatalf("%d field rows after adding 3 and removing 1", n)
		}
		if status := webtest.SubmitForm(ctx, t, "#save-segment"); status != http.StatusOK {
			t.Fatalf("after creating: status %d", status)
		}
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/segments" {
			t.Errorf("after creating at %s", loc)
		}
		if flash := webtest.OkFlash(ctx, t); flash != "Segment Wholesale buyers created." {
			t.Errorf("flash = %q", flash)
		}
		s, err := b.DB.Segment(bg, ten.ID, "wholesale-buyers")
		webtest.MustStep(t, "reading the segment", err)
		if s.SystemPrompt != "You help wholesale buyers order in bulk." || webtest.StrOrEmpty(s.WelcomeMessage) != "Hello, buyer!" || !s.IsActive || s.IsDefault {
			t.Errorf("stored %+v", s)
		}
		if want := []parley.Starter{{Text: "See bulk prices", Emoji: "💰"}, {Text: "Talk to sales"}}; len(s.ConversationStarters) != 2 ||
			s.ConversationStarters[0] != want[0] || s.ConversationStarters[1] != want[1] {
			t.Errorf("starters = %+v", s.ConversationStarters)
		}
		fc := s.FormConfig
		if fc == nil || !fc.Enabled || fc.Intent != "request a quote" || fc.ConfirmationMessage != "Thanks, we will call you." || len(fc.Fields) != 2 {
			t.Fatalf("form = %+v", fc)
		}
		if want := (parley.FormField{Name: "email", Label: "Your email", Type: "email", Required: true}); fc.Fields[0] != want {
			t.Errorf("field 1 = %+v", fc.Fields[0])
		}
		if want := (parley.FormField{Name: "company", Label: "Company", Type: "text"}); fc.Fields[1] != want {
			t.Errorf("field 2 = %+v", fc.Fields[1])
		}
		row := "#segment-" + s.ID
		if txt := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS(row))); !strings.Contains(txt, "Wholesale buyers") || !strings.Contains(txt, "wholesale-buyers") || !strings.Contains(txt, "0 entries") {
			t.Errorf("row = %q", txt)
		}
	})

	seg, err := b.DB.Segment(bg, ten.ID, "wholesale-buyers")
	webtest.MustStep(t, "reading the segment", err)
	row := "#segment-" + seg.ID

	t.Run("DuplicateFieldName", func(t *testing.T) {
		webtest.MustStep(t, "opening the segment", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/segments/"+seg.ID)))
		webtest.MustStep(t, "editing", chromedp.Do(ctx,
			webtest.FillField("name", "Wholesale partners"),
			chromedp.Clear(chromedp.CSS(`input[name="fields.1.name"]`)),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.1.name"]`), "email"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-segment"); status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422", status)
		}
		msg := webtest.MustRunStep(ctx, t, "form error", chromedp.Text(chromedp.ID("err-formConfig")))
		if want := `field 2: name "email" is used twice; field names must be unique`; msg != want {
			t.Errorf("error = %q, want %q", msg, want)
		}
		if v := webtest.MustRunStep(ctx, t, "name", chromedp.Value(chromedp.ID("name"))); v != "Wholesale partners" {
			t.Errorf("the form lost what was typed: name %q", v)
		}
		if v := webtest.MustRunStep(ctx, t, "starter", chromedp.Value(chromedp.ID("starter-0-emoji"))); v != "💰" {
			t.Errorf("the form lost the starters: %q", v)
		}
		got, err := b.DB.Segment(bg, ten.ID, seg.ID)
		webtest.MustStep(t, "reading the segment", err)
		if got.Name != "Wholesale buyers" {
			t.Errorf("an invalid form was saved: name %q", got.Name)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		// Goes on from the re-rendered form: fix the name and save.
		webtest.MustStep(t, "fixing", chromedp.Do(ctx,
			chromedp.Clear(chromedp.CSS(`input[name="fields.1.name"]`)),
			webtest.KeyIn(chromedp.CSS(`input[name="fields.1.name"]`), "company_name"),
			webtest.FillField("starter-1-text", "Talk to our sales team"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-segment"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if txt := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS(row))); !strings.Contains(txt, "Wholesale partners") {
			t.Errorf("row after editing = %q", txt)
		}
		got, err := b.DB.Segment(bg, ten.ID, seg.ID)
		webtest.MustStep(t, "reading the segment", err)
		if got.Name != "Wholesale partners" || got.Slug != "wholesale-buyers" || got.FormConfig == nil ||
			len(got.FormConfig.Fields) != 2 || got.FormConfig.Fields[1].Name != "company_name" ||
			len(got.ConversationStarters) != 2 || got.ConversationStarters[1].Text != "Talk to our sales team" {
			t.Errorf("stored %+v, form %+v", got, got.FormConfig)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		entry := kbCorpusEntry(t, b, ten.ID, seg.ID, "Bulk price list")
		webtest.MustStep(t, "opening segments", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/segments")))
		kbMarkPage(ctx, t)

		msg := kbConfirmClick(ctx, t, row+" button")
		if msg != "Delete segment Wholesale partners?" {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the refusal", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row+" .delete-error"))))
		refusal := webtest.MustRunStep(ctx, t, "refusal", chromedp.Text(chromedp.CSS(row+" .delete-error")))
		if !strings.Contains(refusal, `This segment still has 1 knowledge-base entry and 0 tools.`) || strings.Contains(refusal, "cascade") {
			t.Errorf("refusal = %q", refusal)
		}
		if _, err := b.DB.Segment(bg, ten.ID, seg.ID); err != nil {
			t.Fatalf("the segment went without cascade: %v", err)
		}

		msg = kbConfirmClick(ctx, t, row+" button.cascade")
		if !strings.Contains(msg, "together with its knowledge-base entries") {
			t.Errorf("cascade confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if !kbPageKept(ctx, t) {
			t.Error("the page was reloaded: the row should go in place")
		}
		kbOnePage(ctx, t)
		if _, err := b.DB.Segment(bg, ten.ID, seg.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("segment after delete: %v", err)
		}
		if _, err := b.DB.CorpusEntry(bg, ten.ID, entry.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("its entry after the cascade: %v", err)
		}
	})
}

func TestAdminKnowledgeCorpusBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/corpus")
	bg := context.Background()
	def, err := b.DB.DefaultSegment(bg, ten.ID)
	webtest.MustStep(t, "default segment", err)

	t.Run("Create", func(t *testing.T) {
		if status := webtest.SubmitForm(ctx, t, "#new-entry"); status != http.StatusOK {
			t.Fatalf("new entry page: status %d", status)
		}
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("content-count"))); n != "0" {
			t.Errorf("content count before typing = %q", n)
		}
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("content"), "Orders ship in 2 days")))
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("content-count"))); n != "21" {
			t.Errorf("content count after typing 21 characters = %q", n)
		}
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("content"), " é")))
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("content-count"))); n != "23" {
			t.Errorf("content count after typing 2 more = %q", n)
		}
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("summary"), "Shipping")))
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("summary-count"))); n != "8" {
			t.Errorf("summary count = %q", n)
		}
		if txt := webtest.MustRunStep(ctx, t, "limit", chromedp.Evaluate[string](`document.getElementById('summary-count').parentElement.textContent`)); !strings.Contains(txt, "/ 500") {
			t.Errorf("summary counter = %q, want the limit 500", txt)
		}
		webtest.MustStep(t, "filling", chromedp.Do(ctx,
			webtest.KeyIn(chromedp.ID("title"), "Shipping times"),
			webtest.KeyIn(chromedp.ID("priority"), "7"),
			webtest.KeyIn(chromedp.ID("tags"), "shipping, delivery"),
			webtest.KeyIn(chromedp.ID("locale"), "en"),
			chromedp.SetValue(chromedp.ID("segment"), def.Slug),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-entry"); status != http.StatusOK {
			t.Fatalf("after creating: status %d", status)
		}
		if flash := webtest.OkFlash(ctx, t); flash != "Entry Shipping times created." {
			t.Errorf("flash = %q", flash)
		}
		es, _, err := webtest.ListCorpus(b.DB, bg, ten.ID, knowledge.CorpusQuery{Page: 1, Limit: 10})
		webtest.MustStep(t, "listing", err)
		if len(es) != 1 {
			t.Fatalf("%d entries", len(es))
		}
		e := es[0]
		if e.Title != "Shipping times" || e.Content != "Orders ship in 2 days é" || webtest.StrOrEmpty(e.Summary) != "Shipping" ||
			e.Priority != 7 || !e.IsActive || webtest.StrOrEmpty(e.Locale) != "en" || strings.Join(e.Tags, ",") != "shipping,delivery" ||
			webtest.StrOrEmpty(e.SegmentID) != def.ID {
			t.Errorf("stored %+v", e)
		}
		if txt := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS("#corpus-"+e.ID))); !strings.Contains(txt, "Shipping times") || !strings.Contains(txt, def.Slug) {
			t.Errorf("row = %q", txt)
		}
	})

	es, _, err := webtest.ListCorpus(b.DB, bg, ten.ID, knowledge.CorpusQuery{Page: 1, Limit: 10})
	webtest.MustStep(t, "listing", err)
	if len(es) != 1 {
		t.Fatalf("%d entries", len(es))
	}
	entry := es[0]

	t.Run("Edit", func(t *testing.T) {
		webtest.MustStep(t, "opening the entry", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/corpus/"+entry.ID)))
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("content-count"))); n != "23" {
			t.Errorf("content count of the stored entry = %q", n)
		}
		webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("title", "Shipping and delivery times"), webtest.FillField("priority", "9")))
		if status := webtest.SubmitForm(ctx, t, "#save-entry"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		got, err := b.DB.CorpusEntry(bg, ten.ID, entry.ID)
		webtest.MustStep(t, "reading the entry", err)
		if got.Title != "Shipping and delivery times" || got.Priority != 9 || got.Content != entry.Content || webtest.StrOrEmpty(got.SegmentID) != def.ID {
			t.Errorf("stored %+v", got)
		}
	})

	other := kbCorpusEntry(t, b, ten.ID, "", "Return policy")

	t.Run("Search", func(t *testing.T) {
		webtest.MustStep(t, "opening the knowledge base", chromedp.Do(ctx,
			chromedp.Navigate(b.TS.URL+"/admin/corpus"),
			chromedp.WaitVisible(chromedp.CSS("#corpus-"+other.ID)),
			chromedp.WaitVisible(chromedp.CSS("#corpus-"+entry.ID)),
		))
		kbMarkPage(ctx, t)
		webtest.MustStep(t, "searching", chromedp.Do(ctx,
			webtest.KeyIn(chromedp.ID("corpus-search"), "delivery"),
			chromedp.WaitNotPresent(chromedp.CSS("#corpus-"+other.ID)),
			chromedp.WaitVisible(chromedp.CSS("#corpus-"+entry.ID)),
		))
		if txt := webtest.MustRunStep(ctx, t, "total", chromedp.Text(chromedp.ID("corpus-total"))); txt != "1 entry" {
			t.Errorf("total = %q", txt)
		}
		webtest.MustStep(t, "searching for nothing", chromedp.Do(ctx,
			webtest.FillField("corpus-search", "zebra"),
			chromedp.WaitVisible(chromedp.ID("corpus-empty")),
		))
		// Clear sets the value without the input event that typing raises.
		webtest.MustRunStep(ctx, t, "input event", chromedp.Evaluate[bool](`(() => { const s = document.getElementById('corpus-search'); s.value = ''; return s.dispatchEvent(new Event('input', {bubbles: true})) })()`))
		webtest.MustStep(t, "filtering by segment", chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS("#corpus-"+other.ID)),
			chromedp.SetValue(chromedp.ID("corpus-segment"), def.Slug),
		))
		webtest.MustRunStep(ctx, t, "change event", chromedp.Evaluate[bool](`document.getElementById('corpus-segment').dispatchEvent(new Event('change', {bubbles: true}))`))
		webtest.MustStep(t, "filtered", chromedp.Do(ctx,
			chromedp.WaitNotPresent(chromedp.CSS("#corpus-"+other.ID)),
			chromedp.WaitVisible(chromedp.CSS("#corpus-"+entry.ID)),
		))
		if !kbPageKept(ctx, t) {
			t.Error("the page was reloaded: search should update the table in place")
		}
		kbOnePage(ctx, t)
	})

	t.Run("ImportCSV", func(t *testing.T) {
		dir := t.TempDir()
		badPath, goodPath := filepath.Join(dir, "bad.csv"), filepath.Join(dir, "faq.csv")
		bad := "title,content,segment,priority\n" +
			"Opening hours,We open at 9.," + def.Slug + ",3\n" +
			",A line without a title,,\n" +
			"Payment methods,\"Cards, transfers\",,\n"
		webtest.MustStep(t, "writing the CSV", os.WriteFile(badPath, []byte(bad), 0o600))
		webtest.MustStep(t, "writing the fixed CSV", os.WriteFile(goodPath, []byte(strings.Replace(bad, ",A line", "Untitled,A line", 1)), 0o600))
		webtest.MustStep(t, "opening the knowledge base", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/corpus")))
		kbMarkPage(ctx, t)
		// A file with a bad line imports the good ones and lists the bad one.
		webtest.MustStep(t, "importing the bad file", chromedp.Do(ctx,
			chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{badPath}),
			chromedp.Click(chromedp.CSS("#import-form button[type=submit]")),
			chromedp.WaitVisible(chromedp.ID("import-refused")),
		))
		lines := webtest.MustRunStep(ctx, t, "errors", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#import-errors li')).map(li => li.textContent.trim())`))
		if len(lines) != 1 || lines[0] != "Line 3: title must not be empty" {
			t.Errorf("import errors = %q", lines)
		}
		if txt := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("import-count"))); txt != "Imported 2 entries." {
			t.Errorf("import count = %q", txt)
		}
		if _, total, err := webtest.ListCorpus(b.DB, bg, ten.ID, knowledge.CorpusQuery{Search: "Opening hours", Page: 1, Limit: 10}); err != nil || total != 1 {
			t.Errorf("a file with a good line \"Opening hours\" wrote %d of it (%v)", total, err)
		}
		// The fixed file: the fixed line imported, the two others skipped.
		webtest.MustStep(t, "importing the fixed file", chromedp.Do(ctx,
			chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{goodPath}),
			chromedp.Click(chromedp.CSS("#import-form button[type=submit]")),
			chromedp.WaitVisible(chromedp.ID("import-skipped")),
		))
		if txt := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("import-count"))); txt != "Imported 1 entry." {
			t.Errorf("import count = %q", txt)
		}
		if txt := webtest.MustRunStep(ctx, t, "skipped", chromedp.Text(chromedp.ID("import-skipped"))); txt != "Skipped 2 lines already in the knowledge base." {
			t.Errorf("import skipped = %q", txt)
		}
		// The table refreshes itself with the new entries.
		webtest.MustRunStep(ctx, t, "waiting for the table", chromedp.Poll[bool](`document.getElementById('corpus-table').textContent.includes('Untitled')`, chromedp.WithPollingTimeout(10*time.Second)))
		if !kbPageKept(ctx, t) {
			t.Error("the page was reloaded by the import")
		}
		kbOnePage(ctx, t)
		es, total, err := webtest.ListCorpus(b.DB, bg, ten.ID, knowledge.CorpusQuery{Search: "Opening hours", Page: 1, Limit: 10})
		webtest.MustStep(t, "listing", err)
		if total != 1 || es[0].Content != "We open at 9." || es[0].Priority != 3 || webtest.StrOrEmpty(es[0].SegmentID) != def.ID || webtest.StrOrEmpty(es[0].Source) != "csv" {
			t.Errorf("imported %+v", es)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		webtest.MustStep(t, "opening the knowledge base", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/corpus")))
		kbMarkPage(ctx, t)
		row := "#corpus-" + other.ID
		if msg := kbConfirmClick(ctx, t, row+" button"); msg != "Delete entry Return policy?" {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if !kbPageKept(ctx, t) {
			t.Error("the page was reloaded: the row should go in place")
		}
		kbOnePage(ctx, t)
		if _, err := b.DB.CorpusEntry(bg, ten.ID, other.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("entry after delete: %v", err)
		}
		if _, err := b.DB.CorpusEntry(bg, ten.ID, entry.ID); err != nil {
			t.Errorf("another entry went too: %v", err)
		}
	})
}

func TestAdminKnowledgeHTTP(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	mine, theirs := b.OwnedTenant(t, "builder"), b.NewTenant(t, "builder")
	bg := context.Background()
	c := b.NewAdminClient(t)
	c.SignIn(mine)

	theirSeg, err := b.DB.CreateSegment(bg, theirs.ID, 10, db.SegmentWrite{Name: parley.Some("Their segment"), SystemPrompt: parley.Some("Theirs.")})
	if err != nil {
		t.Fatal(err)
	}
	theirEntry := kbCorpusEntry(t, b, theirs.ID, theirSeg.ID, "Their secret entry")
	htmx := func(c *webtest.AdminClient, path string, form url.Values) webtest.AdminPage {
		f := url.Values{"_csrf": {c.CSRF}}
		for k, v := range form {
			f[k] = v
		}
		return c.Do("POST", path, f, map[string]string{"HX-Request": "true"})
	}

	t.Run("OtherTenantsIDs", func(t *testing.T) {
		c := c.As(t)
		for _, path := range []string{"/admin/segments/" + theirSeg.ID, "/admin/segments/" + theirSeg.Slug, "/admin/corpus/" + theirEntry.ID} {
			if p := c.Get(path); p.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, p.Status)
			}
		}
		c.Get("/admin/segments")
		for _, tc := range []struct {
			path string
			form url.Values
		}{
			{"/admin/segments/" + theirSeg.ID, url.Values{"name": {"Taken over"}, "systemPrompt": {"Mine now."}, "isActive": {"true"}}},
			{"/admin/segments/" + theirSeg.ID + "/delete", url.Values{"cascade": {"true"}}},
			{"/admin/corpus/" + theirEntry.ID, url.Values{"title": {"Taken over"}, "content": {"Mine now."}, "isActive": {"true"}}},
			{"/admin/corpus/" + theirEntry.ID + "/delete", nil},
		} {
			if p := c.Submit(tc.path, tc.form); p.Status != http.StatusNotFound {
				t.Errorf("POST %s: %d, want 404", tc.path, p.Status)
			}
			if p := htmx(c, tc.path, tc.form); p.Status != http.StatusNotFound {
				t.Errorf("POST %s with htmx: %d, want 404", tc.path, p.Status)
			}
		}
		s, err := b.DB.Segment(bg, theirs.ID, theirSeg.ID)
		if err != nil || s.Name != "Their segment" {
			t.Errorf("their segment after the attempts: %+v %v", s, err)
		}
		e, err := b.DB.CorpusEntry(bg, theirs.ID, theirEntry.ID)
		if err != nil || e.Title != "Their secret entry" {
			t.Errorf("their entry after the attempts: %+v %v", e, err)
		}
		if p := c.Get("/admin/segments"); strings.Contains(p.Body, theirSeg.ID) || strings.Contains(p.Body, "Their segment") {
			t.Error("their segment is listed")
		}
		if p := c.Get("/admin/corpus"); strings.Contains(p.Body, theirEntry.ID) || strings.Contains(p.Body, "Their secret entry") {
			t.Error("their entry is listed")
		}
		// A segment filter naming their slug shows none of their entries.
		if p := c.Get("/admin/corpus?segment=" + theirSeg.Slug); strings.Contains(p.Body, "Their secret entry") {
			t.Error("their entry is listed under their segment's slug")
		}
	})

	t.Run("LeadFormNamesFromLabels", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/segments/new")
		p := c.Submit("/admin/segments", url.Values{
			"name": {"Leads"}, "systemPrompt": {"Take leads."}, "isActive": {"true"}, "formEnabled": {"true"}, "formIntent": {"lead"},
			"fields.0.name": {""}, "fields.0.label": {"Full name"}, "fields.0.type": {"text"}, "fields.0.required": {"true"},
			"fields.1.name": {"Work Email"}, "fields.1.label": {"Email at work"}, "fields.1.type": {"email"},
		})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("status %d, want 303: %s", p.Status, p.Text(".field-error"))
		}
		s, err := b.DB.Segment(bg, mine.ID, "leads")
		webtest.MustStep(t, "reading the segment", err)
		if s.FormConfig == nil || len(s.FormConfig.Fields) != 2 || s.FormConfig.Fields[0].Name != "full_name" || s.FormConfig.Fields[1].Name != "work_email" {
			t.Errorf("form fields = %+v, want full_name and work_email", s.FormConfig)
		}
		if _, err := b.DB.DeleteSegment(bg, mine.ID, s.ID, true); err != nil { // the subtests below count segments
			t.Fatal(err)
		}
	})

	t.Run("SegmentValidation", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/segments/new")
		p := c.Submit("/admin/segments", url.Values{
			"name": {"  "}, "systemPrompt": {"Prompt kept"}, "slug": {"Bad Slug"},
			"starters.0.text": {strings.Repeat("s", 51)}, "isActive": {"true"},
		})
		if p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", p.Status)
		}
		for sel, want := range map[string]string{
			"#err-name":                 "must not be empty",
			"#err-slug":                 "must be 1 to 100 lowercase letters, digits or hyphens",
			"#err-conversationStarters": "starter 1: text must be at most 50 characters",
			"#form-errors":              "Some fields need attention; nothing was saved.",
		} {
			if got := p.Text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if v := p.Doc.Find("#systemPrompt").Text(); v != "Prompt kept" {
			t.Errorf("system prompt shown = %q", v)
		}
		if segs, _ := b.DB.ListSegments(bg, mine.ID); len(segs) != 1 {
			t.Errorf("%d segments after an invalid create", len(segs))
		}
	})

	t.Run("DefaultSegmentStaysActive", func(t *testing.T) {
		c := c.As(t)
		def, err := b.DB.DefaultSegment(bg, mine.ID)
		if err != nil {
			t.Fatal(err)
		}
		form := webtest.FormValues(c.Get("/admin/segments/" + def.ID).Doc.Find("#segment-form"))
		form.Del("isActive")
		p := c.Do("POST", "/admin/segments/"+def.ID, form, nil)
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-isActive") != "the default segment must stay active" ||
			p.Text("#form-errors") != "The default segment cannot be deactivated" {
			t.Errorf("deactivating the default: %d %q %q", p.Status, p.Text("#err-isActive"), p.Text("#form-errors"))
		}
		if p := htmx(c, "/admin/segments/"+def.ID+"/delete", nil); p.Status != http.StatusUnprocessableEntity ||
			!strings.Contains(p.Text(".delete-error"), "The default segment cannot be deleted") {
			t.Errorf("deleting the default: %d %q", p.Status, p.Text(".delete-error"))
		}
	})

	t.Run("DeleteConflictWithoutJavaScript", func(t *testing.T) {
		c := c.As(t)
		s, err := b.DB.CreateSegment(bg, mine.ID, 10, db.SegmentWrite{Name: parley.Some("Busy"), SystemPrompt: parley.Some("Busy.")})
		if err != nil {
			t.Fatal(err)
		}
		kbCorpusEntry(t, b, mine.ID, s.ID, "Busy entry")
		c.Get("/admin/segments")
		p := c.Submit("/admin/segments/"+s.ID+"/delete", nil)
		if p.Status != http.StatusConflict {
			t.Fatalf("status %d, want 409", p.Status)
		}
		if got := p.Text("#segment-" + s.ID + " .delete-error"); !strings.Contains(got, "still has 1 knowledge-base entry and 0 tools") {
			t.Errorf("refusal = %q", got)
		}
		if p.Doc.Find("#segment-"+s.ID+" button.cascade").Length() != 1 {
			t.Error("no cascade button")
		}
		if p := c.Submit("/admin/segments/"+s.ID+"/delete", url.Values{"cascade": {"true"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("cascade: %d", p.Status)
		}
		if p := c.Get("/admin/segments"); p.Text(".flash.ok") != "Segment deleted with 1 knowledge-base entry and 0 tools." {
			t.Errorf("flash = %q", p.Text(".flash.ok"))
		}
	})

	t.Run("CorpusPages", func(t *testing.T) {
		c := c.As(t)
		for i := range 22 {
			kbCorpusEntry(t, b, mine.ID, "", fmt.Sprintf("Paged entry %02d", i))
		}
		p := c.Get("/admin/corpus")
		if n := p.Doc.Find("#corpus tbody tr").Length(); n != 20 || p.Text("#corpus-total") != "22 entries" {
			t.Errorf("page 1: %d rows, total %q", n, p.Text("#corpus-total"))
		}
		next, _ := p.Doc.Find(`#corpus-table a[rel="next"]`).Attr("href")
		if next != "/admin/corpus?page=2" {
			t.Fatalf("next page link %q", next)
		}
		// The pager's htmx request gets the table alone.
		p = c.Do("GET", next, nil, map[string]string{"HX-Request": "true", "HX-Target": "corpus-table"})
		if n := p.Doc.Find("#corpus tbody tr").Length(); p.Status != http.StatusOK || n != 2 || p.Doc.Find("main").Length() != 0 {
			t.Errorf("page 2 fragment: %d, %d rows, main present %v", p.Status, n, p.Doc.Find("main").Length() != 0)
		}
		if p := c.Get("/admin/corpus?page=99&search=Paged"); p.Text(".pager span:nth-of-type(2)") != "Page 2 of 2" {
			t.Errorf("a page past the end: %q", p.Text(".pager"))
		}
		res, err := b.DB.ListCorpus(bg, mine.ID, knowledge.CorpusQuery{Page: 1, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Entries {
			if err := b.DB.DeleteCorpus(bg, mine.ID, e.ID); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("CorpusValidation", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/corpus/new")
		p := c.Submit("/admin/corpus", url.Values{
			"title": {"Too long"}, "content": {strings.Repeat("é", 50001)}, "summary": {strings.Repeat("s", 501)},
			"priority": {"101"}, "locale": {"english"}, "segment": {"no-such-segment"}, "isActive": {"true"},
		})
		if p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", p.Status)
		}
		for sel, want := range map[string]string{
			"#err-content":     "must be at most 50000 characters",
			"#err-summary":     "must be at most 500 characters",
			"#err-priority":    "must be between 0 and 100",
			"#err-locale":      "must be a language code such as en, fr or fr-CA",
			"#err-segmentSlug": `"no-such-segment" is not the slug of one of your segments`,
			"#content-count":   "50001",
		} {
			if got := p.Text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if v, _ := p.Doc.Find("#title").Attr("value"); v != "Too long" {
			t.Errorf("title shown = %q", v)
		}
		// Line breaks count once, as the API counts them: CRLF from the browser is one.
		p = c.Submit("/admin/corpus", url.Values{"title": {"Lines"}, "content": {"a\r\nb"}, "priority": {"x"}})
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-priority") != "must be a whole number" || p.Text("#content-count") != "3" {
			t.Errorf("bad priority: %d %q count %q", p.Status, p.Text("#err-priority"), p.Text("#content-count"))
		}
		if n, _ := b.DB.CountCorpus(bg, mine.ID); n != 0 {
			t.Errorf("%d entries after invalid creates", n)
		}
	})
}
