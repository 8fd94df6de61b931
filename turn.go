package parley

import (
	"strings"
	"time"
	"unicode/utf8"
)

// ConversationStart is what the chat engine knows when a message arrives.
// Limit is the tenant's monthly limit of new conversations
// (Tenant.ConversationsLimit); zero or less refuses every new conversation.
// Channel defaults to web and VisitorType to human. Test starts a test
// conversation of the owner's (the dashboard's test chat), which the monthly
// limit neither refuses nor counts.
type ConversationStart struct {
	TenantID    string
	SessionID   string
	Limit       int
	SegmentID   *string
	VisitorID   *string
	Channel     string
	VisitorType string
	AgentModel  *string
	PageURL     *string
	Locale      *string
	Metadata    ConversationMetadata
	Test        bool
	// Counted is the month (UTC) in which the session's lease already counted
	// this start against the monthly limit (SessionState.Counted), nil when
	// it did not: StartTurn then starts the conversation on that count, or
	// takes it back when it starts none.
	Counted *time.Time
	// IdempotencyKey is the client's key of the visitor's message
	// (Idempotency-Key), stored with it: the same key again in the session
	// is the same message sent again (SessionState.Keyed). "" for none.
	IdempotencyKey string
	// Admit, when not nil, is the request's count against its address's
	// limit, made with the session's lease in the turn's first round trip
	// instead of in one of its own before the turn (db.OpenTurn): the lease
	// is taken only when the count admits the request and the tenant's
	// configuration is still the version the request was let in on.
	Admit *Admission
}

// Admission is a request's count against its address's limit made with a
// turn's lease (ConversationStart.Admit). What the count read is filled in
// when it was made (Made), whatever it decided: the counts and whether they
// were counted (as db.HitWithin returns them), the tenant's configuration
// version read with them, and whether the lease was let be taken.
type Admission struct {
	Windows []RateWindow
	Now     time.Time
	Slug    string // the tenant whose configuration version is read
	Version int64  // the version the request was let in on

	Made     bool
	Counts   []int
	Counted  bool
	Current  *int64 // the version read; nil when the tenant is gone
	Admitted bool
}

// Validate applies the start's rules, filling in the default channel (web)
// and visitor type (human).
func (p *ConversationStart) Validate() error {
	fe := FieldErrors{}
	if p.SessionID == "" || utf8.RuneCountInString(p.SessionID) > 100 || !utf8.ValidString(p.SessionID) || strings.ContainsRune(p.SessionID, 0) {
		fe.Add("sessionId", "must be 1 to 100 characters")
	}
	if p.Channel == "" {
		p.Channel = ChannelWeb
	}
	switch p.Channel {
	case ChannelWeb, ChannelAgent, ChannelVoice, ChannelAPI:
	default:
		fe.Add("channel", "must be web, agent, voice or api")
	}
	if p.VisitorType == "" {
		p.VisitorType = VisitorHuman
	}
	if p.VisitorType != VisitorHuman && p.VisitorType != VisitorAgent {
		fe.Add("visitorType", "must be human or agent")
	}
	return fe.Err()
}

// SessionState is what the store read once the turn held the session's lease (db.OpenTurn): the session's conversation (nil when there is none yet) and its
// last user and assistant turns, oldest first.
type SessionState struct {
	Conversation *Conversation
	Turns        []Turn
	// Counted is the month (UTC) in which the new conversation about to
	// start was counted against the monthly limit, when the lease was
	// asked to count it (the session had no conversation and the limit
	// allowed one more); nil otherwise. See ConversationStart.Counted.
	Counted *time.Time
	// Opened is the visitor's message, stored in the lease's round trip
	// (db.OpenTurn), nil when it was not: StartTurn stores it then.
	Opened *OpenedTurn
	// Keyed is the visitor's message stored earlier in the session with
	// the start's IdempotencyKey, nil when there is none: the message was
	// sent again, and nothing was stored this time.
	Keyed *KeyedMessage
}

// KeyedMessage is a visitor's message stored with an idempotency key, and
// whether its turn ended: Reply is the first answer stored after it (the
// assistant's or a person's), nil when none was; Ended is set when a reply
// or a tool run of the assistant was stored after it.
type KeyedMessage struct {
	Message Message
	Reply   *Message
	Ended   bool
}

// OpenedTurn is a visitor's message as stored: the conversation after it,
// the message, and whether it started the conversation.
type OpenedTurn struct {
	Conversation Conversation
	Message      Message
	Created      bool
}

// RateWindow is one fixed-window limit: at most Limit events of Key per
// Length (db.HitWithin).
type RateWindow struct {
	Key    string
	Length time.Duration
	Limit  int
}

// PromptData is what a turn's prompt and tools are built from, none of it
// depending on the conversation: the corpus entries for the prompt, whether
// any entry of the segment and locale has a summary, the visitor's memory
// (when asked for), the tenant's tools, whether it has an active product,
// and which connectors it has.
type PromptData struct {
	Corpus       []CorpusEntry
	HasSummaries bool
	Memory       []MemoryFact
	Tools        []Tool
	HasProducts  bool
	// HasCalendar: the tenant has a calendar connector; HasPayment: an
	// active payment connector. The connectors themselves are read apart,
	// by the turns that use them.
	HasCalendar bool
	HasPayment  bool
	// Synonyms is the terms of the tenant's synonym groups (SynonymGroup),
	// which the turn's search and ranking expand a question with.
	Synonyms [][]string
	// ConfigVersion is the tenant's configuration version the data was
	// read at (Tenant.ConfigVersion), Memory aside.
	ConfigVersion int64
}

// TurnRecord is what an answered message leaves behind: the answer, the
// tools it ran with the submissions they produced, and an escalation.
// LeaseHolder, when set, is the session lease given back with the turn.
type TurnRecord struct {
	TenantID       string
	ConversationID string
	SessionID      string
	LeaseHolder    string
	// Reply is the assistant's answer; "" when nothing was said.
	Reply string
	// Knowledge is the knowledge-base entries the prompt held, stored with
	// the reply.
	Knowledge []KnowledgeRef
	// GapSignals are the signs of a knowledge gap the turn saw in its own
	// answer (GapNoMatch, GapNotKnown), and QuestionKey its question's
	// wording as a key (empty: none); both stored with the reply.
	GapSignals  int
	QuestionKey string
	ToolRuns    []ToolRun
	// Escalated moves the conversation to ESCALATED.
	Escalated bool
	// Transcript is the conversation as each submission keeps it.
	Transcript []Turn
}

// The signs of a knowledge gap an answer carries (messages.gap_signals,
// migration 00055), a bit each; a down vote is the message's Feedback.
const (
	GapNoMatch     = 1 // no knowledge-base entry shared a word with the question
	GapNotKnown    = 2 // the answer said it did not know
	GapPersonAsked = 4 // the visitor asked for a person in the next turn
)

// ToolRun is one tool run of a turn and the submission it produced, if any
// (Submission's TenantID and ConversationID are the turn's).
type ToolRun struct {
	Call       ToolCall
	Submission *NewSubmission
}
