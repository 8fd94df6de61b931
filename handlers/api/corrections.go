package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// correctionRequest is the body of an answer's correction.
type correctionRequest struct {
	Answer parley.Opt[string] `json:"answer"`
	Title  parley.Opt[string] `json:"title"`
}

// CorrectAnswer answers POST
// /tenants/{slug}/conversations/{id}/messages/{messageId}/correction: the
// right answer to an answer of the assistant becomes a knowledge-base
// entry titled with the visitor's question (201 created), or updates the
// entry made from the same question before (200 created:false).
func (h *Knowledge) CorrectAnswer(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var req correctionRequest
	problems := jsonbody.DecodeFields(raw, &req)
	in := manage.CorrectionInput{Answer: req.Answer, Title: req.Title, Problems: problems}
	res, err := h.Manage.CorrectAnswer(c.Request().Context(), handlers.TenantFrom(c), c.Param("id"), c.Param("messageId"), in)
	if err != nil {
		return err
	}
	c.Set(audit.TargetIDKey, res.Entry.ID)
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, resource.CorpusUpsertJSON{Corpus: resource.NewCorpusJSON(res.Entry), Created: res.Created})
}
