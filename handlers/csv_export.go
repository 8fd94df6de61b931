package handlers

// The CSV exports' rows as the REST API and the dashboard write them.

import (
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Export limits: the spec's row limits and window.
const (
	DefaultExportLimit  = 1000
	MaxExportLimit      = 5000
	DefaultExportWindow = 30 * 24 * time.Hour
	MaxExportWindow     = 366 * 24 * time.Hour // a year, leap years included
	// ExportFlushRows is how many rows are written between two flushes of
	// the response: the client sees rows arrive while the server holds
	// only a few kilobytes.
	ExportFlushRows = 200
)

// Neutralise keeps a spreadsheet from reading a cell as a formula: a cell
// starting with = + - @ (or a tab or carriage return, which some
// spreadsheets skip before one) gets a leading apostrophe.
func Neutralise(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// ExportFormat reads the format parameter: csv (default) or ndjson.
func ExportFormat(c echo.Context) (string, error) {
	switch f := c.QueryParam("format"); f {
	case "", "csv":
		return "csv", nil
	case "ndjson":
		return f, nil
	}
	return "", QueryError("format", "must be csv or ndjson")
}
