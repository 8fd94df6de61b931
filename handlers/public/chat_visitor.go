package public

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/visitors"
)

// verifiedChatVisitor verifies a visitor token and resolves (creating when
// needed) the visitor it names by externalId, updating the email and display
// name from the claims that carry them.
func (h *Handler) verifiedChatVisitor(c echo.Context, t parley.Tenant, token string) (parley.Visitor, error) {
	ctx := c.Request().Context()
	var key []byte
	if len(t.VisitorSigningKey) > 0 {
		if h.Box == nil {
			return parley.Visitor{}, fmt.Errorf("no secret box to open the visitor signing key")
		}
		k, err := h.Box.Open(t.VisitorSigningKey)
		if err != nil {
			return parley.Visitor{}, fmt.Errorf("opening the visitor signing key: %w", err)
		}
		key = k
	}
	claims, err := auth.VerifyVisitorToken(key, token, h.Clock())
	if err != nil {
		return parley.Visitor{}, err
	}
	v, err := h.DB.ResolveVisitorByExternalID(ctx, t.ID, claims.Subject)
	if err != nil {
		return parley.Visitor{}, err
	}
	var w visitors.VisitorWrite
	changed := false
	if e := strings.TrimSpace(claims.Email); e != "" && (v.Email == nil || *v.Email != e) {
		w.Email = parley.Some(e)
		changed = true
	}
	if n := strings.TrimSpace(claims.Name); n != "" && (v.DisplayName == nil || *v.DisplayName != n) {
		w.DisplayName = parley.Some(n)
		changed = true
	}
	if !changed {
		return v, nil
	}
	d, err := h.DB.UpdateVisitor(ctx, t.ID, v.ID, w)
	if err != nil {
		// A claim the store refuses (an email another visitor has) does not
		// undo the verification: the visitor is who the token says.
		h.Log(c).Warn("updating a verified visitor from token claims", "visitor", v.ID, "err", err)
		return v, nil
	}
	return d.Visitor, nil
}
