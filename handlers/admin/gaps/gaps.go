// Package gaps is the dashboard's Knowledge gaps (/admin/knowledge-gaps,
// issue 40): the visitors' questions the assistant could not answer well,
// grouped by wording (db/gaps through manage), with their filters (dates in
// the tenant's time zone, channel, segment, state), "Add an answer", which
// opens the knowledge base's new entry prefilled with the question (saving
// it marks the group answered: handlers/admin's SaveCorpusEntry), and
// "Dismiss" or "Reopen". The routes are an admin's, as the knowledge base's.
package gaps

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	dbgaps "github.com/parley/parley/db/gaps"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// Gaps is the dashboard's Knowledge gaps area.
type Gaps struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Gaps { return &Gaps{b} }

// pageSize is how many groups a page shows.
const pageSize = 20

// Path is the page's address.
const Path = "/admin/knowledge-gaps"

// signalWords are the signs of a gap in the owner's words, by bit.
var signalWords = []struct {
	bit  int
	word string
}{
	{parley.GapNoMatch, "Nothing in the knowledge base"},
	{parley.GapNotKnown, "Said it did not know"},
	{dbgaps.SignVotedDown, "Voted down"},
	{parley.GapPersonAsked, "Asked for a person next"},
}

func words(signals int) []string {
	var out []string
	for _, s := range signalWords {
		if signals&s.bit != 0 {
			out = append(out, s.word)
		}
	}
	return out
}

var (
	stateTabs = []views.Option{{Value: dbgaps.StateOpen, Label: "To answer"}, {Value: dbgaps.StateAnswered, Label: "Answered"},
		{Value: dbgaps.StateDismissed, Label: "Dismissed"}, {Value: dbgaps.StateAll, Label: "All"}}
	channelChoices = []views.Option{{Value: parley.ChannelWeb, Label: "Website chat"}, {Value: parley.ChannelVoice, Label: "Phone"},
		{Value: parley.ChannelAPI, Label: "API"}, {Value: parley.ChannelAgent, Label: "AI agents"}}
	// fieldWords say what to do about a bad filter.
	fieldWords = map[string]string{"from": "Enter a date.", "to": "Enter a date after the start.", "channel": "Choose a channel from the list.",
		"segment": "Choose a segment from the list.", "state": "Choose a tab.", "page": "This page does not exist.", "limit": "Clear the filters."}
)

// ShowGapsPage answers GET /admin/knowledge-gaps: a page of the groups
// with the filters of the query (from, to: dates in the tenant's time
// zone; channel; segment: a slug; state; page).
func (h *Gaps) ShowGapsPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	loc := resource.TenantLocation(t)
	q := c.QueryParams()
	v := views.KnowledgeGapsView{From: q.Get("from"), To: q.Get("to"), Channel: q.Get("channel"), Segment: q.Get("segment"),
		State: q.Get("state"), States: stateTabs, Channels: channelChoices, TimeZone: loc.String()}
	if v.State == "" {
		v.State = dbgaps.StateOpen
	}
	v.Filtered = v.From != "" || v.To != "" || v.Channel != "" || v.Segment != ""
	segs, err := h.DB.ListSegments(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, s := range segs {
		v.Segments = append(v.Segments, views.Option{Value: s.Slug, Label: s.Name})
	}
	l := manage.NewGapListing()
	l.Limit, l.State = pageSize, v.State
	l.Scope = parley.ConversationScope{From: v.From, To: v.To, Channel: v.Channel, Segment: v.Segment, Location: loc}
	if p := q.Get("page"); p != "" {
		if l.Page, err = strconv.Atoi(p); err != nil {
			l.Page = 0
		}
	}
	v.Query = "?" + strings.TrimPrefix(gapQuery(v), "&")
	page, err := h.Manage.ListKnowledgeGaps(ctx, t.ID, l, h.Clock())
	if err != nil {
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindInvalid {
			return err
		}
		v.Errors = views.Errors{}
		d, _ := e.Details.(map[string]string)
		for k := range d {
			field := k
			if field == "page" || field == "limit" || field == "state" {
				field = "from"
			}
			v.Errors[field] = fieldWords[k]
		}
		return handlers.Render(c, http.StatusUnprocessableEntity, views.KnowledgeGapsPage(dash.Page(c, h.Sessions, "Knowledge gaps", "corpus"), v))
	}
	v.Total = page.Total
	for _, g := range page.Groups {
		v.Rows = append(v.Rows, row(g, loc))
	}
	if l.Page > 1 {
		v.Prev = Path + v.Query + "&page=" + strconv.Itoa(l.Page-1)
	}
	if l.Page*l.Limit < page.Total {
		v.Next = Path + v.Query + "&page=" + strconv.Itoa(l.Page+1)
	}
	return handlers.Render(c, http.StatusOK, views.KnowledgeGapsPage(dash.Page(c, h.Sessions, "Knowledge gaps", "corpus"), v))
}

// gapQuery is the page's filters as query parameters, state first.
func gapQuery(v views.KnowledgeGapsView) string {
	q := url.Values{}
	for k, val := range map[string]string{"from": v.From, "to": v.To, "channel": v.Channel, "segment": v.Segment} {
		if val != "" {
			q.Set(k, val)
		}
	}
	s := "state=" + url.QueryEscape(v.State)
	if len(q) > 0 {
		s += "&" + q.Encode()
	}
	return s
}

// row is a group in the owner's words.
func row(g dbgaps.Group, loc *time.Location) views.KnowledgeGapRow {
	r := views.KnowledgeGapRow{Key: g.Key, Question: g.Question, Count: g.Count, Signals: words(g.Signals), State: g.State,
		LastSeen: g.LastSeen.In(loc).Format("2 Jan 2006, 15:04"), LastISO: g.LastSeen.UTC().Format(time.RFC3339)}
	if r.Question == "" {
		r.Question = g.Key
	}
	r.AnswerHref = "/admin/corpus/new?" + url.Values{"gap": {g.Key}, "question": {parley.Clip(r.Question, 255)}}.Encode()
	if g.EntryID != "" {
		r.EntryHref = "/admin/corpus/" + g.EntryID
	}
	for _, e := range g.Examples {
		r.Examples = append(r.Examples, views.KnowledgeGapExample{Question: e.Question, Href: "/admin/conversations/" + e.ConversationID,
			When: e.At.In(loc).Format("2 Jan 2006, 15:04"), WhenISO: e.At.UTC().Format(time.RFC3339),
			Signals: strings.Join(words(e.Signals), ", ")})
	}
	return r
}

// SaveGapState answers POST /admin/knowledge-gaps/state: the group of
// key is dismissed or open again (state), and the owner comes back to the
// page they were on (back: its query, the page's own only).
func (h *Gaps) SaveGapState(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	key, state := c.FormValue("key"), c.FormValue("state")
	err := h.Manage.MarkKnowledgeGap(ctx, t.ID, manage.GapMark{Key: key, State: state})
	if parley.ErrorKind(err) == parley.KindInvalid {
		return handlers.Invalid("Choose dismiss or reopen")
	}
	if err != nil {
		return err
	}
	msg := "The question is dismissed: it shows under Dismissed."
	if state == dbgaps.StateOpen {
		msg = "The question is open again."
	}
	h.Sessions.Put(ctx, dash.SessFlash, msg)
	back := c.FormValue("back")
	if !strings.HasPrefix(back, "?") || strings.ContainsAny(back, "#\\") {
		back = ""
	}
	return dash.SeeOther(c, Path+back)
}
