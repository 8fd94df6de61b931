package admin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// withStarterRows pads the starters to the editor's parley.MaxStarters rows.
func withStarterRows(st []views.StarterRow) []views.StarterRow {
	for len(st) < parley.MaxStarters {
		st = append(st, views.StarterRow{})
	}
	return st
}

// crlf normalises the line breaks browsers send in textareas, so lengths count as the API counts them.
func crlf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func segmentFormOf(s parley.Segment) views.SegmentForm {
	f := views.SegmentForm{
		ID: s.ID, Name: s.Name, Slug: s.Slug, SystemPrompt: s.SystemPrompt, WelcomeMessage: handlers.Deref(s.WelcomeMessage),
		IsActive: s.IsActive, IsDefault: s.IsDefault, FieldTypes: parley.FormFieldTypes, FormDisplay: parley.FormAfterFirstAnswer,
	}
	for _, st := range s.ConversationStarters {
		f.Starters = append(f.Starters, views.StarterRow{Text: st.Text, Emoji: st.Emoji})
	}
	f.Starters = withStarterRows(f.Starters)
	if fc := s.FormConfig; fc != nil {
		f.FormEnabled, f.FormIntent, f.FormConfirm, f.FormDisplay = fc.Enabled, fc.Intent, fc.ConfirmationMessage, fc.Display
		for _, fl := range fc.Fields {
			f.Fields = append(f.Fields, views.SegmentFieldRow{Name: fl.Name, Label: fl.Label, Type: fl.Type, Required: fl.Required})
		}
	}
	return f
}

// readSegmentForm reads the submitted form as it is to be shown again; rows
// left empty are dropped.
func readSegmentForm(form url.Values) views.SegmentForm {
	checked := func(k string) bool { return form.Get(k) == "true" || form.Get(k) == "on" }
	f := views.SegmentForm{
		Name: form.Get("name"), Slug: strings.TrimSpace(form.Get("slug")), SystemPrompt: crlf(form.Get("systemPrompt")),
		WelcomeMessage: crlf(form.Get("welcomeMessage")), IsActive: checked("isActive"), MakeDefault: checked("isDefault"),
		FormEnabled: checked("formEnabled"), AskInChat: checked("askInChat"), FormIntent: form.Get("formIntent"), FormConfirm: form.Get("formConfirmation"),
		FormDisplay: handlers.NonBlankOr(form.Get("formDisplay"), parley.FormAfterFirstAnswer), FieldTypes: parley.FormFieldTypes,
	}
	for _, r := range dash.IndexedFormRows(form, "starters") {
		st := views.StarterRow{Text: r["text"], Emoji: strings.TrimSpace(r["emoji"])}
		if strings.TrimSpace(st.Text) != "" || st.Emoji != "" {
			f.Starters = append(f.Starters, st)
		}
	}
	for _, r := range dash.IndexedFormRows(form, "fields") {
		fl := views.SegmentFieldRow{Name: dash.FormFieldName(r["name"], r["label"]), Label: r["label"], Type: r["type"],
			Required: r["required"] == "true" || r["required"] == "on"}
		if fl.Name != "" || strings.TrimSpace(fl.Label) != "" {
			f.Fields = append(f.Fields, fl)
		}
	}
	return f
}

// segmentWrite turns the form into the API's write: every field is sent, as
// a PUT of the whole segment would, except what must not change implicitly.
func segmentWrite(f views.SegmentForm, creating bool) parley.SegmentInput {
	w := parley.SegmentInput{
		Name: parley.Some(f.Name), SystemPrompt: parley.Some(f.SystemPrompt), WelcomeMessage: parley.Some(f.WelcomeMessage),
		IsActive: parley.Some(f.IsActive),
	}
	// On edit an emptied slug keeps the current one; on create it is made from the name.
	if creating || f.Slug != "" {
		w.Slug = parley.Some(f.Slug)
	}
	// Only moving the default here is a change: the default stays default until another takes it.
	if f.MakeDefault && !f.IsDefault {
		w.IsDefault = parley.Some(true)
	}
	starters := []parley.Starter{}
	for _, s := range f.Starters {
		starters = append(starters, parley.Starter{Text: s.Text, Emoji: s.Emoji})
	}
	w.ConversationStarters = parley.Some(starters)
	w.AskInChat = parley.Some(f.AskInChat)
	if !f.FormEnabled && strings.TrimSpace(f.FormIntent) == "" && strings.TrimSpace(f.FormConfirm) == "" && len(f.Fields) == 0 {
		w.FormConfig = parley.Some[*parley.FormConfig](nil)
	} else {
		fc := &parley.FormConfig{Enabled: f.FormEnabled, Intent: strings.TrimSpace(f.FormIntent),
			ConfirmationMessage: strings.TrimSpace(f.FormConfirm), Display: f.FormDisplay, Fields: []parley.FormField{}}
		for _, fl := range f.Fields {
			fc.Fields = append(fc.Fields, parley.FormField{Name: fl.Name, Label: strings.TrimSpace(fl.Label), Type: fl.Type, Required: fl.Required})
		}
		w.FormConfig = parley.Some(fc)
	}
	return w
}

func segmentTitle(f views.SegmentForm) string {
	if f.ID == "" {
		return "New segment"
	}
	return "Segment " + f.Name
}

func segmentRowOf(s db.SegmentSummary) views.SegmentRow {
	return views.SegmentRow{ID: s.ID, Name: s.Name, Slug: s.Slug, IsDefault: s.IsDefault, IsActive: s.IsActive, CorpusCount: s.CorpusCount}
}

func (h *core) segmentsView(c echo.Context) (views.SegmentsView, error) {
	a := dash.AdminFrom(c)
	segs, err := h.DB.ListSegments(c.Request().Context(), a.Tenant.ID)
	if err != nil {
		return views.SegmentsView{}, err
	}
	v := views.SegmentsView{Limit: a.Tenant.PlanInfo().SegmentsLimit}
	for _, s := range segs {
		v.Segments = append(v.Segments, segmentRowOf(s))
	}
	return v, nil
}

// ShowSegmentsPage lists the tenant's segments.
func (h *Settings) ShowSegmentsPage(c echo.Context) error {
	v, err := h.segmentsView(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.SegmentsPage(dash.Page(c, h.Sessions, "Segments", "segments"), v))
}

// ShowSegmentPage renders the create form (/admin/segments/new) or one of the tenant's segments to edit.
func (h *Settings) ShowSegmentPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	f := views.SegmentForm{IsActive: true, Starters: withStarterRows(nil), FieldTypes: parley.FormFieldTypes}
	var seg parley.Segment
	if id := c.Param("id"); id != "" {
		var err error
		if seg, err = h.DB.Segment(c.Request().Context(), a.Tenant.ID, id); err != nil {
			return err
		}
		f = segmentFormOf(seg)
		if f.AskInChat, err = h.asksInChat(c, seg); err != nil {
			return err
		}
	}
	if err := h.withSegmentExtras(c, a.Tenant, seg, &f); err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.SegmentFormPage(dash.Page(c, h.Sessions, segmentTitle(f), "segments"), f))
}

// asksInChat reports whether the assistant asks for seg's lead capture
// fields in the conversation: its lead tool exists and is active.
func (h *core) asksInChat(c echo.Context, seg parley.Segment) (bool, error) {
	if seg.LeadToolID == nil {
		return false, nil
	}
	t, err := h.DB.Tool(c.Request().Context(), seg.TenantID, *seg.LeadToolID)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return false, nil
	}
	return err == nil && t.IsActive, err
}

// withSegmentExtras adds the live preview and, for a segment that exists,
// its embed code.
func (h *core) withSegmentExtras(c echo.Context, t parley.Tenant, seg parley.Segment, f *views.SegmentForm) error {
	f.Preview = h.widgetPreview(c, t, seg, "segment-form")
	if seg.ID == "" {
		return nil
	}
	slug := seg.Slug
	if seg.IsDefault {
		slug = "" // the default segment needs no data-segment
	}
	e, err := h.embed(c, t, slug)
	f.Embed = &e
	return err
}

// SaveSegment creates or updates a segment with the API's rules, or
// re-renders the form with the errors.
func (h *Settings) SaveSegment(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := readSegmentForm(form)
	creating := c.Param("id") == ""
	var cur parley.Segment
	if !creating {
		if cur, err = h.Manage.Segment(ctx, a.Tenant.ID, c.Param("id")); err != nil {
			return err
		}
		f.ID, f.IsDefault = cur.ID, cur.IsDefault
	}
	rerender := func(status int, errs views.Errors, msg string) error {
		f.Errors, f.Message, f.Starters = errs, msg, withStarterRows(f.Starters)
		if err := h.withSegmentExtras(c, a.Tenant, cur, &f); err != nil {
			return err
		}
		return handlers.Render(c, status, views.SegmentFormPage(dash.Page(c, h.Sessions, segmentTitle(f), "segments"), f))
	}
	in := segmentWrite(f, creating)
	if creating {
		_, err = h.Manage.CreateSegment(ctx, a.Tenant, in)
	} else {
		_, err = h.Manage.UpdateSegment(ctx, a.Tenant.ID, f.ID, in)
	}
	if status, errs, msg, ok := dash.FormStatus(err); ok {
		return rerender(status, errs, msg)
	}
	if err != nil {
		return err
	}
	verb := "saved"
	if creating {
		verb = "created"
	}
	h.Sessions.Put(ctx, dash.SessFlash, fmt.Sprintf("Segment %s %s.", strings.TrimSpace(f.Name), verb))
	return c.Redirect(http.StatusSeeOther, "/admin/segments")
}

// segmentDeleteProblem says, in the owner's words, why a segment was not
// deleted: the API's message names its query parameter.
func segmentDeleteProblem(err error) string {
	var pe *parley.Error
	if errors.As(err, &pe) && pe.Kind == parley.KindConflict {
		if n, ok := pe.Details.(map[string]int); ok {
			return fmt.Sprintf("This segment still has %s and %s. Move them to another segment first, or delete them together with the segment.",
				views.Count(n["corpusEntries"], "knowledge-base entry", "knowledge-base entries"), views.Count(n["tools"], "tool", "tools"))
		}
	}
	return err.Error()
}

// RemoveSegment deletes one of the tenant's segments; with cascade=true
// also its corpus entries and tools. htmx gets an empty row (removed in
// place) or the row with the refusal, such as the API's 409.
func (h *Settings) RemoveSegment(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	ref := c.Param("id")
	cascade := c.FormValue("cascade") == "true"
	htmx := c.Request().Header.Get("HX-Request") == "true"
	del, err := h.Manage.DeleteSegment(ctx, a.Tenant.ID, ref, cascade)
	if err == nil {
		if htmx {
			return c.HTML(http.StatusOK, "")
		}
		msg := "Segment deleted."
		if del.CorpusEntriesDeleted > 0 || del.ToolsDeleted > 0 {
			msg = fmt.Sprintf("Segment deleted with %s and %s.", views.Count(int(del.CorpusEntriesDeleted), "knowledge-base entry", "knowledge-base entries"),
				views.Count(int(del.ToolsDeleted), "tool", "tools"))
		}
		h.Sessions.Put(ctx, dash.SessFlash, msg)
		return c.Redirect(http.StatusSeeOther, "/admin/segments")
	}
	kind := parley.ErrorKind(err)
	if kind != parley.KindConflict && kind != parley.KindInvalid {
		return err
	}
	status := http.StatusConflict
	if kind == parley.KindInvalid {
		status = http.StatusUnprocessableEntity
	}
	v, lerr := h.segmentsView(c)
	if lerr != nil {
		return lerr
	}
	for i, r := range v.Segments {
		if r.ID != ref && r.Slug != ref {
			continue
		}
		r.DeleteError, r.Cascade = segmentDeleteProblem(err), kind == parley.KindConflict
		if htmx {
			return handlers.Render(c, status, views.SegmentRowView(views.Page{CSRF: dash.CSRFToken(c)}, r))
		}
		v.Segments[i] = r
		return handlers.Render(c, status, views.SegmentsPage(dash.Page(c, h.Sessions, "Segments", "segments"), v))
	}
	return err
}
