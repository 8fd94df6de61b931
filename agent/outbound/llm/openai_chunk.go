package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// Decoding a streamed chunk is the hottest code of a turn: an answer comes
// as one chunk per few words, and each went through the SDK's stream
// (a gjson look-up for an error, then encoding/json's syntax check and its
// reflection over openaiChunk): a sixth of the server's CPU (BENCHMARKS.md,
// issue 18). openaiChunks reads the usual chunk, {"choices":[{"index":0,
// "delta":{"content":"..."},"finish_reason":null}], ...}, with a scanner of
// its own, one pass that checks the syntax as encoding/json does, and hands
// anything else (an error, tool calls, usage, a key in another case, a
// number it does not expect, bad JSON) to the SDK's way, so that what it
// decodes, and what it refuses, is what the SDK's stream would
// (FuzzOpenAIChunk).

// openaiChunks is the chunk source of an OpenAI stream: ssestream.Stream's
// Next, with the scanner first.
type openaiChunks struct {
	dec  ssestream.Decoder
	cur  openaiChunk
	err  error
	done bool
}

func newOpenAIChunks(res *http.Response, err error, gate *eventGate) *openaiChunks {
	switch {
	case err != nil:
		return &openaiChunks{err: err}
	case gate != nil && gate.body != nil && res != nil && res.Body != nil:
		// Decoded from the gate's buffer, without the SDK's scanner.
		return &openaiChunks{dec: &gatedEvents{gatedDecoder{b: gate.body, rc: res.Body}}}
	}
	return &openaiChunks{dec: ssestream.NewDecoder(res)}
}

func (s *openaiChunks) Next() bool {
	if s.err != nil || s.done || s.dec == nil {
		return false
	}
	if !s.dec.Next() {
		s.err, s.done = s.dec.Err(), true
		return false
	}
	ev := s.dec.Event()
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		s.done = true
		return false
	}
	s.cur, s.err = decodeOpenAIChunk(ev)
	return s.err == nil
}

// decodeOpenAIChunk decodes an event's chunk: by the scanner, else as
// ssestream.Stream does (an "error" member is the stream's error).
func decodeOpenAIChunk(ev ssestream.Event) (openaiChunk, error) {
	var c openaiChunk
	if c.scan(ev.Data) == nil {
		return c, nil
	}
	return decodeOpenAIChunkSDK(ev)
}

// decodeOpenAIChunkSDK is ssestream.Stream's decoding of a chunk.
func decodeOpenAIChunkSDK(ev ssestream.Event) (openaiChunk, error) {
	var c openaiChunk
	if ep := gjson.GetBytes(ev.Data, "error"); ep.Exists() {
		return c, &ssestream.StreamError{Message: "received error while streaming: " + ep.String(), Event: ev}
	}
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return openaiChunk{}, err
	}
	return c, nil
}

func (s *openaiChunks) Current() openaiChunk { return s.cur }
func (s *openaiChunks) Err() error           { return s.err }

func (s *openaiChunks) Close() error {
	if s.dec == nil {
		return nil
	}
	return s.dec.Close()
}

var _ chunkSource[openaiChunk] = (*openaiChunks)(nil)

// errChunkSlow sends a chunk to the slow path.
var errChunkSlow = errors.New("chunk needs encoding/json")

// chunkScanner walks a chunk's JSON, checking its syntax as it goes.
type chunkScanner struct {
	b     []byte
	i     int
	depth int
}

// chunkMaxDepth bounds the nesting the scanner follows; deeper goes to
// encoding/json, which has its own bound.
const chunkMaxDepth = 64

func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *chunkScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// want consumes byte c after white space.
func (s *chunkScanner) want(c byte) error {
	if s.peek() != c {
		return errChunkSlow
	}
	s.i++
	return nil
}

// str reads a string token, raw (quotes included), checking its escapes.
func (s *chunkScanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errChunkSlow
	}
	start := s.i
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start:s.i], nil
		case c < 0x20:
			return nil, errChunkSlow
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return nil, errChunkSlow
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 5 {
					return nil, errChunkSlow
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, errChunkSlow
					}
				}
				s.i += 4
			default:
				return nil, errChunkSlow
			}
		}
	}
	return nil, errChunkSlow
}

// num reads a number token as JSON's grammar has it.
func (s *chunkScanner) num() error {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return errChunkSlow
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return errChunkSlow
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return errChunkSlow
		}
	}
	return nil
}

// lit reads the literal word.
func (s *chunkScanner) lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return errChunkSlow
	}
	s.i += len(word)
	return nil
}

// value passes over one value, checking its syntax.
func (s *chunkScanner) value() error {
	switch c := s.peek(); {
	case c == '"':
		_, err := s.str()
		return err
	case c == '{':
		return s.members(nil, func(int) error { return s.value() })
	case c == '[':
		return s.elements(s.value)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num()
	}
	return errChunkSlow
}

// null consumes a null, reporting whether there was one.
func (s *chunkScanner) null() bool {
	if s.peek() == 'n' && s.lit("null") == nil {
		return true
	}
	return false
}

// members reads an object, calling member with the index in fields of each
// key (-1 for a key that is none of them) with the scanner at its value,
// which member must read. A key that matches a field in another case, or
// holds an escape, goes to the slow path (encoding/json folds case).
func (s *chunkScanner) members(fields []string, member func(field int) error) error {
	if err := s.want('{'); err != nil {
		return err
	}
	if s.depth++; s.depth > chunkMaxDepth {
		return errChunkSlow
	}
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		raw, err := s.str()
		if err != nil {
			return err
		}
		k := raw[1 : len(raw)-1]
		field := -1
		for i, f := range fields {
			if string(k) == f {
				field = i
				break
			}
			if bytes.EqualFold(k, []byte(f)) || bytes.IndexByte(k, '\\') >= 0 {
				return errChunkSlow
			}
		}
		if err := s.want(':'); err != nil {
			return err
		}
		if err := member(field); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errChunkSlow
		}
	}
}

// elements reads an array, calling element at each element.
func (s *chunkScanner) elements(element func() error) error {
	if err := s.want('['); err != nil {
		return err
	}
	if s.depth++; s.depth > chunkMaxDepth {
		return errChunkSlow
	}
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := element(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errChunkSlow
		}
	}
}

// chunkStr reads a value into a chunkString as its UnmarshalJSON would.
func (s *chunkScanner) chunkStr(dst *chunkString) error {
	s.ws()
	start := s.i
	if err := s.value(); err != nil {
		return err
	}
	return dst.UnmarshalJSON(s.b[start:s.i])
}

var (
	chunkFields  = []string{"choices", "usage", "error"}
	choiceFields = []string{"index", "delta", "finish_reason"}
	deltaFields  = []string{"content", "tool_calls"}
)

// scan decodes the usual chunk into c, which is zero, or fails with
// errChunkSlow.
func (c *openaiChunk) scan(b []byte) error {
	s := &chunkScanner{b: b}
	seen := [2]bool{}
	err := s.members(chunkFields, func(field int) error {
		switch field {
		case 0: // choices
			if seen[0] {
				return errChunkSlow
			}
			seen[0] = true
			if s.null() {
				return nil
			}
			c.Choices = make([]openaiChoice, 0, 1)
			return s.elements(func() error {
				c.Choices = append(c.Choices, openaiChoice{})
				return s.choice(&c.Choices[len(c.Choices)-1])
			})
		case 1: // usage
			if s.null() {
				return nil
			}
			return errChunkSlow
		case 2: // error: the SDK's way reports it
			return errChunkSlow
		}
		return s.value()
	})
	if err != nil {
		return err
	}
	if s.ws(); s.i != len(s.b) {
		return errChunkSlow
	}
	return nil
}

func (s *chunkScanner) choice(ch *openaiChoice) error {
	var seen [3]bool
	return s.members(choiceFields, func(field int) error {
		if field >= 0 {
			if seen[field] {
				return errChunkSlow
			}
			seen[field] = true
		}
		switch field {
		case 0: // index
			return s.int(&ch.Index)
		case 1: // delta
			if s.null() {
				return nil
			}
			content := false
			return s.members(deltaFields, func(field int) error {
				switch field {
				case 0: // content
					if content {
						return errChunkSlow
					}
					content = true
					return s.chunkStr(&ch.Delta.Content)
				case 1: // tool_calls
					if s.null() {
						return nil
					}
					return errChunkSlow
				}
				return s.value()
			})
		case 2: // finish_reason
			return s.chunkStr(&ch.FinishReason)
		}
		return s.value()
	})
}

// int reads a small non-negative integer, or sends the chunk to the slow
// path (null, a sign, a fraction, an exponent, another type).
func (s *chunkScanner) int(dst *int64) error {
	s.ws()
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	switch {
	case s.i == start, s.i-start > 9, s.i-start > 1 && s.b[start] == '0':
		return errChunkSlow
	case s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E'):
		return errChunkSlow
	}
	*dst = n
	return nil
}
