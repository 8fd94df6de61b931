package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"net/url"
	"strings"
	"time"
)

// TOTP's parameters (RFC 6238), those every authenticator app assumes:
// HMAC-SHA-1, six digits, a 30-second step, and a code of the step before
// or after accepted too, for a clock a little off.
const (
	TOTPDigits = 6
	TOTPStep   = 30 * time.Second
	TOTPSkew   = 1
)

// RecoveryCodes is how many single-use recovery codes two-step sign-in comes with.
const RecoveryCodes = 10

// totpSecretBytes is the length of a TOTP secret: 160 bits, as RFC 4226 recommends.
const totpSecretBytes = 20

// NewTOTPSecret returns a new TOTP secret from crypto/rand.
func NewTOTPSecret() []byte { return RandomBytes(totpSecretBytes) }

// TOTPKey is the secret as an authenticator app takes it typed: base32
// without padding, in groups of four.
func TOTPKey(secret []byte) string {
	s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// TOTPURI is the otpauth:// address of the secret that authenticator apps
// read (from a QR code, or pasted): the issuer and the account name label
// the entry in the app.
func TOTPURI(secret []byte, issuer, account string) string {
	label := url.PathEscape(issuer) + ":" + url.PathEscape(account)
	q := url.Values{}
	q.Set("secret", base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret))
	q.Set("issuer", issuer)
	q.Set("algorithm", "SHA1")
	q.Set("digits", "6")
	q.Set("period", "30")
	return "otpauth://totp/" + label + "?" + q.Encode()
}

// TOTPStepAt is the time step of t: the count of 30-second steps since the Unix epoch.
func TOTPStepAt(t time.Time) int64 { return t.Unix() / int64(TOTPStep/time.Second) }

// TOTPCode is the six-digit code of a secret at a time step (RFC 4226's
// HOTP over the step, RFC 6238).
func TOTPCode(secret []byte, step int64) string {
	return hotp(secret, step, TOTPDigits)
}

// hotp is RFC 4226's HMAC-SHA-1 one-time password of counter, in digits digits.
func hotp(secret []byte, counter int64, digits int) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(counter))
	m := hmac.New(sha1.New, secret)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	code := []byte(strings.Repeat("0", digits))
	v := bin % mod
	for i := digits - 1; i >= 0; i-- {
		code[i] = byte('0' + v%10)
		v /= 10
	}
	return string(code)
}

// MatchTOTP finds the step, within TOTPSkew steps of now's, whose code is
// code, comparing each in constant time; ok is false when none matches.
// The caller accepts the step only once (a code replayed is refused).
func MatchTOTP(secret []byte, code string, now time.Time) (step int64, ok bool) {
	code = NormalizeCode(code)
	if len(code) != TOTPDigits {
		return 0, false
	}
	at := TOTPStepAt(now)
	for s := at - TOTPSkew; s <= at+TOTPSkew; s++ {
		if hmac.Equal([]byte(TOTPCode(secret, s)), []byte(code)) {
			step, ok = s, true
		}
	}
	return step, ok
}

// NormalizeCode is a typed code without the spaces and dashes people type
// or paste with it, lower-cased (recovery codes are not case-sensitive).
func NormalizeCode(code string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, code))
}

// recoveryAlphabet is the recovery codes' letters: no 0/o, 1/l/i to mix up.
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewRecoveryCodes returns RecoveryCodes new codes, each ten characters in
// two groups ("k3f9q-m2xt7": about 49 bits), and the SHA-256 of each, which is
// all the database keeps.
func NewRecoveryCodes() (codes []string, hashes [][]byte) {
	for range RecoveryCodes {
		b := RandomBytes(10)
		c := make([]byte, 0, 11)
		for i, x := range b {
			if i == 5 {
				c = append(c, '-')
			}
			// 256 is not a multiple of 31: the bias (at most 1/8) costs
			// a fraction of a bit per letter.
			c = append(c, recoveryAlphabet[int(x)%len(recoveryAlphabet)])
		}
		codes = append(codes, string(c))
		hashes = append(hashes, HashRecoveryCode(string(c)))
	}
	return codes, hashes
}

// HashRecoveryCode is the SHA-256 of a recovery code as typed, spaces and
// dashes left out and case ignored. The codes are random: a plain hash is enough.
func HashRecoveryCode(code string) []byte {
	h := sha256.Sum256([]byte("parley-recovery\x00" + NormalizeCode(code)))
	return h[:]
}
