package testrun

import "testing"

func TestContains(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text, fact string
		want       bool
	}{
		{"The warranty lasts two years.", "two years", true},
		{"The warranty lasts TWO\n  Years.", "two   years", true},
		{"Rendez-vous au Café de la Gare", "cafe de la gare", true},
		{"Rendez-vous au Cafe", "café", true},
		{"It lasts one year.", "two years", false},
		{"twoyears", "two years", false},
		{"anything", "  ", false},
	} {
		if got := Contains(c.text, c.fact); got != c.want {
			t.Errorf("Contains(%q, %q) = %v, want %v", c.text, c.fact, got, c.want)
		}
	}
}
