package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/gaps"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/manage"
)

// gapSignalNames are the names of a knowledge gap's signs on the wire, by
// bit (parley.Gap*, gaps.SignVotedDown), in the order they are listed.
var gapSignalNames = []struct {
	bit  int
	name string
}{
	{parley.GapNoMatch, "noMatch"},
	{parley.GapNotKnown, "notKnown"},
	{gaps.SignVotedDown, "votedDown"},
	{parley.GapPersonAsked, "personAsked"},
}

// gapSignals are the names of the bits of signals.
func gapSignals(signals int) []string {
	out := []string{}
	for _, s := range gapSignalNames {
		if signals&s.bit != 0 {
			out = append(out, s.name)
		}
	}
	return out
}

type knowledgeGapExampleJSON struct {
	Question       string    `json:"question"`
	ConversationID string    `json:"conversationId"`
	At             time.Time `json:"at"`
	Signals        []string  `json:"signals"`
}

type knowledgeGapJSON struct {
	Key      string                    `json:"key"`
	Question string                    `json:"question"`
	Count    int64                     `json:"count"`
	Signals  []string                  `json:"signals"`
	LastSeen time.Time                 `json:"lastSeen"`
	State    string                    `json:"state"`
	EntryID  *string                   `json:"entryId"`
	Examples []knowledgeGapExampleJSON `json:"examples"`
}

// knowledgeGapListJSON is what GET /tenants/{slug}/knowledge-gaps answers.
type knowledgeGapListJSON struct {
	KnowledgeGaps []knowledgeGapJSON `json:"knowledgeGaps"`
	Pagination    paginationJSON     `json:"pagination"`
}

// knowledgeGapStateJSON is what POST /tenants/{slug}/knowledge-gaps/state
// answers: the group's state as it now is.
type knowledgeGapStateJSON struct {
	Key     string  `json:"key"`
	State   string  `json:"state"`
	EntryID *string `json:"entryId"`
}

func optionalID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// ListKnowledgeGaps answers GET /tenants/{slug}/knowledge-gaps: the
// questions the assistant could not answer well, grouped by wording, the
// most asked first, in the window (from, to; the last 30 days by
// default), channel and segment asked for, the groups of state (open by
// default), one page.
func (h *Knowledge) ListKnowledgeGaps(c echo.Context) error {
	l := manage.NewGapListing()
	handlers.QueryInt(c, "page", &l.Page)
	handlers.QueryInt(c, "limit", &l.Limit)
	l.Scope = parley.ConversationScope{From: c.QueryParam("from"), To: c.QueryParam("to"), Channel: c.QueryParam("channel"),
		Segment: c.QueryParam("segment"), Location: time.UTC}
	if s := c.QueryParam("state"); s != "" {
		l.State = s
	}
	page, err := h.Manage.ListKnowledgeGaps(c.Request().Context(), handlers.TenantFrom(c).ID, l, h.Clock())
	if err != nil {
		return err
	}
	out := knowledgeGapListJSON{KnowledgeGaps: make([]knowledgeGapJSON, len(page.Groups)),
		Pagination: newPaginationJSON(l.Page, l.Limit, page.Total)}
	for i, g := range page.Groups {
		j := knowledgeGapJSON{Key: g.Key, Question: g.Question, Count: g.Count, Signals: gapSignals(g.Signals),
			LastSeen: g.LastSeen.UTC(), State: g.State, EntryID: optionalID(g.EntryID),
			Examples: make([]knowledgeGapExampleJSON, len(g.Examples))}
		for k, e := range g.Examples {
			j.Examples[k] = knowledgeGapExampleJSON{Question: e.Question, ConversationID: e.ConversationID, At: e.At.UTC(),
				Signals: gapSignals(e.Signals)}
		}
		out.KnowledgeGaps[i] = j
	}
	return c.JSON(http.StatusOK, out)
}

// MarkKnowledgeGap answers POST /tenants/{slug}/knowledge-gaps/state:
// body {key, state, entryId}. The group of key is answered (by the entry,
// optional), dismissed, or open again.
func (h *Knowledge) MarkKnowledgeGap(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var m manage.GapMark
	m.Problems = jsonbody.DecodeFields(raw, &m)
	if err := h.Manage.MarkKnowledgeGap(c.Request().Context(), handlers.TenantFrom(c).ID, m); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, knowledgeGapStateJSON{Key: m.Key, State: m.State, EntryID: optionalID(m.EntryID)})
}
