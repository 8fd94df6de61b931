package handlers

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
)

// Runtime is what every surface reads at each request: the server's public
// address, its logger and its clock. web builds one and every surface's
// handler embeds it, so that one setting (a test's clock or address) holds
// for all of them.
type Runtime struct {
	// BaseURL is the server's public address (PARLEY_BASE_URL): the widget's
	// endpoints, the embed code, the orchestrator's and the authorization
	// server's addresses.
	BaseURL string
	Logger  *slog.Logger
	// Now is the clock; nil is the time.
	Now func() time.Time
}

// Clock is the time by the runtime's clock.
func (r *Runtime) Clock() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Log is the request's logger (LoggerOf).
func (r *Runtime) Log(c echo.Context) *slog.Logger { return LoggerOf(c, r.Logger) }
