package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/parley/parley/db"
)

// keyReload is how often a process re-reads the signing keys, so that a key
// rotated by another process (parley oauth rotate-key) signs here too.
const keyReload = time.Minute

// forceReloadGap is the least time between two reads forced by tokens naming
// unknown keys, so that forged kids cannot make every request a read.
const forceReloadGap = 5 * time.Second

// SigningKeys are the RS256 keys of OAuth access tokens: generated on first
// use, stored sealed with the secret box, cached in memory and re-read every
// minute or when a token names a key not yet seen.
type SigningKeys struct {
	DB  *db.DB
	Box *Box

	mu       sync.Mutex
	loadedAt time.Time
	keys     []signingKey // newest (the signing key) first
}

type signingKey struct {
	kid string
	key *rsa.PrivateKey
}

// JWK is one public key of a JWKS (RFC 7517).
type JWK struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// newKey generates an RSA key and its kid (the start of the SHA-256 of its
// public key, so that a kid never names two keys).
func newKey() (kid string, key *rsa.PrivateKey, err error) {
	key, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", nil, fmt.Errorf("generating OAuth signing key: %w", err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:12]), key, nil
}

// add generates a key and stores it sealed: when first, only if there is
// no live key; otherwise it keeps only the previous key beside it.
func (k *SigningKeys) add(ctx context.Context, first bool) (string, error) {
	kid, key, err := newKey()
	if err != nil {
		return "", err
	}
	if err := k.DB.AddOAuthKey(ctx, kid, k.Box.Seal(x509.MarshalPKCS1PrivateKey(key)), first); err != nil {
		return "", err
	}
	return kid, nil
}

// Rotate adds a new signing key and retires every key but the previous one,
// which stays in the JWKS so that the tokens it signed verify until they
// expire. It returns the new kid.
func (k *SigningKeys) Rotate(ctx context.Context) (string, error) {
	kid, err := k.add(ctx, false)
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	k.loadedAt = time.Time{}
	k.mu.Unlock()
	return kid, nil
}

// load returns the live keys, re-read when stale, or when force and not read
// in the last forceReloadGap; with none stored, it generates the first.
func (k *SigningKeys) load(ctx context.Context, force bool) ([]signingKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.keys) > 0 && time.Since(k.loadedAt) < keyReload && (!force || time.Since(k.loadedAt) < forceReloadGap) {
		return k.keys, nil
	}
	stored, err := k.DB.LiveOAuthKeys(ctx)
	if err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		if _, err := k.add(ctx, true); err != nil {
			return nil, err
		}
		if stored, err = k.DB.LiveOAuthKeys(ctx); err != nil {
			return nil, err
		}
	}
	// The signing key must open; an older one that does not (sealed under a
	// secret key since replaced) is left out, so that after
	// `parley oauth rotate-key` the server starts again.
	keys := make([]signingKey, 0, len(stored))
	for i, s := range stored {
		der, err := k.Box.Open(s.PrivateKey)
		var key *rsa.PrivateKey
		if err == nil {
			key, err = x509.ParsePKCS1PrivateKey(der)
		}
		if err != nil && i == 0 {
			return nil, fmt.Errorf("OAuth signing key %s: %w (PARLEY_SECRET_KEY changed? run parley oauth rotate-key)", s.Kid, err)
		}
		if err == nil {
			keys = append(keys, signingKey{kid: s.Kid, key: key})
		}
	}
	k.keys, k.loadedAt = keys, time.Now()
	return keys, nil
}

// Ensure generates the first key when there is none (at start-up).
func (k *SigningKeys) Ensure(ctx context.Context) error {
	_, err := k.load(ctx, true)
	return err
}

// signer is the current signing key.
func (k *SigningKeys) signer(ctx context.Context) (signingKey, error) {
	keys, err := k.load(ctx, false)
	if err != nil {
		return signingKey{}, err
	}
	return keys[0], nil
}

// public is the public key named kid, re-reading the keys once when it is
// not known yet; nil when no live key has that kid.
func (k *SigningKeys) public(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	for _, force := range []bool{false, true} {
		keys, err := k.load(ctx, force)
		if err != nil {
			return nil, err
		}
		for _, s := range keys {
			if s.kid == kid {
				return &s.key.PublicKey, nil
			}
		}
	}
	return nil, nil
}

// JWKS are the public keys of the live keys.
func (k *SigningKeys) JWKS(ctx context.Context) ([]JWK, error) {
	keys, err := k.load(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]JWK, 0, len(keys))
	for _, s := range keys {
		out = append(out, JWK{Kty: "RSA", Use: "sig", Alg: "RS256", Kid: s.kid,
			N: base64.RawURLEncoding.EncodeToString(s.key.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(s.key.E)).Bytes())})
	}
	return out, nil
}
