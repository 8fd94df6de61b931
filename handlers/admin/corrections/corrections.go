// Package corrections is the dashboard's "Improve this answer" (issue 40):
// under an answer of the assistant in a conversation's transcript, and
// from the test chat, the owner writes the right answer, which becomes a
// knowledge base entry titled with the visitor's question, or updates the
// entry made from the same question before (manage.CorrectAnswer, as the
// REST API's correction runs it). The form opens inline under the answer
// with htmx and on a page of its own without JavaScript. An admin's area.
package corrections

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// Corrections is the dashboard's "Improve this answer" area.
type Corrections struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Corrections { return &Corrections{b} }

// ShowCorrectionForm renders the form of an answer: the visitor's question,
// and the right answer to write, prefilled with the entry made from the
// question before, else with the assistant's answer. htmx gets the form
// alone, to show under the answer. Another tenant's conversation or message
// is the dashboard's 404; a message that is not an answer of the assistant
// to a question, its 400.
func (h *Corrections) ShowCorrectionForm(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	q, err := h.Manage.AnsweredQuestion(ctx, t.ID, c.Param("id"), c.Param("messageId"))
	if err != nil {
		return err
	}
	f := h.form(c, q.Text, back(c.QueryParam("back")))
	f.Content, f.EntryID = q.Answer, q.EntryID
	if q.EntryID != "" {
		e, err := h.Manage.CorpusEntry(ctx, t.ID, q.EntryID)
		if err != nil {
			return err
		}
		f.Content = e.Content
		if e.Title != q.Text {
			f.Title = e.Title
		}
	}
	return h.render(c, http.StatusOK, f)
}

// SaveCorrection saves the owner's right answer (manage.CorrectAnswer):
// with htmx the form gives way to a line naming the entry; without, the
// browser returns to the conversation (or the test chat) with a notice.
// A refused answer re-renders the form with its problems (422).
func (h *Corrections) SaveCorrection(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	answer := strings.ReplaceAll(form.Get("answer"), "\r\n", "\n")
	in := manage.CorrectionInput{Answer: parley.Some(answer), Title: parley.Some(form.Get("title"))}
	res, err := h.Manage.CorrectAnswer(ctx, t, c.Param("id"), c.Param("messageId"), in)
	if status, ferrs, msg, ok := dash.FormStatus(err); ok {
		q, qerr := h.Manage.AnsweredQuestion(ctx, t.ID, c.Param("id"), c.Param("messageId"))
		if qerr != nil {
			return qerr
		}
		f := h.form(c, q.Text, back(form.Get("back")))
		f.Content, f.Title, f.EntryID, f.Errors, f.Message = answer, form.Get("title"), q.EntryID, ferrs, msg
		return h.render(c, status, f)
	}
	if err != nil {
		return err
	}
	c.Set(audit.TargetIDKey, res.Entry.ID)
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.CorrectionSavedFragment(views.CorrectionSaved{EntryID: res.Entry.ID,
			Title: res.Entry.Title, Created: res.Created}))
	}
	verb := "Updated in"
	if res.Created {
		verb = "Saved to"
	}
	h.Sessions.Put(ctx, dash.SessFlash, verb+" your knowledge base: "+res.Entry.Title+".")
	f := views.CorrectionForm{ConversationID: c.Param("id"), MessageID: c.Param("messageId"), Back: back(form.Get("back"))}
	return c.Redirect(http.StatusSeeOther, f.BackURL())
}

// form is the form of the request's answer, for question.
func (h *Corrections) form(c echo.Context, question, back string) views.CorrectionForm {
	return views.CorrectionForm{ConversationID: c.Param("id"), MessageID: c.Param("messageId"), CSRF: dash.CSRFToken(c),
		Question: question, Back: back, MaxContent: parley.MaxCorpusContent}
}

// render renders f: alone for htmx, else on its page.
func (h *Corrections) render(c echo.Context, status int, f views.CorrectionForm) error {
	if dash.IsHTMX(c) {
		return handlers.Render(c, status, views.CorrectionFormFragment(f))
	}
	return handlers.Render(c, status, views.CorrectionPage(dash.Page(c, h.Sessions, "Improve this answer", "conversations"), f))
}

// back is where the form returns: the test chat, or the conversation ("").
func back(v string) string {
	if v == "test-chat" {
		return v
	}
	return ""
}
