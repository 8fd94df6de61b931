package voice

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/spoken"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// maxVoiceCallID bounds the orchestrator's call id (voice_calls.call_id).
const maxVoiceCallID = 200

// voiceChatRequest is what Chat reads of an OpenAI chat completions
// request; the rest (temperature, max_tokens, tools, metadata,
// phoneNumber...) is ignored: the tenant's settings decide.
type voiceChatRequest struct {
	Model    string
	Stream   bool
	Messages []voiceMessage
	CallID   string
	Caller   *string
	Turn     int    // the index in Messages of the last user message, the turn
	Text     string // its text, trimmed
}

type voiceMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is a message's text: a string, or the text parts of an array.
func (m voiceMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// voiceCallRef is the call object of the orchestrator's requests.
type voiceCallRef struct {
	ID       string `json:"id"`
	Customer *struct {
		Number string `json:"number"`
	} `json:"customer"`
}

// caller is the caller's number (clipped to 50 chars), nil when not given.
func (r *voiceCallRef) caller() *string {
	if r == nil || r.Customer == nil || r.Customer.Number == "" {
		return nil
	}
	n := parley.Clip(r.Customer.Number, 50)
	return &n
}

// Chat answers POST /voice/{slug}/chat and /voice/{slug}/chat/completions:
// the tenant's agent as the orchestrator's OpenAI-compatible custom LLM.
// The call's id (call.id) keys one conversation of channel voice; the
// orchestrator's messages are the history and their last user message the
// turn, run by agent.Engine.Reply with the voice tool set and prompt. The
// answer, put into spoken form as it streams (spoken.Speaker), is
// `chat.completion.chunk` events ending with `data: [DONE]`, or one
// `chat.completion` without stream.
func (h *Handler) Chat(c echo.Context) error {
	in, req, call, err := h.voiceChatInput(c)
	if err != nil {
		return err
	}
	w := &voiceWriter{c: c, in: in, model: req.Model, stream: req.Stream, speaker: spoken.NewSpeaker(in.Locale),
		id: "chatcmpl-" + rand.Text(), created: h.Clock().Unix()}
	out, err := h.Engine.Reply(c.Request().Context(), in, w.emit)
	if out != nil && out.ConversationID != "" && (call.ConversationID == nil || *call.ConversationID != out.ConversationID) {
		ctx := context.WithoutCancel(c.Request().Context())
		if lerr := h.DB.LinkVoiceCall(ctx, in.Tenant.ID, call.ID, out.ConversationID); lerr != nil {
			h.Log(c).Error("linking a voice call to its conversation", "err", lerr)
		}
	}
	return w.finish(out, err)
}

// voiceCall is the call row a turn belongs to.
type voiceCall struct {
	ID             string
	ConversationID *string
}

// voiceChatInput passes the gates, decodes the request and opens the
// call's row: the turn's input.
func (h *Handler) voiceChatInput(c echo.Context) (*agent.TurnInput, voiceChatRequest, voiceCall, error) {
	var call voiceCall
	t, seg, err := h.voiceTenant(c)
	if err != nil {
		return nil, voiceChatRequest{}, call, err
	}
	req, err := decodeVoiceChat(c)
	if err != nil {
		return nil, req, call, err
	}
	ctx := c.Request().Context()
	if req.CallID == "" {
		// Without a call id (a test from a plain OpenAI client) the request
		// is a call of its own.
		req.CallID = "anonymous-" + rand.Text()
	}
	vc, err := h.DB.OpenVoiceCall(ctx, t.ID, req.CallID, req.Caller)
	if err != nil {
		return nil, req, call, err
	}
	call = voiceCall{ID: vc.ID, ConversationID: vc.ConversationID}
	if seg == nil {
		return nil, req, call, errNoDefaultSegment
	}
	history := make([]parley.Turn, 0, req.Turn)
	for _, m := range req.Messages[:req.Turn] {
		if text := strings.TrimSpace(m.text()); text != "" && (m.Role == "user" || m.Role == "assistant") {
			history = append(history, parley.Turn{Role: m.Role, Content: text})
		}
	}
	if n := agent.HistoryTurns - 1; len(history) > n {
		history = history[len(history)-n:]
	}
	hdr := c.Request().Header
	in := &agent.TurnInput{Tenant: t, Segment: *seg, SessionID: "voice-" + vc.ID,
		Message: req.Text, History: history, Locale: t.VoiceConfig.Language,
		Channel: parley.ChannelVoice, VisitorType: parley.VisitorHuman, Logger: h.Log(c),
		Metadata: parley.ConversationMetadata{UserAgent: parley.Clip(hdr.Get("User-Agent"), 500)}}
	return in, req, call, nil
}

// decodeVoiceChat reads the body: the last user message of messages is the
// turn, and must have text.
func decodeVoiceChat(c echo.Context) (voiceChatRequest, error) {
	var req voiceChatRequest
	raw, err := jsonbody.DecodeObject(c, maxVoiceBody)
	if err != nil {
		return req, err
	}
	errs := parley.FieldErrors{}
	field := func(name string, dst any, msg string) {
		if v, ok := raw[name]; ok && string(v) != "null" {
			if json.Unmarshal(v, dst) != nil {
				errs.Add(name, msg)
			}
		}
	}
	var call voiceCallRef
	field("model", &req.Model, "must be a string")
	field("stream", &req.Stream, "must be a boolean")
	field("messages", &req.Messages, "must be an array of {role, content}")
	field("call", &call, "must be an object with a string id")
	if err := errs.Err(); err != nil {
		return req, err
	}
	req.CallID, req.Caller = strings.TrimSpace(call.ID), call.caller()
	if req.Model == "" {
		req.Model = "parley"
	}
	req.Turn = -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			req.Turn = i
		}
	}
	if req.Turn >= 0 {
		req.Text = strings.TrimSpace(req.Messages[req.Turn].text())
	}
	switch {
	case len(req.Messages) == 0:
		return req, &parley.Error{Kind: parley.KindInvalid, Message: "messages is required: the call's messages, the caller's last one at the end",
			Details: parley.FieldErrors{"messages": "is required and must not be empty"}}
	case req.Text == "":
		return req, &parley.Error{Kind: parley.KindInvalid, Message: "messages holds no user message with text: there is nothing to answer",
			Details: parley.FieldErrors{"messages": "needs a user message with text"}}
	case utf8.RuneCountInString(req.Text) > handlers.MaxChatMessage:
		return req, handlers.Invalid("The last user message is too long (max %d chars)", handlers.MaxChatMessage)
	case utf8.RuneCountInString(req.CallID) > maxVoiceCallID:
		return req, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("call.id too long (max %d chars)", maxVoiceCallID),
			Details: parley.FieldErrors{"call": "id is too long"}}
	}
	return req, nil
}

// voiceWriter sends a turn's answer in the OpenAI chat completions format.
type voiceWriter struct {
	c       echo.Context
	in      *agent.TurnInput
	model   string
	stream  bool
	speaker *spoken.Speaker
	id      string
	created int64
	sse     *handlers.SSEWriter // set once the turn is open, when streaming
	ready   bool
}

// voiceChunk is one chat.completion.chunk.
type voiceChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []voiceChunkChoice `json:"choices"`
}

type voiceChunkChoice struct {
	Index        int               `json:"index"`
	Delta        map[string]string `json:"delta"`
	FinishReason *string           `json:"finish_reason"`
}

func (w *voiceWriter) chunk(delta map[string]string, finish *string) {
	w.sse.Send(w.chunkOf(delta, finish))
}

func (w *voiceWriter) chunkOf(delta map[string]string, finish *string) voiceChunk {
	return voiceChunk{ID: w.id, Object: "chat.completion.chunk", Created: w.created, Model: w.model,
		Choices: []voiceChunkChoice{{Delta: delta, FinishReason: finish}}}
}

func (w *voiceWriter) emit(ev llm.Event) {
	switch {
	case ev.Kind == agent.EventReady:
		w.ready = true
		if w.stream {
			w.sse = handlers.StartSSE(w.c)
			w.chunk(map[string]string{"role": "assistant", "content": ""}, nil)
		}
	case ev.Kind == llm.EventText && w.sse != nil:
		if s := w.speaker.Write(ev.Text); s != "" {
			w.chunk(map[string]string{"content": s}, nil)
		}
	}
}

// voiceFallback is said when the model failed mid-call: the caller hears
// something rather than silence.
func voiceFallback(locale string) string {
	if strings.HasPrefix(strings.ToLower(locale), "fr") {
		return "Désolé, je n'ai pas pu répondre. Pouvez-vous répéter ?"
	}
	return "Sorry, I could not answer that just now. Could you say it again?"
}

// finish ends the stream (the rest of the text, the stop chunk, [DONE]) or
// sends the chat.completion, or the turn's error.
func (w *voiceWriter) finish(out *agent.TurnOutput, err error) error {
	ctx := w.c.Request().Context()
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return nil // the orchestrator hung up; what was said is stored
	}
	if !w.ready {
		return err
	}
	if err != nil && !errors.Is(err, agent.ErrNotStored) {
		w.in.Logger.Warn("voice turn failed", "err", err)
	}
	stop := "stop"
	if w.sse != nil {
		rest := w.speaker.Flush()
		if err != nil && !errors.Is(err, agent.ErrNotStored) && out != nil && out.Result.Text == "" {
			rest = voiceFallback(w.in.Locale)
		}
		// The end of the stream goes out in one write, with the response's
		// end (sendAtEnd): the handler returns next.
		if rest != "" {
			w.sse.SendAtEnd(w.chunkOf(map[string]string{"content": rest}, nil))
		}
		w.sse.SendAtEnd(w.chunkOf(map[string]string{}, &stop))
		_, _ = fmt.Fprint(w.c.Response(), "data: [DONE]\n\n")
		return nil
	}
	if err != nil && !errors.Is(err, agent.ErrNotStored) {
		msg, code := handlers.ChatLLMError(err)
		return &parley.Error{Kind: parley.KindUpstream, Code: code, Message: msg}
	}
	if err != nil {
		return err
	}
	return w.c.JSON(http.StatusOK, voiceCompletion{ID: w.id, Object: "chat.completion", Created: w.created, Model: w.model,
		Choices: []voiceCompletionChoice{{Index: 0, FinishReason: stop,
			Message: voiceReplyMessage{Role: "assistant", Content: spoken.Text(out.Result.Text, w.in.Locale)}}}})
}

// voiceCompletion is the answer without stream: one chat.completion with
// the turn's reply in spoken form.
type voiceCompletion struct {
	ID      string                  `json:"id"`
	Object  string                  `json:"object"`
	Created int64                   `json:"created"`
	Model   string                  `json:"model"`
	Choices []voiceCompletionChoice `json:"choices"`
}

type voiceCompletionChoice struct {
	Index        int               `json:"index"`
	FinishReason string            `json:"finish_reason"`
	Message      voiceReplyMessage `json:"message"`
}

type voiceReplyMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}
