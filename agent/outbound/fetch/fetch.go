// Package fetch fetches a page a tenant names for its knowledge base,
// through the SSRF-guarded client, and converts it to text: HTML to Markdown
// of its main content, Markdown and plain text as they are, PDF to its text.
// Its failures are *parley.Error, in words for the tenant.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// Limits of a corpus URL fetch.
const (
	// MaxDocumentBytes bounds the body of a fetched page.
	MaxDocumentBytes = 10 << 20
	// Timeout bounds a whole fetch, body included.
	Timeout = 20 * time.Second
	// MaxContentChars is the corpus entry content limit a converted page must fit.
	MaxContentChars = 50000

	maxTitleChars = 255
	// PDF text is extracted under its own bounds: the file is at most
	// MaxDocumentBytes, but compressed streams can expand far beyond it.
	pdfTimeout   = 10 * time.Second
	maxPDFText   = 1 << 20
	maxPDFPages  = 2000
	userAgent    = "Parley-CorpusSync/1.0"
	acceptHeader = "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/pdf;q=0.9, */*;q=0.1"
)

// supportedTypes is how errors name what Document converts.
const supportedTypes = "HTML, Markdown, plain text and PDF"

// Page is a fetched page converted for the corpus.
type Page struct {
	Title        string // the page's title, first heading, PDF title or, failing those, from the URL
	Content      string // Markdown (HTML is converted) or plain text
	ContentType  string // the media type converted
	ETag         string
	LastModified string
	// NotModified: the server answered 304 to the conditional request; only
	// the validators are set.
	NotModified bool
}

// Document GETs rawURL through client (an outbound.Guard client) and
// converts it: HTML to Markdown of its main content, Markdown and plain
// text as they are, PDF to its text. With etag or lastModified the request
// is conditional and a 304 comes back as NotModified. Errors are *parley.Error
// with a message for the tenant: refused address (invalid), unreachable
// host or HTTP error status (bad gateway), timeout (gateway timeout), body
// over MaxDocumentBytes (too large), unsupported type, no text or text over
// MaxContentChars (unprocessable). A page that converts to more than
// MaxContentChars is refused rather than truncated, since an entry silently
// cut short would have the agent answer from half a page.
func Document(ctx context.Context, client *http.Client, rawURL, etag, lastModified string) (Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return Page{}, &parley.Error{Kind: parley.KindInvalid, Message: "url must be an absolute http or https URL",
			Details: map[string]string{"url": "must be an absolute http or https URL"}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Page{}, &parley.Error{Kind: parley.KindInvalid, Message: "url is not a valid URL: " + err.Error(),
			Details: map[string]string{"url": "is not a valid URL"}}
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", acceptHeader)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, fetchError(err, u.Hostname(), client.Timeout)
	}
	defer resp.Body.Close()
	host := resp.Request.URL.Hostname()
	if resp.StatusCode == http.StatusNotModified && (etag != "" || lastModified != "") {
		return Page{NotModified: true, ETag: or(resp.Header.Get("ETag"), etag),
			LastModified: or(resp.Header.Get("Last-Modified"), lastModified)}, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, &parley.Error{Kind: parley.KindUnprocessable, Code: CodeHTTPError,
			Message: fmt.Sprintf("%s answered HTTP %d %s", host, resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	if resp.ContentLength > MaxDocumentBytes {
		return Page{}, tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return Page{}, fetchError(err, host, client.Timeout)
	}
	if len(body) > MaxDocumentBytes {
		return Page{}, tooLarge()
	}

	contentType := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "" || mediaType == "application/octet-stream" {
		contentType = http.DetectContentType(body)
		mediaType, _, _ = mime.ParseMediaType(contentType)
	}
	var title, content string
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		title, content, err = convertHTML(body, contentType, resp.Request.URL)
	case "text/markdown", "text/x-markdown", "text/plain":
		title, content, err = convertText(body, contentType)
	case "application/pdf", "application/x-pdf":
		title, content, err = convertPDF(ctx, body)
	default:
		return Page{}, &parley.Error{Kind: parley.KindUnprocessable, Code: CodeUnsupportedType,
			Message: fmt.Sprintf("unsupported content type %s: supported are %s", mediaType, supportedTypes)}
	}
	if err != nil {
		return Page{}, err
	}
	content = tidy(content)
	if content == "" {
		return Page{}, &parley.Error{Kind: parley.KindUnprocessable, Message: "the page has no text content once converted"}
	}
	if n := utf8.RuneCountInString(content); n > MaxContentChars {
		return Page{}, &parley.Error{Kind: parley.KindUnprocessable,
			Message: fmt.Sprintf("the page converts to %s characters, over the %s character limit of a corpus entry; split it or sync a smaller page",
				thousands(n), thousands(MaxContentChars))}
	}
	title = oneLine(title)
	if title == "" {
		title = titleFromURL(u)
	}
	return Page{Title: truncate(title, maxTitleChars), Content: content, ContentType: mediaType,
		ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}, nil
}

// Codes of the errors a fetch ends with: each failure the tenant can act on
// differently has its own, all answered with a 4xx (the URL is the caller's input).
const (
	CodeRefused         = "URL_REFUSED"              // 400: the host is or resolves to a private or reserved address
	CodeUnreachable     = "URL_UNREACHABLE"          // 422: DNS failure, connection refused, TLS failure, redirect loop
	CodeHTTPError       = "URL_HTTP_ERROR"           // 422: the host answered with a non-2xx status
	CodeTimeout         = "URL_TIMEOUT"              // 422: no complete answer within the time limit
	CodeTooLarge        = "URL_TOO_LARGE"            // 413: the page is over the size limit
	CodeUnsupportedType = "UNSUPPORTED_CONTENT_TYPE" // 422: neither HTML, Markdown, text nor PDF
)

// fetchError maps a failed request or body read to an application error.
func fetchError(err error, host string, timeout time.Duration) error {
	oe := outbound.Classify(err, host)
	switch oe.Kind {
	case outbound.Refused:
		return &parley.Error{Kind: parley.KindInvalid, Code: CodeRefused, Message: oe.Error(), Details: map[string]string{"url": oe.Error()}}
	case outbound.Timeout:
		msg := oe.Error()
		if timeout > 0 {
			msg = fmt.Sprintf("timed out: %s did not send the page within %s", oe.Host, timeout)
		}
		return &parley.Error{Kind: parley.KindUnprocessable, Code: CodeTimeout, Message: msg}
	default:
		return &parley.Error{Kind: parley.KindUnprocessable, Code: CodeUnreachable, Message: oe.Error()}
	}
}

func tooLarge() error {
	return &parley.Error{Kind: parley.KindTooLarge, Code: CodeTooLarge, Message: fmt.Sprintf("the page is larger than the %d MiB limit", MaxDocumentBytes>>20)}
}

// convertHTML extracts the main content of a page (readability) as Markdown;
// a page where readability finds nothing is converted whole.
func convertHTML(body []byte, contentType string, page *url.URL) (string, string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "unknown character set: " + err.Error()}
	}
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "could not parse the HTML: " + err.Error()}
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	var title, md string
	if article, err := readability.FromDocument(doc, page); err == nil {
		title = article.Title()
		if article.Node != nil {
			if out, err := conv.ConvertNode(article.Node, converter.WithDomain(page.String())); err == nil {
				md = string(out)
			}
		}
	}
	if title == "" {
		title = docTitle(doc)
	}
	if strings.TrimSpace(md) == "" {
		out, err := conv.ConvertNode(doc, converter.WithDomain(page.String()))
		if err != nil {
			return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "could not convert the HTML: " + err.Error()}
		}
		md = string(out)
	}
	return title, md, nil
}

// docTitle is the text of the document's <title>.
func docTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return b.String()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := docTitle(c); t != "" {
			return t
		}
	}
	return ""
}

var heading = regexp.MustCompile(`(?m)^#[ \t]+(.+?)[ \t#]*$`)

// convertText keeps Markdown and plain text as they are, in UTF-8; the title
// is the first level-one heading.
func convertText(body []byte, contentType string) (string, string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "unknown character set: " + err.Error()}
	}
	text, err := io.ReadAll(r)
	if err != nil {
		return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "could not decode the text: " + err.Error()}
	}
	s := strings.ReplaceAll(strings.TrimPrefix(string(text), "\uFEFF"), "\r\n", "\n")
	title := ""
	if m := heading.FindStringSubmatch(s); m != nil {
		title = m[1]
	}
	return title, s, nil
}

// convertPDF extracts a PDF's text. The parser panics on some malformed
// files and can take long on others: it runs recovered, in its own
// goroutine, and is abandoned after pdfTimeout (it checks for that between
// pages, so it stops soon after).
func convertPDF(ctx context.Context, body []byte) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, pdfTimeout)
	defer cancel()
	type result struct {
		title, text string
		err         error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("%v", p)}
			}
			done <- r
		}()
		r.title, r.text, r.err = extractPDF(ctx, body)
	}()
	select {
	case r := <-done:
		var dbErr *parley.Error
		if errors.As(r.err, &dbErr) {
			return "", "", r.err
		}
		if r.err != nil {
			return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: "could not read the PDF: " + truncate(oneLine(r.err.Error()), 200)}
		}
		return r.title, r.text, nil
	case <-ctx.Done():
		return "", "", &parley.Error{Kind: parley.KindUnprocessable, Message: fmt.Sprintf("could not read the PDF: its text took longer than %s to extract", pdfTimeout)}
	}
}

func extractPDF(ctx context.Context, body []byte) (string, string, error) {
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return "", "", err
	}
	title := r.Trailer().Key("Info").Key("Title").Text()
	var b strings.Builder
	for i := 1; i <= r.NumPage() && i <= maxPDFPages; i++ {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		text, err := r.Page(i).GetPlainText(nil)
		if err != nil {
			return "", "", err
		}
		b.WriteString(text)
		b.WriteString("\n\n")
		if b.Len() > maxPDFText {
			return "", "", &parley.Error{Kind: parley.KindUnprocessable,
				Message: fmt.Sprintf("the PDF converts to more than %s characters, over the %s character limit of a corpus entry",
					thousands(maxPDFText), thousands(MaxContentChars))}
		}
	}
	return title, b.String(), nil
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy makes text storable and compact: valid UTF-8 without NUL (which
// PostgreSQL cannot store), LF line ends, no trailing spaces, at most one
// blank line in a row.
func tidy(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n-1])) + "…"
}

// titleFromURL names a page by its last path segment, or its host.
func titleFromURL(u *url.URL) string {
	if seg := path.Base(u.Path); seg != "/" && seg != "." && seg != "" {
		if s, err := url.PathUnescape(seg); err == nil {
			seg = s
		}
		if t := oneLine(seg); t != "" {
			return t
		}
	}
	return u.Hostname()
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// thousands writes n with comma separators, as the limits are written in messages.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
