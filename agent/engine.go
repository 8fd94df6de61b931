package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/rank"
	"github.com/parley/parley/agent/tools"
)

// Engine limits of one turn.
const (
	// HistoryTurns is how many turns of the conversation the model is
	// given, the visitor's new message included.
	HistoryTurns = 20
	// DefaultTurnTimeout bounds a turn's model calls and tools.
	DefaultTurnTimeout = 5 * time.Minute
	// storeTimeout bounds the writes after the model answered; they run even
	// when the visitor went away, so that what was said is kept.
	storeTimeout = 10 * time.Second
	// escalationTimeout bounds an escalation webhook call.
	escalationTimeout = 5 * time.Second
)

// Store is what the engine reads and writes; *db.DB satisfies it.
type Store interface {
	// OpenTurn takes the session's lease for holder, counting p's
	// conversation against the monthly limit should the session have none
	// (SessionState.Counted), reads the session's state with up to turns
	// turns, and stores message when it can (SessionState.Opened); else
	// the engine calls StartTurn.
	OpenTurn(ctx context.Context, p parley.ConversationStart, message, holder, instance string, ttl time.Duration, turns int) (bool, parley.SessionState, error)
	RenewSessionLease(ctx context.Context, tenantID, sessionID, holder string, ttl time.Duration) (bool, error)
	ReleaseSessionLease(ctx context.Context, tenantID, sessionID, holder string) error
	StartTurn(ctx context.Context, p parley.ConversationStart, message string, known *parley.Conversation) (parley.Conversation, parley.Message, bool, error)
	RecentTurns(ctx context.Context, tenantID, conversationID string, n int) ([]parley.Turn, error)

	// PromptData reads the turn's prompt data in one round trip: the
	// corpus for the prompt (at most limit entries), whether it has
	// summaries, the visitor's memory (visitorID "" for none), the tenant's
	// tools and whether it has active products.
	PromptData(ctx context.Context, tenantID, segmentID, locale, visitorID string, limit int) (parley.PromptData, error)

	UpsertMemory(ctx context.Context, tenantID, visitorID, key, value string) (parley.MemoryFact, error)
	SearchProducts(ctx context.Context, tenantID, query string, limit int) ([]parley.Product, error)
	ExploreCorpus(ctx context.Context, tenantID, segmentID, locale, query string, synonyms [][]string, limit int) ([]parley.CorpusEntry, error)
	// CorpusVectors reads the stored vectors of model of the tenant's
	// entries ids (those that have one), in one round trip; only with an
	// embedding endpoint, the operator's or the tenant's (llm.EmbedderFor).
	CorpusVectors(ctx context.Context, tenantID, model string, ids []string) ([]parley.CorpusVector, error)

	SaveTurn(ctx context.Context, r parley.TurnRecord) (parley.Message, error)

	// MoveConversation moves a conversation's state (a closed one, or one
	// that waited too long for a person, back to the assistant);
	// AnnounceVisitorMessage tells the inbox and the webhooks
	// (message.created) of a visitor's message left to a person.
	MoveConversation(ctx context.Context, tenantID, id, to string, h parley.Holder) (parley.ConversationMove, error)
	AnnounceVisitorMessage(ctx context.Context, tenantID, conversationID, messageID string) error
}

// Secrets opens values sealed at rest (the visitor signing key, escalation
// webhook secrets); auth.Box satisfies it.
type Secrets interface {
	Open(sealed []byte) ([]byte, error)
}

// Engine runs the turns of every channel: web chat, the agent JSON
// envelope, and voice. One Engine serves every tenant; it holds no state of
// its own between turns but MCP's cache of tenants' tool lists.
type Engine struct {
	Store Store
	// LLM is the managed model; nil means the local provider, which answers
	// from the knowledge base.
	LLM llm.Provider
	// Outbound makes the turn's outgoing requests (reply endpoint, context
	// webhook, escalation webhooks); nil turns them off.
	Outbound *outbound.Guard
	Secrets  Secrets
	// Verification keeps visitor verification (codes, challenge answers,
	// verified conversations); nil offers no verification tool.
	Verification tools.VerificationStore
	// Mailer sends verification codes; nil (no PARLEY_SMTP_URL) offers no
	// code tool.
	Mailer tools.Mailer
	// Payments reads the payment connectors and Stripe reaches Stripe's API;
	// either nil offers no COLLECT_PAYMENT.
	Payments tools.PaymentStore
	Stripe   tools.Stripe
	// Calendar reads the tenants' calendar connectors; nil offers no
	// meeting tool.
	Calendar tools.CalendarStore
	// MCP lists and calls the tools of tenants' own MCP servers, keeping
	// each tenant's list a while; nil offers none.
	MCP    *mcpclient.Client
	Logger *slog.Logger
	Now    func() time.Time
	// SessionWait bounds how long a message waits for the previous message
	// of its session to be answered; 0 means 30 seconds.
	SessionWait time.Duration
	// SessionLease is how long a session's lease lasts between renewals; 0
	// means SessionLeaseTTL.
	SessionLease time.Duration
	// Instance is the id of the server process's row in the instances table
	// (web.Server.Run registers it and beats its heartbeat): the leases of
	// its turns name it, so that should the process die they are free as
	// soon as its heartbeat goes stale, not when they expire. "" (tests that
	// run no instance) leaves a lease to its expiry alone.
	Instance string
	// TurnTimeout bounds a turn's model calls and tools; 0 means
	// DefaultTurnTimeout.
	TurnTimeout time.Duration
	// Takeover schedules the end of the wait of a conversation a turn
	// escalated (takeover.go); nil schedules nothing.
	Takeover TakeoverJobs
	// Embeddings is the operator's embedding endpoint (PARLEY_EMBEDDINGS_*):
	// the turn's knowledge is ranked by meaning too (rankByMeaning); nil
	// ranks by words alone, but for a tenant with an endpoint of its own
	// (llm.EmbedderFor).
	Embeddings *llm.Embedder
	// Observer is told each turn's outcome, model calls and tool calls
	// (the operator's metrics); nil observes nothing.
	Observer Observer
	// Tracer makes the spans of the turns' model calls and tools, and of
	// the channels' steps (StartSpan); nil traces nothing.
	Tracer      trace.TracerProvider
	tracerCache atomic.Pointer[cachedTracer]
}

// TurnInput is one visitor message, with what the channel settled about it.
type TurnInput struct {
	Tenant  parley.Tenant
	Segment parley.Segment
	// CachedConfig says that the turn may read its prompt data through
	// the chat's configuration cache (ConfigCache): Tenant was read, or
	// found current, as the request began (db.ChatTenantAndSegment), and
	// its ConfigVersion is what the prompt data must be as recent as.
	CachedConfig bool
	// Visitor is the known visitor, nil when anonymous; Verified says a
	// visitor token proved who it is. A visitor known by the widget's
	// anonymous id alone (Visitor.Anonymous) has memory of its own, and is
	// nobody in particular: no identity of it is sent anywhere.
	Visitor  *parley.Visitor
	Verified bool
	// AnonymousID is the widget's anonymous id the request carried
	// (parley.ValidAnonymousID), "" for none. When the turn's visitor is
	// verified (a visitor token, or the conversation verified it), the
	// anonymous visitor of that id is linked to it before the prompt is
	// read (AnonymousLinker).
	AnonymousID string

	SessionID   string
	Message     string
	Locale      string
	PageURL     string
	PageContext map[string]any

	// Channel is the conversation's (parley.ChannelWeb, parley.ChannelAgent...);
	// VisitorType and AgentModel say who writes.
	Channel     string
	VisitorType string
	AgentModel  *string
	Metadata    parley.ConversationMetadata
	// LLM is the caller's own model for this turn; nil for the tenant's.
	LLM llm.Provider
	// Logger is the request's logger (request id, tenant); nil means the
	// engine's.
	Logger *slog.Logger
	// ExtraTools are offered besides the tenant's and the synthetic tools:
	// the management tools an admin token allows (X-Service-Admin-Token).
	ExtraTools []tools.Extra
	// History, when not nil, is the conversation so far as the channel
	// holds it, given to the model before Message instead of the stored
	// turns: a voice orchestrator sends the whole call with each turn,
	// including what it said itself (the first message) and what the caller
	// cut short.
	History []parley.Turn
	// Test is the owner trying their bot from the dashboard: the
	// conversation is marked a test, the monthly limit neither refuses nor
	// counts it, and the output lists the knowledge the prompt held.
	Test bool
	// IdempotencyKey is the client's key of the message (Idempotency-Key,
	// "" for none): the same key again in the session is the message sent
	// again, after a dropped connection or a 503. It is not stored twice:
	// its stored answer is replayed (TurnOutput.Replayed), or, when its turn
	// never ended (the instance answering it died), it is answered now.
	IdempotencyKey string
	// Whole says the caller writes the answer in one piece (the agent
	// envelope), not streamed: the model is asked for it whole where its
	// provider can (llm.Request.Whole), which spares both sides the chunks.
	Whole bool
	// Admission, when not nil, is the request's count against its
	// address's limit, left to the turn by the caller: it is made with the
	// session's lease, in the turn's first round trip, instead of in one of
	// its own before the turn (parley.ConversationStart.Admit). A turn the
	// count does not admit (the address is past its limit, or Tenant is not
	// the configuration's current version) ends with ErrNotAdmitted, having
	// stored nothing, and the caller decides from what the count read.
	Admission *parley.Admission
}

// ErrNotAdmitted ends a turn whose request its address's count, made with
// the session's lease (TurnInput.Admission), did not admit: nothing was
// stored or said, and TurnInput.Admission holds what the count read.
var ErrNotAdmitted = errors.New("the request was not admitted by its address's count")

// logger is the turn's logger: the request's, else the engine's naming the
// tenant by slug. open sets it before anything runs in parallel.
func (in *TurnInput) logger(e *Engine) *slog.Logger {
	if in.Logger == nil {
		in.Logger = e.Logger.With("tenant", in.Tenant.Slug)
	}
	return in.Logger
}

// memoryAllowed reports whether the turn may read and write the visitor's
// memory: the visitor is known and, under a visitor auth mode, verified (an
// id alone proves nothing) by a visitor token, or in this conversation by a
// code or the context webhook's challenge (Engine.sessionVerified). An
// anonymous visitor (the widget's anonymous id) has its memory in every
// mode: it holds only what was said with that same id, never a verified
// visitor's facts (those it had move at the link).
func (in *TurnInput) memoryAllowed() bool {
	if in.Visitor == nil {
		return false
	}
	mode := in.Tenant.VisitorAuthMode
	return in.Verified || in.Visitor.Anonymous || mode == nil || *mode == ""
}

// claimedVisitor is the visitor whose identity may be told to the tenant's
// systems (the context webhook, a challenge's verifyUrl, the reply
// endpoint): the turn's visitor, nil when it is anonymous or known by the
// widget's anonymous id alone, which names nobody.
func (in *TurnInput) claimedVisitor() *parley.Visitor {
	if in.Visitor == nil || in.Visitor.Anonymous {
		return nil
	}
	return in.Visitor
}

// AnonymousLinker links an anonymous visitor to a verified one; *db.DB
// implements it. A Store without it links nothing.
type AnonymousLinker interface {
	LinkAnonymousVisitor(ctx context.Context, tenantID, anonymousID, visitorID string, now time.Time) error
}

// linkAnonymous links the request's anonymous visitor to the turn's
// verified one: what was remembered while anonymous is theirs from this
// message on. It runs before the prompt reads, which then see it.
func (e *Engine) linkAnonymous(ctx context.Context, in *TurnInput) error {
	v := in.Visitor
	if in.AnonymousID == "" || !in.Verified || v == nil || v.Anonymous {
		return nil
	}
	l, ok := e.Store.(AnonymousLinker)
	if !ok {
		return nil
	}
	return l.LinkAnonymousVisitor(ctx, in.Tenant.ID, in.AnonymousID, v.ID, e.now())
}

// offersOTP reports whether the tenant's visitor auth mode lets visitors
// prove their email with a code.
func offersOTP(t parley.Tenant) bool {
	m := t.VisitorAuthMode
	return m != nil && (*m == "otp" || *m == "all")
}

// sessionVerified makes the turn's visitor the one the session's
// conversation verified, when it did (a code or a challenge passed in an
// earlier message). It runs before the prompt reads, which follow the
// verified visitor.
func (e *Engine) sessionVerified(ctx context.Context, in *TurnInput) error {
	t := in.Tenant
	if in.Verified || e.Verification == nil || (!offersOTP(t) && (t.VisitorContextURL == nil || *t.VisitorContextURL == "")) {
		return nil
	}
	sv, err := e.Verification.SessionVerification(ctx, t.ID, in.SessionID)
	if err != nil || sv == nil {
		return err
	}
	if sv.Visitor != nil {
		in.Visitor = sv.Visitor
	}
	in.Verified = true
	return nil
}

// TurnOutput is what a turn said and did, and where it is stored.
type TurnOutput struct {
	Result TurnResult
	// MessageID is the stored answer's id, "" when nothing was said.
	MessageID      string
	ConversationID string
	// MessageCount and Status are the conversation's after the turn;
	// Assignee is the person who holds it (StatusHuman).
	MessageCount int
	Status       string
	Assignee     *string
	// Source is the llmSource (managed or webhook); Provider and Model name
	// the model (Model "" when the tenant's reply endpoint answered).
	Source   string
	Provider string
	Model    string
	// Knowledge is the knowledge-base entries the prompt held, whole ones
	// first, as stored with the answer.
	Knowledge []parley.KnowledgeRef
	// Replayed is set when the message was sent again with its idempotency
	// key after its turn ended: the output is the stored answer (its text
	// and ids; the model is not called and no tool runs again).
	Replayed bool
}

// AnswersLocally reports whether the tenant's turns are answered by the
// local provider, which quotes the knowledge base: no language model is
// configured, neither the operator's managed one nor the tenant's reply
// endpoint.
func (e *Engine) AnswersLocally(t parley.Tenant) bool {
	if t.LLMWebhookURL != nil && *t.LLMWebhookURL != "" {
		return false
	}
	return e.LLM == nil || e.LLM.Name() == NewLocal().Name()
}

// EventReady is emitted once a turn is open and its model is about to be
// called: the message is stored, and what goes wrong from here on is the
// model's or the store's, reported by Reply with what was said so far.
const EventReady llm.EventKind = -1

// ErrNotStored is the error of a turn that was answered but could not be
// stored (Reply wraps the store's error with it).
var ErrNotStored = errors.New("the turn could not be stored")

// ErrSessionBusy answers a message whose session stayed busy too long.
var ErrSessionBusy = &parley.Error{Kind: parley.KindConflict,
	Message: "Another message of this session is still being answered; retry shortly"}

// Reply runs one turn: it takes the session's lease (so that the turns of a
// session run one after the other), stores the visitor's message, reads the
// prompt data, builds the prompt and the turn's tools (the enrichment
// chain), picks the model (the caller's, else the tenant's reply endpoint,
// else the managed one), runs the tool loop streaming the text through
// emit, and stores what was said and done with one store call that also
// gives the lease back.
//
// Before EventReady is emitted, an error means nothing was answered (a
// refused start, a busy session, a failed read, or the caller's context
// ending while the turn waited). After it, the error is the model's (an
// *llm.Error, or the context's) or, wrapped in ErrNotStored, the store's;
// the output holds what was said, which is stored however the model ended.
//
// Reply only sequences. The turn is opened and the call prepared in
// functions that have returned before the model is called, so the frames
// under which a streaming turn waits are small: an open stream's goroutine
// stack can then shrink to 16 KiB instead of 64 KiB (BENCHMARKS.md, open
// streams). Keep large locals out of Reply, turnCall.run and RunTurn.
func (e *Engine) Reply(ctx context.Context, in *TurnInput, emit func(llm.Event)) (*TurnOutput, error) {
	if e.Observer != nil {
		return e.observedReply(ctx, in, emit)
	}
	return e.reply(ctx, in, emit)
}

// reply is Reply, unobserved.
func (e *Engine) reply(ctx context.Context, in *TurnInput, emit func(llm.Event)) (*TurnOutput, error) {
	t, err := e.open(ctx, in)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if k := t.lease.state.Keyed; k != nil && k.Ended {
		return replay(t, k, emit), nil
	}
	if out, err := e.stepAside(ctx, t); out != nil || err != nil {
		if err == nil {
			emit(llm.Event{Kind: EventReady})
		}
		return out, err
	}
	call, err := e.prepare(ctx, t, emit)
	if err != nil {
		return nil, err
	}
	emit(llm.Event{Kind: EventReady})
	call.run(ctx, cmp.Or(e.TurnTimeout, DefaultTurnTimeout))
	return e.finish(ctx, t, call)
}

// turn is what the first steps settled for one message.
type turn struct {
	in          *TurnInput
	conv        parley.Conversation
	created     bool           // this message started the conversation
	userMessage parley.Message // the message as stored
	lease       *sessionLease
	// reads is the prompt data, read while the turn waits for its lease.
	reads *promptReads
}

// open takes the session's lease and stores the visitor's message, while
// the prompt data is read. The turn it returns holds the lease and the reads
// under way: the caller closes it.
func (e *Engine) open(ctx context.Context, in *TurnInput) (*turn, error) {
	log := in.logger(e) // set before the reads, which log through it
	if err := e.sessionVerified(ctx, in); err != nil {
		return nil, err
	}
	if err := e.linkAnonymous(ctx, in); err != nil {
		return nil, err
	}
	t := &turn{in: in}
	// The prompt data is read while the turn waits for its lease, unless
	// the turn is yet to be admitted and its reads call the tenant's
	// servers: a request its address's limit refuses calls nobody.
	early := in.Admission == nil || !e.readsOutside(in)
	if early {
		t.reads = e.readPrompt(ctx, in)
	}
	start := parley.ConversationStart{
		TenantID: in.Tenant.ID, SessionID: in.SessionID, Limit: in.Tenant.ConversationsLimit(),
		SegmentID: &in.Segment.ID, Channel: in.Channel, VisitorType: in.VisitorType,
		AgentModel: in.AgentModel, PageURL: nonEmptyPtr(in.PageURL), Locale: nonEmptyPtr(in.Locale),
		Metadata: in.Metadata, Test: in.Test, IdempotencyKey: in.IdempotencyKey, Admit: in.Admission,
	}
	if in.Visitor != nil {
		start.VisitorID = &in.Visitor.ID
	}
	// The lease, its count of a new conversation and the message in one
	// round trip; when the message could not be stored with them, StartTurn
	// stores it or says why, starting the conversation on the lease's count
	// (or taking the count back).
	lease, err := e.takeSessionLease(ctx, log, &start, in.Message)
	if err != nil {
		t.close() // no read outlives the turn
		return nil, err
	}
	t.lease = lease
	if !early {
		t.reads = e.readPrompt(ctx, in)
	}
	if k := lease.state.Keyed; k != nil && lease.state.Conversation != nil {
		// Sent again: nothing was stored this time (again.go).
		if !sameMessage(k.Message.Content, in.Message) {
			t.close()
			return nil, ErrIdempotencyKeyReused
		}
		t.conv, t.userMessage = *lease.state.Conversation, k.Message
		return t, nil
	}
	if o := lease.state.Opened; o != nil {
		t.conv, t.userMessage, t.created = o.Conversation, o.Message, o.Created
		return t, nil
	}
	start.Counted = lease.state.Counted
	t.conv, t.userMessage, t.created, err = e.Store.StartTurn(ctx, start, in.Message, lease.state.Conversation)
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// close waits for the prompt reads and gives the session's lease back
// unless the turn's store call did.
func (t *turn) close() {
	if t.reads != nil {
		_ = t.reads.wait()
	}
	if t.lease != nil {
		t.lease.release()
	}
}

// turnCall is a turn's model call, with what it needs while the model
// streams: kept small and on the heap (see Reply).
type turnCall struct {
	provider llm.Provider
	source   string // llmSource: managed or webhook
	req      llm.Request
	registry *tools.Registry
	history  []parley.Turn // the turns the model was given, the visitor's message last
	emit     func(llm.Event)
	// knowledge is the corpus entries the prompt held (those the answer
	// cited marked once it ran), refs their citation markers.
	knowledge []parley.KnowledgeRef
	refs      []int
	// noMatch: no entry of the knowledge base shared a word with the
	// visitor's messages (turnCorpus); question is the visitor's message.
	noMatch  bool
	question string
	res      TurnResult // what the model said and did
	err      error      // the model call's failure
}

// prepare builds the prompt and the tool registry from the turn's prompt
// data and history, and picks the model.
func (e *Engine) prepare(ctx context.Context, t *turn, emit func(llm.Event)) (*turnCall, error) {
	in, reads := t.in, t.reads
	if err := reads.wait(); err != nil {
		return nil, err
	}
	// The history is the turns read with the lease (none for a new
	// conversation) and the message just stored.
	var history []parley.Turn
	switch {
	case in.History != nil:
		history = append(history, in.History...)
	case t.created:
	case t.lease.state.Conversation != nil:
		history = append(history, turnsBefore(t.lease.state.Turns, t.lease.state.Keyed)...)
	default: // another start of the session won a race: read what it has
		turns, err := e.Store.RecentTurns(ctx, in.Tenant.ID, t.conv.ID, HistoryTurns)
		if err != nil {
			return nil, err
		}
		history = turns[:max(len(turns)-1, 0)]
	}
	history = append(history, parley.Turn{Role: "user", Content: t.userMessage.Content, Timestamp: t.userMessage.CreatedAt})
	query := recentUserMessages(history, rankMessages)
	corpus, noMatch, err := e.turnCorpus(ctx, in, query, reads.Corpus, reads.Synonyms)
	if err != nil {
		return nil, err
	}
	prompt := BuildPrompt(PromptInput{
		Tenant: in.Tenant, Segment: in.Segment, Corpus: corpus, Ranked: len(query) > 0, HasSummaries: reads.HasSummaries,
		Memory: reads.Memory, VisitorVerified: in.Verified, VisitorContext: reads.visitorContext,
		PageContext: in.PageContext, PageURL: in.PageURL, Locale: in.Locale, Channel: in.Channel,
		Now: e.now(), Logger: in.logger(e),
	})
	facts := EnrichFacts{SegmentID: in.Segment.ID, Channel: in.Channel, MemoryAllowed: in.memoryAllowed(),
		HasProducts: reads.HasProducts, HasSummaries: prompt.ExploreCorpus,
		Payment: reads.payment != nil, Calendar: reads.calendar != nil,
		MCPTools: reads.mcpTools, MCPMaxTools: in.Tenant.MCPToolsMaxTools}
	if !in.Verified && e.Verification != nil {
		facts.OTP = offersOTP(in.Tenant) && e.Mailer != nil
		facts.Challenge = reads.challenge
	}
	tt := Enrich(reads.Tools, facts)
	call := &turnCall{emit: emit, registry: tools.NewRegistry(tt.Tools, e.toolDeps(t, tt)), knowledge: prompt.Knowledge,
		noMatch: noMatch, question: t.userMessage.Content}
	call.registry.AddExtra(e.mcpExtras(in.Tenant, tt.MCP))
	call.registry.AddExtra(in.ExtraTools)
	if in.Channel == parley.ChannelWeb {
		call.registry.AddExtra(formOffer(in.Segment))
	}
	if skipped := append(tt.Skipped, call.registry.Skipped...); len(skipped) > 0 {
		in.logger(e).Debug("tools not offered", "tools", skipped)
	}
	call.history = history
	call.req = llm.Request{System: prompt.System, Language: promptLanguage(in.Locale), Whole: in.Whole}
	for _, m := range call.history {
		call.req.Messages = append(call.req.Messages, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
	}
	call.refs = prompt.Refs
	call.req.Passages = prompt.passages(corpus)
	// A caller's own model wins; else the tenant's reply endpoint; else the managed model.
	call.provider, call.source = e.LLM, "managed"
	if in.LLM != nil {
		call.provider = in.LLM
	} else if hook, err := e.replyEndpoint(t); err != nil {
		return nil, err
	} else if hook != nil {
		call.provider, call.source = hook, "webhook"
	}
	if call.provider == nil {
		call.provider = NewLocal()
	}
	if e.Observer != nil {
		call.provider = observedProvider{Provider: call.provider, obs: e.Observer}
	}
	call.provider = e.tracedModel(call.provider, call.source)
	return call, nil
}

// run calls the model and runs its tools, streaming the text through emit
// as it comes. A model that stays silent, or a turn that takes longer than
// timeout, ends with an LLM_TIMEOUT error, never a stream left hanging.
func (call *turnCall) run(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call.res, call.err = RunTurn(ctx, call.provider, call.req, call.registry, DefaultMaxIterations, call.emit)
	call.knowledge = citedKnowledge(call.knowledge, call.refs, call.res.Cited)
}

// citedKnowledge marks the entries of knowledge (whose markers are refs,
// index for index) that the answer cited.
func citedKnowledge(knowledge []parley.KnowledgeRef, refs, cited []int) []parley.KnowledgeRef {
	if len(cited) == 0 {
		return knowledge
	}
	out := slices.Clone(knowledge)
	for i := range out {
		out[i].Cited = slices.Contains(cited, refs[i])
	}
	return out
}

// finish stores what the model said and did, even when the caller went
// away or the model failed half-way, and returns the turn's output with the
// model's failure, else the store's.
func (e *Engine) finish(ctx context.Context, t *turn, call *turnCall) (*TurnOutput, error) {
	in, res := t.in, call.res
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	msg, storeErr := e.save(storeCtx, t, res, call)
	if storeErr != nil {
		in.logger(e).ErrorContext(ctx, "storing a turn", "conversation", t.conv.ID, "err", storeErr)
	}
	clientGone := errors.Is(call.err, context.Canceled) || ctx.Err() != nil
	if call.err != nil && !clientGone {
		in.logger(e).WarnContext(ctx, "model call failed", "provider", call.provider.Name(), "err", call.err)
	}
	for _, ex := range res.Executions {
		if ex.Err != nil {
			in.logger(e).Warn("tool failed", "tool", ex.ToolName, "err", ex.Err)
		}
		if e.Observer != nil {
			e.Observer.ToolCall(ex.ToolType, ex.Success)
		}
	}
	// The turn held the session: the conversation is as it left it.
	out := &TurnOutput{Result: res, MessageID: msg.ID, ConversationID: t.conv.ID,
		MessageCount: t.conv.MessageCount, Status: t.conv.Status,
		Source: call.source, Provider: call.provider.Name(), Knowledge: call.knowledge}
	if out.MessageID != "" {
		out.MessageCount++
	}
	if storeErr == nil && res.Escalated() {
		out.Status = parley.StatusEscalated
		e.scheduleWait(storeCtx, t)
	}
	if call.source != "webhook" {
		out.Model = call.provider.Model()
	}
	if call.err == nil && storeErr != nil {
		return out, fmt.Errorf("%w: %w", ErrNotStored, storeErr)
	}
	return out, call.err
}

// save stores the turn with one store call, which gives the session's lease
// back with it.
func (e *Engine) save(ctx context.Context, t *turn, res TurnResult, call *turnCall) (parley.Message, error) {
	in, history := t.in, call.history
	rec := parley.TurnRecord{TenantID: in.Tenant.ID, ConversationID: t.conv.ID, SessionID: in.SessionID,
		LeaseHolder: t.lease.holder, Reply: res.Text, Escalated: res.Escalated()}
	if res.Text != "" {
		rec.Knowledge = call.knowledge
		rec.GapSignals, rec.QuestionKey = gapSignals(call.noMatch, res.Text), rank.QuestionKey(call.question)
	}
	if len(res.Executions) > 0 {
		rec.Transcript = append([]parley.Turn(nil), history...)
		if res.Text != "" {
			rec.Transcript = append(rec.Transcript, parley.Turn{Role: "assistant", Content: res.Text, Timestamp: e.now()})
		}
	}
	channel := in.Channel
	if channel == parley.ChannelAgent {
		channel = parley.ChannelAPI // a submission of the agent channel came through the API
	}
	for _, ex := range res.Executions {
		run, err := toolRun(ex)
		if err != nil {
			return parley.Message{}, err
		}
		if run.Submission != nil {
			run.Submission.Channel, run.Submission.PageURL = channel, nonEmptyPtr(in.PageURL)
			if in.Visitor != nil {
				run.Submission.VisitorID = &in.Visitor.ID
			}
		}
		rec.ToolRuns = append(rec.ToolRuns, run)
	}
	msg, err := e.Store.SaveTurn(ctx, rec)
	if err == nil {
		t.lease.markReleased()
	}
	return msg, err
}

// toolRun is an execution as the tool history and the submissions keep it.
func toolRun(ex tools.Execution) (parley.ToolRun, error) {
	input := json.RawMessage(ex.Input)
	if !json.Valid(input) {
		b, _ := json.Marshal(map[string]string{"raw": string(ex.Input)})
		input = b
	}
	result, err := json.Marshal(map[string]any{"success": ex.Success, "summary": ex.Summary, "result": ex.Result})
	if err != nil {
		return parley.ToolRun{}, fmt.Errorf("encoding tool result: %w", err)
	}
	// The history names the run by the function the model called, and
	// keeps the owner's name of the tool beside it.
	run := parley.ToolRun{Call: parley.ToolCall{ToolName: ex.Function, ToolDisplayName: nonEmptyPtr(ex.DisplayName),
		ToolType: ex.ToolType, Input: input, Result: result}}
	if sub := ex.Submission; sub != nil {
		in, err := json.Marshal(sub.Input)
		if err != nil {
			return parley.ToolRun{}, fmt.Errorf("encoding submission input: %w", err)
		}
		out, err := json.Marshal(sub.Result)
		if err != nil {
			return parley.ToolRun{}, fmt.Errorf("encoding submission result: %w", err)
		}
		run.Submission = &parley.NewSubmission{ToolID: nonEmptyPtr(sub.ToolID), ToolType: sub.ToolType,
			ToolName: sub.ToolName, Input: in, Result: out}
	}
	return run, nil
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func nonEmptyPtr(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}
