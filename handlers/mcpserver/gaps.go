package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// The knowledge gaps' and corrections' tools (issue 40's loop, for an
// agent): read the questions the assistant answered badly, give the right
// answer to one of its answers, and mark a group answered or dismissed.
// Each runs the management operation the REST API runs, under the same
// scopes: the gaps show visitors' questions (conversations read), the
// answers change the knowledge base (corpus write).

// gapTools are the knowledge gaps' and corrections' tools.
func (h *Handler) gapTools() []ManageTool {
	return []ManageTool{
		{Name: "list_knowledge_gaps", Scope: auth.ScopeMCPConversationsRead, ReadOnly: true,
			Description: "List the visitors' questions the assistant could not answer well (nothing matched in the knowledge base, it said it did not know, " +
				"the visitor voted the answer down or asked for a person), grouped by wording, the most asked first, with examples; " +
				"the last 30 days by default, the open groups by default.",
			Input: object(schema{
				"from":    str("Start: RFC 3339 date-time, or YYYY-MM-DD", 0),
				"to":      str("End (exclusive): RFC 3339 date-time, or YYYY-MM-DD (that whole day included)", 0),
				"channel": enum("Channel", parley.ConversationChannels),
				"segment": str("Slug or id of a segment", 0),
				"state":   enum("Which groups: open (default), answered, dismissed or all", manage.GapStates),
				"page":    integer("Page number, from 1", 1, parley.MaxPage),
				"limit":   integer("Groups per page", 1, manage.MaxGapPage),
			}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := manage.NewGapListing()
				a := struct {
					State string `json:"state"`
					Page  *int   `json:"page"`
					Limit *int   `json:"limit"`
				}{}
				if err := listingArgs(args, &a, &l.Scope); err != nil {
					return nil, err
				}
				l.Scope.Location = time.UTC
				if a.State != "" {
					l.State = a.State
				}
				if a.Page != nil {
					l.Page = *a.Page
				}
				if a.Limit != nil {
					l.Limit = *a.Limit
				}
				page, err := h.Manage.ListKnowledgeGaps(ctx, t.ID, l, h.Clock())
				if err != nil {
					return nil, err
				}
				return resource.NewKnowledgeGapListJSON(l, page), nil
			}},
		{Name: "mark_knowledge_gap", Scope: auth.ScopeMCPCorpusWrite,
			Description: "Set what was done about a group of knowledge gaps (its key, from list_knowledge_gaps): answered (optionally by the " +
				"knowledge base entry entryId), dismissed, or open again.",
			Input: object(schema{
				"key":     str("The group's key", 0),
				"state":   enum("answered, dismissed or open", manage.GapMarks),
				"entryId": str("With answered: the id of the knowledge base entry that answers it", 0),
			}, "key", "state"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				var m manage.GapMark
				if err := listingArgs(args, &m); err != nil {
					return nil, err
				}
				if err := h.Manage.MarkKnowledgeGap(ctx, t.ID, m); err != nil {
					return nil, err
				}
				return resource.NewKnowledgeGapStateJSON(m), nil
			}},
		{Name: "correct_answer", Scope: auth.ScopeMCPCorpusWrite,
			Description: "Give the right answer to one of the assistant's answers (a message of role assistant in a conversation): it becomes a " +
				"knowledge base entry titled with the visitor's question (or updates the one made from the same question before), which the " +
				"assistant cites first the next time the question is asked. Within the plan's corpus limit.",
			Input: object(schema{
				"conversationId": idArg("conversation"),
				"messageId":      idArg("assistant's message"),
				"answer":         str("The right answer (Markdown)", parley.MaxCorpusContent),
				"title":          str("The entry's title; the visitor's question when omitted", parley.MaxCorpusTitle),
			}, "conversationId", "messageId", "answer"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				a := struct {
					ConversationID string             `json:"conversationId"`
					MessageID      string             `json:"messageId"`
					Answer         parley.Opt[string] `json:"answer"`
					Title          parley.Opt[string] `json:"title"`
				}{}
				problems := parley.FieldErrors{}
				if err := listingArgs(args, &a); err != nil {
					return nil, err
				}
				if a.ConversationID == "" {
					problems.Add("conversationId", "is required: a non-empty string")
				}
				if a.MessageID == "" {
					problems.Add("messageId", "is required: a non-empty string")
				}
				if err := problems.Err(); err != nil {
					return nil, err
				}
				res, err := h.Manage.CorrectAnswer(ctx, t, a.ConversationID, a.MessageID, manage.CorrectionInput{Answer: a.Answer, Title: a.Title})
				if err != nil {
					return nil, err
				}
				return resource.CorpusUpsertJSON{Corpus: resource.NewCorpusJSON(res.Entry), Created: res.Created}, nil
			}},
	}
}
