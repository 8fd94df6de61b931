package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley/db/dbtest"
)

// The scan rebuilds the lexicons of the tenants whose corpus moved, and
// only theirs.
func TestCorpusLexiconScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	tenant := func(content string) string {
		t.Helper()
		var id string
		err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
			VALUES ($1, 'T', 'scale', '\x00') RETURNING id`, fmt.Sprintf("lex-%d", time.Now().UnixNano())).Scan(&id)
		if err == nil && content != "" {
			_, err = store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'Entry', $2)`, id, content)
		}
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b, empty := tenant("Puncture repair while you wait"), tenant("Saddle fitting"), tenant("")
	built := func(id string) (version, state int64) {
		t.Helper()
		err := store.Pool().QueryRow(ctx, `SELECT t.config_version, coalesce(s.config_version, 0) FROM tenants t
			LEFT JOIN corpus_lexicon_state s ON s.tenant_id = t.id WHERE t.id = $1`, id).Scan(&version, &state)
		if err != nil {
			t.Fatal(err)
		}
		return version, state
	}
	work := func() {
		t.Helper()
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &CorpusLexiconScanWorker{DB: store})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		res, err := tw.Work(ctx, t, tx, CorpusLexiconScanArgs{}, nil)
		if err != nil || res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
	}
	work()
	for _, id := range []string{a, b} {
		if v, s := built(id); v != s {
			t.Errorf("tenant %s: lexicon at version %d, tenant at %d", id, s, v)
		}
	}
	if _, s := built(empty); s != 0 {
		t.Error("a tenant without entries got a lexicon")
	}
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM corpus_lexicon WHERE tenant_id = $1 AND lexeme = 'punctur'`, a).Scan(&n); err != nil || n != 1 {
		t.Errorf("tenant a's lexicon: %d, %v", n, err)
	}
	// Only b moves: only b is rebuilt.
	_, sa := built(a)
	if _, err := store.Pool().Exec(ctx, `UPDATE corpus_entries SET content = 'Saddle fitting and covers' WHERE tenant_id = $1`, b); err != nil {
		t.Fatal(err)
	}
	work()
	if _, s := built(a); s != sa {
		t.Error("an unchanged tenant's lexicon was rebuilt")
	}
	if v, s := built(b); v != s {
		t.Error("a changed tenant's lexicon was not rebuilt")
	}
}
