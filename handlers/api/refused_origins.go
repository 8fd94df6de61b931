package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
)

// refusedOriginsDays is how far back GET /tenants/{slug}/refused-origins
// lists, as the dashboard's overview does.
const refusedOriginsDays = 30

type refusedOriginJSON struct {
	ID        string    `json:"id"`
	Origin    string    `json:"origin"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	Refusals  int64     `json:"refusals"`
}

// refusedOriginListJSON is what GET /tenants/{slug}/refused-origins answers.
type refusedOriginListJSON struct {
	RefusedOrigins []refusedOriginJSON `json:"refusedOrigins"`
}

// ListRefusedOrigins answers GET /tenants/{slug}/refused-origins: the
// sites the widget was refused on by the tenant's allowed domains in the
// last 30 days, the most recently refused first.
func (h *Settings) ListRefusedOrigins(c echo.Context) error {
	list, err := h.DB.RefusedOrigins(c.Request().Context(), handlers.TenantFrom(c).ID, h.Clock().AddDate(0, 0, -refusedOriginsDays))
	if err != nil {
		return err
	}
	out := refusedOriginListJSON{RefusedOrigins: make([]refusedOriginJSON, len(list))}
	for i, r := range list {
		out.RefusedOrigins[i] = refusedOriginJSON{ID: r.ID, Origin: r.Origin, FirstSeen: r.FirstSeen.UTC(), LastSeen: r.LastSeen.UTC(), Refusals: r.Refusals}
	}
	return c.JSON(http.StatusOK, out)
}
