package resource

import (
	"time"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
)

type conversationSegmentJSON struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

type conversationFeedbackJSON struct {
	Positive int `json:"positive"`
	Negative int `json:"negative"`
}

// ConversationItemJSON is a conversation in the list.
type ConversationItemJSON struct {
	ID               string                   `json:"id"`
	SessionID        string                   `json:"sessionId"`
	CreatedAt        time.Time                `json:"createdAt"`
	UpdatedAt        time.Time                `json:"updatedAt"`
	LastMessageAt    time.Time                `json:"lastMessageAt"`
	MessageCount     int                      `json:"messageCount"`
	PageURL          *string                  `json:"pageUrl"`
	Channel          string                   `json:"channel"`
	Status           string                   `json:"status"`
	Assignee         *string                  `json:"assignee"`
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

// IntentOf is the conversation's intent (parley.Intent), nil when the
// visitor has not written yet or wrote nothing it keeps.
func IntentOf(first *string) *string {
	if first == nil {
		return nil
	}
	if in := parley.Intent(*first); in != "" {
		return &in
	}
	return nil
}

// LastMessagePreview cuts a preview read with one character more than
// PreviewRunes, marking the cut with an ellipsis.
func LastMessagePreview(p *string) *string {
	if p == nil || utf8.RuneCountInString(*p) <= listing.PreviewRunes {
		return p
	}
	s := parley.Clip(*p, listing.PreviewRunes) + "…"
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

func NewConversationItemJSON(it listing.ConversationItem) ConversationItemJSON {
	c := it.Conversation
	out := ConversationItemJSON{ID: c.ID, SessionID: c.SessionID, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		LastMessageAt: c.LastMessageAt.UTC(), MessageCount: c.MessageCount, PageURL: c.PageURL, Channel: c.Channel,
		Status: c.Status, Assignee: c.Assignee, VisitorType: c.VisitorType, VisitorID: c.VisitorID, Intent: IntentOf(c.FirstUserMessage),
		FirstUserMessage: c.FirstUserMessage, Preview: LastMessagePreview(it.Preview), ToolCallsCount: c.ToolCallsCount,
		Feedback:    conversationFeedbackJSON{Positive: c.FeedbackPositive, Negative: c.FeedbackNegative},
		ToolHistory: utcToolHistory(it.ToolHistory)}
	if it.SegmentSlug != nil && it.SegmentName != nil {
		out.Segment = &conversationSegmentJSON{Slug: *it.SegmentSlug, Name: *it.SegmentName}
	}
	return out
}

// ConversationListJSON is a page of conversations as the listings answer
// it: {conversations, pagination}.
type ConversationListJSON struct {
	Conversations []ConversationItemJSON     `json:"conversations"`
	Pagination    conversationPaginationJSON `json:"pagination"`
}

type conversationPaginationJSON struct {
	Page        int  `json:"page"`
	Limit       int  `json:"limit"`
	Total       int  `json:"total"`
	Pages       int  `json:"pages"`
	TotalCapped bool `json:"totalCapped,omitempty"` // present, true, only when capped
}

// NewConversationListJSON is the page of listing l.
func NewConversationListJSON(l parley.ConversationListing, page listing.ConversationPage) ConversationListJSON {
	out := make([]ConversationItemJSON, len(page.Conversations))
	for i, it := range page.Conversations {
		out[i] = NewConversationItemJSON(it)
	}
	return ConversationListJSON{Conversations: out, Pagination: conversationPaginationJSON{Page: l.Page, Limit: l.Limit,
		Total: page.Total, Pages: (page.Total + l.Limit - 1) / l.Limit, TotalCapped: page.TotalCapped}}
}

// ConversationMessageJSON is one message of a conversation.
type ConversationMessageJSON struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
	Feedback  *int      `json:"feedback"`
	// Knowledge is what the answer's prompt held from the knowledge base:
	// [] for a visitor's message and for answers stored before it was recorded.
	Knowledge []parley.KnowledgeRef `json:"knowledge"`
	// Sources are the entries of Knowledge the answer cites: those it
	// rests on ([] when it cites none).
	Sources []parley.KnowledgeRef `json:"sources"`
	// AuthorName is the person who wrote a message of role human; null
	// for the others.
	AuthorName *string `json:"authorName"`
}

// NewConversationMessageJSON is m as the conversation's detail shows it.
func NewConversationMessageJSON(m parley.Message) ConversationMessageJSON {
	out := ConversationMessageJSON{ID: m.ID, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt.UTC(), Feedback: m.Feedback,
		Knowledge: m.Knowledge, AuthorName: m.AuthorName}
	if out.Knowledge == nil {
		out.Knowledge = []parley.KnowledgeRef{}
	}
	out.Sources = []parley.KnowledgeRef{}
	for _, k := range out.Knowledge {
		if k.Cited {
			out.Sources = append(out.Sources, k)
		}
	}
	return out
}

type conversationMetadataJSON struct {
	UserAgent *string `json:"userAgent"`
	Referrer  *string `json:"referrer"`
	Page      *string `json:"page"`
}

// ConversationDetailJSON is one conversation as GET /tenants/{slug}/conversations/{id} shows it.
type ConversationDetailJSON struct {
	ID               string                    `json:"id"`
	SessionID        string                    `json:"sessionId"`
	Segment          *string                   `json:"segment"`
	StartedAt        time.Time                 `json:"startedAt"`
	LastMessageAt    time.Time                 `json:"lastMessageAt"`
	UpdatedAt        time.Time                 `json:"updatedAt"`
	Channel          string                    `json:"channel"`
	Status           string                    `json:"status"`
	Assignee         *string                   `json:"assignee"`
	TakenAt          *time.Time                `json:"takenAt"`
	EscalatedAt      *time.Time                `json:"escalatedAt"`
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
	Messages         []ConversationMessageJSON `json:"messages"`
	ToolHistory      []parley.ToolCall         `json:"toolHistory"`
	// Submissions are what the conversation produced (a lead form sent in
	// its chat, a tool's run), oldest first.
	Submissions []ConversationSubmissionJSON `json:"submissions"`
	// VoiceCall is the call of a conversation of channel voice.
	VoiceCall *VoiceCallJSON `json:"voiceCall,omitempty"`
}

// VoiceCallJSON is a voice conversation's call: the orchestrator's end-of-call
// report and status updates. The recording's URL is not shown:
// GET /voice/{slug}/recordings/{callId} serves the recording.
type VoiceCallJSON struct {
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

// ConversationSubmissionJSON is a submission as its conversation lists it.
type ConversationSubmissionJSON struct {
	ID        string    `json:"id"`
	ToolType  string    `json:"toolType"`
	ToolName  string    `json:"toolName"`
	Channel   string    `json:"channel"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewConversationDetailJSON is d, with subs, its submissions, as the API
// answers it.
func NewConversationDetailJSON(d listing.ConversationDetail, subs []parley.Submission) ConversationDetailJSON {
	listed := make([]ConversationSubmissionJSON, len(subs))
	for i, s := range subs {
		listed[i] = ConversationSubmissionJSON{ID: s.ID, ToolType: s.ToolType, ToolName: s.ToolName, Channel: s.Channel,
			Status: s.Status, CreatedAt: s.CreatedAt.UTC()}
	}
	c := d.Conversation
	msgs := make([]ConversationMessageJSON, len(d.Messages))
	for i, m := range d.Messages {
		msgs[i] = NewConversationMessageJSON(m)
	}
	return ConversationDetailJSON{ID: c.ID, SessionID: c.SessionID, Segment: d.SegmentSlug, StartedAt: c.CreatedAt.UTC(),
		LastMessageAt: c.LastMessageAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), Channel: c.Channel, Status: c.Status,
		Assignee: c.Assignee, TakenAt: parley.UTCPtr(c.TakenAt), EscalatedAt: parley.UTCPtr(c.EscalatedAt),
		VisitorType: c.VisitorType, VisitorID: c.VisitorID, AgentModel: c.AgentModel, PageURL: c.PageURL, Locale: c.Locale,
		Intent: IntentOf(c.FirstUserMessage), FirstUserMessage: c.FirstUserMessage, MessageCount: c.MessageCount,
		ToolCallsCount: c.ToolCallsCount, Feedback: conversationFeedbackJSON{Positive: c.FeedbackPositive, Negative: c.FeedbackNegative},
		Metadata: conversationMetadataJSON{UserAgent: nonEmptyPtr(c.Metadata.UserAgent), Referrer: nonEmptyPtr(c.Metadata.Referrer),
			Page: nonEmptyPtr(c.Metadata.Page)},
		Messages: msgs, ToolHistory: utcToolHistory(d.ToolHistory), Submissions: listed}
}

// ConversationStateJSON is a conversation's state after a move: who holds
// it, since when, and what it was before.
type ConversationStateJSON struct {
	ID             string     `json:"id"`
	Status         string     `json:"status"`
	PreviousStatus string     `json:"previousStatus"`
	Assignee       *string    `json:"assignee"`
	TakenAt        *time.Time `json:"takenAt"`
	EscalatedAt    *time.Time `json:"escalatedAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
}

// NewConversationStateJSON is mv as the state change answers it.
func NewConversationStateJSON(mv parley.ConversationMove) ConversationStateJSON {
	c := mv.Conversation
	return ConversationStateJSON{ID: c.ID, Status: c.Status, PreviousStatus: mv.From, Assignee: c.Assignee,
		TakenAt: parley.UTCPtr(c.TakenAt), EscalatedAt: parley.UTCPtr(c.EscalatedAt), UpdatedAt: c.UpdatedAt.UTC()}
}
