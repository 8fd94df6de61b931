package parley_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
)

// The rules of a tenant's MCP server and embedding endpoint saves: limits
// at N and N+1, the URL's address vetted after its syntax, the key's https
// rule against what is stored, and the surface's problems first.
func TestSettingsRules(t *testing.T) {
	t.Parallel()
	private := func(u string) string {
		if strings.Contains(u, "192.168.") {
			return "refused: a private address"
		}
		return ""
	}
	mcp := func(in parley.MCPSettingsInput) parley.FieldErrors { return in.Check(private) }
	for name, c := range map[string]struct {
		errs  parley.FieldErrors
		field string
		want  string
	}{
		"MCPOK":           {mcp(parley.MCPSettingsInput{URL: parley.Some("https://tools.example.com/mcp"), MaxTools: parley.Some(parley.MaxMCPTools)}), "", ""},
		"MCPNoURL":        {mcp(parley.MCPSettingsInput{}), "mcpToolsUrl", "is required"},
		"MCPHTTP":         {mcp(parley.MCPSettingsInput{URL: parley.Some("http://tools.example.com/mcp")}), "mcpToolsUrl", "must use https"},
		"MCPPrivate":      {mcp(parley.MCPSettingsInput{URL: parley.Some("https://192.168.1.2/mcp")}), "mcpToolsUrl", "refused"},
		"MCPTooMany":      {mcp(parley.MCPSettingsInput{URL: parley.Some("https://x.example"), MaxTools: parley.Some(parley.MaxMCPTools + 1)}), "mcpToolsMaxTools", "between 1 and 20"},
		"MCPKeyAtLimit":   {mcp(parley.MCPSettingsInput{URL: parley.Some("https://x.example"), APIKey: parley.Some(strings.Repeat("k", parley.MaxMCPAPIKey))}), "", ""},
		"MCPKeyPast":      {mcp(parley.MCPSettingsInput{URL: parley.Some("https://x.example"), APIKey: parley.Some(strings.Repeat("k", parley.MaxMCPAPIKey+1))}), "mcpToolsApiKey", "at most 500"},
		"MCPProblemFirst": {mcp(parley.MCPSettingsInput{Problems: parley.FieldErrors{"mcpToolsUrl": "remove the configuration instead"}}), "mcpToolsUrl", "remove the configuration"},
	} {
		if c.field == "" {
			if len(c.errs) != 0 {
				t.Errorf("%s: %v", name, c.errs)
			}
		} else if !strings.Contains(c.errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q", name, c.field, c.errs[c.field], c.want)
		}
	}

	emb := func(in parley.EmbeddingsInput, stored bool) parley.FieldErrors { return in.Check(stored, private) }
	ok := func(edit func(*parley.EmbeddingsInput)) parley.EmbeddingsInput {
		in := parley.EmbeddingsInput{URL: parley.Some(" https://embed.example.com/v1 "), Model: parley.Some(" text-embedding-3-small ")}
		edit(&in)
		return in
	}
	for name, c := range map[string]struct {
		errs  parley.FieldErrors
		field string
		want  string
	}{
		"OK":          {emb(ok(func(*parley.EmbeddingsInput) {}), false), "", ""},
		"DimsAtLimit": {emb(ok(func(in *parley.EmbeddingsInput) { in.Dimensions = parley.Some(parley.MaxEmbeddingsDims) }), false), "", ""},
		"DimsPast":    {emb(ok(func(in *parley.EmbeddingsInput) { in.Dimensions = parley.Some(parley.MaxEmbeddingsDims + 1) }), false), "embeddingsDimensions", "between 1 and 8192"},
		"ModelPast": {emb(ok(func(in *parley.EmbeddingsInput) {
			in.Model = parley.Some(strings.Repeat("m", parley.MaxEmbeddingsModel+1))
		}), false), "embeddingsModel", "at most 200"},
		"HTTPKeyStored": {emb(ok(func(in *parley.EmbeddingsInput) { in.URL = parley.Some("http://embed.example.com/v1") }), true), "embeddingsUrl", "must use https while an API key is set"},
		"HTTPKeyRemoved": {emb(ok(func(in *parley.EmbeddingsInput) {
			in.URL, in.APIKey = parley.Some("http://embed.example.com/v1"), parley.Some("")
		}), true), "", ""},
		"HTTPNewKey": {emb(ok(func(in *parley.EmbeddingsInput) {
			in.URL, in.APIKey = parley.Some("http://embed.example.com/v1"), parley.Some("sk-1")
		}), false), "embeddingsUrl", "must use https"},
		"PrivateBeforeKey": {emb(ok(func(in *parley.EmbeddingsInput) {
			in.URL, in.APIKey = parley.Some("http://192.168.1.2/v1"), parley.Some("sk-1")
		}), false), "embeddingsUrl", "refused"},
	} {
		if c.field == "" {
			if len(c.errs) != 0 {
				t.Errorf("%s: %v", name, c.errs)
			}
		} else if !strings.Contains(c.errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q", name, c.field, c.errs[c.field], c.want)
		}
	}
	in := ok(func(*parley.EmbeddingsInput) {})
	in.Check(false, nil)
	if in.URL.Value != "https://embed.example.com/v1" || in.Model.Value != "text-embedding-3-small" {
		t.Errorf("not trimmed: %q %q", in.URL.Value, in.Model.Value)
	}
}
