package parley

import (
	"strings"
	"testing"
)

func TestParseStripeKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, mode, typ string }{
		{"sk_test_51AbCdEfGh", StripeModeTest, StripeKeySecret},
		{"sk_live_51AbCdEfGh", StripeModeLive, StripeKeySecret},
		{"rk_test_51AbCdEfGh", StripeModeTest, StripeKeyRestricted},
		{"rk_live_51AbCdEfGh", StripeModeLive, StripeKeyRestricted},
		// MaxStripeKey is the limit, prefix included.
		{"sk_live_" + strings.Repeat("a", MaxStripeKey-8), StripeModeLive, StripeKeySecret},
	} {
		mode, typ, err := ParseStripeKey(tc.key)
		if err != nil || mode != tc.mode || typ != tc.typ {
			t.Errorf("%s: %s %s %v", tc.key, mode, typ, err)
		}
	}
	for _, key := range []string{"", "pk_test_51AbCdEfGh", "sk_test_short", "sk_prod_51AbCdEfGh", "sk_test_51AbCd-fGh", "whsec_51AbCdEfGh", " sk_test_51AbCdEfGh",
		"sk_live_" + strings.Repeat("a", MaxStripeKey-7)} {
		if _, _, err := ParseStripeKey(key); err == nil {
			t.Errorf("%q accepted", key)
		} else if len(key) > 8 && strings.Contains(err.Error(), key) {
			t.Errorf("the message repeats the key: %v", err)
		}
	}
}

func TestMinorUnits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		amount   float64
		decimals int
		want     int64
		ok       bool
	}{
		{49.5, 2, 4950, true}, {0.1 + 0.2, 2, 30, true}, {1.005, 2, 0, false}, {1000, 0, 1000, true}, {10.5, 0, 0, false},
		{1.234, 3, 1234, true}, {0, 2, 0, false}, {-1, 2, 0, false}, {999999.99, 2, 99999999, true}, {1000000, 2, 0, false},
	} {
		got, ok := MinorUnits(tc.amount, tc.decimals)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MinorUnits(%v, %d) = %d %v, want %d %v", tc.amount, tc.decimals, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		minor    int64
		decimals int
		want     string
	}{{4950, 2, "49.50"}, {5, 2, "0.05"}, {1000, 0, "1000"}, {1234, 3, "1.234"}} {
		if got := FormatMinor(tc.minor, tc.decimals); got != tc.want {
			t.Errorf("FormatMinor(%d, %d) = %q, want %q", tc.minor, tc.decimals, got, tc.want)
		}
	}
	if c, d, ok := PaymentCurrency(" EUR "); c != "eur" || d != 2 || !ok {
		t.Errorf("EUR: %s %d %v", c, d, ok)
	}
	if _, _, ok := PaymentCurrency("XYZ"); ok {
		t.Error("XYZ is a currency")
	}
}
