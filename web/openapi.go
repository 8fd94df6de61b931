package web

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPI is the interface description, OpenAPI 3.1, interface version 2.1.0.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPI)
}
