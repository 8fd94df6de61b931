package web

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/views"
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
	doc.Find("#import-result .flash, #import-errors li").Each(func(_ int, s *goquery.Selection) {
		if leak := views.LeakInMessage(s.Text()); leak != "" {
			c.t.Errorf("the import shows %q: %q is the API's word, not the owner's", strings.TrimSpace(s.Text()), leak)
		}
	})
	return adminPage{status: resp.StatusCode, header: resp.Header, body: string(raw), doc: doc}
}

// TestAdminCorpusImport: the dashboard's CSV import writes a file whole or
// not at all: a file with a bad line imports nothing and lists the line; the
// fixed file imports every line; with externalId importing it again adds no
// copies; an unreadable file and the plan's limit are told in plain words.
func TestAdminCorpusImport(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "free") // 50 entries
	c := b.newAdminClient(t)
	c.signIn(ten)
	c.get("/admin/corpus")

	bad := "externalId,title,content\nhours,Opening hours,Nine to five\nrefunds,Refunds,Thirty days\nempty,,No title\n"
	p := c.importCSV(bad, true)
	if p.status != http.StatusOK || p.text("#import-refused") == "" || p.header.Get("HX-Trigger") != "" {
		t.Fatalf("bad file: %d %q", p.status, p.body)
	}
	var lines []string
	p.doc.Find("#import-errors li").Each(func(_ int, s *goquery.Selection) { lines = append(lines, strings.TrimSpace(s.Text())) })
	if len(lines) != 1 || lines[0] != "Line 4: title must not be empty" {
		t.Errorf("lines = %q", lines)
	}
	if n := countCorpus(t, b, ten.ID); n != 0 {
		t.Fatalf("%d entries written by a file with a bad line", n)
	}

	good := strings.Replace(bad, "empty,,No title", "empty,Titled now,No title", 1)
	for range 2 { // the second time, every line updates its own entry
		p = c.importCSV(good, true)
		if p.status != http.StatusOK || p.text("#import-count") != "Imported 3 entries." || p.header.Get("HX-Trigger") != "corpusChanged" {
			t.Fatalf("good file: %d %q", p.status, p.body)
		}
	}
	if n := countCorpus(t, b, ten.ID); n != 3 {
		t.Errorf("%d entries after importing the file twice, want 3", n)
	}

	// Without htmx: the result comes as a flash message after the redirect.
	if p = c.importCSV(bad, false); p.status != http.StatusSeeOther {
		t.Fatalf("plain post: %d", p.status)
	}
	if msg := c.get("/admin/corpus").text(".flash.error"); !strings.Contains(msg, "Nothing was imported") || !strings.Contains(msg, "line 4: title must not be empty") {
		t.Errorf("flash = %q", msg)
	}

	p = c.importCSV("externalId,title,content\nx,A,a\nx,B,b\n", true)
	if li := p.text("#import-errors li"); li != `Line 3: external id "x" is already on line 2` {
		t.Errorf("externalId twice: %q", li)
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
	for range 48 {
		many.WriteString("T,C\n")
	}
	p = c.importCSV(many.String(), true)
	if msg := p.text("#import-error"); p.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "limit") {
		t.Errorf("over the limit: %d %q", p.status, msg)
	}
	if n := countCorpus(t, b, ten.ID); n != 3 {
		t.Errorf("%d entries, want 3", n)
	}
}
