package parley

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCleanSynonymTerms(t *testing.T) {
	t.Parallel()
	got, err := CleanSynonymTerms([]string{"  bike ", "push   bike", "Bicycle"})
	if err != nil || !slices.Equal(got, []string{"bike", "push bike", "Bicycle"}) {
		t.Errorf("clean: %q, %v", got, err)
	}
	twenty := make([]string, MaxSynonymTerms)
	for i := range twenty {
		twenty[i] = strings.Repeat("a", i+1)
	}
	if _, err := CleanSynonymTerms(twenty); err != nil {
		t.Errorf("%d terms: %v", MaxSynonymTerms, err)
	}
	if _, err := CleanSynonymTerms([]string{"ab", strings.Repeat("é", MaxSynonymTermChars)}); err != nil {
		t.Errorf("a term of %d characters: %v", MaxSynonymTermChars, err)
	}
	for name, terms := range map[string][]string{
		"one term":        {"bike"},
		"21 terms":        append(twenty, "zz"),
		"61 characters":   {"ab", strings.Repeat("é", MaxSynonymTermChars+1)},
		"blank":           {"bike", "  "},
		"punctuation":     {"bike", "--"},
		"twice, any case": {"bike", "Bike"},
	} {
		var e *Error
		if _, err := CleanSynonymTerms(terms); !errors.As(err, &e) || e.Kind != KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestExpandSynonyms(t *testing.T) {
	t.Parallel()
	groups := [][]string{{"bike", "bicycle", "cycle"}, {"opening hours", "when are you open"}, {"e-bike", "electric bike"}}
	for text, want := range map[string]string{
		"My Bike's chain":              "My Bike's chain\nbicycle\ncycle",
		"bikers welcome":               "bikers welcome",
		"two Bikes":                    "two Bikes\nbicycle\ncycle",
		"what are your opening hours?": "what are your opening hours?\nwhen are you open",
		"do you fix e-bikes":           "do you fix e-bikes\nbicycle\ncycle\nelectric bike",
		"do you fix an E-Bike":         "do you fix an E-Bike\nbicycle\ncycle\nelectric bike",
	} {
		if got := ExpandSynonyms(text, groups); got != want {
			t.Errorf("ExpandSynonyms(%q) = %q, want %q", text, got, want)
		}
	}
	if got := ExpandSynonyms("bike", nil); got != "bike" {
		t.Errorf("no groups: %q", got)
	}
}
