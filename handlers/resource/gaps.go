package resource

import (
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/gaps"
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

// KnowledgeGapExampleJSON is one question of a group as a visitor asked it.
type KnowledgeGapExampleJSON struct {
	Question       string    `json:"question"`
	ConversationID string    `json:"conversationId"`
	At             time.Time `json:"at"`
	Signals        []string  `json:"signals"`
}

// KnowledgeGapJSON is a group of questions the assistant answered badly.
type KnowledgeGapJSON struct {
	Key      string                    `json:"key"`
	Question string                    `json:"question"`
	Count    int64                     `json:"count"`
	Signals  []string                  `json:"signals"`
	LastSeen time.Time                 `json:"lastSeen"`
	State    string                    `json:"state"`
	EntryID  *string                   `json:"entryId"`
	Examples []KnowledgeGapExampleJSON `json:"examples"`
}

// KnowledgeGapListJSON is a page of knowledge gaps as the REST API
// (GET /tenants/{slug}/knowledge-gaps) and the MCP tool
// list_knowledge_gaps answer it.
type KnowledgeGapListJSON struct {
	KnowledgeGaps []KnowledgeGapJSON `json:"knowledgeGaps"`
	Pagination    gapPaginationJSON  `json:"pagination"`
}

// gapPaginationJSON counts pages as the other paged listings of the
// REST API's later resources do (products, submissions): pages is
// ceil(total / limit).
type gapPaginationJSON struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
}

// NewKnowledgeGapListJSON is the page of listing l.
func NewKnowledgeGapListJSON(l manage.GapListing, page gaps.Page) KnowledgeGapListJSON {
	out := KnowledgeGapListJSON{KnowledgeGaps: make([]KnowledgeGapJSON, len(page.Groups)),
		Pagination: gapPaginationJSON{Page: l.Page, Limit: l.Limit, Total: page.Total, Pages: (page.Total + l.Limit - 1) / l.Limit}}
	for i, g := range page.Groups {
		j := KnowledgeGapJSON{Key: g.Key, Question: g.Question, Count: g.Count, Signals: gapSignals(g.Signals),
			LastSeen: g.LastSeen.UTC(), State: g.State, EntryID: OptionalID(g.EntryID),
			Examples: make([]KnowledgeGapExampleJSON, len(g.Examples))}
		for k, e := range g.Examples {
			j.Examples[k] = KnowledgeGapExampleJSON{Question: e.Question, ConversationID: e.ConversationID, At: e.At.UTC(),
				Signals: gapSignals(e.Signals)}
		}
		out.KnowledgeGaps[i] = j
	}
	return out
}

// KnowledgeGapStateJSON is a group's state as it now is, after a mark.
type KnowledgeGapStateJSON struct {
	Key     string  `json:"key"`
	State   string  `json:"state"`
	EntryID *string `json:"entryId"`
}

// NewKnowledgeGapStateJSON is the state m set.
func NewKnowledgeGapStateJSON(m manage.GapMark) KnowledgeGapStateJSON {
	return KnowledgeGapStateJSON{Key: m.Key, State: m.State, EntryID: OptionalID(m.EntryID)}
}

// OptionalID is id, or nil (null on the wire) when empty.
func OptionalID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}
