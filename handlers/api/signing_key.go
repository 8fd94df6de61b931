package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
)

// visitorSigningKeyJSON is the answer of a rotation: the key, shown once.
type visitorSigningKeyJSON struct {
	Key       string `json:"key"`
	Algorithm string `json:"algorithm"`
	Warning   string `json:"warning"`
}

// RotateVisitorSigningKey answers POST /tenants/{slug}/visitor-signing-key/rotate.
func (h *Settings) RotateVisitorSigningKey(c echo.Context) error {
	key, err := h.RotateSigningKey(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, visitorSigningKeyJSON{Key: key, Algorithm: "HS256", Warning: handlers.SigningKeyWarning})
}
