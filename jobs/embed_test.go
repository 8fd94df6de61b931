package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// The embedding job against the scripted embedding server (issue 34): new
// and changed entries are embedded, unchanged ones never sent again,
// another tenant's left alone; a failing endpoint fails the job for River
// to retry.
func TestEmbedCorpusWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	srv := llmtest.NewEmbeddings(t)
	embedder := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "concepts"})
	tenant := func(n int) string {
		t.Helper()
		var id string
		err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
			VALUES ($1, 'T', 'scale', '\x00') RETURNING id`, fmt.Sprintf("embed-%d", time.Now().UnixNano())).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, _, err := store.UpsertCorpus(ctx, id, 1000, knowledge.CorpusWrite{Title: parley.Some(fmt.Sprintf("Entry %d", i)),
				Content: parley.Some(fmt.Sprintf("Entry number %d of tenant %s.", i, id))}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	a, b := tenant(70), tenant(3)
	work := func(tenantID string) (*rivertest.WorkResult, error) {
		t.Helper()
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &EmbedCorpusWorker{DB: store, Embeddings: Embeddings{Operator: embedder}})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		return tw.Work(ctx, t, tx, knowledge.EmbedCorpusArgs{TenantID: tenantID}, nil)
	}
	stored := func(tenantID string) map[string][]byte {
		t.Helper()
		rows, err := store.Pool().Query(ctx, `SELECT entry_id::text, text_hash FROM corpus_embeddings WHERE tenant_id = $1 AND model = 'concepts'`, tenantID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]byte{}
		for rows.Next() {
			var id string
			var h []byte
			if err := rows.Scan(&id, &h); err != nil {
				t.Fatal(err)
			}
			out[id] = h
		}
		return out
	}

	res, err := work(a)
	if err != nil || res.EventKind != river.EventKindJobCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if n := len(stored(a)); n != 70 {
		t.Errorf("%d of tenant a's 70 entries embedded", n)
	}
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	if !slices.Equal(sizes, []int{64, 6}) {
		t.Errorf("requests of %v inputs, want [64 6]", sizes)
	}
	if n := len(stored(b)); n != 0 {
		t.Errorf("tenant b's job was not run, yet %d of its entries are embedded", n)
	}

	// One entry changed, one added: those two alone are sent.
	entries, err := store.ListCorpus(ctx, a, knowledge.CorpusQuery{Page: 1, Limit: 1})
	if err != nil || len(entries.Entries) != 1 {
		t.Fatalf("%v %+v", err, entries)
	}
	changed := entries.Entries[0]
	before := stored(a)[changed.ID]
	if _, err := store.UpdateCorpus(ctx, a, changed.ID, knowledge.CorpusWrite{Content: parley.Some("How much does a bicycle cost?")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.UpsertCorpus(ctx, a, 1000, knowledge.CorpusWrite{Title: parley.Some("Added"), Content: parley.Some("Added later.")}); err != nil {
		t.Fatal(err)
	}
	sent := len(srv.Inputs())
	if _, err := work(a); err != nil {
		t.Fatal(err)
	}
	again := srv.Inputs()[sent:]
	slices.Sort(again)
	if len(again) != 2 || !strings.Contains(again[0], "Added later.") || !strings.Contains(again[1], "How much does a bicycle cost?") {
		t.Errorf("sent again %q, want the changed and the added entry only", again)
	}
	if after := stored(a); len(after) != 71 || string(after[changed.ID]) == string(before) {
		t.Errorf("%d stored; the changed entry's hash moved: %v", len(after), string(after[changed.ID]) != string(before))
	}
	sent = len(srv.Inputs())
	if _, err := work(a); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Inputs()) - sent; n != 0 {
		t.Errorf("nothing changed, yet %d entries were sent", n)
	}

	t.Run("OtherTenantUntouched", func(t *testing.T) {
		bBefore := stored(b)
		if _, err := work(b); err != nil {
			t.Fatal(err)
		}
		if n := len(stored(b)); n != 3 || len(bBefore) != 0 {
			t.Errorf("tenant b: %d embedded", n)
		}
		if n := len(stored(a)); n != 71 {
			t.Errorf("tenant b's job changed tenant a's vectors: %d", n)
		}
	})

	t.Run("EndpointFailsTheJob", func(t *testing.T) {
		c := tenant(2)
		srv.Fail(503, "The engine is currently overloaded")
		_, err := work(c)
		srv.Fail(0, "")
		if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "overloaded") {
			t.Errorf("%v", err)
		}
		if n := len(stored(c)); n != 0 {
			t.Errorf("%d embedded", n)
		}
		if _, err := work(c); err != nil {
			t.Fatal(err)
		}
		if n := len(stored(c)); n != 2 {
			t.Errorf("the retry embedded %d of 2", n)
		}
	})

	t.Run("BudgetSnoozes", func(t *testing.T) {
		c := tenant(3)
		w := &EmbedCorpusWorker{DB: store, Embeddings: Embeddings{Operator: embedder}}
		n, done, err := w.EmbedTenant(ctx, c, 0)
		if err != nil || done || n != 0 {
			t.Errorf("no budget: %d embedded, done %v, %v", n, done, err)
		}
		if n, done, err := w.EmbedTenant(ctx, c, time.Minute); err != nil || !done || n != 3 {
			t.Errorf("%d embedded, done %v, %v", n, done, err)
		}
	})

	t.Run("ScanEnqueues", func(t *testing.T) {
		d := tenant(1)
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &EmbedScanWorker{DB: store, Operator: embedder})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if res, err := tw.Work(ctx, t, tx, EmbedScanArgs{}, nil); err != nil || res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		count := func(id string) int {
			var n int
			if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if count(d) != 1 || count(a) != 0 {
			t.Errorf("jobs: new tenant %d, embedded tenant %d", count(d), count(a))
		}
	})
}
