package parley

import (
	"strings"
	"testing"
)

func TestIntent(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 30)
	for _, tc := range []struct{ name, in, want string }{
		{"Question", "How much is the Team plan?", "how much is the team plan"},
		{"SameAsBare", "  pricing!! ", "pricing"},
		{"FirstLineOnly", "Refund please\nOrder 42, paid twice", "refund please"},
		{"PunctuationIsSpace", "e-mail/phone: +33 (0)1", "e mail phone 33 0 1"},
		{"Accents", "Où est la boutique ?", "où est la boutique"},
		{"NothingLeft", "?!… 🙂", ""},
		{"Empty", "", ""},
		{"CutAtWord", long, strings.TrimSpace(strings.Repeat("word ", 20))},
		{"CutInWord", strings.Repeat("a", 150), strings.Repeat("a", 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Intent(tc.in); got != tc.want {
				t.Errorf("Intent(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
