package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web/webtest"
)

// The API of a tenant's own embedding endpoint (issue 34): every rule of a
// save at its limit and one past it, the key write-only and sealed, the
// scopes, and one tenant never reading another's.
func TestEmbeddingsSettingsAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "free")
	path := "/tenants/" + ten.Slug + "/embeddings"
	st, got := b.Do(t, "GET", path, ten.Token, nil)
	if st != 200 || got["source"] != "none" || got["embeddingsUrl"] != nil || got["hasApiKey"] != false || got["vectorModel"] != nil || got["entries"] != float64(0) {
		t.Fatalf("initial: %d %v", st, got)
	}

	ok := func(extra map[string]any) map[string]any {
		m := map[string]any{"embeddingsUrl": "https://embed.example.com/v1", "embeddingsModel": "text-embedding-3-small"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for name, c := range map[string]struct {
		body  map[string]any
		field string
		want  string
	}{
		"NoURL":         {map[string]any{"embeddingsModel": "m"}, "embeddingsUrl", "is required"},
		"NullURL":       {ok(map[string]any{"embeddingsUrl": nil}), "embeddingsUrl", "is required"},
		"NotHTTP":       {ok(map[string]any{"embeddingsUrl": "ftp://embed.example.com"}), "embeddingsUrl", "absolute URL"},
		"URLTooLong":    {ok(map[string]any{"embeddingsUrl": "https://embed.example.com/" + strings.Repeat("p", 475)}), "embeddingsUrl", "at most 500"},
		"Private":       {ok(map[string]any{"embeddingsUrl": "https://192.168.1.10/v1"}), "embeddingsUrl", "refused"},
		"HTTPWithKey":   {ok(map[string]any{"embeddingsUrl": "http://embed.example.com/v1", "embeddingsApiKey": "sk-1"}), "embeddingsUrl", "must use https while an API key is set"},
		"NoModel":       {ok(map[string]any{"embeddingsModel": " "}), "embeddingsModel", "is required"},
		"ModelTooLong":  {ok(map[string]any{"embeddingsModel": strings.Repeat("m", 201)}), "embeddingsModel", "at most 200"},
		"ModelNotText":  {ok(map[string]any{"embeddingsModel": 12}), "embeddingsModel", "must be a string"},
		"ModelControl":  {ok(map[string]any{"embeddingsModel": "m\n1"}), "embeddingsModel", "control characters"},
		"DimsZero":      {ok(map[string]any{"embeddingsDimensions": 0}), "embeddingsDimensions", "between 1 and 8192"},
		"DimsPast":      {ok(map[string]any{"embeddingsDimensions": 8193}), "embeddingsDimensions", "between 1 and 8192"},
		"DimsNotNumber": {ok(map[string]any{"embeddingsDimensions": "256"}), "embeddingsDimensions", "must be an integer"},
		"KeyTooLong":    {ok(map[string]any{"embeddingsApiKey": strings.Repeat("k", 501)}), "embeddingsApiKey", "at most 500"},
	} {
		st, body := b.Do(t, "PUT", path, ten.Token, c.body)
		details, _ := body["details"].(map[string]any)
		if msg, _ := details[c.field].(string); st != 400 || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want 400 with %s %q", name, st, body, c.field, c.want)
		}
	}
	if _, got := b.Do(t, "GET", path, ten.Token, nil); got["embeddingsUrl"] != nil {
		t.Fatalf("a refused save stored something: %v", got)
	}

	// At the limits: saved.
	key := "sk-embed-secret-4242"
	st, saved := b.Do(t, "PUT", path, ten.Token, ok(map[string]any{"embeddingsUrl": " https://embed.example.com/v1 ",
		"embeddingsModel": strings.Repeat("m", 200), "embeddingsDimensions": 8192, "embeddingsApiKey": strings.Repeat("k", 500)}))
	if st != 200 || saved["embeddingsUrl"] != "https://embed.example.com/v1" || saved["embeddingsDimensions"] != float64(8192) || saved["hasApiKey"] != true {
		t.Fatalf("at the limits: %d %v", st, saved)
	}
	st, saved = b.Do(t, "PUT", path, ten.Token, ok(map[string]any{"embeddingsDimensions": 256, "embeddingsApiKey": key}))
	if st != 200 || saved["source"] != "tenant" || saved["vectorModel"] != "text-embedding-3-small@256" || saved["hasApiKey"] != true {
		t.Fatalf("save: %d %v", st, saved)
	}
	if raw := b.RawBody(t, "GET", path, ten.Token); strings.Contains(raw, key) || strings.Contains(raw, "Bearer") {
		t.Errorf("the key is echoed: %s", raw)
	}
	var sealed []byte
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT embeddings_api_key FROM tenants WHERE id = $1`, ten.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if open, err := b.Srv.Base.Box.Open(sealed); err != nil || string(open) != key || strings.Contains(string(sealed), key) {
		t.Errorf("the key is not stored sealed: %q (%v)", sealed, err)
	}
	// Absent key: kept (and an http URL then refused); null: removed.
	if st, body := b.Do(t, "PUT", path, ten.Token, ok(map[string]any{"embeddingsUrl": "http://embed.example.com/v1"})); st != 400 {
		t.Errorf("http with the stored key kept: %d %v", st, body)
	}
	if _, kept := b.Do(t, "PUT", path, ten.Token, ok(nil)); kept["hasApiKey"] != true || kept["embeddingsDimensions"] != nil {
		t.Errorf("absent key, absent dimensions: %v", kept)
	}
	if st, plain := b.Do(t, "PUT", path, ten.Token, ok(map[string]any{"embeddingsUrl": "http://embed.example.com/v1", "embeddingsApiKey": nil})); st != 200 || plain["hasApiKey"] != false {
		t.Errorf("key removed, http allowed: %d %v", st, plain)
	}

	t.Run("Scopes", func(t *testing.T) {
		read := b.Token(t, ten.ID, auth.ScopeSettingsRead)
		if st, _ := b.Do(t, "GET", path, read, nil); st != 200 {
			t.Errorf("settings:read GET: %d", st)
		}
		for _, m := range []string{"PUT", "DELETE"} {
			if st, _ := b.Do(t, m, path, read, ok(nil)); st != 403 {
				t.Errorf("settings:read %s: %d", m, st)
			}
		}
		if st, _ := b.Do(t, "GET", path, b.Token(t, ten.ID, auth.ScopeCorpusRead), nil); st != 403 {
			t.Errorf("corpus:read GET: %d", st)
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		other := b.NewTenant(t, "free")
		if st, _ := b.Do(t, "GET", path, other.Token, nil); st != 403 && st != 404 {
			t.Errorf("another tenant's token reads the endpoint: %d", st)
		}
		if _, own := b.Do(t, "GET", "/tenants/"+other.Slug+"/embeddings", other.Token, nil); own["source"] != "none" {
			t.Errorf("a fresh tenant sees %v", own)
		}
	})

	st, del := b.Do(t, "DELETE", path, ten.Token, nil)
	if st != 200 || del["deleted"] != true || del["source"] != "none" || del["embeddingsUrl"] != nil || del["hasApiKey"] != false {
		t.Errorf("delete: %d %v", st, del)
	}
	if st, again := b.Do(t, "DELETE", path, ten.Token, nil); st != 200 || again["deleted"] != true {
		t.Errorf("delete again: %d %v", st, again)
	}
}

// A tenant's own endpoint ranks its knowledge by meaning where the operator
// configured none (issue 34): saving it enqueues the job, the job embeds at
// the tenant's endpoint with its key, the turn embeds the question there,
// and the progress and the endpoint's failures are readable.
func TestChatKnowledgeByTenantEmbeddings(t *testing.T) {
	t.Parallel()
	// 61 entries of about 1,000 characters: two and a half times the
	// knowledge cap, the answer sorting last by priority and title.
	entries := append(webtest.NoticeEntries(60), map[string]any{"externalId": "answer", "title": "Puncture repair",
		"content": "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros. " + webtest.NoticeFiller})
	const question = "Could someone mend my bicycle tire?"
	const answer = "We fix a flat tyre while you wait"
	b, llm := webtest.SetupChat(t, nil)
	if b.Srv.Base.Engine.Embeddings != nil {
		t.Fatal("the operator's endpoint is configured: the test is of a tenant's own")
	}
	ten := webtest.LoadEntries(t, b, entries)
	other := webtest.LoadEntries(t, b, entries)
	ctx := context.Background()
	emb := llmtest.NewEmbeddings(t)
	emb.Key = "tenant-embed-key"
	path := "/tenants/" + ten.Slug + "/embeddings"

	// The API refuses a key over http: the key goes in with the store, as
	// the API would over https.
	b.MustDo(t, 200, "PUT", path, ten.Token, map[string]any{"embeddingsUrl": emb.URL, "embeddingsModel": "concepts"})
	dims := 64
	if _, err := b.DB.SaveEmbeddingSettings(ctx, ten.ID, emb.URL, "concepts", &dims, parley.Some(b.Srv.Base.Box.Seal([]byte(emb.Key)))); err != nil {
		t.Fatal(err)
	}
	var waiting int
	if err := b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1
		AND state = 'available'`, ten.ID).Scan(&waiting); err != nil || waiting != 1 {
		t.Fatalf("saving the endpoint left %d embedding jobs waiting, want 1 (%v)", waiting, err)
	}
	if _, st := b.Do(t, "GET", path, ten.Token, nil); st["source"] != "tenant" || st["entries"] != float64(len(entries)) || st["embeddedEntries"] != float64(0) {
		t.Errorf("before the job: %v", st)
	}

	w := &jobs.EmbedCorpusWorker{DB: b.DB, Embeddings: b.Srv.JobEmbeddings()}
	if n, done, err := w.EmbedTenant(ctx, ten.ID, time.Minute); err != nil || !done || n != len(entries) {
		t.Fatalf("embedded %d of %d, done %v: %v", n, len(entries), done, err)
	}
	reqs := emb.Requests()
	if len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+emb.Key || reqs[0].Model != "concepts" || reqs[0].Dimensions != 64 {
		t.Fatalf("the job's requests: %d, first %+v", len(reqs), reqs[0])
	}
	if n, done, err := w.EmbedTenant(ctx, other.ID, time.Minute); err != nil || !done || n != 0 {
		t.Errorf("a tenant without an endpoint, the operator none: embedded %d, done %v (%v)", n, done, err)
	}
	if _, st := b.Do(t, "GET", path, ten.Token, nil); st["embeddedEntries"] != float64(len(entries)) || st["lastEmbeddedAt"] == nil || st["lastError"] != nil {
		t.Errorf("after the job: %v", st)
	}

	sent := len(emb.Inputs())
	system, _ := webtest.FirstPrompt(t, b, llm, ten, question)
	if !strings.Contains(system, answer) {
		t.Errorf("the prompt lacks the entry the question means:\n%.600s", webtest.KnowledgeBlocks(system))
	}
	if in := emb.Inputs()[sent:]; len(in) != 1 || in[0] != question {
		t.Errorf("the turn embedded %q, want the question alone", in)
	}
	plain, _ := webtest.FirstPrompt(t, b, llm, other, question)
	if strings.Contains(plain, answer) {
		t.Error("the tenant without an endpoint got the entry by meaning")
	}
	if got := len(emb.Inputs()); got != sent+1 {
		t.Errorf("the other tenant's turn reached the endpoint (%d inputs more)", got-sent-1)
	}

	t.Run("FailureShown", func(t *testing.T) {
		emb.Fail(http.StatusUnauthorized, "Incorrect API key provided")
		defer emb.Fail(0, "")
		b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": []map[string]any{
			{"externalId": "new", "title": "Gift cards", "content": "Gift cards from 20 euros."}}})
		if _, _, err := w.EmbedTenant(ctx, ten.ID, time.Minute); err == nil {
			t.Fatal("the endpoint refused the key, and the job did not fail")
		}
		_, st := b.Do(t, "GET", path, ten.Token, nil)
		if msg, _ := st["lastError"].(string); !strings.Contains(msg, "401") || !strings.Contains(msg, "Incorrect API key") || st["lastErrorAt"] == nil ||
			st["embeddedEntries"] != float64(len(entries)) || st["entries"] != float64(len(entries)+1) {
			t.Errorf("after a failure: %v", st)
		}
		emb.Fail(0, "")
		if _, _, err := w.EmbedTenant(ctx, ten.ID, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, st := b.Do(t, "GET", path, ten.Token, nil); st["lastError"] != nil || st["embeddedEntries"] != st["entries"] {
			t.Errorf("after the endpoint recovered: %v", st)
		}
	})
}
