package agent

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCiteFilter(t *testing.T) {
	t.Parallel()
	valid := func(ref int) bool { return ref >= 1 && ref <= 12 }
	for _, tc := range []struct {
		in, want string
		refs     []int
	}{
		{"We open at 9 [1].", "We open at 9.", []int{1}},
		{"We open at 9.[1] Delivery is free [3][1].", "We open at 9. Delivery is free.", []int{1, 3}},
		{"Both [2, 4] and [5,6].", "Both and.", []int{2, 4, 5, 6}},
		{"Founded in [2024] and [13], [0].", "Founded in [2024] and [13], [0].", nil},
		{"See [the page](https://x.example) [7]", "See [the page](https://x.example)", []int{7}},
		{"A list:\n- one [1]\n- two [2]\n", "A list:\n- one\n- two\n", []int{1, 2}},
		{"Unclosed [1 at the end", "Unclosed [1 at the end", nil},
		{"Trailing [", "Trailing [", nil},
		{"Mixed [1][x] stays", "Mixed[x] stays", []int{1}},
		{"Bad [1][99] pair", "Bad[99] pair", []int{1}},
		{"Spaces   ", "Spaces   ", nil},
		{"Café [2] ouvert", "Café ouvert", []int{2}},
	} {
		// Whole, and cut at every byte: the stream's chunks fall anywhere.
		for cut := range len(tc.in) + 1 {
			if cut > 0 && cut < len(tc.in) && !utf8.RuneStart(tc.in[cut]) {
				continue
			}
			f := newCiteFilter(valid)
			got := f.write(tc.in[:cut]) + f.write(tc.in[cut:]) + f.flush()
			if got != tc.want || !slices.Equal(f.refs(), tc.refs) {
				t.Errorf("%q cut at %d = %q citing %v, want %q citing %v", tc.in, cut, got, f.refs(), tc.want, tc.refs)
				break
			}
		}
		// One byte at a time.
		f := newCiteFilter(valid)
		var got strings.Builder
		for _, r := range tc.in {
			got.WriteString(f.write(string(r)))
		}
		got.WriteString(f.flush())
		if got.String() != tc.want {
			t.Errorf("%q rune by rune = %q, want %q", tc.in, got.String(), tc.want)
		}
	}
	// No entries numbered: nothing is filtered.
	var none *citeFilter = newCiteFilter(nil)
	if got := none.write("As [1] says") + none.flush(); got != "As [1] says" || none.refs() != nil {
		t.Errorf("without refs: %q citing %v", got, none.refs())
	}
}
