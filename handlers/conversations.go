package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Conversations list limits: the spec's, and the search bounds chosen here
// (the submissions list's; documented in the OpenAPI document).
const (
	defaultConversationsLimit  = 20
	maxConversationsLimit      = 100
	minConversationSearchChars = 2
	maxConversationSearchChars = 200
)

// conversationChannels and conversationStatuses are the values the filters take.
var (
	conversationChannels = []string{parley.ChannelWeb, parley.ChannelAgent, parley.ChannelVoice, parley.ChannelAPI}
	conversationStatuses = []string{parley.StatusBot, parley.StatusEscalated}
)

type conversationSegmentJSON struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

type conversationFeedbackJSON struct {
	Positive int `json:"positive"`
	Negative int `json:"negative"`
}

// conversationItemJSON is a conversation in the list.
type conversationItemJSON struct {
	ID               string                   `json:"id"`
	SessionID        string                   `json:"sessionId"`
	CreatedAt        time.Time                `json:"createdAt"`
	UpdatedAt        time.Time                `json:"updatedAt"`
	LastMessageAt    time.Time                `json:"lastMessageAt"`
	MessageCount     int                      `json:"messageCount"`
	PageURL          *string                  `json:"pageUrl"`
	Channel          string                   `json:"channel"`
	Status           string                   `json:"status"`
	VisitorType      string                   `json:"visitorType"`
	VisitorID        *string                  `json:"visitorId"`
	Segment          *conversationSegmentJSON `json:"segment"`
	Intent           *string                  `json:"intent"`
	FirstUserMessage *string                  `json:"firstUserMessage"`
	Preview          *string                  `json:"preview"`
	ToolCallsCount   int                      `json:"toolCallsCount"`
	Feedback         conversationFeedbackJSON `json:"feedback"`
	ToolHistory      []parley.ToolCall        `json:"toolHistory"`
}

// intentOf is the conversation's intent (parley.Intent), nil when the
// visitor has not written yet or wrote nothing it keeps.
func intentOf(first *string) *string {
	if first == nil {
		return nil
	}
	if in := parley.Intent(*first); in != "" {
		return &in
	}
	return nil
}

// lastMessagePreview cuts a preview read with one character more than
// PreviewRunes, marking the cut with an ellipsis.
func lastMessagePreview(p *string) *string {
	if p == nil || utf8.RuneCountInString(*p) <= db.PreviewRunes {
		return p
	}
	s := preview(*p, db.PreviewRunes) + "…"
	return &s
}

// utcToolHistory returns the tool history with its timestamps in UTC, never nil.
func utcToolHistory(calls []parley.ToolCall) []parley.ToolCall {
	out := make([]parley.ToolCall, len(calls))
	for i, tc := range calls {
		tc.Timestamp = tc.Timestamp.UTC()
		out[i] = tc
	}
	return out
}

func newConversationItemJSON(it db.ConversationItem) conversationItemJSON {
	c := it.Conversation
	out := conversationItemJSON{ID: c.ID, SessionID: c.SessionID, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		LastMessageAt: c.LastMessageAt.UTC(), MessageCount: c.MessageCount, PageURL: c.PageURL, Channel: c.Channel,
		Status: c.Status, VisitorType: c.VisitorType, VisitorID: c.VisitorID, Intent: intentOf(c.FirstUserMessage),
		FirstUserMessage: c.FirstUserMessage, Preview: lastMessagePreview(it.Preview), ToolCallsCount: c.ToolCallsCount,
		Feedback:    conversationFeedbackJSON{Positive: c.FeedbackPositive, Negative: c.FeedbackNegative},
		ToolHistory: utcToolHistory(it.ToolHistory)}
	if it.SegmentSlug != nil && it.SegmentName != nil {
		out.Segment = &conversationSegmentJSON{Slug: *it.SegmentSlug, Name: *it.SegmentName}
	}
	return out
}

// conversationScope reads the filters the list and the export share: from,
// to, channel and segment (a slug or id of the tenant's; another is 400).
func (h *Handler) conversationScope(c echo.Context, f *db.ConversationFilter) error {
	return h.conversationScopeIn(c.Request().Context(), tenantFrom(c).ID, c, f, time.UTC)
}

// conversationScopeIn is conversationScope with dates in loc, for the
// tenant's query q.
func (h *Handler) conversationScopeIn(ctx context.Context, tenantID string, q query, f *db.ConversationFilter, loc *time.Location) error {
	var err error
	if f.From, err = timeParamIn(q, "from", false, loc); err != nil {
		return err
	}
	if f.To, err = timeParamIn(q, "to", true, loc); err != nil {
		return err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return queryError("to", "must be after from")
	}
	if f.Channel = q.QueryParam("channel"); f.Channel != "" && !slices.Contains(conversationChannels, f.Channel) {
		return queryError("channel", "must be web, agent, voice or api")
	}
	if ref := q.QueryParam("segment"); ref != "" {
		s, err := h.DB.Segment(ctx, tenantID, ref)
		if parley.ErrorKind(err) == parley.KindNotFound {
			return queryError("segment", "must be the slug of one of the tenant's segments")
		}
		if err != nil {
			return err
		}
		f.SegmentID = s.ID
	}
	return nil
}

// conversationFilter reads and checks the query of GET /tenants/{slug}/conversations
// (and the arguments of the MCP tool list_conversations).
func (h *Handler) conversationFilter(ctx context.Context, tenantID string, q query) (db.ConversationFilter, error) {
	var f db.ConversationFilter
	var err error
	if f.Page, err = intParam(q, "page", 1, 1, parley.MaxPage); err != nil {
		return f, err
	}
	if f.Limit, err = intParam(q, "limit", defaultConversationsLimit, 1, maxConversationsLimit); err != nil {
		return f, err
	}
	if err := h.conversationScopeIn(ctx, tenantID, q, &f, time.UTC); err != nil {
		return f, err
	}
	if f.VisitorID = q.QueryParam("visitorId"); f.VisitorID != "" && !uuidPattern.MatchString(f.VisitorID) {
		return f, queryError("visitorId", "must be a uuid")
	}
	if v := q.QueryParam("toolType"); v != "" {
		f.ToolType = strings.ToUpper(v)
		all := append(slices.Clone(parley.UserToolTypes), parley.SyntheticToolTypes...)
		if !slices.Contains(all, f.ToolType) {
			return f, queryError("toolType", "must be one of "+strings.Join(all, ", "))
		}
	}
	if f.Status = q.QueryParam("status"); f.Status != "" && !slices.Contains(conversationStatuses, f.Status) {
		return f, queryError("status", "must be BOT or ESCALATED")
	}
	if _, searched := q.QueryParams()["search"]; searched {
		f.Search = strings.TrimSpace(q.QueryParam("search"))
		if n := utf8.RuneCountInString(f.Search); n < minConversationSearchChars || n > maxConversationSearchChars {
			return f, queryError("search", fmt.Sprintf("must be %d to %d characters", minConversationSearchChars, maxConversationSearchChars))
		}
	}
	return f, nil
}

// ListConversations answers GET /tenants/{slug}/conversations: {conversations, pagination}.
func (h *Handler) ListConversations(c echo.Context) error {
	out, err := h.listConversations(c.Request().Context(), tenantFrom(c).ID, c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// listConversations reads the query of a conversations listing and answers
// {conversations, pagination}.
func (h *Handler) listConversations(ctx context.Context, tenantID string, params query) (map[string]any, error) {
	f, err := h.conversationFilter(ctx, tenantID, params)
	if err != nil {
		return nil, err
	}
	page, err := h.DB.ListConversations(ctx, tenantID, f)
	if err != nil {
		return nil, err
	}
	out := make([]conversationItemJSON, len(page.Conversations))
	for i, it := range page.Conversations {
		out[i] = newConversationItemJSON(it)
	}
	pagination := map[string]any{"page": f.Page, "limit": f.Limit, "total": page.Total, "pages": (page.Total + f.Limit - 1) / f.Limit}
	if page.TotalCapped {
		pagination["totalCapped"] = true
	}
	return map[string]any{"conversations": out, "pagination": pagination}, nil
}

type conversationMessageJSON struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
	Feedback  *int      `json:"feedback"`
	// Knowledge is what the answer's prompt held from the knowledge base:
	// [] for a visitor's message and for answers stored before it was recorded.
	Knowledge []parley.KnowledgeRef `json:"knowledge"`
}

type conversationMetadataJSON struct {
	UserAgent *string `json:"userAgent"`
	Referrer  *string `json:"referrer"`
	Page      *string `json:"page"`
}

// conversationDetailJSON is one conversation as GET /tenants/{slug}/conversations/{id} shows it.
type conversationDetailJSON struct {
	ID               string                    `json:"id"`
	SessionID        string                    `json:"sessionId"`
	Segment          *string                   `json:"segment"`
	StartedAt        time.Time                 `json:"startedAt"`
	LastMessageAt    time.Time                 `json:"lastMessageAt"`
	UpdatedAt        time.Time                 `json:"updatedAt"`
	Channel          string                    `json:"channel"`
	Status           string                    `json:"status"`
	VisitorType      string                    `json:"visitorType"`
	VisitorID        *string                   `json:"visitorId"`
	AgentModel       *string                   `json:"agentModel"`
	PageURL          *string                   `json:"pageUrl"`
	Locale           *string                   `json:"locale"`
	Intent           *string                   `json:"intent"`
	FirstUserMessage *string                   `json:"firstUserMessage"`
	MessageCount     int                       `json:"messageCount"`
	ToolCallsCount   int                       `json:"toolCallsCount"`
	Feedback         conversationFeedbackJSON  `json:"feedback"`
	Metadata         conversationMetadataJSON  `json:"metadata"`
	Messages         []conversationMessageJSON `json:"messages"`
	ToolHistory      []parley.ToolCall         `json:"toolHistory"`
	// VoiceCall is the call of a conversation of channel voice.
	VoiceCall *voiceCallJSON `json:"voiceCall,omitempty"`
}

// voiceCallJSON is a voice conversation's call: the orchestrator's end-of-call
// report and status updates. The recording's URL is not shown:
// GET /voice/{slug}/recordings/{callId} serves the recording.
type voiceCallJSON struct {
	CallID          string     `json:"callId"`
	Status          string     `json:"status"`
	CallerNumber    *string    `json:"callerNumber"`
	StartedAt       *time.Time `json:"startedAt"`
	EndedAt         *time.Time `json:"endedAt"`
	EndedReason     *string    `json:"endedReason"`
	DurationSeconds *float64   `json:"durationSeconds"`
	Cost            *float64   `json:"cost"`
	Summary         *string    `json:"summary"`
	Transcript      *string    `json:"transcript"`
	HasRecording    bool       `json:"hasRecording"`
}

func newConversationDetailJSON(d db.ConversationDetail) conversationDetailJSON {
	c := d.Conversation
	msgs := make([]conversationMessageJSON, len(d.Messages))
	for i, m := range d.Messages {
		msgs[i] = conversationMessageJSON{ID: m.ID, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt.UTC(), Feedback: m.Feedback,
			Knowledge: m.Knowledge}
		if msgs[i].Knowledge == nil {
			msgs[i].Knowledge = []parley.KnowledgeRef{}
		}
	}
	return conversationDetailJSON{ID: c.ID, SessionID: c.SessionID, Segment: d.SegmentSlug, StartedAt: c.CreatedAt.UTC(),
		LastMessageAt: c.LastMessageAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), Channel: c.Channel, Status: c.Status,
		VisitorType: c.VisitorType, VisitorID: c.VisitorID, AgentModel: c.AgentModel, PageURL: c.PageURL, Locale: c.Locale,
		Intent: intentOf(c.FirstUserMessage), FirstUserMessage: c.FirstUserMessage, MessageCount: c.MessageCount,
		ToolCallsCount: c.ToolCallsCount, Feedback: conversationFeedbackJSON{Positive: c.FeedbackPositive, Negative: c.FeedbackNegative},
		Metadata: conversationMetadataJSON{UserAgent: nonEmptyPtr(c.Metadata.UserAgent), Referrer: nonEmptyPtr(c.Metadata.Referrer),
			Page: nonEmptyPtr(c.Metadata.Page)},
		Messages: msgs, ToolHistory: utcToolHistory(d.ToolHistory)}
}

// ShowConversation answers GET /tenants/{slug}/conversations/{id}: the
// conversation with its messages, tool history and metadata, and for a
// voice conversation its call.
func (h *Handler) ShowConversation(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := h.DB.ConversationDetail(ctx, tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	out := newConversationDetailJSON(d)
	if d.Conversation.Channel == parley.ChannelVoice {
		v, err := h.DB.VoiceCallOfConversation(ctx, tenantFrom(c).ID, d.Conversation.ID)
		if err != nil {
			return err
		}
		if v != nil {
			utc := func(t *time.Time) *time.Time {
				if t == nil {
					return nil
				}
				u := t.UTC()
				return &u
			}
			out.VoiceCall = &voiceCallJSON{CallID: v.CallID, Status: v.Status, CallerNumber: v.CallerNumber,
				StartedAt: utc(v.StartedAt), EndedAt: utc(v.EndedAt), EndedReason: v.EndedReason,
				DurationSeconds: v.DurationSeconds, Cost: v.Cost, Summary: v.Summary, Transcript: v.Transcript, HasRecording: v.HasRecording}
		}
	}
	return c.JSON(http.StatusOK, out)
}
