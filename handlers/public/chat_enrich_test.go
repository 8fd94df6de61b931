package public_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// The enrichment chain through real chat requests: the segment's active
// tools (dbTools), RECOMMEND_PRODUCT only once the catalog has an active
// product (enrichProducts), EXPLORE_CORPUS only once the knowledge base has
// summarized entries (enrichCorpus); and the three tools run for real: the
// quote priced from the tool's price list, the recommendation and the
// entry's full text read from the tenant's data.
func TestChatEnrichmentChain(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	st, seg := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Support", "systemPrompt": "You help customers with their orders."})
	if st != 201 {
		t.Fatalf("segment: %d %v", st, seg)
	}
	for _, tool := range []map[string]any{
		{"name": "Catalog", "description": "Find products", "type": "RECOMMEND_PRODUCT"},
		{"name": "Quote", "description": "Price an order", "type": "GENERATE_QUOTE", "config": map[string]any{
			"currency": "EUR", "taxRate": 20, "validityDays": 30,
			"items": []any{map[string]any{"name": "Widget", "unitPrice": 12.5, "currency": "EUR"}}}},
		{"name": "Support form", "description": "Open a ticket", "type": "SUBMIT_FORM", "segmentId": seg["id"],
			"config": map[string]any{"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}},
		{"name": "Old quote", "description": "Retired", "type": "GENERATE_QUOTE", "isActive": false, "config": map[string]any{
			"currency": "EUR", "items": []any{map[string]any{"name": "Gadget", "unitPrice": 1, "currency": "EUR"}}}},
	} {
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, tool); st != 201 {
			t.Fatalf("tool %v: %d %v", tool["name"], st, body)
		}
	}

	// No product, no summary: the default segment gets the quote tool alone,
	// priced by the service whatever the model thinks.
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_q", Name: "quote", Arguments: []string{`{"items":[{"name":"Widget","quantity":4}]}`}}}},
		llmtest.Turn{Text: []string{"That is 60 EUR."}},
	)
	r := b.Chat(t, path, map[string]any{"message": "Price 4 widgets", "sessionId": "enrich-1"}, webtest.AgentHeaders)
	if r.Status != 200 || r.Body["message"] != "That is 60 EUR." {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	if got := webtest.OfferedTools(reqs[0]); !slices.Equal(got, []string{"quote"}) {
		t.Errorf("offered %v without products or summaries, want [quote]", got)
	}
	if res := webtest.ToolResults(reqs[1]); len(res) != 1 || !strings.Contains(res[0], "total 60.00 EUR") || !strings.Contains(res[0], "subtotal 50.00") {
		t.Errorf("quote result fed to the model: %v", res)
	}

	// The other segment adds its form.
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, path+"?segment="+seg["slug"].(string), map[string]any{"message": "Hi", "sessionId": "enrich-2"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs = llm.Requests()
	if got := webtest.OfferedTools(reqs[len(reqs)-1]); !slices.Equal(got, []string{"quote", "support_form"}) {
		t.Errorf("offered %v in the support segment, want [quote support_form]", got)
	}

	// An inactive product is no catalog; an active one is.
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/products", ten.Token,
		map[string]any{"name": "Red lamp", "isActive": false}); st != 201 {
		t.Fatalf("product: %d %v", st, body)
	}
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "enrich-3"}, webtest.AgentHeaders)
	reqs = llm.Requests()
	if got := webtest.OfferedTools(reqs[len(reqs)-1]); slices.Contains(got, "catalog") {
		t.Errorf("catalog offered with only an inactive product: %v", got)
	}
	for _, body := range []map[string]any{
		{"name": "Blue widget", "description": "A sturdy blue widget", "price": 12.5, "currency": "EUR"},
	} {
		if st, resp := b.Do(t, "POST", "/tenants/"+ten.Slug+"/products", ten.Token, body); st != 201 {
			t.Fatalf("product: %d %v", st, resp)
		}
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{
		"title": "Warranty", "summary": "Widgets carry a warranty.",
		"content": "Every widget carries a five-year warranty covering parts and labour."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_p", Name: "catalog", Arguments: []string{`{"query":"blue widget"}`}}}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_e", Name: "explore_corpus", Arguments: []string{`{"titles":["Warranty"]}`}}}},
		llmtest.Turn{Text: []string{"The blue widget has a five-year warranty."}},
	)
	r = b.Chat(t, path, map[string]any{"message": "A blue widget, and its warranty?", "sessionId": "enrich-4"}, webtest.AgentHeaders)
	if r.Status != 200 || r.Body["message"] != "The blue widget has a five-year warranty." {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs = llm.Requests()
	n := len(reqs)
	if got := webtest.OfferedTools(reqs[n-3]); !slices.Equal(got, []string{"catalog", "explore_corpus", "quote"}) {
		t.Errorf("offered %v with a product and a summary, want [catalog explore_corpus quote]", got)
	}
	system := string(reqs[n-3].Chat.Messages[0].Content)
	if !strings.Contains(system, "Widgets carry a warranty.") || strings.Contains(system, "five-year") {
		t.Errorf("the summarized entry should be in the prompt by its summary only: %q", system)
	}
	res := webtest.ToolResults(reqs[n-1])
	if len(res) != 2 || !strings.Contains(res[0], "Blue widget") || strings.Contains(res[0], "Red lamp") ||
		!strings.Contains(res[1], "five-year warranty covering parts and labour") {
		t.Errorf("tool results fed to the model: %v", res)
	}
	if n := b.Count(t, `SELECT count(*) FROM tool_history h JOIN conversations c ON c.id = h.conversation_id
		WHERE c.tenant_id = $1 AND c.session_id = 'enrich-4' AND h.tool_name IN ('catalog', 'explore_corpus')`, ten.ID); n != 2 {
		t.Errorf("tool history holds %d of the two runs", n)
	}
}

// The locale (body `locale`, else X-Service-Locale) scopes the knowledge
// base the prompt is built from and the reply's language; no locale applies
// no filter. Another language's entry joins only when nothing in the
// visitor's language answers (issue 34): "When are you open?" shares no
// word with the French entry, so under fr-CA the English one answers,
// while "Quand êtes-vous ouvert ?" finds the French one and keeps the
// English one out.
func TestChatLocale(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	for _, e := range []map[string]any{
		{"title": "Horaires", "content": "Ouvert de 9h à 18h.", "locale": "fr"},
		{"title": "Hours", "content": "Open from 9am to 6pm.", "locale": "en-GB"},
	} {
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, e); st != 201 {
			t.Fatalf("corpus: %d %v", st, body)
		}
	}
	for _, tc := range []struct {
		name         string
		body         map[string]any
		header       string
		want, unwant []string
	}{
		{"Header", map[string]any{"message": "Quand êtes-vous ouvert ?"}, "fr-CA", []string{"Ouvert de 9h", "Reply in French"}, []string{"Open from 9am"}},
		{"BodyWins", map[string]any{"locale": "en"}, "fr", []string{"Open from 9am", "Reply in English"}, []string{"Ouvert de 9h"}},
		{"None", map[string]any{}, "", []string{"Ouvert de 9h", "Open from 9am", "Reply in the language the visitor writes in"}, nil},
		{"FallbackToAnotherLanguage", map[string]any{}, "fr-CA", []string{"Open from 9am", "Reply in French"}, nil},
	} {
		llm.Push(llmtest.Turn{Text: []string{"OK."}})
		if tc.body["message"] == nil {
			tc.body["message"] = "When are you open?"
		}
		tc.body["sessionId"] = "locale-" + tc.name
		headers := map[string]string{"X-Agent-Model": "m"}
		if tc.header != "" {
			headers["X-Service-Locale"] = tc.header
		}
		if r := b.Chat(t, "/chat/"+ten.Slug, tc.body, headers); r.Status != 200 {
			t.Fatalf("%s: got %d %v", tc.name, r.Status, r.Body)
		}
		reqs := llm.Requests()
		system := string(reqs[len(reqs)-1].Chat.Messages[0].Content)
		for _, w := range tc.want {
			if !strings.Contains(system, w) {
				t.Errorf("%s: the prompt lacks %q", tc.name, w)
			}
		}
		for _, u := range tc.unwant {
			if strings.Contains(system, u) {
				t.Errorf("%s: the prompt has %q, of another language", tc.name, u)
			}
		}
	}
}
