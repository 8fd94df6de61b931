package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// AnthropicConfig configures the Anthropic provider.
type AnthropicConfig struct {
	BaseURL string // "" means Anthropic's API
	APIKey  string
	Model   string
	// HTTPClient sends the requests; see OpenAIConfig.HTTPClient.
	HTTPClient *http.Client
}

// Anthropic is the provider for Anthropic's Messages API.
type Anthropic struct {
	model  string
	key    string
	client anthropic.Client
}

// NewAnthropic builds the Anthropic provider. Like NewOpenAI it reads nothing
// from the environment.
func NewAnthropic(cfg AnthropicConfig) *Anthropic {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithMiddleware(gateMiddleware),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"))
	}
	return &Anthropic{model: cfg.Model, key: cfg.APIKey, client: anthropic.NewClient(opts...)}
}

// Name returns "anthropic".
func (p *Anthropic) Name() string { return "anthropic" }

// Model returns the configured model.
func (p *Anthropic) Model() string { return p.model }

// Stream sends req as a streaming message; with req.Whole, as one that is
// not streamed (whole).
func (p *Anthropic) Stream(ctx context.Context, req Request) (Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	if req.Whole {
		return p.whole(ctx, params)
	}
	t := anthropicTurn{calls: map[int64]*anthropicCall{}}
	ctx, gate := withEventGate(ctx)
	// As MessageService.NewStreaming, but its events are read by
	// anthropicEvents, which decodes each in place, and its body is a
	// sentBody, not kept for the answer's length.
	params.SetExtraFields(map[string]any{"stream": true})
	body, sent, err := sentBodyRequest(func() ([]byte, error) { return json.Marshal(params) })
	if err != nil {
		return nil, fmt.Errorf("encoding the anthropic request: %w", err)
	}
	var raw *http.Response
	err = p.client.Post(ctx, "v1/messages", nil, &raw, option.WithRequestBody("application/json", body), option.WithMiddleware(sent))
	events := &anthropicEvents{err: err}
	if err == nil {
		events.res, events.dec = raw, ssestream.NewDecoder(raw)
	}
	return streamChunks(events, gate, t.add, t.finish, func(err error) error { return p.classify(ctx, err) })
}

// anthropicEvents reads a message's events as the SDK's ssestream.Stream
// does, each decoded in place into anthropicEvent, the few fields a turn
// reads. The SDK's event union is 10 KiB, decoded by its reflective
// decoder (apijson) and returned by value: half the time of a 50-delta
// answer read from a local server (BenchmarkAnthropicStream), and its copy
// in the frame that read it (10 KiB) grew a streaming handler's stack from
// 16 to 32 KiB again after every collection that had halved it
// (BENCHMARKS.md, issue 41).
type anthropicEvents struct {
	res *http.Response
	dec ssestream.Decoder
	cur anthropicEvent // the event read last
	err error
}

// Next reads the next event as ssestream.Stream.Next does: pings and
// empty events skipped, an error event the stream's error.
func (e *anthropicEvents) Next() bool {
	if e.err != nil || e.dec == nil {
		return false
	}
	for e.dec.Next() {
		ev := e.dec.Event()
		switch ev.Type {
		case "ping", "":
			continue
		case "error":
			e.err = e.streamError(ev.Data)
			return false
		}
		if len(bytes.TrimSuffix(ev.Data, []byte("\n"))) == 0 {
			continue
		}
		e.cur = anthropicEvent{}
		e.err = json.Unmarshal(ev.Data, &e.cur)
		return e.err == nil
	}
	e.err = e.dec.Err()
	return false
}

// streamError is an error event's error, as the SDK's stream makes it: an
// *anthropic.Error of the response, its type and message from the event.
func (e *anthropicEvents) streamError(data []byte) error {
	aerr := &anthropic.Error{Request: e.res.Request, Response: e.res, StatusCode: e.res.StatusCode,
		RequestID: e.res.Header.Get("request-id"), WorkspaceID: e.res.Header.Get("anthropic-workspace-id")}
	if aerr.UnmarshalJSON(data) != nil {
		return fmt.Errorf("received error while streaming: %s", data)
	}
	return aerr
}

func (e *anthropicEvents) Current() *anthropicEvent { return &e.cur }
func (e *anthropicEvents) Err() error               { return e.err }

func (e *anthropicEvents) Close() error {
	if e.dec == nil {
		return nil
	}
	return e.dec.Close()
}

var _ chunkSource[*anthropicEvent] = (*anthropicEvents)(nil)

// anthropicEvent is what a turn reads of a streamed message's event
// (anthropic.MessageStreamEventUnion's fields of the same names).
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"` // message_start
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"` // content_block_start
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"` // message_delta
	} `json:"delta"` // content_block_delta, message_delta
	Usage anthropicUsage `json:"usage"` // message_delta
}

type anthropicUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// whole sends params as a message that is not streamed and yields its
// answer as a stream of it would have: its text in one event, its tool
// uses in order, done. The answer is in when it returns: every failure
// comes back from it.
func (p *Anthropic) whole(ctx context.Context, params anthropic.MessageNewParams) (Stream, error) {
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return nil, p.classify(ctx, err)
	}
	t := anthropicTurn{stop: string(msg.StopReason),
		usage: Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)}}
	var text strings.Builder
	var calls []Event
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, Event{Kind: EventToolCall, ToolCall: ToolCall{ID: b.ID, Name: b.Name, Arguments: arguments(string(b.Input))}})
		}
	}
	var evs []Event
	if text.Len() > 0 {
		evs = append(evs, Event{Kind: EventText, Text: text.String()})
	}
	return streamOf(append(append(evs, calls...), t.finish()...)), nil
}

// anthropicTurn gathers a streamed message: text deltas become events as they
// come, a tool-use block when its stop arrives, then the done event.
type anthropicTurn struct {
	calls map[int64]*anthropicCall // by content block index
	usage Usage
	stop  string
}

type anthropicCall struct {
	call ToolCall
	args strings.Builder
}

func (t *anthropicTurn) add(ev *anthropicEvent) []Event {
	switch ev.Type {
	case "message_start":
		t.usage.InputTokens = int(ev.Message.Usage.InputTokens)
	case "content_block_start":
		if b := ev.ContentBlock; b.Type == "tool_use" {
			t.calls[ev.Index] = &anthropicCall{call: ToolCall{ID: b.ID, Name: b.Name}}
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				return []Event{{Kind: EventText, Text: ev.Delta.Text}}
			}
		case "input_json_delta":
			if c := t.calls[ev.Index]; c != nil {
				c.args.WriteString(ev.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		if c := t.calls[ev.Index]; c != nil {
			delete(t.calls, ev.Index)
			c.call.Arguments = arguments(c.args.String())
			return []Event{{Kind: EventToolCall, ToolCall: c.call}}
		}
	case "message_delta":
		t.stop = ev.Delta.StopReason
		if n := int(ev.Usage.InputTokens); n > 0 {
			t.usage.InputTokens = n
		}
		t.usage.OutputTokens = int(ev.Usage.OutputTokens)
	}
	return nil
}

func (t *anthropicTurn) finish() []Event {
	stop := StopEnd
	switch t.stop {
	case "tool_use":
		stop = StopToolCalls
	case "max_tokens", "model_context_window_exceeded":
		stop = StopLength
	}
	return []Event{{Kind: EventDone, StopReason: stop, Usage: t.usage}}
}

func (p *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: int64(cmp.Or(req.MaxTokens, DefaultMaxTokens)),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	// Tool results travel in a user message; consecutive user-side blocks
	// share one message, since the API wants the results right after the
	// assistant's tool_use turn.
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, blocks...)
			return
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(m.Content))
		case RoleTool:
			add(anthropic.MessageParamRoleUser, anthropic.NewToolResultBlock(m.ToolCallID, m.Content, false))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, arguments(string(c.Arguments)), c.Name))
			}
			if len(blocks) > 0 {
				add(anthropic.MessageParamRoleAssistant, blocks...)
			}
		default:
			return params, fmt.Errorf("message role %q is not user, assistant or tool", m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := anthropicSchema(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// anthropicSchema splits a JSON Schema object into the SDK's input schema:
// properties and required in their fields, every other keyword kept as is.
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(raw) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("parameters are not a JSON object: %w", err)
	}
	for k, v := range m {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("parameters: required is not a list of names: %w", err)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// classify turns an SDK error into an *Error.
func (p *Anthropic) classify(ctx context.Context, err error) error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return transportError(ctx, p.Name(), err)
	}
	status := apiErr.StatusCode
	kind := statusKind(status)
	// An error event mid-stream arrives on a 200 response: its type says what.
	if status < 400 {
		switch apiErr.Type() {
		case "rate_limit_error", "overloaded_error":
			kind = RateLimited
		case "timeout_error":
			kind = Timeout
		default:
			kind = Upstream
		}
		status = 0
	}
	e := &Error{Kind: kind, Provider: p.Name(), Status: status, Err: err}
	if kind == BadRequest {
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(apiErr.RawJSON()), &body) == nil {
			e.Detail = redact(body.Error.Message, p.key)
		}
	}
	return e
}
