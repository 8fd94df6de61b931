package webtest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
)

// SetupChat is setup with the managed provider pointed at a scripted
// OpenAI-compatible server, and X-Forwarded-For trusted from loopback so
// that each test call comes from its own address (the per-address chat
// limit is shared by the whole test binary's database).
func SetupChat(t *testing.T, env map[string]string, turns ...llmtest.Turn) (*Bundle, *llmtest.OpenAI) {
	t.Helper()
	llm := llmtest.NewOpenAI(t, turns...)
	store := dbtest.New(t)
	cfg := Config(t, ChatEnv(llm.URL), env)
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return NewBundle(t, srv, store), llm
}

var ChatAddrSeq atomic.Int64

// NewChatAddr is an address no other test call uses.
func NewChatAddr() string {
	n := ChatAddrSeq.Add(1)
	return fmt.Sprintf("10.77.%d.%d", n/250, n%250+1)
}

// ChatResponse is an answer of POST /chat/{slug}.
type ChatResponse struct {
	Status int
	Header http.Header
	Body   map[string]any   // JSON answers
	Events []map[string]any // SSE answers, in order
}

// Chat posts body to /chat/{slug} from a fresh address (unless headers set
// X-Forwarded-For) and reads the JSON or SSE answer.
func (b *Bundle) Chat(t *testing.T, path string, body any, headers map[string]string) ChatResponse {
	t.Helper()
	raw, _ := json.Marshal(body)
	if s, ok := body.(string); ok {
		raw = []byte(s)
	}
	req, _ := http.NewRequest("POST", b.TS.URL+path, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", NewChatAddr())
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return ReadChatResponse(t, resp)
}

// ReadChatResponse reads a chat answer: SSE events, else one JSON body.
func ReadChatResponse(t *testing.T, resp *http.Response) ChatResponse {
	t.Helper()
	defer resp.Body.Close()
	out := ChatResponse{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("bad SSE event %q", data)
			}
			out.Events = append(out.Events, ev)
		}
		return out
	}
	all, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(all, &out.Body); err != nil {
		t.Fatalf("bad JSON answer %d %q", resp.StatusCode, all)
	}
	return out
}

// Exec runs SQL on the test database.
func (b *Bundle) Exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.DB.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// Count runs a count query on the test database.
func (b *Bundle) Count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.DB.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var AgentHeaders = map[string]string{"X-Agent-Model": "claude-test"}

// CheckChatSchema checks a chat answer against its schema in openapi.json:
// valid, and every field documented.
func CheckChatSchema(t *testing.T, where, name string, v map[string]any) {
	t.Helper()
	doc := LoadOpenAPI(t)
	schema := doc.Components.Schemas[name].Value
	if err := schema.VisitJSON(v); err != nil {
		t.Errorf("%s does not match %s: %v", where, name, err)
	}
	DocumentedKeys(t, where, schema, v)
}

// AnonymousKey is what the database keeps of an anonymous id.
func AnonymousKey(id string) []byte {
	k := sha256.Sum256([]byte(id))
	return k[:]
}

// ToolResult decodes the one tool result a model request carried.
func ToolResult(t *testing.T, req llmtest.Received) map[string]any {
	t.Helper()
	res := ToolResults(req)
	if len(res) != 1 {
		t.Fatalf("%d tool results, want 1: %v", len(res), res)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res[0]), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// OfferedTools are the function names of the tools a model request offered.
func OfferedTools(req llmtest.Received) []string {
	var names []string
	for _, tool := range req.Chat.Tools {
		names = append(names, tool.Function.Name)
	}
	slices.Sort(names)
	return names
}

// ToolResults are the contents of the tool messages a model request carried.
func ToolResults(req llmtest.Received) []string {
	var out []string
	for _, m := range req.Chat.Messages {
		if m.Role == "tool" {
			out = append(out, string(m.Content))
		}
	}
	return out
}

// NoticeFiller is the body of the filler entries of the retrieval tests:
// about 1,000 characters sharing no word with their questions.
var NoticeFiller = strings.Repeat("Our team answers by email and phone on working days, and every order is packed with care. ", 11)

// NoticeEntries is n filler entries for a corpus bulk request ("Notice i").
func NoticeEntries(n int) []map[string]any {
	entries := make([]map[string]any, n)
	for i := range entries {
		entries[i] = map[string]any{"externalId": fmt.Sprintf("e%d", i), "title": fmt.Sprintf("Notice %d", i),
			"content": fmt.Sprintf("Notice number %d. ", i) + NoticeFiller}
	}
	return entries
}

// LoadEntries gives a new scale-plan tenant entries, in their order, 50 a
// bulk request.
func LoadEntries(t *testing.T, b *Bundle, entries []map[string]any) Tenant {
	t.Helper()
	ten := b.NewTenant(t, "scale")
	for i := 0; i < len(entries); i += 50 {
		b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": entries[i:min(i+50, len(entries))]})
	}
	return ten
}

// FirstPrompt sends question as the first message of a new session and
// returns the system prompt the model received, and how long the turn
// took; the turn must answer.
func FirstPrompt(t *testing.T, b *Bundle, llm *llmtest.OpenAI, ten Tenant, question string) (string, time.Duration) {
	t.Helper()
	llm.Push(llmtest.Turn{Text: []string{"OK."}})
	before := len(llm.Requests())
	start := time.Now()
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": question, "sessionId": fmt.Sprintf("s-%d", time.Now().UnixNano())},
		map[string]string{"X-Forwarded-For": NewChatAddr()})
	took := time.Since(start)
	reqs := llm.Requests()
	if r.Status != 200 || len(reqs) != before+1 || len(r.Events) == 0 || r.Events[len(r.Events)-1]["done"] != true {
		t.Fatalf("%q: the turn did not answer: %d %v %v", question, r.Status, r.Body, r.Events)
	}
	return string(reqs[before].Chat.Messages[0].Content), took
}

func Call(id, name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: name, Arguments: []string{args}}
}

// VisitorKey returns the tenant's visitor signing key, unsealed.
func (b *Bundle) VisitorKey(t *testing.T, tenantID string) []byte {
	t.Helper()
	var sealed []byte
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT visitor_signing_key FROM tenants WHERE id = $1`, tenantID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	key, err := b.Box.Open(sealed)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func SignVisitor(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var SigningKeyPattern = regexp.MustCompile(`^vsk_[0-9a-f]{64}$`)

// RotateSigningKey rotates the tenant's key through the API and returns it.
func (b *Bundle) RotateSigningKey(t *testing.T, ten Tenant) string {
	t.Helper()
	st, body, raw := b.Request(t, "POST", "/tenants/"+ten.Slug+"/visitor-signing-key/rotate",
		map[string]string{"Authorization": "Bearer " + ten.Token}, "")
	if st != http.StatusOK {
		t.Fatalf("rotate: %d %s", st, raw)
	}
	key, _ := body["key"].(string)
	if !SigningKeyPattern.MatchString(key) || body["algorithm"] != "HS256" || body["warning"] == "" || len(body) != 3 {
		t.Fatalf("rotate answered %v", body)
	}
	return key
}

// GetContext fetches GET /context/{slug} without credentials and returns the
// response, its raw body and the decoded body.
func (b *Bundle) GetContext(t *testing.T, slug string) (*http.Response, string, map[string]any) {
	t.Helper()
	resp, err := b.TS.Client().Get(b.TS.URL + "/context/" + slug)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("GET /context/%s: bad JSON %q", slug, raw)
	}
	return resp, string(raw), out
}

// MustDo is b.do failing the test on a status other than want.
func (b *Bundle) MustDo(t *testing.T, want int, method, path, token string, body any) map[string]any {
	t.Helper()
	status, got := b.Do(t, method, path, token, body)
	if status != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, status, got, want)
	}
	return got
}

// PutDefaultForm sets the form of the tenant's default segment.
func (b *Bundle) PutDefaultForm(t *testing.T, ten Tenant, form any) {
	t.Helper()
	var id string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT id FROM segments WHERE tenant_id = $1 AND is_default`, ten.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/segments/"+id, ten.Token, map[string]any{"formConfig": form}); st != 200 {
		t.Fatalf("default segment form: %d %v", st, body)
	}
}

// NewFormSegment creates a segment with form (nil for none) and returns its slug.
func (b *Bundle) NewFormSegment(t *testing.T, ten Tenant, name string, form any) string {
	t.Helper()
	st, seg := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token,
		map[string]any{"name": name, "systemPrompt": "You help.", "formConfig": form})
	if st != 201 {
		t.Fatalf("segment %s: %d %v", name, st, seg)
	}
	return seg["slug"].(string)
}

// GetWidgetSettings sends GET /chat/{slug}/widget with headers through the
// bundle's validating client.
func (b *Bundle) GetWidgetSettings(t *testing.T, path string, headers map[string]string) (*http.Response, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.TS.URL+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("GET %s: not JSON: %q", path, raw)
		}
	}
	return resp, body, string(raw)
}

// KnowledgeBlocks is the knowledge part of a system prompt: its
// <knowledge> blocks, joined.
func KnowledgeBlocks(system string) string {
	var out []string
	for rest := system; ; {
		i := strings.Index(rest, "<knowledge>\n")
		if i < 0 {
			return strings.Join(out, "\n")
		}
		j := strings.Index(rest[i:], "</knowledge>")
		if j < 0 {
			return strings.Join(append(out, rest[i:]), "\n")
		}
		out = append(out, rest[i:i+j])
		rest = rest[i+j:]
	}
}
