package parley

import "testing"

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"chain", "chian", 1, 1}, {"delivry", "delivery", 1, 1}, {"abc", "abc", 1, 0},
		{"kitten", "sitting", 2, 3}, {"kitten", "sitting", 5, 3},
	} {
		if got := EditDistance([]rune(tc.a), []rune(tc.b), tc.limit); got != tc.want {
			t.Errorf("EditDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}
