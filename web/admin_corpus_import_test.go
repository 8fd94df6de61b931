package web

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// importCSV posts a CSV file to the dashboard's import as the signed-in
// client c does, through htmx when hx is set.
func (c *adminClient) importCSV(content string, hx bool) adminPage {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", c.csrf)
	fw, _ := w.CreateFormFile("file", "faq.csv")
	_, _ = io.WriteString(fw, content)
	_ = w.Close()
	req, _ := http.NewRequest("POST", c.b.ts.URL+"/admin/corpus/import", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", c.ip)
	if hx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	doc.Find("#import-result p, #import-errors li, .flash").Each(func(_ int, s *goquery.Selection) {
		if leak := leakInMessage(s.Text()); leak != "" {
			c.t.Errorf("the import shows %q: %q is the API's word, not the owner's", strings.TrimSpace(s.Text()), leak)
		}
	})
	return adminPage{status: resp.StatusCode, header: resp.Header, body: string(raw), doc: doc}
}

// TestAdminCorpusImport: the dashboard's CSV import writes the good lines of
// a file and lists the bad ones; the fixed file imports the fixed line and
// skips the others; importing it again adds no copies, with externalId or
// without; an unreadable file and the plan's limit are told in plain words.
func TestAdminCorpusImport(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "free") // 50 entries
	c := b.newAdminClient(t)
	c.signIn(ten)
	c.get("/admin/corpus")

	lines := func(p adminPage) []string {
		var out []string
		p.doc.Find("#import-errors li").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
		return out
	}
	bad := "externalId,title,content\nhours,Opening hours,Nine to five\nrefunds,Refunds,Thirty days\nempty,,No title\n"
	p := c.importCSV(bad, true)
	if p.status != http.StatusOK || p.text("#import-count") != "Imported 2 entries." || p.header.Get("HX-Trigger") != "corpusChanged" {
		t.Fatalf("bad file: %d %q", p.status, p.body)
	}
	if msg := p.text("#import-refused"); !strings.HasPrefix(msg, "1 line was not imported because of errors.") {
		t.Errorf("refused = %q", msg)
	}
	if l := lines(p); len(l) != 1 || l[0] != "Line 4: title must not be empty" {
		t.Errorf("lines = %q", l)
	}
	if n := countCorpus(t, b, ten.ID); n != 2 {
		t.Fatalf("%d entries written by a file with two good lines and a bad one, want 2", n)
	}

	good := strings.Replace(bad, "empty,,No title", "empty,Titled now,No title", 1)
	p = c.importCSV(good, true)
	if p.status != http.StatusOK || p.text("#import-count") != "Imported 1 entry." || p.text("#import-skipped") != "Skipped 2 lines already in the knowledge base." ||
		p.text("#import-refused") != "" || p.header.Get("HX-Trigger") != "corpusChanged" {
		t.Fatalf("fixed file: %d %q", p.status, p.body)
	}
	// Again, and the same lines without externalId: nothing new, no copies.
	noID := "title,content\nOpening hours,Nine to five\nRefunds,Thirty days\nTitled now,No title\n"
	for _, file := range []string{good, noID} {
		p = c.importCSV(file, true)
		if p.status != http.StatusOK || p.text("#import-count") != "Imported 0 entries." || p.text("#import-skipped") != "Skipped 3 lines already in the knowledge base." || p.header.Get("HX-Trigger") != "" {
			t.Fatalf("file again: %d %q", p.status, p.body)
		}
	}
	if n := countCorpus(t, b, ten.ID); n != 3 {
		t.Errorf("%d entries after importing the file again, want 3", n)
	}

	// Without htmx: the result comes as flash messages after the redirect.
	if p = c.importCSV(bad, false); p.status != http.StatusSeeOther {
		t.Fatalf("plain post: %d", p.status)
	}
	page := c.get("/admin/corpus")
	if msg := page.text(".flash.ok"); msg != "Skipped 2 lines already in the knowledge base." {
		t.Errorf("flash = %q", msg)
	}
	if msg := page.text(".flash.error"); !strings.HasPrefix(msg, "1 line was not imported") || !strings.Contains(msg, "line 4: title must not be empty") {
		t.Errorf("error flash = %q", msg)
	}
	for _, sel := range []string{".flash.ok", ".flash.error"} {
		if leak := leakInMessage(page.text(sel)); leak != "" {
			t.Errorf("the flash shows %q, the API's word", leak)
		}
	}

	p = c.importCSV("externalId,title,content\nx,A,a\nx,B,b\n", true)
	if li := p.text("#import-errors li"); li != `Line 3: external id "x" is already on line 2` || p.text("#import-count") != "Imported 1 entry." {
		t.Errorf("externalId twice: %q %q", li, p.text("#import-count"))
	}
	p = c.importCSV("title,content\n,a\n,b\n", true)
	if p.text("#import-count") != "" || !strings.HasPrefix(p.text("#import-refused"), "2 lines were not imported") || len(lines(p)) != 2 || p.header.Get("HX-Trigger") != "" {
		t.Errorf("every line bad: %q", p.body)
	}
	p = c.importCSV("name,text\nA,a\n", true)
	if msg := p.text("#import-error"); p.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "title and content") {
		t.Errorf("wrong header: %d %q", p.status, msg)
	}
	p = c.importCSV("title,content\nA,\"never closed\n", true)
	if msg := p.text("#import-error"); p.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "line 2") {
		t.Errorf("unreadable file: %d %q", p.status, msg)
	}
	var many strings.Builder
	many.WriteString("title,content\n")
	for i := range 47 {
		fmt.Fprintf(&many, "T,C%d\n", i)
	}
	p = c.importCSV(many.String(), true)
	if msg := p.text("#import-error"); p.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "limit") {
		t.Errorf("over the limit: %d %q", p.status, msg)
	}
	if n := countCorpus(t, b, ten.ID); n != 4 {
		t.Errorf("%d entries, want 4", n)
	}
}
