package auth

import (
	"strings"
	"testing"
	"time"
)

// TestTOTPVectors checks the SHA-1 test vectors of RFC 6238's appendix B
// (8 digits there; the six-digit code is their last six).
func TestTOTPVectors(t *testing.T) {
	t.Parallel()
	secret := []byte("12345678901234567890")
	for _, v := range []struct {
		unix int64
		code string
	}{
		{59, "94287082"},
		{1111111109, "07081804"},
		{1111111111, "14050471"},
		{1234567890, "89005924"},
		{2000000000, "69279037"},
		{20000000000, "65353130"},
	} {
		step := TOTPStepAt(time.Unix(v.unix, 0))
		if got := hotp(secret, step, 8); got != v.code {
			t.Errorf("at %d: got %s, want %s", v.unix, got, v.code)
		}
		if got := TOTPCode(secret, step); got != v.code[2:] {
			t.Errorf("six digits at %d: got %s, want %s", v.unix, got, v.code[2:])
		}
	}
}

func TestMatchTOTP(t *testing.T) {
	t.Parallel()
	secret := []byte("12345678901234567890")
	now := time.Unix(1111111111, 0)
	at := TOTPStepAt(now)
	for _, tc := range []struct {
		name string
		code string
		step int64
		ok   bool
	}{
		{"Now", TOTPCode(secret, at), at, true},
		{"Spaced", TOTPCode(secret, at)[:3] + " " + TOTPCode(secret, at)[3:], at, true},
		{"StepBefore", TOTPCode(secret, at-1), at - 1, true},
		{"StepAfter", TOTPCode(secret, at+1), at + 1, true},
		{"TwoStepsBefore", TOTPCode(secret, at-2), 0, false},
		{"Short", "12345", 0, false},
		{"Letters", "abcdef", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, ok := MatchTOTP(secret, tc.code, now)
			if ok != tc.ok || (ok && step != tc.step) {
				t.Fatalf("got (%d, %v), want (%d, %v)", step, ok, tc.step, tc.ok)
			}
		})
	}
}

func TestRecoveryCodes(t *testing.T) {
	t.Parallel()
	codes, hashes := NewRecoveryCodes()
	if len(codes) != RecoveryCodes || len(hashes) != RecoveryCodes {
		t.Fatalf("got %d codes, %d hashes", len(codes), len(hashes))
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 11 || c[5] != '-' || seen[c] {
			t.Errorf("code %q", c)
		}
		seen[c] = true
		if string(HashRecoveryCode(" "+strings.ToUpper(strings.ReplaceAll(c, "-", ""))+" ")) != string(hashes[i]) {
			t.Errorf("code %q: typed differently, another hash", c)
		}
	}
	if got := TOTPKey([]byte("12345678901234567890")); got != "GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ" {
		t.Errorf("key %q", got)
	}
	if uri := TOTPURI([]byte("12345678901234567890"), "Parley", "a@b.c"); !strings.HasPrefix(uri, "otpauth://totp/Parley:a@b.c?") || !strings.Contains(uri, "secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ") {
		t.Errorf("uri %q", uri)
	}
}
