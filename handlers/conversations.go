package handlers

import (
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
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

// scopeQuery reads the query's from, to, channel and segment, dates in loc.
func scopeQuery(c echo.Context, loc *time.Location) parley.ConversationScope {
	return parley.ConversationScope{From: c.QueryParam("from"), To: c.QueryParam("to"), Channel: c.QueryParam("channel"),
		Segment: c.QueryParam("segment"), Location: loc}
}

// conversationScope reads the filters the list and the export share: from,
// to (dates in UTC), channel and segment (a slug or id of the tenant's;
// another is 400).
func (h *Handler) conversationScope(c echo.Context, f *db.ConversationFilter) error {
	g, err := h.Manage.ConversationFilter(c.Request().Context(), tenantFrom(c).ID, scopeQuery(c, time.UTC))
	if err != nil {
		return err
	}
	f.From, f.To, f.Channel, f.SegmentID = g.From, g.To, g.Channel, g.SegmentID
	return nil
}

// ListConversations answers GET /tenants/{slug}/conversations: the query's
// page, limit, scope (dates in UTC), status, visitorId, toolType and search
// (checked even when empty), answered {conversations, pagination}.
func (h *Handler) ListConversations(c echo.Context) error {
	l := parley.NewConversationListing()
	queryInt(c, "page", &l.Page)
	queryInt(c, "limit", &l.Limit)
	l.Scope = scopeQuery(c, time.UTC)
	l.Status, l.VisitorID, l.ToolType = c.QueryParam("status"), c.QueryParam("visitorId"), c.QueryParam("toolType")
	if _, searched := c.QueryParams()["search"]; searched {
		l.Search = parley.Some(c.QueryParam("search"))
	}
	page, err := h.Manage.ListConversations(c.Request().Context(), tenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conversationsJSON(l, page))
}

// conversationsJSON is a page of conversations as the listings answer it:
// {conversations, pagination}.
func conversationsJSON(l parley.ConversationListing, page db.ConversationPage) map[string]any {
	out := make([]conversationItemJSON, len(page.Conversations))
	for i, it := range page.Conversations {
		out[i] = newConversationItemJSON(it)
	}
	pagination := map[string]any{"page": l.Page, "limit": l.Limit, "total": page.Total, "pages": (page.Total + l.Limit - 1) / l.Limit}
	if page.TotalCapped {
		pagination["totalCapped"] = true
	}
	return map[string]any{"conversations": out, "pagination": pagination}
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
		Metadata: conversationMetadataJSON{UserAgent: NonEmptyPtr(c.Metadata.UserAgent), Referrer: NonEmptyPtr(c.Metadata.Referrer),
			Page: NonEmptyPtr(c.Metadata.Page)},
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
