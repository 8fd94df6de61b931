package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
)

// SetupEnv is setup with extra configuration variables (PARLEY_CDN_URL, ...).
func SetupEnv(t *testing.T, env map[string]string) *Bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := Config(t, env)
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return NewBundle(t, srv, store)
}

// Request sends a request with exactly the given headers and body and returns
// the status, the body decoded as a JSON object (nil when it is not one) and the raw body.
func (b *Bundle) Request(t *testing.T, method, path string, headers map[string]string, body string) (int, map[string]any, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.TS.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return resp.StatusCode, out, string(raw)
}

// Bearer is the header set of a Bearer credential.
func Bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// Details returns the details object of an error body.
func Details(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	d, ok := body["details"].(map[string]any)
	if !ok {
		t.Fatalf("details is not an object: %v", body)
	}
	return d
}

// NewToken stores a token (legacy plain key when legacy) and returns it with its id.
func (b *Bundle) NewToken(t *testing.T, tenantID string, legacy bool, scopes ...string) (token, id string) {
	t.Helper()
	tok, nt := auth.NewToken(tenantID, "test", scopes, legacy)
	stored, err := b.DB.CreateToken(context.Background(), nt)
	if err != nil {
		t.Fatal(err)
	}
	return tok, stored.ID
}

// GetTenant reads the tenant object through the API.
func (b *Bundle) GetTenant(t *testing.T, ten Tenant) map[string]any {
	t.Helper()
	status, body := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("GET tenant: %d %v", status, body)
	}
	return body["tenant"].(map[string]any)
}

// CalendarBody is a connector save for the in-process CalDAV server.
func CalendarBody(cal *caldavtest.Server, extra map[string]any) map[string]any {
	body := map[string]any{"serverUrl": cal.URL, "username": cal.Username, "password": cal.Password}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
			continue
		}
		body[k] = v
	}
	return body
}

// StatsOf gets the stats of ct with query q, failing the test unless 200.
func (b *Bundle) StatsOf(t *testing.T, ct ConvTenant, q string) map[string]any {
	t.Helper()
	status, body := b.Do(t, "GET", ct.Base+"/stats"+q, ct.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("GET stats%s: %d %v", q, status, body)
	}
	return body
}

// ConvTenant is a tenant whose conversations a test seeds.
type ConvTenant struct {
	Tenant
	Base string
}

func (b *Bundle) NewConvTenant(t *testing.T) ConvTenant {
	t.Helper()
	ten := b.NewTenant(t, "scale")
	return ConvTenant{Tenant: ten, Base: "/tenants/" + ten.Slug + "/conversations"}
}

// SeedConversation describes a conversation to store through the turn's
// own db calls (StartTurn, SaveTurn, RecordFeedback).
type SeedConversation struct {
	Start func(*parley.ConversationStart)
	// turns alternate the visitor's messages and the bot's replies, the visitor first.
	Turns []string
	// tools run in the first reply's turn.
	Tools []parley.ToolCall
	// votes are the visitor's votes on the replies, in order (0: none).
	Votes    []int
	Escalate bool
	// knowledge is what the first reply's prompt held.
	Knowledge []parley.KnowledgeRef
	Created   time.Time // zero: now
}

var SessionSeq atomic.Int64

// AddConversation stores s as one of ct's conversations and returns it as stored.
func (b *Bundle) AddConversation(t *testing.T, ct ConvTenant, s SeedConversation) parley.Conversation {
	t.Helper()
	ctx := context.Background()
	p := parley.ConversationStart{TenantID: ct.ID, SessionID: fmt.Sprintf("sess-%d", SessionSeq.Add(1)), Limit: 100000}
	if s.Start != nil {
		s.Start(&p)
	}
	var conv *parley.Conversation
	var replies []parley.Message
	for i := 0; i < len(s.Turns); i += 2 {
		c, _, _, err := b.DB.StartTurn(ctx, p, s.Turns[i], conv)
		if err != nil {
			t.Fatal(err)
		}
		conv = &c
		rec := parley.TurnRecord{TenantID: ct.ID, ConversationID: c.ID, SessionID: p.SessionID}
		if i+1 < len(s.Turns) {
			rec.Reply = s.Turns[i+1]
		}
		if i == 0 {
			rec.Knowledge = s.Knowledge
			for _, tc := range s.Tools {
				rec.ToolRuns = append(rec.ToolRuns, parley.ToolRun{Call: tc})
			}
		}
		rec.Escalated = s.Escalate && i+2 >= len(s.Turns)
		m, err := b.DB.SaveTurn(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != "" {
			replies = append(replies, m)
		}
	}
	for i, v := range s.Votes {
		if v != 0 {
			if err := b.DB.RecordFeedback(ctx, ct.ID, replies[i].ID, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !s.Created.IsZero() {
		if _, err := b.DB.Pool().Exec(ctx, `UPDATE conversations SET created_at = $2 WHERE id = $1`, conv.ID, s.Created); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.DB.Conversation(ctx, ct.ID, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// GetRaw sends an authenticated GET and returns the status, headers and raw body.
func (b *Bundle) GetRaw(t *testing.T, path, token string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.TS.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

// CountCorpus counts the tenant's entries in the database.
func CountCorpus(t *testing.T, b *Bundle, tenantID string) int {
	t.Helper()
	var n int
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Upload posts content as a multipart file part named part.
func (b *Bundle) Upload(t *testing.T, path, token, part, content string) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile(part, "corpus.csv")
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", b.TS.URL+path, &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	DecodeJSON(t, resp, &out)
	return resp.StatusCode, out
}

// SetupSync is setup with PARLEY_SSRF_ALLOW=127.0.0.1/32, so that the sync
// endpoint may fetch pages from httptest servers.
func SetupSync(t *testing.T) *Bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := Config(t, map[string]string{"PARLEY_SSRF_ALLOW": "127.0.0.1/32"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return NewBundle(t, srv, store)
}

func Article(title, text string) string {
	return `<!doctype html><html><head><title>` + title + `</title></head><body>
<nav><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/about">About us</a></nav>
<main><article><h1>` + title + `</h1>
<p>` + text + ` This paragraph is long enough for the readability extraction to treat it as the
main content of the page rather than as navigation, which needs a few sentences of real prose.</p>
<p>A second paragraph adds more body text, so the article clearly outweighs the navigation and the footer.</p>
</article></main>
<footer>Footer noise: copyright and legal links</footer></body></html>`
}

const (
	StripeTestKey  = "sk_test_51FakeKeyForParleyTests0001abcd"
	OtherStripeKey = "sk_test_51OtherTenantKeyForTests02wxyz"
)

// ToJSON is v as JSON text, to search an answer for what it must not hold.
func ToJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// SubTenant is a tenant with a SUBMIT_FORM tool and a conversation to link submissions to.
type SubTenant struct {
	Tenant
	Base           string
	ToolID         string
	ConversationID string
}

func (b *Bundle) NewSubTenant(t *testing.T) SubTenant {
	t.Helper()
	ctx := context.Background()
	ten := b.NewTenant(t, "scale")
	tool, err := b.DB.CreateTool(ctx, ten.ID, db.ToolWrite{Name: parley.Some("Contact form"),
		Description: parley.Some("Collects contact details"), Type: parley.Some("SUBMIT_FORM")})
	if err != nil {
		t.Fatal(err)
	}
	conv, _, _, err := b.DB.StartTurn(ctx, parley.ConversationStart{TenantID: ten.ID, SessionID: "s-" + ten.Slug, Limit: 1000}, "Hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	return SubTenant{Tenant: ten, Base: "/tenants/" + ten.Slug + "/submissions", ToolID: tool.ID, ConversationID: conv.ID}
}

// AddSubmission creates a web SUBMIT_FORM submission of the tenant's tool and
// conversation, changed by mod, created at created (now when zero).
func (b *Bundle) AddSubmission(t *testing.T, st SubTenant, created time.Time, mod func(*parley.NewSubmission)) parley.Submission {
	t.Helper()
	ctx := context.Background()
	page := "https://example.com/pricing"
	ns := parley.NewSubmission{TenantID: st.ID, ToolID: &st.ToolID, ToolType: "SUBMIT_FORM", ToolName: "Contact form",
		ConversationID: &st.ConversationID, Channel: "web", PageURL: &page,
		Input: json.RawMessage(`{"full_name":"Ada Lovelace","work_email":"ada@example.com"}`), Result: json.RawMessage(`{"success":true}`)}
	if mod != nil {
		mod(&ns)
	}
	sub, _, err := b.DB.CreateSubmission(ctx, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !created.IsZero() {
		if _, err := b.DB.Pool().Exec(ctx, `UPDATE submissions SET created_at = $2 WHERE id = $1`, sub.ID, created); err != nil {
			t.Fatal(err)
		}
	}
	return sub
}

// SubmissionEvents returns the types and payloads of the events recorded for a submission, oldest first.
func (b *Bundle) SubmissionEvents(t *testing.T, id string) []db.EventPayload {
	t.Helper()
	rows, err := b.DB.Pool().Query(context.Background(), `SELECT payload FROM events WHERE submission_id = $1 OR payload->'data'->>'id' = $1::text
		ORDER BY created_at, id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []db.EventPayload
	for rows.Next() {
		var raw []byte
		var p db.EventPayload
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Raw sends a request and returns the response unread.
func (b *Bundle) Raw(t *testing.T, method, path, token string, body *strings.Reader) *http.Response {
	t.Helper()
	var req *http.Request
	if body != nil {
		req, _ = http.NewRequest(method, b.TS.URL+path, body)
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequest(method, b.TS.URL+path, nil)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// RawBody returns the response body as text.
func (b *Bundle) RawBody(t *testing.T, method, path, token string) string {
	t.Helper()
	resp := b.Raw(t, method, path, token, nil)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return buf.String()
}

var WebhookHosts = HookResolver{
	"hooks.test":  "127.0.0.1",       // exempt when 127.0.0.0/8 is allowed
	"public.test": "93.184.216.34",   // public: accepted, never dialled (River does not run here)
	"inside.test": "10.0.0.7",        // private
	"meta.test":   "169.254.169.254", // cloud metadata
}

func Obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func List(v any) []any { a, _ := v.([]any); return a }
