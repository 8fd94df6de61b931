package knowledge_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// A tenant's own embedding endpoint (issue 34): saving it enqueues the
// tenant's job at once; its writes enqueue their job with the operator's
// endpoint off; the scan reads each tenant's model; the status counts what
// is embedded with a model; the job's outcome is kept.
func TestTenantEmbeddingSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A store of its own over the test database's pool, the operator's
	// endpoint off (as the shared store is): tests that enable it run
	// their own.
	store := dbtest.New(t)
	own, plain := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	jobs := func(tenantID string) int {
		t.Helper()
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed'
			AND args->>'tenant_id' = $1 AND state = 'available'`, tenantID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	done := func(tenantID string) {
		t.Helper()
		if _, err := store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now()
			WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1`, tenantID); err != nil {
			t.Fatal(err)
		}
	}
	a1 := embedEntry(t, store, own.ID, "Puncture repair", "We fix a flat tyre while you wait.", nil)
	embedEntry(t, store, plain.ID, "Opening hours", "Tuesday to Saturday.", nil)
	if jobs(own.ID)+jobs(plain.ID) != 0 {
		t.Fatal("no endpoint anywhere, and a write enqueued an embedding job")
	}

	dims := 256
	key := []byte("sealed-key")
	s, err := store.SaveEmbeddingSettings(ctx, own.ID, "https://embed.example.com/v1", "text-embedding-3-small", &dims, parley.Some(key))
	if err != nil {
		t.Fatal(err)
	}
	if *s.URL != "https://embed.example.com/v1" || *s.Model != "text-embedding-3-small" || *s.Dimensions != 256 || string(s.SealedAPIKey) != "sealed-key" {
		t.Fatalf("saved %+v", s)
	}
	if s.ModelKey() != "text-embedding-3-small@256" {
		t.Errorf("model key %q", s.ModelKey())
	}
	if n := jobs(own.ID); n != 1 {
		t.Errorf("saving the endpoint enqueued %d jobs, want 1", n)
	}
	done(own.ID)

	t.Run("WritesEnqueue", func(t *testing.T) {
		embedEntry(t, store, own.ID, "Saddle fitting", "A saddle adjusted to your sit bones.", nil)
		embedEntry(t, store, plain.ID, "Delivery", "Three days.", nil)
		if jobs(own.ID) != 1 || jobs(plain.ID) != 0 {
			t.Errorf("jobs after a write each: own %d (want 1), plain %d (want 0)", jobs(own.ID), jobs(plain.ID))
		}
		done(own.ID)
	})

	t.Run("ModelKeyAsParley", func(t *testing.T) {
		for _, d := range []*int{nil, &dims} {
			if _, err := store.SaveEmbeddingSettings(ctx, own.ID, "https://embed.example.com/v1", "m", d, parley.Opt[[]byte]{}); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := store.Pool().QueryRow(ctx, `SELECT CASE WHEN t.embeddings_dimensions IS NULL THEN t.embeddings_model
				ELSE t.embeddings_model || '@' || t.embeddings_dimensions END FROM tenants t WHERE id = $1`, own.ID).Scan(&got); err != nil {
				t.Fatal(err)
			}
			n := 0
			if d != nil {
				n = *d
			}
			if want := parley.EmbeddingModelKey("m", n); got != want {
				t.Errorf("SQL names the model %q, parley %q", got, want)
			}
		}
		kept, err := store.EmbeddingSettings(ctx, own.ID)
		if err != nil || string(kept.SealedAPIKey) != "sealed-key" {
			t.Errorf("a save without a key change lost the key: %q %v", kept.SealedAPIKey, err)
		}
		if _, err := store.SaveEmbeddingSettings(ctx, own.ID, "https://embed.example.com/v1", "text-embedding-3-small", &dims, parley.Opt[[]byte]{}); err != nil {
			t.Fatal(err)
		}
		done(own.ID)
	})

	t.Run("ScanReadsEachTenantsModel", func(t *testing.T) {
		scan := func(operator string) []string {
			t.Helper()
			ts, err := store.TenantsToEmbed(ctx, operator, 100_000)
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}
		if got := scan(""); !slices.Contains(got, own.ID) || slices.Contains(got, plain.ID) {
			t.Errorf("operator off: own listed %v, plain listed %v", slices.Contains(got, own.ID), slices.Contains(got, plain.ID))
		}
		if got := scan("operator-model"); !slices.Contains(got, own.ID) || !slices.Contains(got, plain.ID) {
			t.Errorf("operator on: own listed %v, plain listed %v", slices.Contains(got, own.ID), slices.Contains(got, plain.ID))
		}
		// Every entry of own embedded with the operator's model: still to
		// embed with its own.
		es, err := store.EntriesToEmbed(ctx, own.ID, "operator-model", 100)
		if err != nil {
			t.Fatal(err)
		}
		vs := make([][]float32, len(es))
		for i := range vs {
			vs[i] = []float32{1, 0}
		}
		if err := store.SaveEmbeddings(ctx, own.ID, "operator-model", es, vs); err != nil {
			t.Fatal(err)
		}
		if got := scan("operator-model"); !slices.Contains(got, own.ID) {
			t.Error("vectors of the operator's model count for a tenant with its own endpoint")
		}
		if err := store.SaveEmbeddings(ctx, own.ID, "text-embedding-3-small@256", es, vs); err != nil {
			t.Fatal(err)
		}
		if got := scan("operator-model"); slices.Contains(got, own.ID) {
			t.Error("every entry embedded with the tenant's model, and it is still listed")
		}
	})

	t.Run("Status", func(t *testing.T) {
		const model = "text-embedding-3-small@256"
		st, err := store.EmbeddingStatus(ctx, own.ID, model)
		if err != nil || st.Entries != 2 || st.Embedded != 2 || st.LastError != nil {
			t.Fatalf("status %+v (%v), want 2 of 2, no error", st, err)
		}
		if _, err := store.UpdateCorpus(ctx, own.ID, a1.ID, knowledge.CorpusWrite{Content: parley.Some("We fix it in an hour.")}); err != nil {
			t.Fatal(err)
		}
		if st, _ := store.EmbeddingStatus(ctx, own.ID, model); st.Embedded != 1 {
			t.Errorf("after an edit, %d embedded, want 1", st.Embedded)
		}
		if st, _ := store.EmbeddingStatus(ctx, plain.ID, model); st.Entries != 2 || st.Embedded != 0 {
			t.Errorf("the other tenant's status reads %+v", st)
		}
		if err := store.RecordEmbedOutcome(ctx, own.ID, model, false, errors.New("embedding endpoint answered 401: Incorrect API key")); err != nil {
			t.Fatal(err)
		}
		st, _ = store.EmbeddingStatus(ctx, own.ID, model)
		if st.LastError == nil || *st.LastError != "embedding endpoint answered 401: Incorrect API key" || st.FailedAt == nil || st.EmbeddedAt != nil {
			t.Errorf("after a failure: %+v", st)
		}
		if other, _ := store.EmbeddingStatus(ctx, own.ID, "another@1"); other.LastError != nil {
			t.Error("another model's status shows this model's failure")
		}
		if err := store.RecordEmbedOutcome(ctx, own.ID, model, true, nil); err != nil {
			t.Fatal(err)
		}
		st, _ = store.EmbeddingStatus(ctx, own.ID, model)
		if st.LastError != nil || st.FailedAt != nil || st.EmbeddedAt == nil {
			t.Errorf("after a success: %+v", st)
		}
	})

	t.Run("Clear", func(t *testing.T) {
		done(own.ID) // the edit of Status enqueued one
		if err := store.ClearEmbeddingSettings(ctx, own.ID); err != nil {
			t.Fatal(err)
		}
		s, err := store.EmbeddingSettings(ctx, own.ID)
		if err != nil || s.URL != nil || s.SealedAPIKey != nil || s.Model != nil || s.Dimensions != nil || s.ModelKey() != "" {
			t.Errorf("cleared: %+v (%v)", s, err)
		}
		if n := jobs(own.ID); n != 0 {
			t.Errorf("cleared with the operator's endpoint off: %d jobs", n)
		}
		embedEntry(t, store, own.ID, "After", "Written after the endpoint went.", nil)
		if n := jobs(own.ID); n != 0 {
			t.Errorf("a write after the endpoint went enqueued %d jobs", n)
		}
	})
}
