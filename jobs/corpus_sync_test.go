package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/fetch/fetchtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// allowLoopback is the guarded client of tests: httptest servers listen on 127.0.0.1.
var allowLoopback = outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, nil)

// syncFixture is a tenant with one synced entry whose URL ts serves.
type syncFixture struct {
	store    *db.DB
	tenantID string
	entry    parley.CorpusEntry
}

var slugSeq atomic.Int64

func newSyncFixture(t *testing.T, url string, etag string) syncFixture {
	t.Helper()
	store := dbtest.New(t)
	ctx := context.Background()
	var tenantID string
	slug := fmt.Sprintf("jobs-%d-%d", time.Now().UnixNano()%1_000_000_000, slugSeq.Add(1))
	if err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
		VALUES ($1, 'Jobs test', 'scale', '\x00') RETURNING id`, slug).Scan(&tenantID); err != nil {
		t.Fatal(err)
	}
	e, res, err := store.SyncCorpus(ctx, tenantID, 100, url, knowledge.CorpusWrite{}, knowledge.CorpusSync{
		Title: "Page", Content: "old content", ETag: etag, At: time.Now().Add(-48 * time.Hour)})
	if err != nil || res != knowledge.Created {
		t.Fatal(res, err)
	}
	return syncFixture{store: store, tenantID: tenantID, entry: e}
}

func (f syncFixture) reload(t *testing.T) parley.CorpusEntry {
	t.Helper()
	e, err := f.store.CorpusEntry(context.Background(), f.tenantID, f.entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f syncFixture) work(t *testing.T) {
	t.Helper()
	w := &CorpusSyncWorker{DB: f.store, Client: allowLoopback.Client(5 * time.Second)}
	if err := w.Work(context.Background(), &river.Job[CorpusSyncArgs]{Args: CorpusSyncArgs{TenantID: f.tenantID, EntryID: f.entry.ID}}); err != nil {
		t.Fatal(err)
	}
}

func TestCorpusSyncWorker(t *testing.T) {
	t.Parallel()

	t.Run("SuccessUpdatesContent", func(t *testing.T) {
		t.Parallel()
		var gotINM atomic.Value
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gotINM.Store(r.Header.Get("If-None-Match"))
			w.Header().Set("ETag", `"new"`)
			w.Header().Set("Content-Type", "text/markdown")
			_, _ = w.Write([]byte("# Renamed upstream\n\nnew content"))
		}))
		t.Cleanup(ts.Close)
		f := newSyncFixture(t, ts.URL+"/page", `"old"`)
		if err := f.store.RecordCorpusSyncError(context.Background(), f.tenantID, f.entry.ID, "earlier failure", time.Now()); err != nil {
			t.Fatal(err)
		}
		f.work(t)
		e := f.reload(t)
		if gotINM.Load() != `"old"` {
			t.Errorf("If-None-Match sent: %v", gotINM.Load())
		}
		if e.Content != "# Renamed upstream\n\nnew content" || e.Title != "Page" || deref(e.SyncETag) != `"new"` {
			t.Errorf("entry: title %q content %q etag %v", e.Title, e.Content, deref(e.SyncETag))
		}
		if e.SyncError != nil || e.SyncErrorAt != nil || e.SyncedAt == nil || time.Since(*e.SyncedAt) > time.Minute {
			t.Errorf("sync state: %v %v %v", e.SyncError, e.SyncErrorAt, e.SyncedAt)
		}
		if !e.UpdatedAt.After(f.entry.UpdatedAt) {
			t.Errorf("updated_at did not move")
		}
	})

	t.Run("NotModifiedBumpsSyncedAt", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-None-Match") == `"same"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			_, _ = w.Write([]byte("unexpected full answer"))
		}))
		t.Cleanup(ts.Close)
		f := newSyncFixture(t, ts.URL, `"same"`)
		f.work(t)
		e := f.reload(t)
		if e.Content != "old content" || !e.UpdatedAt.Equal(f.entry.UpdatedAt) || deref(e.SyncETag) != `"same"` {
			t.Errorf("entry changed: %q %v %v", e.Content, e.UpdatedAt, deref(e.SyncETag))
		}
		if e.SyncedAt == nil || !e.SyncedAt.After(*f.entry.SyncedAt) || time.Since(*e.SyncedAt) > time.Minute {
			t.Errorf("synced_at %v (was %v)", e.SyncedAt, f.entry.SyncedAt)
		}
	})

	t.Run("FailureKeepsContentAndRecordsError", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}))
		t.Cleanup(ts.Close)
		f := newSyncFixture(t, ts.URL, "")
		f.work(t)
		e := f.reload(t)
		if e.Content != "old content" || !e.SyncedAt.Equal(*f.entry.SyncedAt) {
			t.Errorf("entry changed: %q %v", e.Content, e.SyncedAt)
		}
		if e.SyncError == nil || *e.SyncError != "127.0.0.1 answered HTTP 500 Internal Server Error" || e.SyncErrorAt == nil {
			t.Errorf("sync error %v at %v", e.SyncError, e.SyncErrorAt)
		}
	})

	t.Run("DeletedEntrySkipped", func(t *testing.T) {
		t.Parallel()
		f := newSyncFixture(t, "http://127.0.0.1:1/", "")
		if err := f.store.DeleteCorpus(context.Background(), f.tenantID, f.entry.ID); err != nil {
			t.Fatal(err)
		}
		f.work(t)
	})

	t.Run("OtherTenantsEntryUntouched", func(t *testing.T) {
		t.Parallel()
		page := fetchtest.Start(t).Set("/", fetchtest.Page{ContentType: "text/plain", Body: "fresh"})
		f := newSyncFixture(t, page, "")
		g := newSyncFixture(t, page, "")
		w := &CorpusSyncWorker{DB: f.store, Client: allowLoopback.Client(5 * time.Second)}
		// f's tenant with g's entry id: nothing to refresh.
		if err := w.Work(context.Background(), &river.Job[CorpusSyncArgs]{Args: CorpusSyncArgs{TenantID: f.tenantID, EntryID: g.entry.ID}}); err != nil {
			t.Fatal(err)
		}
		if e := g.reload(t); e.Content != "old content" {
			t.Errorf("other tenant's entry refreshed: %q", e.Content)
		}
	})
}

func TestCorpusSyncScan(t *testing.T) {
	t.Parallel()
	site := fetchtest.Start(t)
	due := newSyncFixture(t, site.Set("/due", fetchtest.Page{ContentType: "text/plain", Body: "x"}), "")
	fresh := newSyncFixture(t, site.Set("/fresh", fetchtest.Page{ContentType: "text/plain", Body: "x"}), "")
	ctx := context.Background()
	if _, err := fresh.store.Pool().Exec(ctx, `UPDATE corpus_entries SET synced_at = now() WHERE id = $1`, fresh.entry.ID); err != nil {
		t.Fatal(err)
	}

	t.Run("DueList", func(t *testing.T) {
		list, err := due.store.DueCorpusSyncs(ctx, time.Now().Add(-RefreshAfter), 1000)
		if err != nil {
			t.Fatal(err)
		}
		var sawDue, sawFresh bool
		for _, d := range list {
			sawDue = sawDue || d.ID == due.entry.ID && d.TenantID == due.tenantID
			sawFresh = sawFresh || d.ID == fresh.entry.ID
		}
		if !sawDue || sawFresh {
			t.Errorf("due %v fresh %v in %v", sawDue, sawFresh, list)
		}
	})

	t.Run("QueuesRefreshJobs", func(t *testing.T) {
		store := due.store
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &CorpusSyncScanWorker{DB: store})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		res, err := tw.Work(ctx, t, tx, CorpusSyncScanArgs{}, nil)
		if err != nil || res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		count := func(id string) int {
			var n int
			if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_sync' AND args->>'entry_id' = $1`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if count(due.entry.ID) != 1 || count(fresh.entry.ID) != 0 {
			t.Errorf("jobs: due %d fresh %d", count(due.entry.ID), count(fresh.entry.ID))
		}
	})

	t.Run("RefreshJobsAreUnique", func(t *testing.T) {
		client, err := NewClient(due.store, nil, allowLoopback, Mail{}, Embeddings{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Timing{}, Observers{})
		if err != nil {
			t.Fatal(err)
		}
		args := []river.InsertManyParams{{Args: CorpusSyncArgs{TenantID: due.tenantID, EntryID: "00000000-0000-0000-0000-00000000abcd"}}}
		first, err := client.InsertMany(ctx, args)
		if err != nil || first[0].UniqueSkippedAsDuplicate {
			t.Fatalf("first insert: %v %+v", err, first)
		}
		second, err := client.InsertMany(ctx, args)
		if err != nil || !second[0].UniqueSkippedAsDuplicate || second[0].Job.ID != first[0].Job.ID {
			t.Fatalf("second insert of the same refresh in the hour: %v %+v", err, second)
		}
	})
}
