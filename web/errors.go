package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin"
	"github.com/parley/parley/views"
)

var kindStatus = map[parley.Kind]int{
	parley.KindInvalid:      http.StatusBadRequest,
	parley.KindUnauthorized: http.StatusUnauthorized,
	parley.KindForbidden:    http.StatusForbidden,
	parley.KindNotFound:     http.StatusNotFound,
	parley.KindConflict:     http.StatusConflict,
	parley.KindNotActivated: http.StatusPaymentRequired,
	parley.KindRateLimited:  http.StatusTooManyRequests,
	parley.KindTooLarge:     http.StatusRequestEntityTooLarge,

	parley.KindUnprocessable: http.StatusUnprocessableEntity,
	parley.KindUpstream:      http.StatusBadGateway,
	parley.KindUnavailable:   http.StatusServiceUnavailable,

	parley.KindPreconditionFailed: http.StatusPreconditionFailed,
}

// errorBody is the spec's error shape.
type errorBody struct {
	Error   string `json:"error"`
	Details any    `json:"details,omitempty"`
	Code    string `json:"code,omitempty"`
}

// limitBody is the body of a LIMIT_REACHED error: {error, current, limit, nextResetAt}.
type limitBody struct {
	Error       string    `json:"error"`
	Code        string    `json:"code,omitempty"`
	Current     int       `json:"current"`
	Limit       int       `json:"limit"`
	NextResetAt time.Time `json:"nextResetAt"`
}

// handleError is the one place errors become responses: application errors
// keep their message, Echo's own keep theirs, anything else is logged and
// shown as "Internal error".
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	body := errorBody{Error: "Internal error"}
	var appErr *parley.Error
	var httpErr *echo.HTTPError
	switch {
	case errors.As(err, &appErr) && appErr.Kind != parley.KindInternal:
		status = kindStatus[appErr.Kind]
		body = errorBody{Error: appErr.Message, Details: appErr.Details, Code: appErr.Code}
	case errors.As(err, &httpErr):
		status = httpErr.Code
		if msg, ok := httpErr.Message.(string); ok {
			body.Error = msg
		} else {
			body.Error = http.StatusText(status)
		}
		if status == http.StatusForbidden && strings.Contains(body.Error, "CSRF") || status == http.StatusBadRequest && strings.Contains(body.Error, "csrf") {
			body.Error = "Your form expired or came from another site; reload the page and try again."
			status = http.StatusForbidden
		}
	case db.Unreachable(err):
		// The database restarting, failing over or out of connections is
		// brief: the client is told to come back (README, "Retrying
		// requests"), not that the server broke.
		status = http.StatusServiceUnavailable
		body = errorBody{Error: handlers.UnreachableMessage, Code: handlers.UnreachableCode}
		c.Response().Header().Set("Retry-After", strconv.Itoa(handlers.UnreachableRetrySeconds))
		handlers.LoggerOf(c, s.Logger).Warn("database unreachable", "err", err, "method", c.Request().Method, "path", c.Request().URL.Path)
	}
	s.noteRefusal(err, status)
	if status >= 500 && body.Code != handlers.UnreachableCode {
		handlers.LoggerOf(c, s.Logger).Error("request failed", "err", err, "method", c.Request().Method, "path", c.Request().URL.Path)
	}
	if secs, ok := handlers.RetryAfterSeconds(err); ok {
		// A per-address limit's refusal says when to come back.
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if d, ok := body.Details.(parley.LimitDetails); ok {
		// The chat's LIMIT_REACHED body carries the counts at top level (spec, Errors).
		_ = c.JSON(status, limitBody{Error: body.Error, Code: body.Code, Current: d.Current, Limit: d.Limit, NextResetAt: d.NextResetAt})
		return
	}
	if strings.HasPrefix(c.Request().URL.Path, "/admin") && !admin.JSONRequest(c.Request()) {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		c.Response().WriteHeader(status)
		_ = views.ErrorPage(status, body.Error).Render(c.Request().Context(), c.Response())
		return
	}
	_ = c.JSON(status, body)
}
