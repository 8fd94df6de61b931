package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm"
)

// Tool execution: the tenant's tools become ToolSpecs the model sees, and the
// calls the model makes are validated and executed here. Bad input from the
// model is never a Go error: it is an Execution with Success false and a
// Summary the model can relay. Persistence goes through small interfaces
// (MemoryStore, ProductSearch, CorpusLookup, Escalator) that the chat
// handler implements with the db.
//
// BOOK_MEETING is offered only with the tenant's calendar connector
// (Deps.Calendar, calendar.go): a tool the model can call but that
// cannot run would promise visitors meetings nobody booked.

// MemoryStore stores a visitor's facts (REMEMBER_FACT); the caller binds it
// to the tenant and the visitor (db.UpsertMemory).
type MemoryStore interface {
	Remember(ctx context.Context, key, value string) error
}

// Product is what RECOMMEND_PRODUCT shows the model of a catalog product.
type Product struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Price       *float64 `json:"price,omitempty"`
	Currency    string   `json:"currency,omitempty"`
	URL         string   `json:"url,omitempty"`
	ImageURL    string   `json:"imageUrl,omitempty"`
}

// ProductSearch searches the tenant's active catalog (db.ListProducts with Search).
type ProductSearch interface {
	Search(ctx context.Context, query string, limit int) ([]Product, error)
}

// CorpusLookup returns the full content of the corpus entries matching
// query (a title or words), best first, at most limit.
type CorpusLookup interface {
	Explore(ctx context.Context, query string, limit int) ([]llm.Passage, error)
}

// Escalator hands the conversation over to a human.
type Escalator interface {
	Escalate(ctx context.Context, reason string, payload map[string]any) error
}

// Deps is what the executors need from the rest of the service. A nil
// dependency makes the tools that need it fail cleanly when called
// (REMEMBER_FACT, RECOMMEND_PRODUCT) or not offered (EXPLORE_CORPUS).
type Deps struct {
	Memory   MemoryStore
	Products ProductSearch
	// Tracer, when set, gives each tool call a span of its own ("tool" and
	// the tool's type) within the turn's trace.
	Tracer trace.Tracer
	// Corpus, when set, adds the synthetic explore_corpus tool.
	Corpus CorpusLookup
	// Codes, when set, adds send_verification_code and verify_visitor_code;
	// Challenge, when set, adds verify_external_challenge (verification.go).
	Codes     *CodeVerification
	Challenge *ChallengeVerification
	// Payment, when set, adds collect_payment (payment.go).
	Payment *PaymentCollection
	// Calendar, when set, adds check_availability, and runs the
	// BOOK_MEETING tools (calendar.go); without it BOOK_MEETING is left out.
	Calendar *CalendarBooking
	// EscalatorFor returns the escalator of an ESCALATE_TO_HUMAN tool,
	// typically a WebhookEscalator with the tool's webhookUrl and its
	// unsealed webhookSecret; nil (or a nil result) escalates without
	// notifying anyone but the conversation's status.
	EscalatorFor func(tool parley.Tool) Escalator
	// EscalationContext is merged into the escalation payload
	// (conversationId, visitorId, pageUrl...).
	EscalationContext map[string]any
	// TeamAway, when set, says whether nobody of the team can answer now
	// (outside the tenant's hours for a person): ESCALATE_TO_HUMAN then
	// hands nothing over and ends the turn telling the visitor (away.go).
	TeamAway func(ctx context.Context) bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// SubmissionDraft is what a lead tool (SUBMIT_FORM, GENERATE_QUOTE)
// produced, for the caller to store as a submission.
type SubmissionDraft struct {
	ToolID   string
	ToolName string
	ToolType string
	Input    map[string]any // under the tenant's field names
	Result   map[string]any
}

// Execution is one executed tool call.
type Execution struct {
	CallID   string
	ToolName string // the tenant's name of the tool (the function name for unknown calls)
	ToolType string
	Input    json.RawMessage // the arguments as the model wrote them
	Result   map[string]any  // what the model is told, besides success and summary
	Success  bool
	Summary  string         // one line, relayable to the visitor
	Data     map[string]any // for the envelope's toolExecutions; no raw input
	// Submission is set when a lead tool succeeded.
	Submission *SubmissionDraft
	// Escalated says the conversation was handed to a human.
	Escalated bool
	// Final, when set, ends the turn after the round that ran the tool:
	// the loop says it as the turn's last words, without calling the model
	// again (an escalation while the team is away).
	Final string
	At    time.Time
	// Function is the name the model called the tool by: the function name
	// of the tools list it was offered, lowercase (the tool history's
	// toolName).
	Function string
	// DisplayName is the owner's name of the tool, kept in the tool history
	// beside Function as it was at the run: the tenant's tool's name, or an
	// MCP server's own name of its tool; "" for the built-in tools and
	// unknown calls.
	DisplayName string
	// Err is the underlying failure of a dependency, for logs only.
	Err error
}

// ToolMessage is the content of the tool-result message sent to the model.
func (e Execution) ToolMessage() string {
	m := map[string]any{"success": e.Success, "summary": e.Summary}
	if len(e.Result) > 0 {
		m["result"] = e.Result
	}
	b, err := json.Marshal(m)
	if err != nil {
		return `{"success":false,"summary":"the tool result could not be encoded"}`
	}
	return string(b)
}

// ExecutionEnvelope is an execution as the chat envelope's toolExecutions
// shows it, without the raw input; data is never null, the timestamp is
// RFC 3339 in UTC, to the second.
type ExecutionEnvelope struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Success   bool           `json:"success"`
	Summary   string         `json:"summary"`
	Data      map[string]any `json:"data"`
	Timestamp string         `json:"timestamp"`
}

// Envelope is the execution as the chat envelope's toolExecutions shows it.
func (e Execution) Envelope() ExecutionEnvelope {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	return ExecutionEnvelope{Name: e.ToolName, Type: e.ToolType, Success: e.Success,
		Summary: e.Summary, Data: data, Timestamp: e.At.UTC().Format(time.RFC3339)}
}

// ExploreCorpusType is the type of the synthetic corpus tool.
const ExploreCorpusType = "EXPLORE_CORPUS"

// ExploreCorpusTool is the name the model calls the EXPLORE_CORPUS tool by.
const ExploreCorpusTool = "explore_corpus"

// registeredTool is one tool the model may call.
type registeredTool struct {
	spec  llm.ToolSpec
	tool  parley.Tool
	form  parley.SubmitFormConfig
	quote parley.QuoteConfig
	rem   parley.RememberConfig
	rec   parley.RecommendConfig
	esc   parley.EscalateConfig
	meet  parley.MeetingConfig
	extra *Extra
}

// displayName is the owner's name of the tool (Execution.DisplayName): the
// tenant's name of its own tool, which the function name the model sees
// is derived from; an extra tool's own.
func (rt *registeredTool) displayName() string {
	switch {
	case rt.extra != nil:
		return rt.extra.DisplayName
	case slices.Contains(parley.UserToolTypes, rt.tool.Type):
		return rt.tool.Name
	}
	return ""
}

// Registry holds the tools offered for one turn and executes them.
type Registry struct {
	deps    Deps
	tools   []*registeredTool
	byName  map[string]*registeredTool
	Skipped []string // tools not offered, with why (inactive tools are silently left out)
}

// NewRegistry builds the registry from the tenant's tools, in order.
// Inactive tools, and BOOK_MEETING without a calendar, are left out; a tool
// whose stored config no longer validates is left out and listed in Skipped.
func NewRegistry(tools []parley.Tool, deps Deps) *Registry {
	r := &Registry{deps: deps, byName: map[string]*registeredTool{}}
	used := map[string]bool{}
	if deps.Corpus != nil {
		used[ExploreCorpusTool] = true
	}
	if deps.Codes != nil {
		used[sendCodeTool], used[verifyCodeTool] = true, true
	}
	if deps.Challenge != nil {
		used[verifyChallengeTool] = true
	}
	if deps.Payment != nil {
		used[collectPaymentTool] = true
	}
	if deps.Calendar != nil {
		used[checkAvailabilityTool] = true
		deps.Calendar.meetings = nil
	}
	for _, t := range tools {
		if !t.IsActive {
			continue
		}
		if t.Type == parley.ToolBookMeeting && deps.Calendar == nil {
			r.Skipped = append(r.Skipped, t.Name+": "+t.Type+" needs a calendar connector")
			continue
		}
		rt := &registeredTool{tool: t}
		var err error
		switch t.Type {
		case parley.ToolSubmitForm:
			err = decodeConfig(t.Config, &rt.form)
			if err == nil && len(rt.form.Fields) == 0 {
				err = fmt.Errorf("no fields")
			}
		case parley.ToolGenerateQuote:
			err = decodeConfig(t.Config, &rt.quote)
			if err == nil && len(rt.quote.Items) == 0 {
				err = fmt.Errorf("no items")
			}
		case parley.ToolRememberFact:
			err = decodeConfig(t.Config, &rt.rem)
		case parley.ToolRecommendProduct:
			rt.rec.MaxResults = 3
			err = decodeConfig(t.Config, &rt.rec)
			if rt.rec.MaxResults < 1 || rt.rec.MaxResults > 10 {
				rt.rec.MaxResults = 3
			}
		case parley.ToolEscalateToHuman:
			err = decodeConfig(t.Config, &rt.esc)
		case parley.ToolBookMeeting:
			rt.meet = parley.DefaultMeetingConfig()
			err = decodeConfig(t.Config, &rt.meet)
		default:
			err = fmt.Errorf("type %s is not executable", t.Type)
		}
		if err != nil {
			r.Skipped = append(r.Skipped, t.Name+": "+err.Error())
			continue
		}
		name := uniqueName(functionName(t.Name, t.Type), used)
		rt.spec = llm.ToolSpec{Name: name, Description: toolDescription(rt), Parameters: toolSchema(rt), Type: t.Type}
		r.tools = append(r.tools, rt)
		r.byName[name] = rt
		if t.Type == parley.ToolBookMeeting {
			deps.Calendar.meetings = append(deps.Calendar.meetings, rt)
		}
	}
	if deps.Calendar != nil { // with or without a BOOK_MEETING tool (enrichCalendar)
		rt := &registeredTool{tool: parley.Tool{Name: checkAvailabilityTool, Type: CheckAvailabilityType}}
		rt.spec = llm.ToolSpec{Name: checkAvailabilityTool, Description: availabilityDescription(deps.Calendar), Parameters: availabilitySchema(deps.Calendar)}
		r.tools = append(r.tools, rt)
		r.byName[checkAvailabilityTool] = rt
	}
	if deps.Corpus != nil {
		rt := &registeredTool{tool: parley.Tool{Name: ExploreCorpusTool, Type: ExploreCorpusType}}
		rt.spec = llm.ToolSpec{Name: ExploreCorpusTool, Description: toolDescription(rt), Parameters: toolSchema(rt)}
		r.tools = append(r.tools, rt)
		r.byName[ExploreCorpusTool] = rt
	}
	synthetic := func(name, typ string) {
		rt := &registeredTool{tool: parley.Tool{Name: name, Type: typ}}
		rt.spec = llm.ToolSpec{Name: name, Description: toolDescription(rt), Parameters: toolSchema(rt)}
		if typ == VerifyExternalChallengeType {
			rt.spec.Description = "The visitor's identity must be confirmed by the business's own check before their account is discussed. " +
				"Ask the visitor exactly this, in their language: \"" + deps.Challenge.Challenge.Prompt + "\". Then pass their answer to this tool. Never guess an answer."
		}
		if typ == CollectPaymentType {
			rt.spec.Description = paymentDescription(deps.Payment.Connector)
		}
		r.tools = append(r.tools, rt)
		r.byName[name] = rt
	}
	if deps.Codes != nil {
		synthetic(sendCodeTool, SendVerificationCodeType)
		synthetic(verifyCodeTool, VerifyVisitorCodeType)
	}
	if deps.Challenge != nil {
		synthetic(verifyChallengeTool, VerifyExternalChallengeType)
	}
	if deps.Payment != nil {
		synthetic(collectPaymentTool, CollectPaymentType)
	}
	return r
}

func decodeConfig(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("config is not valid: %w", err)
	}
	return nil
}

// Specs returns the tools offered to the model, in the tenant's order.
func (r *Registry) Specs() []llm.ToolSpec {
	if r == nil {
		return nil
	}
	specs := make([]llm.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = t.spec
	}
	return specs
}

var nonNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// functionName derives a lowercase snake_case function name from a tool's
// name: "Get a Quote!" → "get_a_quote". Names without letters or digits
// fall back to the type.
func functionName(name, typ string) string {
	s := strings.Trim(nonNameChars.ReplaceAllString(strings.ToLower(name), "_"), "_")
	if s == "" {
		s = strings.ToLower(typ)
	}
	if s[0] < 'a' || s[0] > 'z' {
		s = "tool_" + s
	}
	if len(s) > 56 {
		s = strings.TrimRight(s[:56], "_")
	}
	return s
}

// uniqueName suffixes name with _2, _3... until unused, and marks it used.
func uniqueName(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		n = name + "_" + strconv.Itoa(i)
	}
	used[n] = true
	return n
}

func toolDescription(rt *registeredTool) string {
	var guide string
	switch rt.tool.Type {
	case parley.ToolSubmitForm:
		guide = "Submit the visitor's details. Ask the visitor for every required field first; never invent values. Call it once all required fields are known."
	case parley.ToolGenerateQuote:
		var lines []string
		for _, it := range rt.quote.Items {
			l := it.Name
			if len(it.Options) > 0 {
				names := make([]string, len(it.Options))
				for i, o := range it.Options {
					names[i] = o.Name
				}
				l += " (options: " + strings.Join(names, ", ") + ")"
			}
			lines = append(lines, l)
		}
		guide = "Compute a price quote from the price list. Prices are computed by this tool: never state a price or total yourself, relay the tool's result. Items: " + strings.Join(lines, "; ") + "."
	case parley.ToolRememberFact:
		guide = "Remember a fact about the visitor for later conversations, as a snake_case key and a short value. Only store what the visitor told you."
	case parley.ToolRecommendProduct:
		guide = "Search the product catalog and recommend matching products. Only recommend products this tool returns."
	case parley.ToolBookMeeting:
		guide = fmt.Sprintf("Book a %d-minute meeting in the business's calendar. First call %s and offer the visitor a few free slots; ask for their name and email; "+
			"then call this tool with the chosen slot's start exactly as %s gave it. Never say a meeting is booked unless this tool says so.",
			rt.meet.DurationMinutes, checkAvailabilityTool, checkAvailabilityTool)
	case parley.ToolEscalateToHuman:
		guide = "Hand the conversation over to a human when the visitor asks for one or you cannot help. Give the reason; include the visitor's contact details if they gave them."
	case SendVerificationCodeType:
		return "Send a 6-digit code to the visitor's email address to verify who they are, when they want their account, orders or saved details discussed. Ask for their email first; then ask them to type the code they receive and call " + verifyCodeTool + "."
	case VerifyVisitorCodeType:
		return "Check the 6-digit code the visitor received by email (sent with " + sendCodeTool + "). On success the visitor is verified for the rest of the conversation."
	case ExploreCorpusType:
		return "Read the full content of knowledge base entries: pass the titles of the entries to read, or a query to search for. Use it when a summary does not answer the question, rather than guessing."
	}
	if d := strings.TrimSpace(rt.tool.Description); d != "" {
		return d + "\n\n" + guide
	}
	return guide
}

// phoneCharsPattern is what a phone number may contain.
var phoneCharsPattern = regexp.MustCompile(`^[0-9+().\s-]+$`)

// emailPattern is a deliberately plain email shape check.
var emailPattern = regexp.MustCompile(`^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:".]{2,}$`)

func toolSchema(rt *registeredTool) json.RawMessage {
	obj := func(props map[string]any, required []string) map[string]any {
		if required == nil {
			required = []string{}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	var s map[string]any
	switch rt.tool.Type {
	case parley.ToolSubmitForm:
		props := map[string]any{}
		var req []string
		for _, f := range rt.form.Fields {
			p := map[string]any{"type": "string", "description": f.Label}
			switch f.Type {
			case "email":
				p["format"] = "email"
				p["description"] = f.Label + " (an email address)"
			case "phone":
				p["pattern"] = phoneCharsPattern.String()
				p["description"] = f.Label + " (a phone number: digits, optionally +, spaces, dots, dashes, parentheses; 6 to 20 digits)"
			}
			props[f.Name] = p
			if f.Required {
				req = append(req, f.Name)
			}
		}
		s = obj(props, req)
	case parley.ToolGenerateQuote:
		var names, options []string
		for _, it := range rt.quote.Items {
			names = append(names, it.Name)
			for _, o := range it.Options {
				if !slices.Contains(options, o.Name) {
					options = append(options, o.Name)
				}
			}
		}
		item := map[string]any{
			"name":     map[string]any{"type": "string", "enum": names, "description": "the price list item"},
			"quantity": map[string]any{"type": "integer", "minimum": 1, "description": "how many units"},
		}
		if len(options) > 0 {
			item["options"] = map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": options},
				"description": "extras chosen for this item; only the options listed for the item in the tool description"}
		}
		s = obj(map[string]any{"items": map[string]any{"type": "array", "minItems": 1, "items": obj(item, []string{"name", "quantity"})}}, []string{"items"})
	case parley.ToolRememberFact:
		key := map[string]any{"type": "string", "description": "what the fact is about, snake_case"}
		if len(rt.rem.AllowedKeys) > 0 {
			key["enum"] = rt.rem.AllowedKeys
		} else {
			key["pattern"] = parley.MemoryKeyPattern.String()
		}
		s = obj(map[string]any{"key": key, "value": map[string]any{"type": "string", "description": "the fact, short"}}, []string{"key", "value"})
	case parley.ToolRecommendProduct:
		s = obj(map[string]any{"query": map[string]any{"type": "string", "description": "what the visitor is looking for"}}, []string{"query"})
	case parley.ToolEscalateToHuman:
		s = obj(map[string]any{
			"reason":  map[string]any{"type": "string", "description": "why a human is needed"},
			"contact": map[string]any{"type": "string", "description": "the visitor's email or phone, if they gave it"},
		}, []string{"reason"})
	case parley.ToolBookMeeting:
		s = obj(map[string]any{
			"start": map[string]any{"type": "string", "description": "the chosen slot's start, exactly as " + checkAvailabilityTool + " gave it"},
			"name":  map[string]any{"type": "string", "description": "the visitor's name"},
			"email": map[string]any{"type": "string", "format": "email", "description": "the visitor's email address, added to the meeting as attendee"},
			"notes": map[string]any{"type": "string", "description": "what the visitor wants to discuss, if they said"},
		}, []string{"start", "name", "email"})
	case SendVerificationCodeType:
		s = obj(map[string]any{"email": map[string]any{"type": "string", "format": "email", "description": "the visitor's email address, as they gave it"}}, []string{"email"})
	case VerifyVisitorCodeType:
		s = obj(map[string]any{"code": map[string]any{"type": "string", "description": "the 6-digit code, as the visitor typed it"}}, []string{"code"})
	case VerifyExternalChallengeType:
		s = obj(map[string]any{"answer": map[string]any{"type": "string", "description": "the visitor's answer, as they gave it"}}, []string{"answer"})
	case CollectPaymentType:
		s = paymentSchema()
	case ExploreCorpusType:
		s = obj(map[string]any{
			"query":  map[string]any{"type": "string", "description": "words to search the knowledge base for"},
			"titles": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "titles of entries to read in full"},
		}, nil)
	}
	b, _ := json.Marshal(s)
	return b
}

// Execute runs one tool call. It never returns a Go error: failures are
// reported in the Execution for the model to relay.
func (r *Registry) Execute(ctx context.Context, call llm.ToolCall) Execution {
	if r.deps.Tracer == nil {
		return r.execute(ctx, call)
	}
	typ := "unknown"
	if rt := r.byName[call.Name]; rt != nil {
		typ = rt.tool.Type
	}
	ctx, span := r.deps.Tracer.Start(ctx, "tool "+typ, trace.WithAttributes(attribute.String("parley.tool.type", typ)))
	ex := r.execute(ctx, call)
	span.SetAttributes(attribute.Bool("parley.tool.success", ex.Success))
	if !ex.Success {
		span.SetStatus(codes.Error, "the tool failed")
	}
	span.End()
	return ex
}

func (r *Registry) execute(ctx context.Context, call llm.ToolCall) Execution {
	now := time.Now
	if r.deps.Now != nil {
		now = r.deps.Now
	}
	ex := Execution{CallID: call.ID, ToolName: call.Name, Function: call.Name, Input: call.Arguments, At: now()}
	rt := r.byName[call.Name]
	if rt == nil {
		ex.Summary = fmt.Sprintf("There is no tool named %q.", call.Name)
		return ex
	}
	ex.ToolName, ex.ToolType, ex.DisplayName = rt.tool.Name, rt.tool.Type, rt.displayName()
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if rt.extra != nil {
		runExtra(ctx, rt.extra, args, &ex)
		return ex
	}
	var in map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil || in == nil {
		ex.Summary = "The arguments were not a valid JSON object; call the tool again with the parameters its schema describes."
		return ex
	}
	switch rt.tool.Type {
	case parley.ToolSubmitForm:
		r.submitForm(rt, in, &ex)
	case parley.ToolGenerateQuote:
		r.quote(rt, in, &ex)
		if ex.Success && r.deps.Payment != nil {
			r.deps.Payment.noteQuote(ex.Result)
		}
	case parley.ToolRememberFact:
		r.remember(ctx, rt, in, &ex)
	case parley.ToolRecommendProduct:
		r.recommend(ctx, rt, in, &ex)
	case parley.ToolEscalateToHuman:
		r.escalate(ctx, rt, in, &ex)
	case parley.ToolBookMeeting:
		r.bookMeeting(ctx, rt, in, &ex)
	case CheckAvailabilityType:
		r.checkAvailability(ctx, in, &ex)
	case ExploreCorpusType:
		r.explore(ctx, in, &ex)
	case SendVerificationCodeType:
		r.sendCode(ctx, in, &ex)
	case VerifyVisitorCodeType:
		r.verifyCode(ctx, in, &ex)
	case VerifyExternalChallengeType:
		r.verifyChallenge(ctx, in, &ex)
	case CollectPaymentType:
		r.collectPayment(ctx, in, &ex)
	}
	return ex
}

// argString returns a string argument, trimmed; numbers and booleans are
// accepted as their text.
func argString(in map[string]any, key string) (string, bool) {
	switch v := in[key].(type) {
	case string:
		return strings.TrimSpace(v), true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	case nil:
		return "", true
	}
	return "", false
}

const maxFieldChars = 5000

func (r *Registry) submitForm(rt *registeredTool, in map[string]any, ex *Execution) {
	values := map[string]any{}
	var problems []string
	for _, f := range rt.form.Fields {
		raw, ok := in[f.Name]
		if !ok { // models sometimes change the case of a name
			for k, v := range in {
				if strings.EqualFold(k, f.Name) {
					raw, ok = v, true
					break
				}
			}
		}
		var v string
		if ok {
			var good bool
			if v, good = argString(map[string]any{"v": raw}, "v"); !good {
				problems = append(problems, fmt.Sprintf("%s must be text", f.Name))
				continue
			}
		}
		switch {
		case v == "" && f.Required:
			problems = append(problems, fmt.Sprintf("%s (%s) is required", f.Name, f.Label))
			continue
		case v == "":
			continue
		case utf8.RuneCountInString(v) > maxFieldChars:
			problems = append(problems, fmt.Sprintf("%s is longer than %d characters", f.Name, maxFieldChars))
			continue
		case f.Type == "email" && (len(v) > 254 || !emailPattern.MatchString(v)):
			problems = append(problems, fmt.Sprintf("%s %q is not a valid email address", f.Name, v))
			continue
		case f.Type == "phone" && !validPhone(v):
			problems = append(problems, fmt.Sprintf("%s %q is not a valid phone number (6 to 20 digits; +, spaces, dots, dashes and parentheses allowed)", f.Name, v))
			continue
		}
		values[f.Name] = v
	}
	if len(problems) > 0 {
		ex.Summary = "The form was not submitted: " + strings.Join(problems, "; ") + ". Ask the visitor for the missing or corrected details."
		ex.Data = map[string]any{"errors": problems}
		return
	}
	names := make([]string, 0, len(values))
	for _, f := range rt.form.Fields {
		if _, ok := values[f.Name]; ok {
			names = append(names, f.Name)
		}
	}
	ex.Success = true
	ex.Summary = "The form was submitted."
	ex.Result = map[string]any{"submitted": true}
	if m := strings.TrimSpace(rt.form.ConfirmationMessage); m != "" {
		ex.Result["confirmationMessage"] = m
		ex.Summary += " Tell the visitor: " + m
	}
	ex.Data = map[string]any{"fields": names}
	ex.Submission = &SubmissionDraft{ToolID: rt.tool.ID, ToolName: rt.tool.Name, ToolType: rt.tool.Type, Input: values, Result: ex.Result}
}

func validPhone(v string) bool {
	if !phoneCharsPattern.MatchString(v) || strings.Count(v, "+") > 1 || (strings.Contains(v, "+") && strings.TrimSpace(v)[0] != '+') {
		return false
	}
	digits := 0
	for _, c := range v {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return digits >= 6 && digits <= 20
}

// cents converts a price list amount (at most two decimals, validated when
// the tool was saved) to integer cents.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// formatCents renders cents as a decimal amount: 483047 → "4830.47".
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// Quote bounds: they keep every computation within int64 (the tax
// multiplies the subtotal by at most 10000).
const (
	maxQuoteQuantity = 1_000_000
	maxQuoteLines    = 100
	maxQuoteCents    = 100_000_000_000_000 // one trillion in currency units
)

func (r *Registry) quote(rt *registeredTool, in map[string]any, ex *Execution) {
	q := rt.quote
	allowedItems := make([]string, len(q.Items))
	for i, it := range q.Items {
		allowedItems[i] = it.Name
	}
	rawItems, ok := in["items"].([]any)
	if !ok || len(rawItems) == 0 {
		ex.Summary = "The quote needs at least one item: items is a list of {name, quantity, options}. Items available: " + strings.Join(allowedItems, ", ") + "."
		return
	}
	var problems []string
	var lines []any
	var inputLines []any
	var subtotal int64
	for i, raw := range rawItems {
		obj, ok := raw.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("item %d is not an object", i+1))
			continue
		}
		name, _ := argString(obj, "name")
		idx := slices.IndexFunc(q.Items, func(it parley.QuoteItem) bool { return strings.EqualFold(it.Name, name) })
		if idx < 0 {
			problems = append(problems, fmt.Sprintf("%q is not on the price list (items available: %s)", name, strings.Join(allowedItems, ", ")))
			continue
		}
		item := q.Items[idx]
		qty := int64(1)
		if n, ok := obj["quantity"].(json.Number); ok {
			v, err := n.Int64()
			if err != nil || v < 1 || v > maxQuoteQuantity {
				problems = append(problems, fmt.Sprintf("the quantity of %s must be a whole number from 1 to %d", item.Name, maxQuoteQuantity))
				continue
			}
			qty = v
		} else if obj["quantity"] != nil {
			problems = append(problems, fmt.Sprintf("the quantity of %s must be a whole number from 1 to %d", item.Name, maxQuoteQuantity))
			continue
		}
		unit := cents(item.UnitPrice)
		var chosen []string
		var optLines []any
		rawOpts, _ := obj["options"].([]any)
		if obj["options"] != nil && rawOpts == nil {
			problems = append(problems, fmt.Sprintf("the options of %s must be a list of names", item.Name))
			continue
		}
		bad := false
		for _, ro := range rawOpts {
			on, _ := ro.(string)
			oi := slices.IndexFunc(item.Options, func(o parley.QuoteOption) bool { return strings.EqualFold(o.Name, strings.TrimSpace(on)) })
			if oi < 0 {
				allowed := "none"
				if len(item.Options) > 0 {
					names := make([]string, len(item.Options))
					for j, o := range item.Options {
						names[j] = o.Name
					}
					allowed = strings.Join(names, ", ")
				}
				problems = append(problems, fmt.Sprintf("%q is not an option of %s (options available: %s)", on, item.Name, allowed))
				bad = true
				continue
			}
			o := item.Options[oi]
			if slices.Contains(chosen, o.Name) {
				continue
			}
			chosen = append(chosen, o.Name)
			unit += cents(o.UnitPrice)
			optLines = append(optLines, map[string]any{"name": o.Name, "unitPrice": formatCents(cents(o.UnitPrice)), "unitPriceCents": cents(o.UnitPrice)})
		}
		if bad {
			continue
		}
		total := unit * qty // at most 2.1e12 × 1e6: no overflow
		if total > maxQuoteCents || subtotal+total > maxQuoteCents {
			problems = append(problems, "the amounts are too large for one quote")
			break
		}
		subtotal += total
		line := map[string]any{"name": item.Name, "quantity": qty, "unitPrice": formatCents(unit), "unitPriceCents": unit,
			"lineTotal": formatCents(total), "lineTotalCents": total}
		if optLines != nil {
			line["options"] = optLines
		}
		if item.Unit != "" {
			line["unit"] = item.Unit
		}
		lines = append(lines, line)
		inputLines = append(inputLines, map[string]any{"name": item.Name, "quantity": qty, "options": append([]string{}, chosen...)})
	}
	if len(rawItems) > maxQuoteLines {
		problems = append(problems, fmt.Sprintf("a quote has at most %d lines", maxQuoteLines))
	}
	if len(problems) > 0 {
		ex.Summary = "No quote was made: " + strings.Join(problems, "; ") + "."
		ex.Data = map[string]any{"errors": problems}
		return
	}
	// The rate in hundredths of a percent, so that 8.25% stays exact; the
	// tax is rounded half up to the cent.
	rateBP := int64(math.Round(q.TaxRate * 100))
	tax := (subtotal*rateBP + 5000) / 10000
	total := subtotal + tax
	days := q.ValidityDays
	if days < 1 {
		days = 30
	}
	validUntil := ex.At.UTC().AddDate(0, 0, days).Format("2006-01-02")
	ex.Success = true
	ex.Result = map[string]any{
		"currency": q.Currency, "lines": lines,
		"subtotal": formatCents(subtotal), "subtotalCents": subtotal,
		"taxRate": q.TaxRate, "tax": formatCents(tax), "taxCents": tax,
		"total": formatCents(total), "totalCents": total, "validUntil": validUntil, "quoteId": newQuoteID(),
	}
	ex.Summary = fmt.Sprintf("Quote: total %s %s (subtotal %s, tax %s), valid until %s (quote %s).", formatCents(total), q.Currency, formatCents(subtotal), formatCents(tax), validUntil, ex.Result["quoteId"])
	ex.Data = ex.Result
	ex.Submission = &SubmissionDraft{ToolID: rt.tool.ID, ToolName: rt.tool.Name, ToolType: rt.tool.Type,
		Input: map[string]any{"items": inputLines}, Result: ex.Result}
}

const maxFactChars = 500

func (r *Registry) remember(ctx context.Context, rt *registeredTool, in map[string]any, ex *Execution) {
	key, _ := argString(in, "key")
	value, _ := argString(in, "value")
	switch {
	case len(rt.rem.AllowedKeys) > 0 && !slices.Contains(rt.rem.AllowedKeys, key):
		ex.Summary = fmt.Sprintf("%q cannot be remembered; the keys allowed are: %s.", key, strings.Join(rt.rem.AllowedKeys, ", "))
		return
	case !parley.MemoryKeyPattern.MatchString(key):
		ex.Summary = fmt.Sprintf("%q is not a valid key: use snake_case (lowercase letters, digits, underscores; at most 64).", key)
		return
	case value == "":
		ex.Summary = "Nothing was remembered: the value is empty."
		return
	case utf8.RuneCountInString(value) > maxFactChars:
		ex.Summary = fmt.Sprintf("Nothing was remembered: the value is longer than %d characters; shorten it.", maxFactChars)
		return
	case r.deps.Memory == nil:
		ex.Summary = "Memory is not available in this conversation; nothing was remembered."
		return
	}
	if err := r.deps.Memory.Remember(ctx, key, value); err != nil {
		ex.Err = err
		ex.Summary = "The fact could not be saved right now."
		return
	}
	ex.Success = true
	ex.Summary = fmt.Sprintf("Remembered %s.", key)
	ex.Result = map[string]any{"key": key}
	ex.Data = map[string]any{"key": key}
}

func (r *Registry) recommend(ctx context.Context, rt *registeredTool, in map[string]any, ex *Execution) {
	query, _ := argString(in, "query")
	switch {
	case query == "":
		ex.Summary = "The search needs a query: what the visitor is looking for."
		return
	case r.deps.Products == nil:
		ex.Summary = "The product catalog is not available right now."
		return
	}
	products, err := r.deps.Products.Search(ctx, query, rt.rec.MaxResults)
	if err != nil {
		ex.Err = err
		ex.Summary = "The product catalog could not be searched right now."
		return
	}
	if len(products) > rt.rec.MaxResults {
		products = products[:rt.rec.MaxResults]
	}
	if products == nil {
		products = []Product{}
	}
	ids := make([]string, len(products))
	for i, p := range products {
		ids[i] = p.ID
	}
	ex.Success = true
	if len(products) == 0 {
		ex.Summary = "No product matches " + strconv.Quote(query) + "."
	} else {
		ex.Summary = fmt.Sprintf("Found %d product(s) for %q.", len(products), query)
	}
	ex.Result = map[string]any{"products": products}
	ex.Data = map[string]any{"query": query, "productIds": ids}
}

// Corpus reading bounds: entries per call, and characters returned in all.
const (
	exploreLimit    = 3
	exploreMaxChars = 20000
)

func (r *Registry) explore(ctx context.Context, in map[string]any, ex *Execution) {
	query, _ := argString(in, "query")
	var titles []string
	if raw, ok := in["titles"].([]any); ok {
		for _, t := range raw {
			if s, ok := t.(string); ok && strings.TrimSpace(s) != "" {
				titles = append(titles, strings.TrimSpace(s))
			}
		}
	}
	if query == "" && len(titles) == 0 {
		ex.Summary = "Give the titles of the entries to read, or a query."
		return
	}
	var found []llm.Passage
	seen := map[string]bool{}
	add := func(p llm.Passage) {
		if !seen[p.Title] && len(found) < exploreLimit*2 {
			seen[p.Title] = true
			found = append(found, p)
		}
	}
	for _, t := range titles {
		ps, err := r.deps.Corpus.Explore(ctx, t, exploreLimit)
		if err != nil {
			ex.Err, ex.Summary = err, "The knowledge base could not be read right now."
			return
		}
		// The entry with that exact title, else the best match.
		i := slices.IndexFunc(ps, func(p llm.Passage) bool { return strings.EqualFold(p.Title, t) })
		if i < 0 && len(ps) > 0 {
			i = 0
		}
		if i >= 0 {
			add(ps[i])
		}
	}
	if query != "" {
		ps, err := r.deps.Corpus.Explore(ctx, query, exploreLimit)
		if err != nil {
			ex.Err, ex.Summary = err, "The knowledge base could not be read right now."
			return
		}
		for _, p := range ps {
			add(p)
		}
	}
	budget := exploreMaxChars
	entries := []any{}
	var names []string
	for _, p := range found {
		content := p.Content
		if len(content) > budget {
			cut := budget
			for cut > 0 && !utf8.RuneStart(content[cut]) {
				cut--
			}
			content = content[:cut] + "…"
		}
		budget -= len(content)
		entries = append(entries, map[string]any{"title": p.Title, "content": content})
		names = append(names, p.Title)
		if budget <= 0 {
			break
		}
	}
	ex.Success = true
	if len(entries) == 0 {
		ex.Summary = "No knowledge base entry matches."
	} else {
		ex.Summary = fmt.Sprintf("Read %d entr%s: %s.", len(entries), map[bool]string{true: "y", false: "ies"}[len(entries) == 1], strings.Join(names, ", "))
	}
	ex.Result = map[string]any{"entries": entries}
	ex.Data = map[string]any{"titles": names}
}

func (r *Registry) escalate(ctx context.Context, rt *registeredTool, in map[string]any, ex *Execution) {
	reason, _ := argString(in, "reason")
	contact, _ := argString(in, "contact")
	if reason == "" {
		ex.Summary = "Give the reason for handing over to a human."
		return
	}
	if r.awayEscalation(ctx, ex) {
		return
	}
	var esc Escalator
	if r.deps.EscalatorFor != nil {
		esc = r.deps.EscalatorFor(rt.tool)
	}
	if esc != nil {
		payload := map[string]any{}
		for k, v := range r.deps.EscalationContext {
			payload[k] = v
		}
		payload["toolId"], payload["toolName"], payload["toolType"] = rt.tool.ID, rt.tool.Name, rt.tool.Type
		payload["reason"] = reason
		if contact != "" {
			payload["contact"] = contact
		}
		if err := esc.Escalate(ctx, reason, payload); err != nil {
			ex.Err = err
			ex.Summary = "The team could not be reached right now. Offer to take the visitor's contact details so someone gets back to them."
			return
		}
	}
	ex.Success, ex.Escalated = true, true
	msg := strings.TrimSpace(rt.esc.HandoffMessage)
	if msg == "" {
		msg = "A member of the team has been notified and will take over."
	}
	ex.Summary = "The conversation was handed over to a human. Tell the visitor: " + msg
	ex.Result = map[string]any{"escalated": true, "handoffMessage": msg}
	ex.Data = ex.Result // the reason and contact are the model's input: not echoed
	// A lead like the others: the team finds the hand-over in its inbox (and
	// its submission.created webhooks), with or without the tool's webhook.
	input := map[string]any{"reason": reason}
	if contact != "" {
		input["contact"] = contact
	}
	ex.Submission = &SubmissionDraft{ToolID: rt.tool.ID, ToolName: rt.tool.Name, ToolType: rt.tool.Type, Input: input, Result: ex.Result}
}

// WebhookEscalator notifies an ESCALATE_TO_HUMAN tool's webhookUrl with a
// signed POST, like the service's other webhooks: header
// X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.
type WebhookEscalator struct {
	URL    string
	Secret []byte // unsealed
	// Client sends the request; it must be the SSRF-guarded client
	// ((*outbound.Guard).Client), the URL being the tenant's.
	Client *http.Client
	Now    func() time.Time // nil: time.Now
}

// EscalationEvent is the event name of an escalation delivery.
const EscalationEvent = "conversation.escalated"

// Escalate POSTs {event, createdAt, data: payload}; any 2xx is success.
// The delivery is abandoned after 5 seconds.
func (w WebhookEscalator) Escalate(ctx context.Context, reason string, payload map[string]any) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	at := now()
	data := map[string]any{"reason": reason}
	for k, v := range payload {
		data[k] = v
	}
	body, err := json.Marshal(map[string]any{"event": EscalationEvent, "createdAt": at.UTC().Format(time.RFC3339), "data": data})
	if err != nil {
		return fmt.Errorf("encoding escalation: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := outbound.NewSignedPost(ctx, w.URL, EscalationEvent, w.Secret, at, body)
	if err != nil {
		return fmt.Errorf("escalation webhook: %w", err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	req.Header.Set("X-Service-Delivery-Id", hex.EncodeToString(id))
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("escalation webhook: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("escalation webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}
