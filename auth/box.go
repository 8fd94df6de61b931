package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
)

// Box seals secrets at rest with AES-256-GCM. A sealed value is nonce || ciphertext.
// During a rotation of the secret key (`parley secret rotate`) a Box also
// holds the previous key: it seals with the current key only, and opens
// with either.
type Box struct {
	aead cipher.AEAD
	// prev is the previous key's cipher while a rotation runs, else nil.
	prev cipher.AEAD
}

// NewBox builds a Box from a 32-byte key.
func NewBox(key []byte) (*Box, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// NewRotatingBox builds a Box that seals with key and opens values sealed
// with key or with previous (PARLEY_SECRET_KEY_PREVIOUS during a
// rotation). A nil previous makes a plain Box; previous equal to key is a
// mistake.
func NewRotatingBox(key, previous []byte) (*Box, error) {
	b, err := NewBox(key)
	if err != nil || previous == nil {
		return b, err
	}
	if subtle.ConstantTimeCompare(key, previous) == 1 {
		return nil, errors.New("the previous secret key is the current one")
	}
	if b.prev, err = newAEAD(previous); err != nil {
		return nil, fmt.Errorf("previous key: %w", err)
	}
	return b, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Rotating reports whether the Box also opens with a previous key.
func (b *Box) Rotating() bool { return b.prev != nil }

// ParseKey decodes a 64-hex-character key.
func ParseKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != 32 {
		return nil, errors.New("must be 32 bytes written as 64 hexadecimal characters")
	}
	return key, nil
}

// Seal encrypts plain.
func (b *Box) Seal(plain []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, plain, nil)
}

// Open decrypts a value produced by Seal.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil && b.prev != nil {
		plain, err = b.prev.Open(nil, sealed[:n], sealed[n:], nil)
	}
	if err != nil {
		return nil, ErrWrongKey
	}
	return plain, nil
}

// ErrWrongKey is Open's error for a value that no key of the Box opens:
// it was sealed with another key, or it is corrupted.
var ErrWrongKey = errors.New("cannot open sealed value: wrong key or corrupted data")

// Reseal returns sealed re-sealed with the current key when only the
// previous key opens it (changed true), or sealed itself when the current
// key opens it already; a value neither key opens is ErrWrongKey.
func (b *Box) Reseal(sealed []byte) (out []byte, changed bool, err error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, false, errors.New("sealed value too short")
	}
	if _, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil); err == nil {
		return sealed, false, nil
	}
	if b.prev == nil {
		return nil, false, ErrWrongKey
	}
	plain, err := b.prev.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, false, ErrWrongKey
	}
	return b.Seal(plain), true, nil
}

// RandomBytes returns n random bytes.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
