package parley

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Conversation is one chat session of a visitor (or an agent) with a tenant's bot.
type Conversation struct {
	ID               string               `db:"id"`
	TenantID         string               `db:"tenant_id"`
	SegmentID        *string              `db:"segment_id"`
	VisitorID        *string              `db:"visitor_id"`
	SessionID        string               `db:"session_id"`
	Channel          string               `db:"channel"`
	Status           string               `db:"status"`
	VisitorType      string               `db:"visitor_type"`
	AgentModel       *string              `db:"agent_model"`
	PageURL          *string              `db:"page_url"`
	Metadata         ConversationMetadata `db:"metadata"`
	FirstUserMessage *string              `db:"first_user_message"`
	Locale           *string              `db:"locale"`
	MessageCount     int                  `db:"message_count"`
	ToolCallsCount   int                  `db:"tool_calls_count"`
	FeedbackPositive int                  `db:"feedback_positive"`
	FeedbackNegative int                  `db:"feedback_negative"`
	CreatedAt        time.Time            `db:"created_at"`
	UpdatedAt        time.Time            `db:"updated_at"`
	LastMessageAt    time.Time            `db:"last_message_at"`
	// Test marks a conversation the tenant's owner had from the dashboard's
	// test chat: not counted against the monthly limit.
	Test bool `db:"is_test"`
	// EscalatedAt is when it was last escalated; AssignedUserID and
	// Assignee are who holds it (StatusHuman) since TakenAt: a dashboard
	// user, or a person an integrator named (Assignee alone).
	EscalatedAt    *time.Time `db:"escalated_at"`
	TakenAt        *time.Time `db:"taken_at"`
	AssignedUserID *string    `db:"assigned_user_id"`
	Assignee       *string    `db:"assignee"`
}

// Holder is a person who takes or answers a conversation: a dashboard user
// (UserID), or a person an integrator names (Name alone). Name is what the
// visitor is shown.
type Holder struct {
	UserID *string
	Name   string
}

// ConversationMove is a conversation's change of state: From is what it was.
type ConversationMove struct {
	From         string
	Conversation Conversation
}

// ConversationMetadata is what the widget tells about the page a conversation started on.
type ConversationMetadata struct {
	UserAgent string `json:"userAgent,omitempty"`
	Referrer  string `json:"referrer,omitempty"`
	Page      string `json:"page,omitempty"`
}

// Conversation channels and statuses, and visitor types.
const (
	ChannelWeb   = "web"
	ChannelAgent = "agent"
	ChannelVoice = "voice"
	ChannelAPI   = "api"
	ChannelForm  = "form" // submissions only: the standalone form widget

	StatusBot       = "BOT"       // the assistant answers
	StatusEscalated = "ESCALATED" // waiting for a person
	StatusHuman     = "HUMAN"     // a person holds it: the model is not called
	StatusClosed    = "CLOSED"    // the visitor's next message reopens it to BOT

	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleHuman     = "human" // a person's reply, with its author's name

	VisitorHuman = "human"
	VisitorAgent = "agent"
)

// Message is one stored chat message. Feedback is the visitor's vote on an
// assistant message: 1, -1 or nil.
type Message struct {
	ID             string    `db:"id"`
	ConversationID string    `db:"conversation_id"`
	Role           string    `db:"role"`
	Content        string    `db:"content"`
	Feedback       *int      `db:"feedback"`
	CreatedAt      time.Time `db:"created_at"`
	// Knowledge is the knowledge-base entries the prompt held when the
	// assistant wrote this answer: none for a visitor's message, and none
	// for answers stored before they were recorded (migration 00021).
	Knowledge []KnowledgeRef `db:"knowledge"`
	// AuthorName is the person who wrote a message of RoleHuman.
	AuthorName *string `db:"author_name"`
}

// KnowledgeRef is a knowledge-base entry a prompt held, as it stood then.
type KnowledgeRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Summarized says the prompt held the entry's summary, not its content
	// (the model could read the rest through explore_corpus).
	Summarized bool `json:"summarized"`
	// SourceURL is the entry's sourceUrl then, empty when it had none.
	SourceURL string `json:"sourceUrl,omitempty"`
	// Cited says the answer named the entry as one it rests on (its
	// marker); the others were given and not cited.
	Cited bool `json:"cited,omitempty"`
}

// Turn is a user or assistant message as the model and the webhook payload see it.
type Turn struct {
	Role      string    `json:"role" db:"role"`
	Content   string    `json:"content" db:"content"`
	Timestamp time.Time `json:"timestamp,omitzero" db:"created_at"`
}

// ToolCall is one tool run of a conversation, as its tool history keeps it.
type ToolCall struct {
	// ToolName is the function name the model called (the name in the
	// tools list it was offered), lowercase: the spec's toolHistory names.
	ToolName string `json:"toolName" db:"tool_name"`
	// ToolDisplayName is the owner's name of the tool as it was at the run
	// (a tenant's tool's name, an MCP server's name of its tool; a later
	// rename leaves it), nil for the built-in tools: what the dashboard
	// shows.
	ToolDisplayName *string `json:"toolDisplayName" db:"tool_display_name"`

	ToolType  string          `json:"toolType" db:"tool_type"`
	Input     json.RawMessage `json:"input" db:"input"`
	Result    json.RawMessage `json:"result" db:"result"`
	Timestamp time.Time       `json:"timestamp" db:"created_at"`
}

// maxIntentRunes bounds an intent: long enough for a question, short enough
// to group by.
const maxIntentRunes = 100

// Intent is what a conversation is about, as lists, exports and stats group
// it: the first line of the visitor's first message, lower-cased, with
// punctuation and symbols dropped and whitespace collapsed, cut at a word
// boundary to at most 100 characters. "Pricing?" and "  pricing " share
// the intent "pricing". "" when nothing is left.
func Intent(firstUserMessage string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(firstUserMessage), "\n")
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(line) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		case unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r):
			space = true
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= maxIntentRunes {
		return out
	}
	runes := []rune(out)[:maxIntentRunes+1]
	if i := strings.LastIndexByte(string(runes), ' '); i > 0 {
		return string(runes)[:i]
	}
	return string(runes[:maxIntentRunes])
}

// UTCPtr is *t in UTC, nil for nil: a nullable time as the JSON of the
// API and of webhook payloads writes it.
func UTCPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
