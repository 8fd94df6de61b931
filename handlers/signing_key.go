package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// visitorSigningKeyJSON is the answer of a rotation: the key, shown once.
type visitorSigningKeyJSON struct {
	Key       string `json:"key"`
	Algorithm string `json:"algorithm"`
	Warning   string `json:"warning"`
}

// RotateVisitorSigningKey answers POST /tenants/{slug}/visitor-signing-key/rotate.
func (h *Handler) RotateVisitorSigningKey(c echo.Context) error {
	key, err := h.rotateVisitorSigningKey(c.Request().Context(), TenantFrom(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, visitorSigningKeyJSON{Key: key, Algorithm: "HS256", Warning: signingKeyWarning})
}
