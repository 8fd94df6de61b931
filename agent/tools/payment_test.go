package tools

import "testing"

func TestMinorFromCents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cents    int64
		decimals int
		want     int64
		ok       bool
	}{{6000, 2, 6000, true}, {100000, 0, 1000, true}, {100050, 0, 0, false}, {1234, 3, 12340, true}} {
		got, ok := minorFromCents(tc.cents, tc.decimals)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("minorFromCents(%d, %d) = %d %v", tc.cents, tc.decimals, got, ok)
		}
	}
}
