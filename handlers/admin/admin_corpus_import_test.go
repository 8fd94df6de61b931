package admin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/web/webtest"
)

// TestAdminCorpusImport: the dashboard's CSV import writes the good lines of
// a file and lists the bad ones; the fixed file imports the fixed line and
// skips the others; importing it again adds no copies, with externalId or
// without; an unreadable file and the plan's limit are told in plain words.
func TestAdminCorpusImport(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "free") // 50 entries
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/corpus")

	lines := func(p webtest.AdminPage) []string {
		var out []string
		p.Doc.Find("#import-errors li").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
		return out
	}
	bad := "externalId,title,content\nhours,Opening hours,Nine to five\nrefunds,Refunds,Thirty days\nempty,,No title\n"
	p := c.ImportCSV(bad, true)
	if p.Status != http.StatusOK || p.Text("#import-count") != "Imported 2 entries." || p.Header.Get("HX-Trigger") != "corpusChanged" {
		t.Fatalf("bad file: %d %q", p.Status, p.Body)
	}
	if msg := p.Text("#import-refused"); !strings.HasPrefix(msg, "1 line was not imported because of errors.") {
		t.Errorf("refused = %q", msg)
	}
	if l := lines(p); len(l) != 1 || l[0] != "Line 4: title must not be empty" {
		t.Errorf("lines = %q", l)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 2 {
		t.Fatalf("%d entries written by a file with two good lines and a bad one, want 2", n)
	}

	good := strings.Replace(bad, "empty,,No title", "empty,Titled now,No title", 1)
	p = c.ImportCSV(good, true)
	if p.Status != http.StatusOK || p.Text("#import-count") != "Imported 1 entry." || p.Text("#import-skipped") != "Skipped 2 lines already in the knowledge base." ||
		p.Text("#import-refused") != "" || p.Header.Get("HX-Trigger") != "corpusChanged" {
		t.Fatalf("fixed file: %d %q", p.Status, p.Body)
	}
	// Again, and the same lines without externalId: nothing new, no copies.
	noID := "title,content\nOpening hours,Nine to five\nRefunds,Thirty days\nTitled now,No title\n"
	for _, file := range []string{good, noID} {
		p = c.ImportCSV(file, true)
		if p.Status != http.StatusOK || p.Text("#import-count") != "Imported 0 entries." || p.Text("#import-skipped") != "Skipped 3 lines already in the knowledge base." || p.Header.Get("HX-Trigger") != "" {
			t.Fatalf("file again: %d %q", p.Status, p.Body)
		}
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 3 {
		t.Errorf("%d entries after importing the file again, want 3", n)
	}

	// Without htmx: the result comes as flash messages after the redirect.
	if p = c.ImportCSV(bad, false); p.Status != http.StatusSeeOther {
		t.Fatalf("plain post: %d", p.Status)
	}
	page := c.Get("/admin/corpus")
	if msg := page.Text(".flash.ok"); msg != "Skipped 2 lines already in the knowledge base." {
		t.Errorf("flash = %q", msg)
	}
	if msg := page.Text(".flash.error"); !strings.HasPrefix(msg, "1 line was not imported") || !strings.Contains(msg, "line 4: title must not be empty") {
		t.Errorf("error flash = %q", msg)
	}
	for _, sel := range []string{".flash.ok", ".flash.error"} {
		if leak := webtest.LeakInMessage(page.Text(sel)); leak != "" {
			t.Errorf("the flash shows %q, the API's word", leak)
		}
	}

	p = c.ImportCSV("externalId,title,content\nx,A,a\nx,B,b\n", true)
	if li := p.Text("#import-errors li"); li != `Line 3: external id "x" is already on line 2` || p.Text("#import-count") != "Imported 1 entry." {
		t.Errorf("externalId twice: %q %q", li, p.Text("#import-count"))
	}
	p = c.ImportCSV("title,content\n,a\n,b\n", true)
	if p.Text("#import-count") != "" || !strings.HasPrefix(p.Text("#import-refused"), "2 lines were not imported") || len(lines(p)) != 2 || p.Header.Get("HX-Trigger") != "" {
		t.Errorf("every line bad: %q", p.Body)
	}
	p = c.ImportCSV("name,text\nA,a\n", true)
	if msg := p.Text("#import-error"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, "title and content") {
		t.Errorf("wrong header: %d %q", p.Status, msg)
	}
	p = c.ImportCSV("title,content\nA,\"never closed\n", true)
	if msg := p.Text("#import-error"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, "line 2") {
		t.Errorf("unreadable file: %d %q", p.Status, msg)
	}
	var many strings.Builder
	many.WriteString("title,content\n")
	for i := range 47 {
		fmt.Fprintf(&many, "T,C%d\n", i)
	}
	p = c.ImportCSV(many.String(), true)
	if msg := p.Text("#import-error"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, "limit") {
		t.Errorf("over the limit: %d %q", p.Status, msg)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 4 {
		t.Errorf("%d entries, want 4", n)
	}
}
