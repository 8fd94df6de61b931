package handlers

import (
	"errors"
	"testing"
)

func TestRateLimitAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"203.0.113.9":          "203.0.113.9",
		"::ffff:203.0.113.9":   "203.0.113.9",
		"2001:db8:a:b:c:d:e:f": "2001:db8:a:b::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not-an-ip":            "not-an-ip",
	} {
		if got := RateLimitAddr(in); got != want {
			t.Errorf("RateLimitAddr(%q) = %q, want %q", in, got, want)
		}
	}
	if _, ok := RetryAfterSeconds(errors.New("other")); ok {
		t.Error("RetryAfterSeconds accepted a foreign error")
	}
}
