package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
)

// ImportCorpus answers POST /tenants/{slug}/corpus/import: a multipart part
// `file` holding CSV with the header title,content,segment,priority,externalId
// (columns in any order; all but title and content optional). Every line is
// checked first; the good ones are written in one transaction and the bad
// ones reported by line, as the contract's {imported, errors:[{line, error}]}
// says: a bad line costs only itself, not the file.
func (h *Knowledge) ImportCorpus(c echo.Context) error {
	data, err := handlers.ReadCSVUpload(c)
	if err != nil {
		return err
	}
	rep, err := h.ImportCorpusCSV(c.Request().Context(), handlers.TenantFrom(c), data)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
