package parley

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxTokenName bounds an API token's name, chosen here.
const MaxTokenName = 100

// TokenInput is a new API token as the owner describes it: a name, to know
// later what uses it, and the scopes it grants.
type TokenInput struct {
	Name   string
	Scopes []string
}

// Check normalises in (the name trimmed, the scopes in known's order
// without duplicates) and returns its problems. known is the vocabulary of
// scopes a token may grant (auth.RESTScopes, which auth enforces): a scope
// outside it is refused, naming it.
func (in *TokenInput) Check(known []string) FieldErrors {
	errs := FieldErrors{}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		errs.Add("name", "Give the token a name, so you know later what uses it.")
	} else if utf8.RuneCountInString(in.Name) > MaxTokenName {
		errs.Add("name", TooLong(MaxTokenName))
	}
	if len(in.Scopes) == 0 {
		errs.Add("scopes", "Choose at least one scope.")
		return errs
	}
	for _, s := range in.Scopes {
		if !slices.Contains(known, s) {
			errs.Add("scopes", fmt.Sprintf("unknown scope %q (known: %s)", s, strings.Join(known, ", ")))
			return errs
		}
	}
	var scopes []string
	for _, s := range known {
		if slices.Contains(in.Scopes, s) {
			scopes = append(scopes, s)
		}
	}
	in.Scopes = scopes
	return errs
}
