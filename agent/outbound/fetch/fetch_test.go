package fetch

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// allowLoopback is the guarded client of tests: httptest servers listen on 127.0.0.1.
var allowLoopback = outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, nil)

const noisyHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Returns policy | Acme</title></head>
<body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li><li><a href="/blog">Blog</a></li></ul></nav>
<header class="site-header"><div class="banner">Free shipping this week only!</div></header>
<main><article>
<h1>Returns policy</h1>
<p>You can return any unworn item within thirty days of delivery for a full refund, no questions asked.
Items must be in their original packaging with every label still attached to them.</p>
<h2>How to return</h2>
<p>Print the prepaid label from your <a href="/account/orders">order page</a>, pack the item securely
and drop the parcel at any post office. Refunds reach your card within five business days of arrival.</p>
<ul><li>Sale items are final.</li><li>Gift cards cannot be returned.</li></ul>
<p>Exchanges follow the same rules: send the item back and place a new order for the size you need.
Our support team answers questions about returns every weekday from nine to five.</p>
</article></main>
<footer class="site-footer"><p>Copyright 2026 Acme Corporation. All rights reserved. Privacy | Terms | Cookies</p></footer>
<script>var tracking = "should never appear";</script>
</body></html>`

// helloPDF builds a minimal valid one-page PDF showing text in Helvetica.
func helloPDF(title, text string) []byte {
	content := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Title (%s) >>", title),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// serve starts a server answering every request with body and content type.
func serve(t *testing.T, contentType string, body []byte) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func fetch(t *testing.T, url string) (Page, error) {
	t.Helper()
	return Document(context.Background(), allowLoopback.Client(5*time.Second), url, "", "")
}

func wantError(t *testing.T, err error, kind parley.Kind, contains string) {
	t.Helper()
	if parley.ErrorKind(err) != kind || !strings.Contains(fmt.Sprint(err), contains) {
		t.Fatalf("want kind %d containing %q, got kind %d: %v", kind, contains, parley.ErrorKind(err), err)
	}
}

func TestDocument(t *testing.T) {
	t.Parallel()

	t.Run("HTMLMainContentAsMarkdown", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/html; charset=utf-8", []byte(noisyHTML))
		doc, err := fetch(t, ts.URL+"/returns")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(doc.Title, "Returns policy") || doc.ContentType != "text/html" {
			t.Errorf("title %q type %q", doc.Title, doc.ContentType)
		}
		for _, want := range []string{"thirty days", "## How to return", "- Sale items are final.", "(" + ts.URL + "/account/orders)"} {
			if !strings.Contains(doc.Content, want) {
				t.Errorf("content lacks %q:\n%s", want, doc.Content)
			}
		}
		for _, noise := range []string{"Shop", "Blog", "Copyright", "should never appear", "<p>"} {
			if strings.Contains(doc.Content, noise) {
				t.Errorf("content keeps %q:\n%s", noise, doc.Content)
			}
		}
	})

	t.Run("HTMLShortPageConvertedWhole", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/html", []byte(`<html><head><title>Hours</title></head><body><p>Open <b>9 to 5</b>.</p></body></html>`))
		doc, err := fetch(t, ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "Hours" || !strings.Contains(doc.Content, "Open **9 to 5**.") {
			t.Errorf("%q %q", doc.Title, doc.Content)
		}
	})

	t.Run("HTMLLatin1", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/html; charset=iso-8859-1", []byte("<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e.</p></body></html>"))
		doc, err := fetch(t, ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "Café" || !strings.Contains(doc.Content, "Crème brûlée.") {
			t.Errorf("%q %q", doc.Title, doc.Content)
		}
	})

	t.Run("Markdown", func(t *testing.T) {
		t.Parallel()
		md := "Intro line.\r\n\r\n# Shipping guide #\r\n\r\n\r\n\r\nWe ship *everywhere*.   \r\n"
		ts := serve(t, "text/markdown; charset=utf-8", []byte(md))
		doc, err := fetch(t, ts.URL+"/guide.md")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "Shipping guide" || doc.Content != "Intro line.\n\n# Shipping guide #\n\nWe ship *everywhere*." {
			t.Errorf("%q %q", doc.Title, doc.Content)
		}
	})

	t.Run("PlainTextTitleFromURL", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/plain; charset=iso-8859-1", []byte("Caf\xe9 opens at 8."))
		doc, err := fetch(t, ts.URL+"/docs/opening%20hours.txt?x=1")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "opening hours.txt" || doc.Content != "Café opens at 8." {
			t.Errorf("%q %q", doc.Title, doc.Content)
		}
	})

	t.Run("PlainTextTitleFromHost", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/plain", []byte("hello"))
		doc, err := fetch(t, ts.URL+"/")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "127.0.0.1" {
			t.Errorf("title %q", doc.Title)
		}
	})

	t.Run("PDF", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "application/pdf", helloPDF("Greeting", "Hello PDF"))
		doc, err := fetch(t, ts.URL+"/hello.pdf")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Content != "Hello PDF" || doc.Title != "Greeting" || doc.ContentType != "application/pdf" {
			t.Errorf("%q %q %q", doc.Title, doc.Content, doc.ContentType)
		}
	})

	t.Run("PDFSniffedWithoutContentType", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "application/octet-stream", helloPDF("", "Sniffed"))
		doc, err := fetch(t, ts.URL+"/file")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Content != "Sniffed" || doc.Title != "file" {
			t.Errorf("%q %q", doc.Title, doc.Content)
		}
	})

	t.Run("MalformedPDFNeverPanics", func(t *testing.T) {
		t.Parallel()
		good := helloPDF("T", "Hello PDF")
		bodies := [][]byte{
			[]byte("%PDF-1.4\nnot really a pdf"),
			[]byte("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << /Root 1 0 R >>\nstartxref\n9\n%%EOF"),
			bytes.Replace(good, []byte("(Hello PDF) Tj"), []byte("Tj Tj Tj ] ] >>"), 1),
			bytes.Replace(good, []byte("/Count 1"), []byte("/Count 99999999"), 1),
			bytes.Replace(good, []byte("/Contents 4 0 R"), []byte("/Contents 77 0 R"), 1),
		}
		// Every truncation and a byte flipped at every position of a valid file.
		for i := 8; i < len(good); i += 7 {
			bodies = append(bodies, good[:i])
			flipped := bytes.Clone(good)
			flipped[i] ^= 0x5a
			bodies = append(bodies, flipped)
		}
		var calls atomic.Int64
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write(bodies[calls.Add(1)-1])
		}))
		t.Cleanup(ts.Close)
		failed := 0
		for i := range bodies {
			_, err := fetch(t, ts.URL)
			if err != nil {
				failed++
				if k := parley.ErrorKind(err); k != parley.KindUnprocessable {
					t.Errorf("body %d: kind %d: %v", i, k, err)
				}
			}
		}
		if failed < 5 {
			t.Errorf("only %d of %d malformed files were refused", failed, len(bodies))
		}
	})

	t.Run("ConditionalETag", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v2"`)
			if r.Header.Get("If-None-Match") == `"v2"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("version two"))
		}))
		t.Cleanup(ts.Close)
		client := allowLoopback.Client(5 * time.Second)
		doc, err := Document(context.Background(), client, ts.URL, `"v1"`, "")
		if err != nil || doc.NotModified || doc.Content != "version two" || doc.ETag != `"v2"` {
			t.Fatalf("changed: %+v %v", doc, err)
		}
		doc, err = Document(context.Background(), client, ts.URL, `"v2"`, "")
		if err != nil || !doc.NotModified || doc.ETag != `"v2"` || doc.Content != "" {
			t.Fatalf("unchanged: %+v %v", doc, err)
		}
	})

	t.Run("ConditionalLastModified", func(t *testing.T) {
		t.Parallel()
		modified := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			http.ServeContent(w, r, "page.txt", modified, strings.NewReader("stable text"))
		}))
		t.Cleanup(ts.Close)
		doc, err := fetch(t, ts.URL)
		if err != nil || doc.LastModified != modified.Format(http.TimeFormat) {
			t.Fatalf("%+v %v", doc, err)
		}
		doc, err = Document(context.Background(), allowLoopback.Client(5*time.Second), ts.URL, "", doc.LastModified)
		if err != nil || !doc.NotModified || doc.LastModified != modified.Format(http.TimeFormat) {
			t.Fatalf("unchanged: %+v %v", doc, err)
		}
	})

	t.Run("NotModifiedToUnconditionalRequest", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) }))
		t.Cleanup(ts.Close)
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindUnprocessable, "HTTP 304")
	})

	t.Run("TooLargeDeclared", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", fmt.Sprint(MaxDocumentBytes+1))
			_, _ = w.Write([]byte("short"))
		}))
		t.Cleanup(ts.Close)
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindTooLarge, "larger than the 10 MiB limit")
	})

	t.Run("TooLargeStreamed", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			for range 11 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}))
		t.Cleanup(ts.Close)
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindTooLarge, "10 MiB")
	})

	t.Run("TooLongAfterConversion", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/markdown", []byte(strings.Repeat("word ", 12000)))
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindUnprocessable, "converts to 59,999 characters, over the 50,000 character limit")
	})

	t.Run("Unsupported", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "image/png", []byte("\x89PNG\r\n\x1a\n"))
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindUnprocessable, "unsupported content type image/png: supported are HTML, Markdown, plain text and PDF")
	})

	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/html", []byte("<html><head><title>Nothing</title></head><body><script>x()</script>  </body></html>"))
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindUnprocessable, "no text content")
	})

	t.Run("RemoteStatus", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(ts.Close)
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindUnprocessable, "127.0.0.1 answered HTTP 404 Not Found")
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL
		ts.Close()
		_, err := fetch(t, url)
		wantError(t, err, parley.KindUnprocessable, "cannot reach 127.0.0.1: connection refused")
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		ts := serve(t, "text/plain", []byte("secret"))
		_, err := Document(context.Background(), outbound.New(nil, nil).Client(time.Second), ts.URL, "", "")
		wantError(t, err, parley.KindInvalid, "refused: 127.0.0.1 is a private or reserved address")
	})

	t.Run("RedirectToMetadataRefused", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.RedirectHandler("http://169.254.169.254/latest/meta-data/", http.StatusFound))
		t.Cleanup(ts.Close)
		_, err := fetch(t, ts.URL)
		wantError(t, err, parley.KindInvalid, "refused: 169.254.169.254")
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("start"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the body never ends
		}))
		t.Cleanup(ts.Close)
		_, err := Document(context.Background(), allowLoopback.Client(200*time.Millisecond), ts.URL, "", "")
		wantError(t, err, parley.KindUnprocessable, "timed out: 127.0.0.1 did not send the page within 200ms")
	})

	t.Run("NotHTTP", func(t *testing.T) {
		t.Parallel()
		_, err := fetch(t, "ftp://example.com/file")
		wantError(t, err, parley.KindInvalid, "http or https")
	})
}
