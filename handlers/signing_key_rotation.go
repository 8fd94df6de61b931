package handlers

// The visitor signing key's rotation, from the REST API or the dashboard's
// developer settings.

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// SigningKeyWarning goes with a rotated key, in the API answer and on the page.
const SigningKeyWarning = "Store this key now: it is shown once and cannot be retrieved again. " +
	"Visitor tokens signed with the previous key are refused from now on, and calls to your reply endpoint are signed with this one."

// newVisitorSigningKey returns a fresh key: vsk_ and 64 hex digits (32 random bytes).
func newVisitorSigningKey() string {
	return "vsk_" + hex.EncodeToString(auth.RandomBytes(32))
}

// RotateSigningKey replaces the tenant's visitor signing key and
// returns the new one. The HMAC secret is the key exactly as shown, its
// UTF-8 bytes, so those bytes are what is sealed: chat opens them to verify
// visitor tokens and to sign calls to the reply endpoint. The old key stops
// working at once.
func (h *Base) RotateSigningKey(ctx context.Context, tenantID string) (string, error) {
	if h.Box == nil {
		return "", errors.New("no secret box to seal the visitor signing key")
	}
	key := newVisitorSigningKey()
	if _, err := h.DB.UpdateTenant(ctx, tenantID, db.TenantPatch{SealedSigningKey: parley.Some(h.Box.Seal([]byte(key)))}); err != nil {
		return "", err
	}
	return key, nil
}
