package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/web"
)

// SetupAdmin is setup for dashboard tests: the server believes X-Forwarded-For
// from the loopback test client, so each AdminClient has an address of its own
// and the sign-in throttle of one test's failures does not slow down the
// others, which all connect from 127.0.0.1. env adds configuration.
func SetupAdmin(t *testing.T, env map[string]string) *Bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := Config(t, env, map[string]string{"PARLEY_TRUSTED_PROXIES": "127.0.0.1/32"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// Rate limits (the password reset's) count in fixed windows of 15 minutes.
	MidWindowClock(&srv.Base.Now, 15*time.Minute)
	return NewBundle(t, srv, store)
}

// MidWindowClock sets *now to a clock that runs from the middle of a fixed
// window of the given length (a minute or more), and of that minute: rate
// limits count in fixed windows (a minute, an hour, 15 minutes), and a test's
// requests and its limited one must fall in the same window, whatever the
// wall clock's time when the test starts.
func MidWindowClock(now *func() time.Time, window time.Duration) {
	start := time.Now()
	mid := start.Truncate(window).Add((window / 2).Truncate(time.Minute) + 30*time.Second)
	*now = func() time.Time { return mid.Add(time.Since(start)) }
}

var ClientSeq atomic.Int64

// AdminClient stands in for a browser on the dashboard: a cookie jar, a client
// address of its own, redirects not followed (tests look at them), and the
// CSRF token of the last page read.
type AdminClient struct {
	T    *testing.T
	B    *Bundle
	HTTP *http.Client
	IP   string
	CSRF string
}

// NewAdminClient returns a signed-out client with an address no other client has.
func (b *Bundle) NewAdminClient(t *testing.T) *AdminClient {
	jar, _ := cookiejar.New(nil)
	n := ClientSeq.Add(1)
	return &AdminClient{T: t, B: b, IP: fmt.Sprintf("198.18.%d.%d", n/250%250, n%250+1), HTTP: &http.Client{
		Transport:     b.TS.Client().Transport,
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// As returns the client reporting to t: a subtest that goes on with its
// parent's session must not fail the parent.
func (c *AdminClient) As(t *testing.T) *AdminClient {
	cc := *c
	cc.T = t
	return &cc
}

// AdminPage is one answer of the dashboard.
type AdminPage struct {
	Status int
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

func (p AdminPage) Location() string { return p.Header.Get("Location") }

// Text is the trimmed text of the first element matching sel.
func (p AdminPage) Text(sel string) string { return strings.TrimSpace(p.Doc.Find(sel).First().Text()) }

// Cookie returns the cookie the answer set, or nil.
func (p AdminPage) Cookie(name string) *http.Cookie {
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (c *AdminClient) Do(method, path string, form url.Values, header map[string]string) AdminPage {
	c.T.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.B.TS.URL+path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", c.IP)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	if tok, ok := doc.Find(`input[name="_csrf"]`).Attr("value"); ok && tok != "" {
		c.CSRF = tok
	}
	// Every error a dashboard page shows is in the owner's words, never the
	// API's (every dashboard test checks it, on every page it reads).
	doc.Find(".field-error, .flash.error").Each(func(_ int, s *goquery.Selection) {
		if leak := LeakInMessage(s.Text()); leak != "" {
			c.T.Errorf("%s %s shows %q: %q is the API's word, not the owner's", method, path, strings.TrimSpace(s.Text()), leak)
		}
	})
	return AdminPage{Status: resp.StatusCode, Header: resp.Header, Body: string(raw), Doc: doc}
}

// APIWord is a camelCase word: a field name as the API spells it.
var APIWord = regexp.MustCompile(`\b[a-z]+(?:[A-Z][a-z0-9]*)+\b`)

// LeakInMessage reports what of the API's own language an owner-facing
// message still holds ("" when none): a camelCase field name, snake_case, a
// query parameter (the rules views' tests hold OwnerWords to).
func LeakInMessage(msg string) string {
	if w := APIWord.FindString(msg); w != "" {
		return w
	}
	for _, s := range []string{"snake_case", "?cascade", "cascade=true"} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

func (c *AdminClient) Get(path string) AdminPage {
	c.T.Helper()
	return c.Do("GET", path, nil, nil)
}

// Post sends the form exactly as given, without a CSRF token unless it has one.
func (c *AdminClient) Post(path string, form url.Values) AdminPage {
	c.T.Helper()
	return c.Do("POST", path, form, nil)
}

// Submit sends the form with the CSRF token of the last page, as a browser does.
func (c *AdminClient) Submit(path string, form url.Values) AdminPage {
	c.T.Helper()
	if c.CSRF == "" {
		c.T.Fatalf("POST %s: no CSRF token read yet", path)
	}
	f := url.Values{"_csrf": {c.CSRF}}
	for k, v := range form {
		f[k] = v
	}
	return c.Do("POST", path, f, nil)
}

// Login opens the sign-in page and submits it.
func (c *AdminClient) Login(email, password, next string) AdminPage {
	c.T.Helper()
	c.Get("/admin/login")
	return c.Submit("/admin/login", url.Values{"email": {email}, "password": {password}, "next": {next}})
}

// SignIn logs in as the tenant's owner and fails the test otherwise; it
// returns the sign-in's answer (its session cookie).
func (c *AdminClient) SignIn(ten Tenant) AdminPage {
	c.T.Helper()
	if ten.Password == "" {
		c.T.Fatalf("tenant %s has no owner login: make it with ownedTenant", ten.Slug)
	}
	p := c.Login(ten.OwnerEmail, ten.Password, "")
	if p.Status != http.StatusSeeOther || p.Location() != "/admin" {
		c.T.Fatalf("signing in as %s: %d to %q: %s", ten.OwnerEmail, p.Status, p.Location(), p.Text("#login-error"))
	}
	return p
}

// SignedIn reports whether the client's session reaches the dashboard.
func (c *AdminClient) SignedIn() bool {
	c.T.Helper()
	p := c.Get("/admin")
	if p.Status != http.StatusOK && (p.Status != http.StatusSeeOther || p.Location() != "/admin/login") {
		c.T.Fatalf("GET /admin: %d to %q", p.Status, p.Location())
	}
	return p.Status == http.StatusOK
}

// FormValues reads what a browser would submit from the form selected by sel.
func FormValues(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find("input[name], select[name], textarea[name]").Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		switch goquery.NodeName(s) {
		case "select":
			opt := s.Find("option[selected]").First()
			if opt.Length() == 0 {
				opt = s.Find("option").First()
			}
			v.Add(name, opt.AttrOr("value", opt.Text()))
		case "textarea":
			v.Add(name, s.Text())
		default:
			switch s.AttrOr("type", "text") {
			case "checkbox", "radio":
				if _, checked := s.Attr("checked"); checked {
					v.Add(name, s.AttrOr("value", "on"))
				}
			default:
				v.Add(name, s.AttrOr("value", ""))
			}
		}
	})
	return v
}

// SettingsForm reads the settings page's form as a browser would submit it.
func (c *AdminClient) SettingsForm() url.Values {
	c.T.Helper()
	return c.SettingsFormAt("/admin/settings")
}

// SettingsFormAt reads the form of one of the settings pages as shown.
func (c *AdminClient) SettingsFormAt(path string) url.Values {
	c.T.Helper()
	p := c.Get(path)
	if p.Status != http.StatusOK {
		c.T.Fatalf("GET %s: %d", path, p.Status)
	}
	return FormValues(p.Doc.Find("#settings-form"))
}

func (b *Bundle) TenantNow(t *testing.T, slug string) parley.Tenant {
	t.Helper()
	got, err := b.DB.TenantBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ManualClock stops b's clock at a fixed instant and returns what moves it on.
func ManualClock(b *Bundle) (advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	b.Srv.Base.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	return func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
}

// AdminCall is a dashboard request that must answer 404, such as one naming
// another tenant's row.
type AdminCall struct {
	Name, Method, Path string
	Form               url.Values // nil: a GET
	HX                 bool
}

// ExpectNotFound makes each call as c's user, in a subtest, and checks the
// answer is 404.
func (c *AdminClient) ExpectNotFound(t *testing.T, calls []AdminCall) {
	t.Helper()
	for _, tc := range calls {
		t.Run(tc.Name, func(t *testing.T) {
			cc := c.As(t)
			var p AdminPage
			if tc.Form == nil {
				p = cc.Get(tc.Path)
			} else {
				form := url.Values{"_csrf": {cc.CSRF}}
				for k, v := range tc.Form {
					form[k] = v
				}
				header := map[string]string{}
				if tc.HX {
					header["HX-Request"] = "true"
				}
				p = cc.Do(tc.Method, tc.Path, form, header)
			}
			if p.Status != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", tc.Method, tc.Path, p.Status)
			}
		})
	}
}

// UploadAvatar posts a picture to the dashboard's avatar upload as the
// signed-in client c, as the browser's multipart form does.
func (c *AdminClient) UploadAvatar(name string, data []byte) AdminPage {
	c.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", c.CSRF)
	fw, _ := w.CreateFormFile("avatar", name)
	_, _ = fw.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest("POST", c.B.TS.URL+"/admin/settings/avatar", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", c.IP)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	resp.Body.Close()
	return AdminPage{Status: resp.StatusCode, Header: resp.Header}
}

func PNG(t *testing.T, side int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ClickAndConfirm clicks sel, accepts the confirmation dialog it opens and
// returns the dialog's message.
func ClickAndConfirm(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	asked := make(chan string, 1)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			asked <- ev.Message
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			return
		}
	}()
	// A button just swapped in is only htmx's (hx-confirm included) once htmx
	// has processed its form: clicking earlier submits the form plainly.
	WaitUntil(ctx, t, "htmx to take "+sel, fmt.Sprintf(`(() => {
		const b = document.querySelector(%q);
		if (!b || document.querySelector('.htmx-settling, .htmx-swapping')) return false;
		const f = b.closest('[hx-post], [hx-get], [hx-delete]');
		return !f || !!f['htmx-internal-data'];
	})()`, sel))
	MustStep(t, "clicking "+sel, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))))
	select {
	case msg := <-asked:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatalf("clicking %s opened no confirmation dialog", sel)
		return ""
	}
}

// WaitUntil waits for a JavaScript condition to hold, across the page loads
// that interrupt an evaluation (an htmx redirect, a reload). It asks every
// 100 ms. (At 20 ms a wait ended inside htmx's swap more often: a node found
// by the wait was gone when the next step read it.)
func WaitUntil(ctx context.Context, t *testing.T, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s never held (last error %v)", what, cond, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// OkFlash waits for the page's success message and returns its text, read
// in one evaluation: a node found first and read after can be swapped out
// in between by the navigation or swap that brought the message.
func OkFlash(ctx context.Context, t *testing.T) string {
	t.Helper()
	const read = `(document.querySelector('.flash.ok')?.innerText || '').trim()`
	WaitUntil(ctx, t, "the success message", read+` !== ''`)
	return MustRunStep(ctx, t, "flash", chromedp.Evaluate[string](read))
}

func JSString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// InboxFixture is an owned tenant with a few conversations of every kind.
type InboxFixture struct {
	Ten                              Tenant
	Ada, AgentConv, Escalated, Janua parley.Conversation
	Pricing                          parley.CorpusEntry // the knowledge ada's first answer drew on
	Visitor                          visitors.VisitorDetail
	Submission                       parley.Submission
}

// SeedInboxOf gives ten the conversations of an InboxFixture.
func SeedInboxOf(t *testing.T, b *Bundle, ten Tenant) InboxFixture {
	t.Helper()
	ctx := context.Background()
	ct := ConvTenant{Tenant: ten}
	sales, err := b.DB.CreateSegment(ctx, ten.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
		SystemPrompt: parley.Some("You sell.")})
	MustStep(t, "creating a segment", err)
	visitor, err := b.DB.CreateVisitor(ctx, ten.ID, visitors.VisitorWrite{Email: parley.Some("ada@example.com")})
	MustStep(t, "creating a visitor", err)
	now := time.Now().UTC()
	page := "https://shop.example/pricing"
	f := InboxFixture{Ten: ten, Visitor: visitor}
	f.Pricing, _, err = b.DB.UpsertCorpus(ctx, ten.ID, 100, knowledge.CorpusWrite{Title: parley.Some("Plans and prices"),
		Content: parley.Some("Starter is free; Team is 49 EUR a month.")})
	MustStep(t, "adding a knowledge entry", err)
	f.Ada = b.AddConversation(t, ct, SeedConversation{
		Start: func(p *parley.ConversationStart) { p.VisitorID, p.PageURL, p.SegmentID = &visitor.ID, &page, &sales.ID },
		Turns: []string{"How much is the Team plan?", "It is 49 EUR a month.", "Can someone call me?", "Of course, we will call you."},
		Tools: []parley.ToolCall{{ToolName: "contact_form", ToolType: "SUBMIT_FORM",
			Input:  json.RawMessage(`{"email":"ada@example.com","message":"Call me\nin the morning"}`),
			Result: json.RawMessage(`{"success":true,"message":"Thanks"}`)}},
		Votes:     []int{1, -1},
		Created:   EarlierToday(now, 2*time.Hour, time.Hour),
		Knowledge: []parley.KnowledgeRef{{ID: f.Pricing.ID, Title: f.Pricing.Title, Cited: true}, {ID: f.Pricing.ID, Title: "Given, not cited"}},
	})
	f.AgentConv = b.AddConversation(t, ct, SeedConversation{
		Start: func(p *parley.ConversationStart) { p.Channel, p.VisitorType = "agent", "agent" },
		Turns: []string{"List your plans", "Starter and Team."}, Votes: []int{1}, Created: EarlierToday(now, 2*time.Hour, 2*time.Hour),
	})
	f.Escalated = b.AddConversation(t, ct, SeedConversation{
		Start: func(p *parley.ConversationStart) { p.Channel = "voice" },
		Turns: []string{"I want a human", "Connecting you."}, Escalate: true, Created: EarlierToday(now, 2*time.Hour, 30*time.Minute),
	})
	f.Janua = b.AddConversation(t, ct, SeedConversation{Turns: []string{"Bonjour"}, Created: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)})
	b.InsertVoiceCall(t, ten.ID, "call-inbox", VoiceStr("https://recordings.example/call-inbox.wav"))
	b.LinkVoiceCall(t, ten.ID, "call-inbox", f.Escalated.ID, VoiceCost(0.27))
	f.Submission = InboxSubmission(t, b, ten.ID, "web", "SUBMIT_FORM", "Contact form", `{"email":"ada@example.com","name":"Ada"}`,
		time.Time{}, func(ns *parley.NewSubmission) { ns.ConversationID = &f.Ada.ID })
	return f
}

func VoiceCost(c float64) *float64 { return &c }

// LinkVoiceCall makes the tenant's call callID (see InsertVoiceCall) the
// call of the conversation convID, at cost (nil: not known).
func (b *Bundle) LinkVoiceCall(t *testing.T, tenantID, callID, convID string, cost *float64) {
	t.Helper()
	if _, err := b.DB.Pool().Exec(t.Context(), `UPDATE voice_calls SET conversation_id = $3, cost = $4
		WHERE tenant_id = $1 AND call_id = $2`, tenantID, callID, convID, cost); err != nil {
		t.Fatal(err)
	}
}

// ImportCSV posts a CSV file to the dashboard's import as the signed-in
// client c does, through htmx when hx is set.
func (c *AdminClient) ImportCSV(content string, hx bool) AdminPage {
	c.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", c.CSRF)
	fw, _ := w.CreateFormFile("file", "faq.csv")
	_, _ = io.WriteString(fw, content)
	_ = w.Close()
	req, _ := http.NewRequest("POST", c.B.TS.URL+"/admin/corpus/import", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", c.IP)
	if hx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	if err != nil {
		c.T.Fatal(err)
	}
	doc.Find("#import-result p, #import-errors li, .flash").Each(func(_ int, s *goquery.Selection) {
		if leak := LeakInMessage(s.Text()); leak != "" {
			c.T.Errorf("the import shows %q: %q is the API's word, not the owner's", strings.TrimSpace(s.Text()), leak)
		}
	})
	return AdminPage{Status: resp.StatusCode, Header: resp.Header, Body: string(raw), Doc: doc}
}

func (b *Bundle) PasswordHash(t *testing.T, email string) string {
	t.Helper()
	u, err := b.DB.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.PasswordHash
}

// InboxSubmission creates a submission of the tenant, created at created (now when zero).
func InboxSubmission(t *testing.T, b *Bundle, tenantID, channel, toolType, toolName, input string, created time.Time,
	mod func(*parley.NewSubmission)) parley.Submission {
	t.Helper()
	ctx := context.Background()
	page := "https://shop.example/pricing"
	ns := parley.NewSubmission{TenantID: tenantID, ToolType: toolType, ToolName: toolName, Channel: channel, PageURL: &page,
		Input: json.RawMessage(input), Result: json.RawMessage(`{"success":true,"message":"Thanks, we will call you."}`)}
	if mod != nil {
		mod(&ns)
	}
	sub, _, err := b.DB.CreateSubmission(ctx, ns, nil)
	MustStep(t, "creating a submission", err)
	if !created.IsZero() {
		_, err := b.DB.Pool().Exec(ctx, `UPDATE submissions SET created_at = $2 WHERE id = $1`, sub.ID, created)
		MustStep(t, "dating a submission", err)
	}
	return sub
}

// TestChat posts a test chat message as the signed-in client c, with the
// CSRF token of the last page it read unless noCSRF, and reads the answer.
func (c *AdminClient) TestChat(body map[string]any, noCSRF bool) ChatResponse {
	c.T.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.B.TS.URL+"/admin/test-chat", strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Forwarded-For", c.IP)
	if !noCSRF {
		if c.CSRF == "" {
			c.T.Fatal("no CSRF token read yet")
		}
		req.Header.Set("X-CSRF-Token", c.CSRF)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	return ReadChatResponse(c.T, resp)
}
