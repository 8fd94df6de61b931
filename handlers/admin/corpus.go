package admin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// corpusPageSize is the number of entries per page of the knowledge-base table.
const corpusPageSize = manage.DefaultCorpusPage

func corpusRowOf(e parley.CorpusEntry) views.CorpusRow {
	return views.CorpusRow{
		ID: e.ID, Title: e.Title, Segment: handlers.Deref(e.SegmentSlug), Priority: e.Priority, IsActive: e.IsActive,
		Tags: e.Tags, Source: handlers.Deref(e.Source), Updated: e.UpdatedAt.UTC().Format("2006-01-02 15:04"),
	}
}

// segmentOptions lists the tenant's segments for a select: value slug, label name.
func (h *core) segmentOptions(ctx context.Context, tenantID string) ([]views.Option, error) {
	segs, err := h.DB.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make([]views.Option, len(segs))
	for i, s := range segs {
		out[i] = views.Option{Value: s.Slug, Label: s.Name}
	}
	return out, nil
}

// corpusList reads the filters and the page from the query and loads that page.
// An unknown segment drops the filter; a page past the end shows the last one.
func (h *core) corpusList(c echo.Context) (views.CorpusList, error) {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	l := views.CorpusList{Search: strings.TrimSpace(c.QueryParam("search")), Segment: c.QueryParam("segment"), Page: 1}
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 {
		l.Page = n
	}
	q := knowledge.CorpusQuery{Search: l.Search, Page: l.Page, Limit: corpusPageSize}
	if l.Segment != "" {
		s, err := h.DB.Segment(ctx, tenantID, l.Segment)
		switch parley.ErrorKind(err) {
		case parley.KindNotFound:
			l.Segment = ""
		case parley.KindInternal:
			if err != nil {
				return l, err
			}
			q.SegmentID = s.ID
		}
	}
	res, err := h.DB.ListCorpus(ctx, tenantID, q)
	if err != nil {
		return l, err
	}
	l.Total, l.TotalCapped, l.TotalPages = res.Total, res.TotalCapped, (res.Total+corpusPageSize-1)/corpusPageSize
	if l.Page > l.TotalPages && l.TotalPages > 0 && !res.TotalCapped {
		l.Page, q.Page = l.TotalPages, l.TotalPages
		if res, err = h.DB.ListCorpus(ctx, tenantID, q); err != nil {
			return l, err
		}
	}
	for _, e := range res.Entries {
		l.Rows = append(l.Rows, corpusRowOf(e))
	}
	return l, nil
}

// ShowCorpusPage renders the knowledge base; htmx requests aimed at the
// table (search, segment filter, pager) get the table alone.
func (h *Knowledge) ShowCorpusPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	l, err := h.corpusList(c)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Target") == "corpus-table" {
		return handlers.Render(c, http.StatusOK, views.CorpusTable(views.Page{CSRF: dash.CSRFToken(c)}, l))
	}
	segs, err := h.segmentOptions(c.Request().Context(), a.Tenant.ID)
	if err != nil {
		return err
	}
	v := views.CorpusView{List: l, Segments: segs, Limit: a.Tenant.PlanInfo().CorpusLimit}
	if v.Budget, err = h.corpusBudget(c.Request().Context(), a.Tenant.ID); err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.CorpusPage(dash.Page(c, h.Sessions, "Knowledge base", "corpus"), v))
}

// corpusBudget works out, for each active segment, how its entries fit the
// agent's prompt (agent.FitCorpus over what the chat loads, every locale).
func (h *core) corpusBudget(ctx context.Context, tenantID string) ([]views.CorpusBudget, error) {
	segments, err := h.DB.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	var out []views.CorpusBudget
	titles := func(es []parley.CorpusEntry) []string {
		var t []string
		for _, e := range es {
			t = append(t, e.Title)
		}
		return t
	}
	for _, s := range segments {
		if !s.IsActive {
			continue
		}
		entries, err := h.DB.PromptCorpus(ctx, tenantID, s.ID, "", agent.PromptCorpusLimit)
		if err != nil {
			return nil, err
		}
		f := agent.FitCorpus(entries)
		out = append(out, views.CorpusBudget{Segment: s.Name, Whole: len(f.Whole), Summarized: len(f.Summarized),
			KnowledgeChars: f.KnowledgeChars, KnowledgeCap: agent.KnowledgeCap,
			SummariesChars: f.SummariesChars, SummariesCap: agent.SummariesCap,
			LeftOutWhole: titles(f.LeftOutWhole), LeftOutSummarized: titles(f.LeftOutSummarized)})
	}
	return out, nil
}

func corpusFormOf(e parley.CorpusEntry) views.CorpusForm {
	return views.CorpusForm{
		ID: e.ID, Title: e.Title, Content: e.Content, Summary: handlers.Deref(e.Summary), Priority: strconv.Itoa(e.Priority),
		IsActive: e.IsActive, Segment: handlers.Deref(e.SegmentSlug), Locale: handlers.Deref(e.Locale), Tags: strings.Join(e.Tags, ", "),
		Source: handlers.Deref(e.Source),
	}
}

func corpusTitle(f views.CorpusForm) string {
	if f.ID == "" {
		return "New knowledge-base entry"
	}
	return "Entry " + f.Title
}

func (h *core) renderCorpusForm(c echo.Context, status int, f views.CorpusForm) error {
	segs, err := h.segmentOptions(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	f.Segments, f.MaxContent, f.MaxSummary = segs, parley.MaxCorpusContent, parley.MaxCorpusSummary
	return handlers.Render(c, status, views.CorpusFormPage(dash.Page(c, h.Sessions, corpusTitle(f), "corpus"), f))
}

// ShowCorpusEntryPage renders the create form (/admin/corpus/new) or one of the tenant's entries to edit.
func (h *Knowledge) ShowCorpusEntryPage(c echo.Context) error {
	f := views.CorpusForm{IsActive: true}
	if id := c.Param("id"); id != "" {
		e, err := h.Manage.CorpusEntry(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, id)
		if err != nil {
			return err
		}
		f = corpusFormOf(e)
	} else if f.Gap = c.QueryParam("gap"); f.Gap != "" {
		f.Title = parley.Clip(strings.TrimSpace(c.QueryParam("question")), parley.MaxCorpusTitle)
	}
	return h.renderCorpusForm(c, http.StatusOK, f)
}

// readCorpusForm reads the submitted form as it is to be shown again, and
// the write it stands for, with what could not even be read as its
// problems.
func readCorpusForm(form url.Values) (views.CorpusForm, parley.CorpusInput) {
	f := views.CorpusForm{
		Title: form.Get("title"), Content: crlf(form.Get("content")), Summary: crlf(form.Get("summary")),
		Priority: strings.TrimSpace(form.Get("priority")), IsActive: form.Get("isActive") == "true" || form.Get("isActive") == "on",
		Segment: form.Get("segment"), Locale: strings.TrimSpace(form.Get("locale")), Tags: form.Get("tags"), Gap: form.Get("gap"),
	}
	in := parley.CorpusInput{
		Title: parley.Some(f.Title), Content: parley.Some(f.Content), Summary: parley.Some(f.Summary), IsActive: parley.Some(f.IsActive),
		Locale: parley.Some(f.Locale), Tags: parley.Some(strings.Split(f.Tags, ",")), Segment: parley.Some(f.Segment),
		Problems: parley.FieldErrors{},
	}
	// An empty priority takes the default on create and keeps the current one on edit.
	if f.Priority != "" {
		if n, err := strconv.Atoi(f.Priority); err != nil {
			in.Problems.Add("priority", "must be a whole number")
		} else {
			in.Priority = parley.Some(n)
		}
	}
	return f, in
}

// SaveCorpusEntry creates or updates an entry with the API's rules, or
// re-renders the form with the errors.
func (h *Knowledge) SaveCorpusEntry(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	id := c.Param("id")
	creating := id == ""
	f, in := readCorpusForm(form)
	if !creating {
		cur, err := h.Manage.CorpusEntry(ctx, a.Tenant.ID, id)
		if err != nil {
			return err
		}
		f.ID, f.Source = cur.ID, handlers.Deref(cur.Source)
	}
	var created parley.CorpusEntry
	if creating {
		created, _, err = h.Manage.CreateCorpus(ctx, a.Tenant, in)
	} else {
		_, err = h.Manage.UpdateCorpus(ctx, a.Tenant.ID, f.ID, in)
	}
	if status, ferrs, msg, ok := dash.FormStatus(err); ok {
		f.Errors, f.Message = ferrs, msg
		return h.renderCorpusForm(c, status, f)
	}
	if err != nil {
		return err
	}
	verb := "saved"
	if creating {
		verb = "created"
	}
	if creating && f.Gap != "" {
		// An answer to a group of knowledge gaps: the group is answered (a
		// group gone meanwhile has nothing to mark).
		err := h.Manage.MarkKnowledgeGap(ctx, a.Tenant.ID, manage.GapMark{Key: f.Gap, State: manage.GapAnswered, EntryID: created.ID})
		if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
			return err
		}
		h.Sessions.Put(ctx, dash.SessFlash, fmt.Sprintf("Entry %s created: the question is answered.", strings.TrimSpace(f.Title)))
		return c.Redirect(http.StatusSeeOther, "/admin/knowledge-gaps?state=answered")
	}
	h.Sessions.Put(ctx, dash.SessFlash, fmt.Sprintf("Entry %s %s.", strings.TrimSpace(f.Title), verb))
	return c.Redirect(http.StatusSeeOther, "/admin/corpus")
}

// RemoveCorpusEntry deletes one of the tenant's entries; htmx gets an empty row, removed in place.
func (h *Knowledge) RemoveCorpusEntry(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.DeleteCorpus(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id")); err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		return c.HTML(http.StatusOK, "")
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Entry deleted.")
	return c.Redirect(http.StatusSeeOther, "/admin/corpus")
}

// SaveCorpusImport imports an uploaded CSV file as POST /tenants/{slug}/corpus/import does:
// the good lines are imported, the ones already in the knowledge base
// skipped, the bad ones listed in the owner's words.
// htmx gets the result in place (and the table is told to refresh); a plain
// form post gets it as flash messages after the redirect.
func (h *Knowledge) SaveCorpusImport(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	var res views.ImportResult
	status := http.StatusOK
	data, err := handlers.ReadCSVUpload(c)
	if err == nil {
		var rep handlers.ImportReport
		rep, err = h.ImportCorpusCSV(ctx, a.Tenant, data)
		res.Imported, res.Skipped, res.Omitted = rep.Imported, rep.Skipped, rep.ErrorsOmitted
		for _, l := range rep.Errors {
			res.Lines = append(res.Lines, views.ImportLine{Line: l.Line, Message: views.OwnerWords(l.Error)})
		}
	}
	if err != nil {
		switch parley.ErrorKind(err) {
		case parley.KindInvalid, parley.KindTooLarge, parley.KindRateLimited:
		default:
			return err
		}
		res.Error, status = views.OwnerWords(err.Error()), http.StatusUnprocessableEntity
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		if res.Imported > 0 {
			c.Response().Header().Set("HX-Trigger", "corpusChanged")
		}
		return handlers.Render(c, status, views.ImportResultView(&res))
	}
	if res.Error != "" {
		h.Sessions.Put(ctx, dash.SessFlashError, res.Error)
		return c.Redirect(http.StatusSeeOther, "/admin/corpus")
	}
	// As the htmx result says it: the count of entries unless only errors
	// are to be told, then the lines skipped, then the lines refused.
	var done []string
	if res.Imported > 0 || len(res.Lines) == 0 {
		done = append(done, "Imported "+views.Count(res.Imported, "entry", "entries")+".")
	}
	if res.Skipped > 0 {
		done = append(done, "Skipped "+views.Count(res.Skipped, "line", "lines")+" already in the knowledge base.")
	}
	if len(done) > 0 {
		h.Sessions.Put(ctx, dash.SessFlash, strings.Join(done, " "))
	}
	if len(res.Lines) > 0 {
		parts := make([]string, len(res.Lines))
		for i, l := range res.Lines {
			parts[i] = fmt.Sprintf("line %d: %s", l.Line, l.Message)
		}
		if res.Omitted > 0 {
			parts = append(parts, fmt.Sprintf("and %d more lines", res.Omitted))
		}
		h.Sessions.Put(ctx, dash.SessFlashError, views.Count(len(res.Lines)+res.Omitted, "line was", "lines were")+
			" not imported because of errors; fix them and import the file again: "+strings.Join(parts, "; "))
	}
	return c.Redirect(http.StatusSeeOther, "/admin/corpus")
}
