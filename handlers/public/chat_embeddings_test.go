package public_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// setupEmbedChat is SetupChat with the operator's embedding endpoint at
// embedURL, on a store of its own over the test database's pool (its
// EnableEmbeddings must not reach the package's other tests).
func setupEmbedChat(t *testing.T, embedURL string) (*webtest.Bundle, *llmtest.OpenAI) {
	t.Helper()
	llm := llmtest.NewOpenAI(t)
	store, err := db.New(dbtest.New(t).Pool())
	if err != nil {
		t.Fatal(err)
	}
	cfg := webtest.Config(t, webtest.ChatEnv(llm.URL), map[string]string{"PARLEY_EMBEDDINGS_URL": embedURL, "PARLEY_EMBEDDINGS_MODEL": "concepts"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Base.Engine.Embeddings == nil {
		t.Fatal("PARLEY_EMBEDDINGS_URL set, and no embedder")
	}
	return webtest.NewBundle(t, srv, store), llm
}

// With an embedding endpoint, a reworded question that shares no word with
// its entry brings it into the prompt; without one it does not (issue 34).
// An endpoint that fails or hangs leaves the turn to the lexical ranking:
// it still answers.
func TestChatKnowledgeByMeaning(t *testing.T) {
	t.Parallel()
	// 150 entries of about 1,000 characters: six times the knowledge cap,
	// all of them candidates (fewer than agent.PromptCorpusLimit). The
	// entry that answers sorts last by priority and title.
	entries := append(webtest.NoticeEntries(150), map[string]any{"externalId": "answer", "title": "Puncture repair",
		"content": "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros. " + webtest.NoticeFiller})
	const question = "Could someone mend my bicycle tire?"
	const answer = "We fix a flat tyre while you wait"
	load := func(b *webtest.Bundle) webtest.Tenant { return webtest.LoadEntries(t, b, entries) }
	ask := func(b *webtest.Bundle, llm *llmtest.OpenAI, ten webtest.Tenant) (string, time.Duration) {
		t.Helper()
		return webtest.FirstPrompt(t, b, llm, ten, question)
	}

	// Without an endpoint: no word in common, so the entry stays out.
	plain, plainLLM := webtest.SetupChat(t, nil)
	lexical, _ := ask(plain, plainLLM, load(plain))
	if strings.Contains(lexical, answer) {
		t.Fatal("the lexical ranking found the reworded question's entry: the question shares a word with it")
	}

	emb := llmtest.NewEmbeddings(t)
	b, llm := setupEmbedChat(t, emb.URL)
	ten := load(b)
	ctx := context.Background()
	var waiting int
	if err := b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1
		AND state = 'available'`, ten.ID).Scan(&waiting); err != nil || waiting != 1 {
		t.Fatalf("the bulk loads left %d embedding jobs waiting, want 1 (%v)", waiting, err)
	}
	// The job the loads enqueued, as River would run it.
	w := &jobs.EmbedCorpusWorker{DB: b.DB, Embeddings: jobs.Embeddings{Operator: b.Srv.Base.Engine.Embeddings}}
	if n, done, err := w.EmbedTenant(ctx, ten.ID, time.Minute); err != nil || !done || n != len(entries) {
		t.Fatalf("embedded %d of %d, done %v: %v", n, len(entries), done, err)
	}

	t.Run("RewordedQuestionFindsItsEntry", func(t *testing.T) {
		sent := len(emb.Inputs())
		system, _ := ask(b, llm, ten)
		if !strings.Contains(system, answer) {
			t.Errorf("the prompt lacks the entry the question means:\n%.600s", webtest.KnowledgeBlocks(system))
		}
		if in := emb.Inputs()[sent:]; len(in) != 1 || in[0] != question {
			t.Errorf("the turn embedded %q, want the question alone", in)
		}
	})

	t.Run("EndpointDown", func(t *testing.T) {
		emb.Fail(http.StatusServiceUnavailable, "The engine is currently overloaded")
		defer emb.Fail(0, "")
		system, _ := ask(b, llm, ten)
		if got, want := webtest.KnowledgeBlocks(system), webtest.KnowledgeBlocks(lexical); got != want {
			t.Errorf("the endpoint down, the knowledge is not the lexical ranking's:\n%.300s\n---\n%.300s", got, want)
		}
	})

	t.Run("EndpointHangs", func(t *testing.T) {
		released := make(chan struct{})
		stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-released:
			}
		}))
		defer stall.Close()
		defer close(released)
		hb, hllm := setupEmbedChat(t, stall.URL)
		hten := load(hb)
		system, took := ask(hb, hllm, hten)
		if strings.Contains(system, answer) {
			t.Error("no vector, yet the entry is in the prompt")
		}
		if took > 6*time.Second {
			t.Errorf("the turn waited %s for a hanging endpoint", took)
		}
	})
}
