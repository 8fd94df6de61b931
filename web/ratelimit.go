package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
)

// oauthLimit limits an endpoint of the authorization server to limit
// requests per window from one address (spec, Limits), counted in Postgres
// like chat's. A refused request is not counted, and gets 429 with
// Retry-After and the RFC 6749 error shape.
func (s *Server) oauthLimit(endpoint string, limit int, window time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			now := s.now()
			w := db.Window{Key: "oauth:" + endpoint + ":" + handlers.RateLimitAddr(c.RealIP()), Length: window, Limit: limit}
			counts, counted, err := s.DB.HitWithin(c.Request().Context(), []db.Window{w}, now)
			if err != nil {
				return err
			}
			if counted && counts[0] <= limit {
				return next(c)
			}
			secs := max(1, int(math.Ceil(handlers.WindowLeft(now, window).Seconds())))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			c.Response().Header().Set("Cache-Control", "no-store")
			return c.JSON(http.StatusTooManyRequests, map[string]string{"error": "rate_limited",
				"error_description": fmt.Sprintf("Too many %s requests from this address: at most %d per %s; retry in %d seconds",
					endpoint, limit, windowName(window), secs)})
		}
	}
}

// windowName is a limit's window in words.
func windowName(d time.Duration) string {
	if d == time.Hour {
		return "hour"
	}
	return "minute"
}
