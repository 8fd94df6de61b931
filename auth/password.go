package auth

import (
	"errors"
	netmail "net/mail"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MinPasswordLength is the shortest admin password accepted.
const MinPasswordLength = 10

// MaxPasswordBytes is the longest admin password accepted: bcrypt ignores
// anything after the 72nd byte.
const MaxPasswordBytes = 72

// dummyPassword is hashed for the comparison made when the user does not exist.
const dummyPassword = "parley-dummy-password"

// Passwords hashes and checks admin passwords with bcrypt at one cost.
type Passwords struct {
	cost int
	// dummy is compared against when the user does not exist, so that a
	// login for an unknown email costs the same time as one with a wrong
	// password. It is hashed at the first such login, at the hasher's cost.
	dummy func() []byte
}

// NewPasswords returns a hasher at bcrypt cost cost: bcrypt.DefaultCost in
// production; tests use bcrypt.MinCost, as a hash at the default cost takes
// most of a second under the race detector. A cost below bcrypt.MinCost
// means bcrypt.DefaultCost.
func NewPasswords(cost int) *Passwords {
	if cost < bcrypt.MinCost {
		cost = bcrypt.DefaultCost
	}
	p := &Passwords{cost: cost}
	p.dummy = sync.OnceValue(func() []byte {
		h, err := bcrypt.GenerateFromPassword([]byte(dummyPassword), p.cost)
		if err != nil {
			// Only a cost above bcrypt.MaxCost fails, and then Hash fails too.
			return nil
		}
		return h
	})
	return p
}

// Cost is the bcrypt cost of the hashes p makes.
func (p *Passwords) Cost() int { return p.cost }

// Hash hashes an admin password.
func (p *Passwords) Hash(pw string) (string, error) {
	if len(pw) < MinPasswordLength {
		return "", errors.New("password must be at least 10 characters")
	}
	if len(pw) > MaxPasswordBytes {
		return "", errors.New("password must be at most 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), p.cost)
	return string(h), err
}

// Check reports whether pw matches hash, which may have been made at any
// cost; with an empty hash it still spends the time of one comparison. A
// password longer than Hash accepts never matches (bcrypt alone would match
// it on its first 72 bytes).
func (p *Passwords) Check(hash, pw string) bool {
	if hash == "" || len(pw) > MaxPasswordBytes {
		_ = bcrypt.CompareHashAndPassword(p.dummy(), []byte(pw[:min(len(pw), MaxPasswordBytes)]))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// NewPasswordProblem says what is wrong with a new dashboard password and
// its confirmation, in the owner's words, with the form field it is about
// ("" when nothing is): every form that sets one (the reset link, the
// account page, an invitation, the sign-up) holds it to these rules.
func NewPasswordProblem(password, confirm string) (field, message string) {
	switch {
	case len(password) < MinPasswordLength:
		return "password", "Use at least 10 characters."
	case len(password) > MaxPasswordBytes:
		return "password", "Use at most 72 bytes: about 72 letters, fewer with accents or emoji."
	case confirm != password:
		return "confirm", "This is not the same password: type the new password again."
	}
	return "", ""
}

// MaxEmail is the longest address a new account takes (RFC 5321's path).
const MaxEmail = 254

// NewAccountEmail reports whether email can be a new dashboard account's
// address (an invitation's, a sign-up's): one address as RFC 5322 reads
// it, exactly as typed, at most MaxEmail bytes, its domain with a dot.
func NewAccountEmail(email string) bool {
	a, err := netmail.ParseAddress(email)
	return err == nil && a.Address == email && len(email) <= MaxEmail &&
		strings.Contains(email[strings.LastIndexByte(email, '@')+1:], ".")
}
