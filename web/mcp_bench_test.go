package web_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// BenchmarkMCPToolCall is one tools/call (read_corpus_entry) through the
// official client, each answered by a server built for its request (the
// stateless mode), beside the REST read of the same entry: the difference
// is what the MCP layer costs.
func BenchmarkMCPToolCall(b *testing.B) {
	ctx := context.Background()
	store, _, ts, p := webtest.NewBench(b, parley.NewTenantInput{Slug: "mcp-bench", Name: "MCP bench", Plan: "builder"})
	tok, nt := auth.NewToken(p.ID, "bench", []string{auth.ScopeCorpusRead, auth.ScopeCorpusWrite}, false)
	if _, err := store.CreateToken(ctx, nt); err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: webtest.HeaderTransport{Name: "Authorization", Value: "Bearer " + tok, Base: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_corpus_entry", Arguments: map[string]any{"title": "Hours", "content": "Nine to five."}})
	if err != nil || res.IsError {
		b.Fatal(err, res)
	}
	id := res.StructuredContent.(map[string]any)["corpus"].(map[string]any)["id"].(string)

	b.Run("mcp", func(b *testing.B) {
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_corpus_entry", Arguments: map[string]any{"id": id}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("rest", func(b *testing.B) {
		for b.Loop() {
			req, _ := http.NewRequest("GET", ts.URL+"/tenants/mcp-bench/corpus/"+id, nil)
			resp, err := hc.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(err, resp)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
