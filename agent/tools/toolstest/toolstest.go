// Package toolstest holds the fixtures that the tests of the engine (agent)
// and of the tools (agent/tools) share: a tenant's tool built from a
// configuration, the contact form and the quote of the tool tests, and a
// knowledge base of three passages for explore_corpus.
package toolstest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// Tool is an active tool of the given name, type and configuration.
func Tool(t *testing.T, name, typ string, cfg any) parley.Tool {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return parley.Tool{ID: "tool-" + strings.ToLower(typ), Name: name, Type: typ, Config: raw, IsActive: true}
}

// ContactForm is a SUBMIT_FORM tool asking a full name and an email
// (required) and a phone number.
func ContactForm(t *testing.T) parley.Tool {
	t.Helper()
	return Tool(t, "Contact form", parley.ToolSubmitForm, parley.SubmitFormConfig{
		Fields: []parley.FormField{
			{Name: "fullName", Label: "Full name", Type: "text", Required: true},
			{Name: "workEmail", Label: "Email", Type: "email", Required: true},
			{Name: "phone", Label: "Phone", Type: "phone"},
		},
		ConfirmationMessage: "Thanks, we will call you back.",
	})
}

// QuoteConfig is a GENERATE_QUOTE configuration of two items in euros, one
// with options, taxed at 20 %.
func QuoteConfig() parley.QuoteConfig {
	return parley.QuoteConfig{Currency: "EUR", TaxRate: 20, ValidityDays: 30, Items: []parley.QuoteItem{
		{Name: "Consulting day", UnitPrice: 1500.00, Currency: "EUR", Options: []parley.QuoteOption{{Name: "Travel kit", UnitPrice: 9.99}, {Name: "Report", UnitPrice: 120}}},
		{Name: "Audit", UnitPrice: 300.50, Currency: "EUR"},
	}}
}

// Corpus is a knowledge base of three passages: Explore returns those whose
// title or content holds the query, case aside, up to limit.
type Corpus struct{}

// Explore implements tools.CorpusLookup.
func (Corpus) Explore(_ context.Context, query string, limit int) ([]llm.Passage, error) {
	all := []llm.Passage{
		{Title: "Refund policy", Content: "Refunds within 30 days, full text."},
		{Title: "Shipping", Content: "We ship to the EU in 3 days, full text."},
		{Title: "Refunds FAQ", Content: "More about refunds."},
	}
	var out []llm.Passage
	for _, p := range all {
		if strings.Contains(strings.ToLower(p.Title+" "+p.Content), strings.ToLower(query)) && len(out) < limit {
			out = append(out, p)
		}
	}
	return out, nil
}
