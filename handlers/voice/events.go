package voice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// voiceEvent is the message of an orchestrator's event, {message: {...}}:
// the fields of the types Events handles, in Vapi's shapes.
type voiceEvent struct {
	Type        string        `json:"type"`
	Call        *voiceCallRef `json:"call"`
	Status      string        `json:"status"`
	EndedReason *string       `json:"endedReason"`
	Timestamp   *float64      `json:"timestamp"` // Unix milliseconds
	StartedAt   *string       `json:"startedAt"`
	EndedAt     *string       `json:"endedAt"`
	Cost        *float64      `json:"cost"`
	Duration    *float64      `json:"durationSeconds"`
	Artifact    *struct {
		Transcript   *string `json:"transcript"`
		RecordingURL *string `json:"recordingUrl"`
	} `json:"artifact"`
	Analysis *struct {
		Summary *string `json:"summary"`
	} `json:"analysis"`
	// Older reports carry these at the top level.
	Transcript   *string `json:"transcript"`
	RecordingURL *string `json:"recordingUrl"`
	Summary      *string `json:"summary"`

	ToolCallList         []voiceToolCall `json:"toolCallList"`
	ToolWithToolCallList []struct {
		Name     string        `json:"name"`
		Function *voiceFunc    `json:"function"`
		ToolCall voiceToolCall `json:"toolCall"`
	} `json:"toolWithToolCallList"`
}

// voiceToolCall is one tool call, nested (function{name, arguments}, the
// SDK's schema) or flat ({name, parameters}, the docs' example).
type voiceToolCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *voiceFunc      `json:"function"`
}

type voiceFunc struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// call is the tool call as the engine runs it: arguments given as a JSON
// string are that string's object.
func (tc voiceToolCall) call() llm.ToolCall {
	name, args := tc.Name, tc.Parameters
	if tc.Function != nil {
		name = handlers.NonBlankOr(tc.Function.Name, name)
		if len(tc.Function.Arguments) > 0 {
			args = tc.Function.Arguments
		}
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
	}
	if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return llm.ToolCall{ID: tc.ID, Name: strings.TrimSpace(name), Arguments: args}
}

// maxVoiceToolCalls bounds the tool calls of one event.
const maxVoiceToolCalls = 20

// Events answers POST /voice/{slug}/events, the orchestrator's server
// URL: assistant-request (the assistant, or the linked one's id),
// tool-calls (the tools run, their results), status-update and
// end-of-call-report (recorded on the call). Other types are ignored with
// 200 {}.
func (h *Handler) Events(c echo.Context) error {
	t, seg, err := h.voiceTenant(c)
	if err != nil {
		return err
	}
	raw, err := jsonbody.DecodeObject(c, maxVoiceBody)
	if err != nil {
		return err
	}
	var ev voiceEvent
	msg, ok := raw["message"]
	if !ok || len(msg) == 0 || msg[0] != '{' {
		return &parley.Error{Kind: parley.KindInvalid, Message: "The body must be {message: {type, call, ...}}",
			Details: parley.FieldErrors{"message": "is required and must be an object"}}
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		return &parley.Error{Kind: parley.KindInvalid, Message: "The event's message does not have the orchestrator's shape: " +
			strings.TrimPrefix(err.Error(), "json: "), Details: parley.FieldErrors{"message": "has a field of the wrong type"}}
	}
	ctx := c.Request().Context()
	callID := ""
	if ev.Call != nil {
		callID = strings.TrimSpace(ev.Call.ID)
	}
	needCall := ev.Type == "status-update" || ev.Type == "end-of-call-report"
	switch {
	case ev.Type == "":
		return &parley.Error{Kind: parley.KindInvalid, Message: "message.type is required",
			Details: parley.FieldErrors{"message": "type is required"}}
	case needCall && callID == "":
		return &parley.Error{Kind: parley.KindInvalid, Message: "message.call.id is required for " + ev.Type,
			Details: parley.FieldErrors{"message": "call.id is required"}}
	case utf8.RuneCountInString(callID) > maxVoiceCallID:
		return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("message.call.id is too long (max %d chars)", maxVoiceCallID),
			Details: parley.FieldErrors{"message": "call.id is too long"}}
	}
	switch ev.Type {
	case "assistant-request":
		if callID != "" {
			if _, err := h.DB.OpenVoiceCall(ctx, t.ID, callID, ev.Call.caller()); err != nil {
				return err
			}
		}
		return c.JSON(http.StatusOK, h.voiceAssistant(c, t))
	case "tool-calls":
		return h.voiceToolCalls(c, t, seg, callID, ev)
	case "status-update":
		if strings.TrimSpace(ev.Status) == "" {
			return &parley.Error{Kind: parley.KindInvalid, Message: "message.status is required for status-update",
				Details: parley.FieldErrors{"message": "status is required"}}
		}
		if err := h.DB.SetVoiceCallStatus(ctx, t.ID, callID, parley.Clip(strings.TrimSpace(ev.Status), 50), ev.EndedReason, h.eventTime(ev.Timestamp)); err != nil {
			return err
		}
	case "end-of-call-report":
		if err := h.DB.SaveVoiceCallReport(ctx, t.ID, callID, voiceReport(ev)); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, voiceEventReply{})
}

// voiceEventReply is the answer to a server event: {assistant} or
// {assistantId} to assistant-request, {results} to tool-calls (an empty
// list too), {} to the others.
type voiceEventReply struct {
	Assistant   *vapi.Assistant   `json:"assistant,omitempty"`
	AssistantID string            `json:"assistantId,omitempty"`
	Results     []voiceToolResult `json:"results,omitzero"`
}

// voiceToolResult is the outcome of one call of a tool-calls event.
type voiceToolResult struct {
	Name       string `json:"name"`
	ToolCallID string `json:"toolCallId"`
	Result     string `json:"result"`
}

// eventTime is the event's timestamp, else now.
func (h *Handler) eventTime(ms *float64) time.Time {
	if ms == nil || *ms <= 0 {
		return h.Clock()
	}
	return time.UnixMilli(int64(*ms))
}

// voiceReport is what an end-of-call report says of the call: the
// artifact's transcript and recording (or the older top-level fields),
// the analysis' summary, and the duration from startedAt and endedAt when
// the report does not give it.
func voiceReport(ev voiceEvent) db.VoiceCallReport {
	r := db.VoiceCallReport{EndedReason: ev.EndedReason, Cost: ev.Cost, DurationSeconds: ev.Duration,
		Transcript: ev.Transcript, RecordingURL: ev.RecordingURL, Summary: ev.Summary}
	if a := ev.Artifact; a != nil {
		r.Transcript = cmpPtr(a.Transcript, r.Transcript)
		r.RecordingURL = cmpPtr(a.RecordingURL, r.RecordingURL)
	}
	if a := ev.Analysis; a != nil {
		r.Summary = cmpPtr(a.Summary, r.Summary)
	}
	parse := func(s *string) *time.Time {
		if s == nil {
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			return nil
		}
		return &t
	}
	r.StartedAt, r.EndedAt = parse(ev.StartedAt), parse(ev.EndedAt)
	if r.DurationSeconds == nil && r.StartedAt != nil && r.EndedAt != nil {
		d := r.EndedAt.Sub(*r.StartedAt).Seconds()
		r.DurationSeconds = &d
	}
	if r.RecordingURL != nil && !strings.HasPrefix(*r.RecordingURL, "https://") && !strings.HasPrefix(*r.RecordingURL, "http://") {
		r.RecordingURL = nil // only a web address is kept, to be fetched by the recordings endpoint
	}
	return r
}

func cmpPtr(a, b *string) *string {
	if a != nil && *a != "" {
		return a
	}
	return b
}

// voiceAssistant is the answer to assistant-request: the linked assistant's
// id, else the assistant the managed setup would create (vapi.NewAssistant),
// built from the tenant's voiceConfig, with the tenant's secret for the
// orchestrator's later requests: the one this request carried, which
// voiceTenant matched (the sealed one is not opened twice).
func (h *Handler) voiceAssistant(c echo.Context, t parley.Tenant) voiceEventReply {
	if t.VoiceAssistantID != nil && *t.VoiceAssistantID != "" {
		return voiceEventReply{AssistantID: *t.VoiceAssistantID}
	}
	llmURL, serverURL := handlers.VoiceURLs(h.BaseURL, t.Slug)
	a := vapi.NewAssistant(t, t.VoiceConfig, sentVoiceSecret(c), llmURL, serverURL)
	return voiceEventReply{Assistant: &a}
}

// voiceToolCalls runs a tool-calls event's calls with the voice tool set
// and answers {results: [{name, toolCallId, result}]}, each result the
// tool's outcome as the model is told it (a JSON string). Submissions are
// stored with channel voice, on the call's conversation when it has one,
// which also gets the tool history (and the escalation) as a turn would.
func (h *Handler) voiceToolCalls(c echo.Context, t parley.Tenant, seg *parley.Segment, callID string, ev voiceEvent) error {
	ctx := c.Request().Context()
	calls := ev.ToolCallList
	if len(calls) == 0 {
		for _, tw := range ev.ToolWithToolCallList {
			tc := tw.ToolCall
			if tc.Name == "" && (tc.Function == nil || tc.Function.Name == "") {
				tc.Name = tw.Name
				if tw.Function != nil {
					tc.Name = handlers.NonBlankOr(tw.Function.Name, tc.Name)
				}
			}
			calls = append(calls, tc)
		}
	}
	if len(calls) > maxVoiceToolCalls {
		return handlers.Invalid("Too many tool calls in one event (max %d)", maxVoiceToolCalls)
	}
	var convID *string
	conv, session := "", ""
	if callID != "" {
		vc, err := h.DB.OpenVoiceCall(ctx, t.ID, callID, nil)
		if err != nil {
			return err
		}
		convID, session = vc.ConversationID, "voice-"+vc.ID
		if convID != nil {
			conv = *convID
		}
	}
	if seg == nil {
		return errNoDefaultSegment
	}
	run := make([]llm.ToolCall, len(calls))
	for i, tc := range calls {
		run[i] = tc.call()
	}
	in := &agent.TurnInput{Tenant: t, Segment: *seg, SessionID: session, Channel: parley.ChannelVoice,
		VisitorType: parley.VisitorHuman, Logger: h.Log(c)}
	execs, err := h.Engine.RunTools(ctx, in, conv, run)
	if err != nil {
		return err
	}
	results := make([]voiceToolResult, len(execs))
	runs := make([]parley.ToolRun, len(execs))
	escalated := false
	for i, ex := range execs {
		if runs[i], err = agent.ToolRunOf(ex, parley.ChannelVoice); err != nil {
			return err
		}
		escalated = escalated || ex.Escalated
		results[i] = voiceToolResult{Name: run[i].Name, ToolCallID: run[i].ID, Result: ex.ToolMessage()}
	}
	if err := h.DB.SaveVoiceToolRuns(ctx, t.ID, convID, runs, escalated); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, voiceEventReply{Results: results})
}
