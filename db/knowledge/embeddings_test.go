package knowledge_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// embedEntry creates an entry of the tenant through the store.
func embedEntry(t *testing.T, store *db.DB, tenantID, title, content string, summary *string) parley.CorpusEntry {
	t.Helper()
	w := knowledge.CorpusWrite{Title: parley.Some(title), Content: parley.Some(content)}
	if summary != nil {
		w.Summary = parley.Some(*summary)
	}
	e, _, err := store.UpsertCorpus(context.Background(), tenantID, 1000, w)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The stored vectors (issue 34): what is left to embed, by tenant, model
// and text; saving and reading them, never across tenants.
func TestCorpusEmbeddings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	a, b := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	summary := "Flat tyres mended — « while you wait »"
	a1 := embedEntry(t, store, a.ID, "Puncture repair", "We fix a flat tyre while you wait: 15 €.", &summary)
	a2 := embedEntry(t, store, a.ID, "Saddle fitting", "A saddle adjusted to your sit bones.", nil)
	b1 := embedEntry(t, store, b.ID, "Opening hours", "Tuesday to Saturday.", nil)
	toEmbed := func(tenantID, model string) []knowledge.EntryToEmbed {
		t.Helper()
		es, err := store.EntriesToEmbed(ctx, tenantID, model, 100)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	ids := func(es []knowledge.EntryToEmbed) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }

	t.Run("TextAndHashAsParley", func(t *testing.T) {
		for _, e := range toEmbed(a.ID, "m1") {
			want := a1
			if e.ID == a2.ID {
				want = a2
			}
			if e.Text != parley.EmbeddingText(want.Title, want.Summary, want.Content) || !bytes.Equal(e.Hash, parley.EmbeddingHash(want)) {
				t.Errorf("entry %s: the database's text or hash is not parley's: %q", e.ID, e.Text)
			}
		}
	})

	es := toEmbed(a.ID, "m1")
	if got := ids(es); !slices.Equal(got, sorted(a1.ID, a2.ID)) {
		t.Fatalf("to embed %v, want tenant a's two entries", got)
	}
	vec := func(x float32) []float32 { return []float32{x, 1 - x, 0.25} }
	// Tenant b's entry slipped into a's save is skipped.
	withB := append(slices.Clone(es), knowledge.EntryToEmbed{ID: b1.ID, Hash: []byte("h")})
	if err := store.SaveEmbeddings(ctx, a.ID, "m1", withB, [][]float32{vec(0.5), vec(0.75), vec(1)}); err != nil {
		t.Fatal(err)
	}
	if got := toEmbed(a.ID, "m1"); len(got) != 0 {
		t.Errorf("still to embed after saving: %v", ids(got))
	}
	if got := ids(toEmbed(b.ID, "m1")); !slices.Equal(got, []string{b1.ID}) {
		t.Errorf("tenant b's to embed: %v", got)
	}
	if got := ids(toEmbed(a.ID, "m2")); len(got) != 2 {
		t.Errorf("another model's vectors count as missing: %v", got)
	}

	t.Run("ReadByTenant", func(t *testing.T) {
		vs, err := store.CorpusVectors(ctx, a.ID, "m1", []string{a1.ID, a2.ID, b1.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 {
			t.Fatalf("%d vectors, want tenant a's 2", len(vs))
		}
		for _, v := range vs {
			want := vec(0.5) // es[0]'s, es being by id
			if v.EntryID == es[1].ID {
				want = vec(0.75)
			}
			if !slices.Equal(v.Vector, want) || v.EntryID == b1.ID {
				t.Errorf("entry %s: vector %v, want %v", v.EntryID, v.Vector, want)
			}
		}
		if vs, err := store.CorpusVectors(ctx, b.ID, "m1", []string{a1.ID, b1.ID}); err != nil || len(vs) != 0 {
			t.Errorf("tenant b reads %d vectors (%v)", len(vs), err)
		}
		if vs, err := store.CorpusVectors(ctx, a.ID, "m2", []string{a1.ID}); err != nil || len(vs) != 0 {
			t.Errorf("another model's read: %d vectors (%v)", len(vs), err)
		}
	})

	t.Run("ChangedInactiveDeleted", func(t *testing.T) {
		c := embedEntry(t, store, a.ID, "Delivery", "Bikes delivered in three days.", nil)
		cs := toEmbed(a.ID, "m1")
		if got := ids(cs); !slices.Equal(got, []string{c.ID}) {
			t.Fatalf("to embed %v, want the new entry only", got)
		}
		if err := store.SaveEmbeddings(ctx, a.ID, "m1", cs, [][]float32{vec(0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.UpdateCorpus(ctx, a.ID, c.ID, knowledge.CorpusWrite{Content: parley.Some("Bikes delivered in two days.")}); err != nil {
			t.Fatal(err)
		}
		if got := ids(toEmbed(a.ID, "m1")); !slices.Equal(got, []string{c.ID}) {
			t.Errorf("after an edit, to embed %v", got)
		}
		if _, err := store.UpdateCorpus(ctx, a.ID, c.ID, knowledge.CorpusWrite{IsActive: parley.Some(false)}); err != nil {
			t.Fatal(err)
		}
		if got := toEmbed(a.ID, "m1"); len(got) != 0 {
			t.Errorf("an inactive entry is to embed: %v", ids(got))
		}
		if err := store.DeleteCorpus(ctx, a.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM corpus_embeddings WHERE entry_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("a deleted entry's vector stays: %d %v", n, err)
		}
	})

	t.Run("TenantsToEmbed", func(t *testing.T) {
		tenants, err := store.TenantsToEmbed(ctx, "m1", 100_000)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tenants, a.ID) || !slices.Contains(tenants, b.ID) {
			t.Errorf("a (all embedded) listed %v, b (one left) listed %v", slices.Contains(tenants, a.ID), slices.Contains(tenants, b.ID))
		}
	})
}

// A corpus write enqueues its tenant's embedding job, in its transaction,
// only when embeddings are on; a burst of writes leaves one job waiting.
func TestCorpusWritesEnqueueEmbedding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := dbtest.New(t)
	// A store of its own, on the test database's pool: EnableEmbeddings
	// must not reach the other tests.
	store, err := db.New(shared.Pool())
	if err != nil {
		t.Fatal(err)
	}
	store.EnableEmbeddings()
	jobs := func(tenantID string) int {
		t.Helper()
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed'
			AND args->>'tenant_id' = $1 AND queue = $2`, tenantID, knowledge.EmbedQueue).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	off := dbtest.NewTenant(t, shared)
	embedEntry(t, shared, off.ID, "Off", "Written by a store without embeddings.", nil)
	if n := jobs(off.ID); n != 0 {
		t.Errorf("embeddings off: %d jobs", n)
	}
	on := dbtest.NewTenant(t, store)
	e := embedEntry(t, store, on.ID, "First", "One.", nil)
	embedEntry(t, store, on.ID, "Second", "Two.", nil)
	if _, err := store.UpdateCorpus(ctx, on.ID, e.ID, knowledge.CorpusWrite{Content: parley.Some("One, again.")}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpsertCorpusBatch(ctx, on.ID, 1000, []knowledge.CorpusWrite{{Title: parley.Some("Third"), Content: parley.Some("Three.")}}); err != nil {
		t.Fatal(err)
	}
	if n := jobs(on.ID); n != 1 {
		t.Errorf("after four writes, %d jobs waiting, want 1", n)
	}
	// Done, the job no longer holds the next write back.
	if _, err := store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now()
		WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1`, on.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveCorpusSync(ctx, on.ID, e.ID, knowledge.CorpusSync{Content: "One, synced."}); err != nil {
		t.Fatal(err)
	}
	if n := jobs(on.ID); n != 2 {
		t.Errorf("a write after the job completed: %d jobs in all, want 2", n)
	}
}
