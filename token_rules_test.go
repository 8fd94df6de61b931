package parley_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
)

// A token's rules: the name at its limit and one past, blank, the scopes
// none, unknown, and normalised to the vocabulary's order.
func TestTokenRules(t *testing.T) {
	t.Parallel()
	known := []string{"corpus:read", "corpus:write", "stats:read"}
	for name, c := range map[string]struct {
		in    parley.TokenInput
		field string
		want  string
	}{
		"NameAtLimit":    {parley.TokenInput{Name: strings.Repeat("é", parley.MaxTokenName), Scopes: []string{"stats:read"}}, "", ""},
		"NamePastLimit":  {parley.TokenInput{Name: strings.Repeat("é", parley.MaxTokenName+1), Scopes: []string{"stats:read"}}, "name", "must be at most 100 characters"},
		"NameTrimmed":    {parley.TokenInput{Name: "  " + strings.Repeat("n", parley.MaxTokenName) + "  ", Scopes: []string{"stats:read"}}, "", ""},
		"NameBlank":      {parley.TokenInput{Name: "  ", Scopes: []string{"stats:read"}}, "name", "Give the token a name, so you know later what uses it."},
		"NoScopes":       {parley.TokenInput{Name: "x"}, "scopes", "Choose at least one scope."},
		"UnknownScope":   {parley.TokenInput{Name: "x", Scopes: []string{"stats:read", "root:all"}}, "scopes", `unknown scope "root:all" (known: corpus:read, corpus:write, stats:read)`},
		"EmptyScopeName": {parley.TokenInput{Name: "x", Scopes: []string{""}}, "scopes", `unknown scope ""`},
	} {
		errs := c.in.Check(known)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.want, errs)
		}
	}

	t.Run("Normalised", func(t *testing.T) {
		t.Parallel()
		in := parley.TokenInput{Name: "  Nightly export ", Scopes: []string{"stats:read", "corpus:read", "stats:read"}}
		if errs := in.Check(known); len(errs) != 0 {
			t.Fatal(errs)
		}
		if in.Name != "Nightly export" || !slices.Equal(in.Scopes, []string{"corpus:read", "stats:read"}) {
			t.Errorf("normalised to %q %v", in.Name, in.Scopes)
		}
	})

	t.Run("BothProblems", func(t *testing.T) {
		t.Parallel()
		in := parley.TokenInput{Name: " "}
		if errs := in.Check(known); len(errs) != 2 {
			t.Errorf("problems %v, want name and scopes", errs)
		}
	})
}
