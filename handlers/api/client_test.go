package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/parley/parley/clients/parleyclient"
	"github.com/parley/parley/web/webtest"
)

// TestGeneratedGoClient runs the Go client generated from the document
// (clients/parleyclient, make clients) against a running server, as an
// integrator's program would: typed writes and reads, and typed errors. Its
// HTTP client is the test server's, which also checks every exchange
// against openapi.json.
func TestGeneratedGoClient(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	ctx := t.Context()
	client := func(token string) *parleyclient.ClientWithResponses {
		c, err := parleyclient.NewClientWithResponses(b.TS.URL,
			parleyclient.WithHTTPClient(b.TS.Client()),
			parleyclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+token)
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := client(ten.Token)

	seg, err := c.CreateSegmentWithResponse(ctx, ten.Slug, nil, parleyclient.CreateSegmentJSONRequestBody{
		Name:         "Sales team",
		SystemPrompt: "You sell the Team plan.",
	})
	if err != nil || seg.StatusCode() != http.StatusCreated || seg.JSON201 == nil {
		t.Fatalf("create segment: %v %v %s", err, seg.Status(), seg.Body)
	}
	if seg.JSON201.Slug != "sales-team" || !seg.JSON201.IsActive || seg.JSON201.IsDefault {
		t.Errorf("created segment = %+v", *seg.JSON201)
	}

	// Created with an Idempotency-Key, and sent again with it: the first
	// answer again, one entry.
	hours := parleyclient.CorpusEntryCreate{
		Title:       "Opening hours",
		Content:     "We answer from 9:00 to 18:00, Monday to Friday.",
		Tags:        &[]string{"hours", "faq"},
		Priority:    new(7),
		SegmentSlug: new("sales-team"),
	}
	once := &parleyclient.CreateCorpusEntryParams{IdempotencyKey: new(parleyclient.IdempotencyKey("6f1c2a4e-8b9d-4f3a-9c1e-2d7b5a0e4f11"))}
	created, err := c.CreateCorpusEntryWithResponse(ctx, ten.Slug, once, hours)
	if err != nil || created.StatusCode() != http.StatusCreated || created.JSON201 == nil {
		t.Fatalf("create entry: %v %v %s", err, created.Status(), created.Body)
	}
	entry := created.JSON201.Corpus
	again, err := c.CreateCorpusEntryWithResponse(ctx, ten.Slug, once, hours)
	if err != nil || again.StatusCode() != http.StatusCreated || again.JSON201 == nil || *again.JSON201.Corpus.Id != *entry.Id ||
		again.HTTPResponse.Header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("the create sent again with its key: %v %v %v %s", err, again.Status(), again.HTTPResponse.Header, again.Body)
	}
	if !created.JSON201.Created || entry.Id == nil || entry.Title != "Opening hours" || entry.Priority != 7 ||
		!slices.Equal(entry.Tags, []string{"hours", "faq"}) || entry.Segment == nil || entry.Segment.Slug != "sales-team" {
		t.Errorf("created entry = %+v (segment %+v)", entry, entry.Segment)
	}

	list, err := c.ListCorpusWithResponse(ctx, ten.Slug, &parleyclient.ListCorpusParams{Search: new("opening"), Limit: new(10)})
	if err != nil || list.StatusCode() != http.StatusOK || list.JSON200 == nil {
		t.Fatalf("list: %v %v %s", err, list.Status(), list.Body)
	}
	page := list.JSON200
	if page.Pagination.Total != 1 || page.Pagination.Limit != 10 || len(page.Corpus) != 1 || *page.Corpus[0].Id != *entry.Id {
		t.Errorf("list = %+v", *page)
	}

	segments, err := c.ListSegmentsWithResponse(ctx, ten.Slug)
	if err != nil || segments.JSON200 == nil {
		t.Fatalf("segments: %v %s", err, segments.Body)
	}
	counts := map[string]int{}
	for _, s := range *segments.JSON200 {
		counts[s.Slug] = s.CorpusCount
	}
	if len(counts) != 2 || counts["sales-team"] != 1 {
		t.Errorf("segments' corpus counts = %v, want the default and sales-team with 1", counts)
	}

	t.Run("TypedErrors", func(t *testing.T) {
		bad, err := c.CreateCorpusEntryWithResponse(ctx, ten.Slug, nil, parleyclient.CorpusEntryCreate{Title: " ", Content: "x"})
		if err != nil || bad.StatusCode() != http.StatusBadRequest || bad.JSON400 == nil || bad.JSON400.Details == nil || (*bad.JSON400.Details)["title"] == "" {
			t.Errorf("blank title: %v %v %s", err, bad.Status(), bad.Body)
		}
		missing, err := c.GetCorpusEntryWithResponse(ctx, ten.Slug, uuid.New())
		if err != nil || missing.JSON404 == nil || missing.JSON404.Error != "Corpus entry not found" {
			t.Errorf("unknown entry: %v %v %s", err, missing.Status(), missing.Body)
		}
		// Another tenant's credential: the tenant does not exist for it.
		other := b.NewTenant(t, "scale")
		foreign, err := client(other.Token).GetCorpusEntryWithResponse(ctx, ten.Slug, *entry.Id)
		if err != nil || foreign.JSON404 == nil || foreign.JSON404.Error != "Tenant not found" {
			t.Errorf("another tenant's token: %v %v %s", err, foreign.Status(), foreign.Body)
		}
	})
}
