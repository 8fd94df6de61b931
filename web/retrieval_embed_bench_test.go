package web_test

// The embedding phases of the retrieval benchmark (issue 34; BENCHMARKS.md,
// "Retrieval recall", "With embeddings"). They run against:
//
//   - the scripted embedding server (agent/outbound/llm/llmtest.Embeddings), always:
//     not a model, but vectors of a bag of concepts with a small synonym
//     table, so that the fusion code runs end to end. Its figures say that
//     the code path works and how fusion and rerank compare on such
//     vectors, not what a real model would reach;
//   - a real endpoint, when PARLEY_EMBEDDINGS_URL is set in the
//     environment (with PARLEY_EMBEDDINGS_MODEL, and optionally
//     PARLEY_EMBEDDINGS_API_KEY and PARLEY_EMBEDDINGS_DIMENSIONS).
//
// Each embedder gets a tenant of its own, loaded in file order, tier 1 (no
// summaries), embedded by the embedding job's own code
// (jobs.EmbedCorpusWorker.EmbedTenant), then asked every question three
// ways: reciprocal rank fusion (what Parley ships), the same with the
// visitor's locale sent, and the rerank variant (the lexical ranking's
// first embedRerankN reordered by cosine).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/jobs"
)

// embedRerankN is how many of the lexical ranking's first candidates the
// rerank variant reorders: about what the knowledge cap holds whole.
const embedRerankN = 50

// retrievalEmbedder is an embedder the benchmark measures.
type retrievalEmbedder struct {
	name  string // the phases' prefix: "scripted" or "real"
	label string // how the table names it
	e     *llm.Embedder
}

// retrievalEmbedders are the scripted server, and the real endpoint when
// the environment names one.
func retrievalEmbedders(b *testing.B) []retrievalEmbedder {
	srv := llmtest.NewEmbeddings(b)
	out := []retrievalEmbedder{{name: "scripted", label: "scripted embedding server (not a model)",
		e: llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "concepts"})}}
	if u := os.Getenv("PARLEY_EMBEDDINGS_URL"); u != "" {
		dims, _ := strconv.Atoi(os.Getenv("PARLEY_EMBEDDINGS_DIMENSIONS"))
		model := os.Getenv("PARLEY_EMBEDDINGS_MODEL")
		if model == "" {
			b.Fatal("PARLEY_EMBEDDINGS_URL is set without PARLEY_EMBEDDINGS_MODEL")
		}
		out = append(out, retrievalEmbedder{name: "real", label: "real endpoint, " + model,
			e: llm.NewEmbedder(llm.EmbedderConfig{BaseURL: u, APIKey: os.Getenv("PARLEY_EMBEDDINGS_API_KEY"),
				Model: model, Dimensions: dims})})
	}
	return out
}

// embeddingPhases runs the embedding phases and records each question's
// hits in out[i].Embeddings, by phase name.
func embeddingPhases(b *testing.B, rb *retrievalBench, entries []retrievalEntry, questions []retrievalQuestion,
	byKey map[string]retrievalEntry, out []retrievalOutcome) {
	ctx := context.Background()
	engine := rb.srv.Base.Engine
	defer func() { engine.Embeddings = nil }()
	for _, emb := range retrievalEmbedders(b) {
		slug := rb.tenant(b, entries, false)
		var tenantID string
		if err := rb.store.Pool().QueryRow(ctx, `SELECT id FROM tenants WHERE slug = $1`, slug).Scan(&tenantID); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		w := &jobs.EmbedCorpusWorker{DB: rb.store, Embeddings: jobs.Embeddings{Operator: emb.e}}
		n, done, err := w.EmbedTenant(ctx, tenantID, time.Hour)
		if err != nil || !done {
			b.Fatalf("%s: embedding the knowledge base: %d embedded, done %v: %v", emb.name, n, done, err)
		}
		b.Logf("%s: %d entries embedded in %s", emb.label, n, time.Since(start).Round(time.Millisecond))
		engine.Embeddings = emb.e
		for _, phase := range []struct {
			name   string
			rerank int
			locale bool
		}{{"rrf", 0, false}, {"rrf-locale", 0, true}, {fmt.Sprintf("rerank%d", embedRerankN), embedRerankN, false}} {
			emb.e.Rerank = phase.rerank
			for i, q := range questions {
				t := rb.ask(b, slug, q, phase.locale, false)
				if out[i].Embeddings == nil {
					out[i].Embeddings = map[string]bool{}
				}
				out[i].Embeddings[emb.name+"-"+phase.name] = wholeIn(b, t.system, byKey[q.Answer])
			}
		}
		emb.e.Rerank = 0
		engine.Embeddings = nil
	}
}

// embeddingMeasure is a row of the table (reportRetrieval's measure).
type embeddingMeasure = struct {
	name, metric string
	hit          func(o retrievalOutcome) bool
}

// embeddingMeasures are the table's rows of the embedding phases that ran.
func embeddingMeasures(out []retrievalOutcome) []embeddingMeasure {
	var ms []embeddingMeasure
	for _, m := range []struct{ key, name string }{
		{"scripted-rrf", "scripted embedding server: prompt, RRF (shipped)"},
		{"scripted-rrf-locale", "scripted embedding server: prompt, RRF, visitor's locale sent"},
		{fmt.Sprintf("scripted-rerank%d", embedRerankN), fmt.Sprintf("scripted embedding server: prompt, lexical top %d reranked by cosine", embedRerankN)},
		{"real-rrf", "real endpoint: prompt, RRF (shipped)"},
		{"real-rrf-locale", "real endpoint: prompt, RRF, visitor's locale sent"},
		{fmt.Sprintf("real-rerank%d", embedRerankN), fmt.Sprintf("real endpoint: prompt, lexical top %d reranked by cosine", embedRerankN)},
	} {
		if len(out) == 0 || out[0].Embeddings == nil {
			break
		}
		if _, ran := out[0].Embeddings[m.key]; !ran {
			continue
		}
		key := m.key
		ms = append(ms, embeddingMeasure{name: m.name, metric: key, hit: func(o retrievalOutcome) bool { return o.Embeddings[key] }})
	}
	return ms
}

// embeddingNote is the report's line on the embedders measured.
func embeddingNote(out []retrievalOutcome) string {
	real := len(out) > 0 && out[0].Embeddings != nil && func() bool { _, ok := out[0].Embeddings["real-rrf"]; return ok }()
	if real {
		return "Embeddings: the scripted server (a bag of concepts, not a model) and the real endpoint of PARLEY_EMBEDDINGS_URL."
	}
	return "Embeddings: the scripted server only (a bag of concepts, not a model); set PARLEY_EMBEDDINGS_URL for a real endpoint."
}
