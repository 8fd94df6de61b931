package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools/toolstest"
)

type fakeMemory struct {
	mu    sync.Mutex
	facts map[string]string
}

func (m *fakeMemory) Remember(_ context.Context, key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.facts == nil {
		m.facts = map[string]string{}
	}
	m.facts[key] = value
	return nil
}

type fakeProducts struct {
	n         int
	gotLimit  int
	gotQuery  string
	mu        sync.Mutex
	overshoot bool // return more than asked
}

func (f *fakeProducts) Search(_ context.Context, query string, limit int) ([]Product, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gotQuery, f.gotLimit = query, limit
	n := min(f.n, limit)
	if f.overshoot {
		n = f.n
	}
	var out []Product
	for i := range n {
		price := 10.0 + float64(i)
		out = append(out, Product{ID: "p" + strconv.Itoa(i), Name: "Shoe " + strconv.Itoa(i), Price: &price, Currency: "EUR"})
	}
	return out, nil
}

var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func execute(t *testing.T, reg *Registry, name, args string) Execution {
	t.Helper()
	return reg.Execute(context.Background(), llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestSubmitForm(t *testing.T) {
	t.Parallel()
	reg := NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, Deps{Now: func() time.Time { return fixedNow }})
	for _, tc := range []struct {
		name, args string
		ok         bool
		summary    string
	}{
		{"valid without optional phone", `{"fullName":" Ada ","workEmail":"ada@example.com"}`, true, "submitted"},
		{"missing required", `{"workEmail":"ada@example.com"}`, false, "fullName (Full name) is required"},
		{"empty required", `{"fullName":"  ","workEmail":"ada@example.com"}`, false, "fullName (Full name) is required"},
		{"bad email", `{"fullName":"Ada","workEmail":"ada@example"}`, false, "not a valid email address"},
		{"phone too short", `{"fullName":"Ada","workEmail":"ada@example.com","phone":"12-34"}`, false, "not a valid phone number"},
		{"phone with letters", `{"fullName":"Ada","workEmail":"ada@example.com","phone":"call 0123456"}`, false, "not a valid phone number"},
		{"phone too long", `{"fullName":"Ada","workEmail":"ada@example.com","phone":"123456789012345678901"}`, false, "not a valid phone number"},
		{"not json", `{"fullName":`, false, "not a valid JSON object"},
		{"field of wrong type", `{"fullName":["Ada"],"workEmail":"ada@example.com"}`, false, "fullName must be text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ex := execute(t, reg, "contact_form", tc.args)
			if ex.Success != tc.ok || !strings.Contains(ex.Summary, tc.summary) || (ex.Submission != nil) != tc.ok {
				t.Fatalf("execution %+v", ex)
			}
			if !ex.At.Equal(fixedNow) {
				t.Fatalf("at %v", ex.At)
			}
		})
	}
	t.Run("values trimmed, unknown fields dropped", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, "contact_form", `{"fullName":" Ada ","workEmail":"ada@example.com","phone":"06 12 34 56 78","hack":"x"}`)
		if !ex.Success || len(ex.Submission.Input) != 3 || ex.Submission.Input["fullName"] != "Ada" || ex.Submission.ToolID != "tool-submit_form" {
			t.Fatalf("execution %+v", ex.Submission)
		}
		if strings.Contains(ex.ToolMessage(), "ada@example.com") {
			t.Fatalf("tool message repeats the input: %s", ex.ToolMessage())
		}
	})
}

func TestGenerateQuote(t *testing.T) {
	t.Parallel()
	reg := NewRegistry([]parley.Tool{toolstest.Tool(t, "Quote", parley.ToolGenerateQuote, toolstest.QuoteConfig())}, Deps{Now: func() time.Time { return fixedNow }})

	t.Run("exact totals in cents", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, "quote", `{"items":[{"name":"Consulting day","quantity":3,"options":["Travel kit"]},{"name":"audit","quantity":1}]}`)
		if !ex.Success {
			t.Fatalf("execution %+v", ex)
		}
		r := ex.Result
		// 3 × (1500.00 + 9.99) = 4529.97; + 300.50 = 4830.47; tax 20% = 966.094 → 966.09.
		want := map[string]any{"subtotalCents": int64(483047), "taxCents": int64(96609), "totalCents": int64(579656),
			"subtotal": "4830.47", "tax": "966.09", "total": "5796.56", "currency": "EUR", "validUntil": "2026-03-31"}
		for k, v := range want {
			if r[k] != v {
				t.Fatalf("%s = %v (%T), want %v; result %v", k, r[k], r[k], v, r)
			}
		}
		lines := r["lines"].([]any)
		first := lines[0].(map[string]any)
		if first["lineTotalCents"] != int64(452997) || first["unitPrice"] != "1509.99" || lines[1].(map[string]any)["name"] != "Audit" {
			t.Fatalf("lines %v", lines)
		}
		if ex.Submission == nil || ex.Submission.ToolType != parley.ToolGenerateQuote || !strings.Contains(ex.Summary, "5796.56 EUR") {
			t.Fatalf("execution %+v", ex)
		}
		// The model sees exact decimal strings, no float noise.
		if msg := ex.ToolMessage(); !strings.Contains(msg, `"total":"5796.56"`) || !strings.Contains(msg, `"totalCents":579656`) {
			t.Fatalf("tool message %s", msg)
		}
	})
	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		c := toolstest.QuoteConfig()
		c.Items[1].UnitPrice = 1e9
		r := NewRegistry([]parley.Tool{toolstest.Tool(t, "Quote", parley.ToolGenerateQuote, c)}, Deps{})
		ex := execute(t, r, "quote", `{"items":[{"name":"Audit","quantity":1000000}]}`)
		if ex.Success || !strings.Contains(ex.Summary, "too large") {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("fractional tax rate", func(t *testing.T) {
		t.Parallel()
		c := toolstest.QuoteConfig()
		c.TaxRate = 8.25
		r := NewRegistry([]parley.Tool{toolstest.Tool(t, "Quote", parley.ToolGenerateQuote, c)}, Deps{})
		ex := execute(t, r, "quote", `{"items":[{"name":"Audit","quantity":1}]}`)
		// 300.50 × 8.25% = 24.79125 → 24.79
		if !ex.Success || ex.Result["taxCents"] != int64(2479) || ex.Result["total"] != "325.29" {
			t.Fatalf("result %v", ex.Result)
		}
	})
	for _, tc := range []struct{ name, args, summary string }{
		{"unknown item", `{"items":[{"name":"Rocket","quantity":1}]}`, `"Rocket" is not on the price list (items available: Consulting day, Audit)`},
		{"unknown option", `{"items":[{"name":"Consulting day","quantity":1,"options":["Gold"]}]}`, `"Gold" is not an option of Consulting day (options available: Travel kit, Report)`},
		{"option of another item", `{"items":[{"name":"Audit","quantity":1,"options":["Report"]}]}`, `options available: none`},
		{"zero quantity", `{"items":[{"name":"Audit","quantity":0}]}`, "whole number"},
		{"fractional quantity", `{"items":[{"name":"Audit","quantity":1.5}]}`, "whole number"},
		{"no items", `{"items":[]}`, "at least one item"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ex := execute(t, reg, "quote", tc.args)
			if ex.Success || ex.Submission != nil || !strings.Contains(ex.Summary, tc.summary) {
				t.Fatalf("summary %q, want %q", ex.Summary, tc.summary)
			}
		})
	}
}

func TestRememberFact(t *testing.T) {
	t.Parallel()
	mem := &fakeMemory{}
	reg := NewRegistry([]parley.Tool{
		toolstest.Tool(t, "Remember", parley.ToolRememberFact, parley.RememberConfig{AllowedKeys: []string{"company", "budget"}}),
		toolstest.Tool(t, "Remember anything", parley.ToolRememberFact, parley.RememberConfig{}),
	}, Deps{Memory: mem})
	t.Run("allowed key stored", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, "remember", `{"key":"company","value":"Acme"}`)
		mem.mu.Lock()
		defer mem.mu.Unlock()
		if !ex.Success || mem.facts["company"] != "Acme" {
			t.Fatalf("execution %+v, facts %v", ex, mem.facts)
		}
	})
	t.Run("key not allowed", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, "remember", `{"key":"shoe_size","value":"42"}`)
		if ex.Success || !strings.Contains(ex.Summary, "company, budget") {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("any snake_case key without allowedKeys", func(t *testing.T) {
		t.Parallel()
		if ex := execute(t, reg, "remember_anything", `{"key":"shoe_size","value":"42"}`); !ex.Success {
			t.Fatalf("execution %+v", ex)
		}
		if ex := execute(t, reg, "remember_anything", `{"key":"Shoe Size","value":"42"}`); ex.Success || !strings.Contains(ex.Summary, "snake_case") {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("no memory store", func(t *testing.T) {
		t.Parallel()
		r := NewRegistry([]parley.Tool{toolstest.Tool(t, "Remember", parley.ToolRememberFact, parley.RememberConfig{})}, Deps{})
		if ex := execute(t, r, "remember", `{"key":"company","value":"Acme"}`); ex.Success {
			t.Fatalf("execution %+v", ex)
		}
	})
}

func TestRecommendProduct(t *testing.T) {
	t.Parallel()
	t.Run("limited to maxResults", func(t *testing.T) {
		t.Parallel()
		ps := &fakeProducts{n: 10, overshoot: true}
		reg := NewRegistry([]parley.Tool{toolstest.Tool(t, "Find products", parley.ToolRecommendProduct, parley.RecommendConfig{MaxResults: 2})}, Deps{Products: ps})
		ex := execute(t, reg, "find_products", `{"query":"running shoes"}`)
		products := ex.Result["products"].([]Product)
		if !ex.Success || ps.gotLimit != 2 || ps.gotQuery != "running shoes" || len(products) != 2 {
			t.Fatalf("execution %+v, limit %d", ex, ps.gotLimit)
		}
		if ids := ex.Data["productIds"].([]string); len(ids) != 2 || ids[0] != "p0" {
			t.Fatalf("data %v", ex.Data)
		}
	})
	t.Run("default maxResults and empty query", func(t *testing.T) {
		t.Parallel()
		ps := &fakeProducts{n: 10}
		reg := NewRegistry([]parley.Tool{toolstest.Tool(t, "Find", parley.ToolRecommendProduct, map[string]any{})}, Deps{Products: ps})
		if ex := execute(t, reg, "find", `{"query":"x"}`); len(ex.Result["products"].([]Product)) != 3 {
			t.Fatalf("execution %+v", ex)
		}
		if ex := execute(t, reg, "find", `{}`); ex.Success {
			t.Fatalf("execution %+v", ex)
		}
	})
}

func TestExploreCorpus(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil, Deps{Corpus: toolstest.Corpus{}})
	t.Run("by title", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, ExploreCorpusTool, `{"titles":["shipping"]}`)
		entries := ex.Result["entries"].([]any)
		if !ex.Success || len(entries) != 1 || entries[0].(map[string]any)["content"] != "We ship to the EU in 3 days, full text." {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("by query", func(t *testing.T) {
		t.Parallel()
		ex := execute(t, reg, ExploreCorpusTool, `{"query":"refund"}`)
		if titles := ex.Data["titles"].([]string); !ex.Success || len(titles) != 2 || titles[0] != "Refund policy" {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("neither", func(t *testing.T) {
		t.Parallel()
		if ex := execute(t, reg, ExploreCorpusTool, `{}`); ex.Success {
			t.Fatalf("execution %+v", ex)
		}
	})
	t.Run("not offered without a corpus", func(t *testing.T) {
		t.Parallel()
		if specs := NewRegistry(nil, Deps{}).Specs(); len(specs) != 0 {
			t.Fatalf("specs %+v", specs)
		}
	})
}

func TestFunctionName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Get a Quote!":     "get_a_quote",
		"  Contact form  ": "contact_form",
		"123 go":           "tool_123_go",
		"***":              "submit_form",
		"Élan vital":       "lan_vital",
	} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			if got := functionName(in, parley.ToolSubmitForm); got != want {
				t.Fatalf("functionName(%q) = %q, want %q", in, got, want)
			}
		})
	}
	t.Run("long names are cut", func(t *testing.T) {
		t.Parallel()
		if got := functionName(strings.Repeat("ab ", 40), parley.ToolSubmitForm); len(got) > 56 || strings.HasSuffix(got, "_") {
			t.Fatalf("got %q", got)
		}
	})
}
