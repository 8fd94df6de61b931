package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// OpenAIBaseURL is OpenAI's own API, used when no base URL is configured.
const OpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible provider: OpenAI itself, or
// Ollama, vLLM, llama.cpp, Groq, OpenRouter, Mistral through BaseURL.
type OpenAIConfig struct {
	BaseURL string // up to and including the version, e.g. http://ollama:11434/v1; "" means OpenAIBaseURL
	APIKey  string
	Model   string
	// HTTPClient sends the requests. A base URL a tenant or a caller chose
	// must go through the SSRF-guarded client, (*outbound.Guard).Client. nil means
	// a plain client, for the operator's own configuration only.
	HTTPClient *http.Client
}

// OpenAI is the provider for any server speaking OpenAI's chat completions.
type OpenAI struct {
	model      string
	key        string
	newTokens  bool // max_completion_tokens (OpenAI) rather than max_tokens (most compatible servers)
	completion openai.ChatCompletionService
}

// NewOpenAI builds an OpenAI-compatible provider. It reads nothing from the
// environment: a tenant without a key must not borrow the operator's.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	base := strings.TrimRight(cmp.Or(cfg.BaseURL, OpenAIBaseURL), "/") + "/"
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	u, _ := url.Parse(base)
	return &OpenAI{
		model:     cfg.Model,
		key:       cfg.APIKey,
		newTokens: u != nil && u.Hostname() == "api.openai.com",
		// The service alone, not openai.NewClient, which would add
		// OPENAI_API_KEY and friends from the environment.
		completion: openai.NewChatCompletionService(
			option.WithBaseURL(base),
			option.WithAPIKey(cfg.APIKey),
			option.WithHTTPClient(client),
			// A visitor is waiting: the engine decides whether to try again.
			option.WithMaxRetries(0),
			option.WithMiddleware(gateMiddleware),
		),
	}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Model returns the configured model.
func (p *OpenAI) Model() string { return p.model }

// Stream sends req as a streaming chat completion; with req.Whole, as one
// that is not streamed, whose answer whole reads.
func (p *OpenAI) Stream(ctx context.Context, req Request) (Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	if req.Whole {
		params.Stream, params.StreamOptions = false, nil
	}
	// The body is a sentBody: not kept for the answer's length.
	body, sent, err := sentBodyRequest(func() ([]byte, error) { return json.Marshal(params) })
	if err != nil {
		return nil, fmt.Errorf("encoding the openai request: %w", err)
	}
	var t openaiTurn
	ctx, gate := withEventGate(ctx)
	// As ChatCompletionService.NewStreaming, but its chunks are decoded into
	// openaiChunk, the few fields a turn reads (openaiChunks): the SDK's
	// ChatCompletionChunk decoder (apijson, which keeps every field's raw
	// JSON) was a quarter of the server's CPU on a 50-chunk answer
	// (BENCHMARKS.md, issue 18).
	var raw *http.Response
	_, err = p.completion.New(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body),
		option.WithMiddleware(sent), option.WithResponseBodyInto(&raw))
	classify := func(err error) error { return p.classify(ctx, err) }
	if err == nil && req.Whole && gate.body == nil {
		return p.whole(raw, &t, classify)
	}
	// Streamed; or a failure to start, which streamChunks returns; or a
	// server that streams though asked for the whole answer.
	return streamChunks[openaiChunk](newOpenAIChunks(raw, err, gate), gate, t.add, t.finish, classify)
}

// openaiChunk is what a turn reads of a streamed chat completion chunk. Its
// strings are lenient, as the SDK's decoder was: a value of another type
// (some compatible servers send content as an array of parts) reads as
// empty rather than failing the stream.
type openaiChunk struct {
	Choices []openaiChoice `json:"choices"`
	// Usage is nil but in the usage chunk (stream_options.include_usage).
	Usage *openaiUsage `json:"usage"`
}

// openaiUsage is a completion's token counts.
type openaiUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

type openaiChoice struct {
	Index        int64       `json:"index"`
	Delta        openaiDelta `json:"delta"`
	FinishReason chunkString `json:"finish_reason"`
}

// openaiDelta is a chunk's piece of the answer, or a whole answer's message.
type openaiDelta struct {
	Content   chunkString       `json:"content"`
	ToolCalls []openaiToolDelta `json:"tool_calls"`
}

// openaiToolDelta is a piece of a tool call; a whole answer's calls have no
// index (their order is theirs).
type openaiToolDelta struct {
	Index    int64       `json:"index"`
	ID       chunkString `json:"id"`
	Function struct {
		Name      chunkString `json:"name"`
		Arguments chunkString `json:"arguments"`
	} `json:"function"`
}

// openaiCompletion is what a turn reads of a chat completion that is not
// streamed (OpenAI.whole).
type openaiCompletion struct {
	Choices []struct {
		Index        int64       `json:"index"`
		Message      openaiDelta `json:"message"`
		FinishReason chunkString `json:"finish_reason"`
	} `json:"choices"`
	Usage *openaiUsage `json:"usage"`
}

// maxWholeAnswer bounds a completion that is not streamed: far more than
// DefaultMaxTokens of text and its tool calls.
const maxWholeAnswer = 8 << 20

// whole reads raw, the answer of a chat completion that was not streamed,
// and yields it as a stream of it would have: the text in one event, the
// tool calls (t's), done. The answer is in when it returns: every failure
// comes back from it.
func (p *OpenAI) whole(raw *http.Response, t *openaiTurn, classify func(error) error) (Stream, error) {
	defer raw.Body.Close()
	b, err := io.ReadAll(io.LimitReader(raw.Body, maxWholeAnswer+1))
	if err != nil {
		return nil, classify(err)
	}
	var c openaiCompletion
	switch {
	case len(b) > maxWholeAnswer:
		return nil, &Error{Kind: Upstream, Provider: p.Name(), Err: errors.New("the answer is over 8 MiB")}
	case json.Unmarshal(b, &c) != nil:
		return nil, &Error{Kind: Upstream, Provider: p.Name(), Err: errors.New("the answer is not a chat completion")}
	case len(c.Choices) == 0:
		return nil, &Error{Kind: Upstream, Provider: p.Name(), Err: errors.New("the answer has no choices")}
	}
	chunk := openaiChunk{Usage: c.Usage}
	for _, ch := range c.Choices {
		for i := range ch.Message.ToolCalls {
			ch.Message.ToolCalls[i].Index = int64(i)
		}
		chunk.Choices = append(chunk.Choices, openaiChoice{Index: ch.Index, Delta: ch.Message, FinishReason: ch.FinishReason})
	}
	evs := append(t.add(chunk), t.finish()...)
	return streamOf(evs), nil
}

// chunkString is a JSON string, or empty for any other value.
type chunkString string

func (s *chunkString) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) < 2 || b[0] != '"':
		*s = ""
	case !bytes.ContainsRune(b, '\\') && utf8.Valid(b):
		// Nothing escaped (the decoder checked the syntax): the text as it is.
		*s = chunkString(b[1 : len(b)-1])
	default:
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = chunkString(v)
	}
	return nil
}

// openaiTurn gathers a streamed answer: text deltas become events as they
// come; a tool call's pieces share its index and only the first names it,
// so calls are emitted whole at the end, then the done event.
type openaiTurn struct {
	calls []*openaiCall
	stop  string
	usage Usage
}

type openaiCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

func (t *openaiTurn) add(chunk openaiChunk) (evs []Event) {
	if chunk.Usage != nil {
		t.usage = Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		if text := string(choice.Delta.Content); text != "" {
			evs = append(evs, Event{Kind: EventText, Text: text})
		}
		for _, d := range choice.Delta.ToolCalls {
			i := slices.IndexFunc(t.calls, func(c *openaiCall) bool { return c.index == d.Index })
			if i < 0 {
				t.calls = append(t.calls, &openaiCall{index: d.Index})
				i = len(t.calls) - 1
			}
			c := t.calls[i]
			if d.ID != "" {
				c.id = string(d.ID)
			}
			if d.Function.Name != "" {
				c.name = string(d.Function.Name)
			}
			c.args.WriteString(string(d.Function.Arguments))
		}
		if choice.FinishReason != "" {
			t.stop = string(choice.FinishReason)
		}
	}
	return evs
}

// finish returns the tool calls, in index order, and the done event.
func (t *openaiTurn) finish() []Event {
	slices.SortFunc(t.calls, func(a, b *openaiCall) int { return cmp.Compare(a.index, b.index) })
	var evs []Event
	for _, c := range t.calls {
		evs = append(evs, Event{Kind: EventToolCall, ToolCall: ToolCall{ID: cmp.Or(c.id, fmt.Sprintf("call_%d", c.index)),
			Name: c.name, Arguments: arguments(c.args.String())}})
	}
	stop := t.stop
	switch {
	case stop == "tool_calls" || stop == "function_call" || stop == "" && len(t.calls) > 0:
		stop = StopToolCalls
	case stop == "":
		stop = StopEnd
	}
	return append(evs, Event{Kind: EventDone, StopReason: stop, Usage: t.usage})
}

// openaiRequest is the body of a streamed chat completion, marshalled with
// encoding/json: openai-go's own parameters (ChatCompletionNewParams, whose
// param.Opt fields it marshals by reflection, then "stream" set with sjson)
// were 3.6 % of the server's CPU a turn (BENCHMARKS.md, issue 18). The SDK
// still sends it and reads the answer.
type openaiRequest struct {
	Model               string          `json:"model"`
	Messages            []openaiMessage `json:"messages"`
	MaxTokens           int64           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64           `json:"max_completion_tokens,omitempty"`
	Stream              bool            `json:"stream"`
	// StreamOptions is nil when not streaming: OpenAI refuses it then.
	StreamOptions *openaiStreamOptions `json:"stream_options,omitempty"`
	Tools         []openaiTool         `json:"tools,omitempty"`
}

// openaiStreamOptions asks a stream for its usage in a last chunk.
type openaiStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openaiMessage is a message of any role; Content is nil only for an
// assistant's tool calls without text.
type openaiMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCallID *string          `json:"tool_call_id,omitempty"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// params is the request of req, streamed, with the usage asked for.
func (p *OpenAI) params(req Request) (openaiRequest, error) {
	params := openaiRequest{Model: p.model, Stream: true, Messages: make([]openaiMessage, 0, len(req.Messages)+1)}
	params.StreamOptions = &openaiStreamOptions{IncludeUsage: true}
	maxTokens := int64(cmp.Or(req.MaxTokens, DefaultMaxTokens))
	if p.newTokens {
		params.MaxCompletionTokens = maxTokens
	} else {
		params.MaxTokens = maxTokens
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openaiMessage{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openaiMessage{Role: "user", Content: &m.Content})
		case RoleTool:
			params.Messages = append(params.Messages, openaiMessage{Role: "tool", Content: &m.Content, ToolCallID: &m.ToolCallID})
		case RoleAssistant:
			a := openaiMessage{Role: "assistant"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content = &m.Content
			}
			for _, c := range m.ToolCalls {
				tc := openaiToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, string(arguments(string(c.Arguments)))
				a.ToolCalls = append(a.ToolCalls, tc)
			}
			params.Messages = append(params.Messages, a)
		default:
			return params, fmt.Errorf("message role %q is not user, assistant or tool", m.Role)
		}
	}
	for _, t := range req.Tools {
		tool := openaiTool{Type: "function"}
		tool.Function.Name, tool.Function.Description = t.Name, t.Description
		if len(t.Parameters) > 0 {
			if trimmed := bytes.TrimSpace(t.Parameters); !json.Valid(trimmed) || trimmed[0] != '{' {
				return params, fmt.Errorf("tool %s: parameters are not a JSON object", t.Name)
			}
			tool.Function.Parameters = t.Parameters
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

// classify turns an SDK error into an *Error.
func (p *OpenAI) classify(ctx context.Context, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		e := &Error{Kind: statusKind(apiErr.StatusCode), Provider: p.Name(), Status: apiErr.StatusCode, Err: err}
		if e.Kind == BadRequest {
			e.Detail = redact(apiErr.Message, p.key)
		}
		return e
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return &Error{Kind: Upstream, Provider: p.Name(), Err: err}
	}
	return transportError(ctx, p.Name(), err)
}
