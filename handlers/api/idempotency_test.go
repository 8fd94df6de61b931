package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// keyedAnswer is an answer to a request sent with an Idempotency-Key.
type keyedAnswer struct {
	status   int
	replayed bool
	body     map[string]any
	raw      string
}

// sendKeyed sends body (JSON unless ctype says otherwise) with the
// Idempotency-Key key; key nil sends none.
func sendKeyed(t *testing.T, b *webtest.Bundle, path, token string, key *string, ctype, body string) keyedAnswer {
	t.Helper()
	req, err := http.NewRequest("POST", b.TS.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", ctype)
	if key != nil {
		req.Header["Idempotency-Key"] = []string{*key}
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := keyedAnswer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotency-Replayed") == "true", raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func ptr(s string) *string { return &s }

// id is the id of the corpus entry an answer holds.
func id(a keyedAnswer) string {
	s, _ := webtest.Obj(a.body["corpus"])["id"].(string)
	return s
}

// A create sent again with its Idempotency-Key returns the first answer,
// marked replayed, and writes nothing twice; the same key with another
// body is refused with 422 and writes nothing; keys of 1 to 255 printable
// characters are taken, others refused with 400; another token's or
// another tenant's key of the same text is its own.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, other := b.NewTenant(t, "starter"), b.NewTenant(t, "starter")
	path := "/tenants/" + ten.Slug + "/corpus"
	entry := `{"title":"Opening hours","content":"We open at nine."}`
	const jsonType = "application/json"

	first := sendKeyed(t, b, path, ten.Token, ptr("entry-1"), jsonType, entry)
	if first.status != 201 || first.replayed || id(first) == "" {
		t.Fatalf("first: %d %s (replayed %v)", first.status, first.raw, first.replayed)
	}
	again := sendKeyed(t, b, path, ten.Token, ptr("entry-1"), jsonType, entry)
	if again.status != 201 || !again.replayed || again.raw != first.raw {
		t.Errorf("sent again: %d %s (replayed %v), want the first answer %s replayed", again.status, again.raw, again.replayed, first.raw)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 1 {
		t.Errorf("%d entries after a create sent twice with one key, want 1", n)
	}

	// The same key, another body: 422, nothing written.
	reused := sendKeyed(t, b, path, ten.Token, ptr("entry-1"), jsonType, `{"title":"Closing hours","content":"We close at six."}`)
	if reused.status != 422 || reused.body["code"] != "IDEMPOTENCY_KEY_REUSED" || reused.replayed {
		t.Errorf("another body: %d %s", reused.status, reused.raw)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 1 {
		t.Errorf("%d entries after a key reused with another body, want 1", n)
	}

	// Another token of the tenant, another tenant: the key is theirs.
	tok := b.Token(t, ten.ID, auth.ScopeCorpusWrite)
	if a := sendKeyed(t, b, path, tok, ptr("entry-1"), jsonType, entry); a.status != 201 || a.replayed || id(a) == id(first) {
		t.Errorf("another token, the same key: %d %s (replayed %v)", a.status, a.raw, a.replayed)
	}
	if a := sendKeyed(t, b, "/tenants/"+other.Slug+"/corpus", other.Token, ptr("entry-1"), jsonType, entry); a.status != 201 || a.replayed {
		t.Errorf("another tenant, the same key: %d %s (replayed %v)", a.status, a.raw, a.replayed)
	}
	if n, m := webtest.CountCorpus(t, b, ten.ID), webtest.CountCorpus(t, b, other.ID); n != 2 || m != 1 {
		t.Errorf("%d and %d entries, want 2 (two tokens) and 1", n, m)
	}

	// Without a key, a create sent twice creates twice.
	for range 2 {
		if a := sendKeyed(t, b, path, ten.Token, nil, jsonType, `{"title":"Delivery","content":"In two days."}`); a.status != 201 || a.replayed {
			t.Fatalf("no key: %d %s", a.status, a.raw)
		}
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 4 {
		t.Errorf("%d entries, want 4", n)
	}

	// The key's length and characters.
	for _, tc := range []struct {
		name, key string
		want      int
	}{
		{"Longest", strings.Repeat("k", 255), 201},
		{"Printable", "a key: with spaces & ~punctuation~", 201},
		{"TooLong", strings.Repeat("k", 256), 400},
		{"Empty", "", 400},
		{"NotASCII", "clé", 400},
	} {
		body := `{"title":"Key ` + tc.name + `","content":"Text."}`
		a := sendKeyed(t, b, path, ten.Token, ptr(tc.key), jsonType, body)
		if a.status != tc.want || tc.want == 400 && (a.body["code"] != "INVALID_IDEMPOTENCY_KEY" ||
			a.body["error"] != "Idempotency-Key must be 1 to 255 printable characters") {
			t.Errorf("%s: %d %s, want %d", tc.name, a.status, a.raw, tc.want)
		}
		if tc.want == 201 {
			if a := sendKeyed(t, b, path, ten.Token, ptr(tc.key), jsonType, body); a.status != 201 || !a.replayed {
				t.Errorf("%s sent again: %d %s (replayed %v)", tc.name, a.status, a.raw, a.replayed)
			}
		}
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 6 {
		t.Errorf("%d entries, want 6 (the refused keys wrote nothing)", n)
	}

	// A refusal is an answer like another: kept and replayed.
	bad := `{"title":"","content":"No title."}`
	if a := sendKeyed(t, b, path, ten.Token, ptr("bad-1"), jsonType, bad); a.status != 400 || a.replayed {
		t.Errorf("invalid entry: %d %s", a.status, a.raw)
	}
	if a := sendKeyed(t, b, path, ten.Token, ptr("bad-1"), jsonType, bad); a.status != 400 || !a.replayed {
		t.Errorf("invalid entry sent again: %d %s (replayed %v)", a.status, a.raw, a.replayed)
	}
}

// A segment, a synonym group and a CSV import sent again with their keys
// are written once; the import's multipart body is recognised whatever its
// boundary, which a client draws anew for each try.
func TestIdempotentCreates(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	base := "/tenants/" + ten.Slug
	count := func(table string) int {
		t.Helper()
		var n int
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, ten.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	segments := count("segments")
	seg := `{"name":"Sales","systemPrompt":"You sell."}`
	first := sendKeyed(t, b, base+"/segments", ten.Token, ptr("seg-1"), "application/json", seg)
	again := sendKeyed(t, b, base+"/segments", ten.Token, ptr("seg-1"), "application/json", seg)
	if first.status != 201 || again.status != 201 || !again.replayed || again.body["id"] != first.body["id"] {
		t.Errorf("segment: %d %s, then %d %s", first.status, first.raw, again.status, again.raw)
	}
	if n := count("segments"); n != segments+1 {
		t.Errorf("%d segments, want %d", n, segments+1)
	}

	csv := "title,content\nReturns,Thirty days.\nShipping,Two days.\n"
	for i := range 2 {
		ctype, body := webtest.MultipartFile("file", "faq.csv", csv)
		a := sendKeyed(t, b, base+"/corpus/import", ten.Token, ptr("import-1"), ctype, string(body))
		if a.status != 200 || a.replayed != (i == 1) {
			t.Errorf("import %d: %d %s (replayed %v)", i, a.status, a.raw, a.replayed)
		}
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 2 {
		t.Errorf("%d entries after an import sent twice with one key, want 2", n)
	}
}

// A second try sent while the first still runs is refused with 409 and
// does nothing; once the first has answered, its answer is replayed.
func TestIdempotentCreateInFlight(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	ctx := t.Context()
	path := "/tenants/" + ten.Slug + "/corpus"
	entry := `{"title":"Held","content":"Held in flight."}`

	// The entry's write waits for the tenant's row, held here (a lock that
	// leaves the key's claim, which only references the row, alone).
	tx, err := b.DB.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR NO KEY UPDATE`, ten.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan keyedAnswer, 1)
	go func() { done <- sendKeyed(t, b, path, ten.Token, ptr("held-1"), "application/json", entry) }()
	for deadline := time.Now().Add(webtest.Patience); ; {
		select {
		case a := <-done:
			t.Fatalf("the first try answered while the tenant's row was held: %d %s", a.status, a.raw)
		default:
		}
		var n int
		if err := b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE tenant_id = $1 AND key = 'held-1' AND state = 'running'`, ten.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first try never claimed its key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	second := sendKeyed(t, b, path, ten.Token, ptr("held-1"), "application/json", entry)
	if second.status != 409 || second.body["code"] != "IDEMPOTENCY_KEY_IN_USE" {
		t.Errorf("a try while the first runs: %d %s", second.status, second.raw)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	first := <-done
	third := sendKeyed(t, b, path, ten.Token, ptr("held-1"), "application/json", entry)
	if first.status != 201 || third.status != 201 || !third.replayed || third.raw != first.raw {
		t.Errorf("first %d %s, then %d %s (replayed %v)", first.status, first.raw, third.status, third.raw, third.replayed)
	}
	if n := webtest.CountCorpus(t, b, ten.ID); n != 1 {
		t.Errorf("%d entries, want 1", n)
	}
}

// An answer of 500 or more is not kept: the request sent again with its
// key runs again (here the managed voice setup, whose orchestrator first
// failed), and that answer is kept.
func TestIdempotentCreateFailureNotKept(t *testing.T) {
	t.Parallel()
	b, fake := setupWithVapi(t)
	ten := b.NewTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/voice/setup"
	fake.FailCreate(400)
	if a := sendKeyed(t, b, path, ten.Token, ptr("voice-1"), "application/json", `{}`); a.status != 502 || a.replayed {
		t.Fatalf("the orchestrator failing: %d %s", a.status, a.raw)
	}
	fake.FailCreate(0)
	first := sendKeyed(t, b, path, ten.Token, ptr("voice-1"), "application/json", `{}`)
	if first.status != 200 || first.replayed || first.body["assistantId"] == nil {
		t.Fatalf("sent again after a 502: %d %s (replayed %v), want it run again", first.status, first.raw, first.replayed)
	}
	again := sendKeyed(t, b, path, ten.Token, ptr("voice-1"), "application/json", `{}`)
	if again.status != 200 || !again.replayed || again.raw != first.raw {
		t.Errorf("sent again after its answer: %d %s (replayed %v)", again.status, again.raw, again.replayed)
	}
}

// A webhook's creation answers its signing secret once: kept under its key
// sealed, never in plain text, and replayed whole.
func TestIdempotentCreateKeptSealed(t *testing.T) {
	t.Parallel()
	b := setupWebhookAPI(t, true)
	ten := b.NewTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/webhooks"
	first := sendKeyed(t, b, path, ten.Token, ptr("hook-1"), "application/json", `{"url":"https://public.test/hook"}`)
	secret, _ := first.body["secret"].(string)
	if first.status != 201 || secret == "" {
		t.Fatalf("first: %d %s", first.status, first.raw)
	}
	var kept []byte
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT body FROM idempotency_keys WHERE tenant_id = $1 AND key = 'hook-1'`, ten.ID).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if len(kept) == 0 || strings.Contains(string(kept), secret) || strings.Contains(string(kept), "public.test") {
		t.Errorf("the kept answer is not sealed: %q", kept)
	}
	again := sendKeyed(t, b, path, ten.Token, ptr("hook-1"), "application/json", `{"url":"https://public.test/hook"}`)
	if again.status != 201 || !again.replayed || again.body["secret"] != secret {
		t.Errorf("sent again: %d %s (replayed %v)", again.status, again.raw, again.replayed)
	}
	if n := countRows(t, b, `SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1`, ten.ID); n != 1 {
		t.Errorf("%d endpoints, want 1", n)
	}
}
