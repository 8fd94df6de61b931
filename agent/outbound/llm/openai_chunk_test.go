package llm

import (
	"encoding/json"
	"testing"
)

// A chunk decodes as the SDK's decoder read it: escapes resolved, invalid
// UTF-8 replaced, and a value that is not a string (content as an array of
// parts, as some compatible servers send) empty rather than an error that
// would end the stream.
func TestOpenAIChunkDecoding(t *testing.T) {
	for _, tc := range []struct{ data, content, finish string }{
		{`{"choices":[{"index":0,"delta":{"content":"plain words "},"finish_reason":null}]}`, "plain words ", ""},
		{`{"choices":[{"index":0,"delta":{"content":"say \"hi\"\n\u00e9 \ud83d\ude00"}}]}`, "say \"hi\"\né 😀", ""},
		{"{\"choices\":[{\"delta\":{\"content\":\"bad \xff byte\"}}]}", "bad \uFFFD byte", ""},
		{`{"choices":[{"delta":{"content":[{"type":"text","text":"parts"}]},"finish_reason":"stop"}]}`, "", "stop"},
		{`{"choices":[{"delta":{"content":null,"role":"assistant"}}],"usage":null}`, "", ""},
	} {
		var c openaiChunk
		if err := json.Unmarshal([]byte(tc.data), &c); err != nil {
			t.Errorf("%s: %v", tc.data, err)
			continue
		}
		if len(c.Choices) != 1 || string(c.Choices[0].Delta.Content) != tc.content || string(c.Choices[0].FinishReason) != tc.finish {
			t.Errorf("%s: got %+v, want content %q, finish %q", tc.data, c.Choices, tc.content, tc.finish)
		}
	}
	var c openaiChunk
	if err := json.Unmarshal([]byte(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}}`), &c); err != nil || c.Usage == nil || c.Usage.PromptTokens != 12 || c.Usage.CompletionTokens != 3 {
		t.Errorf("usage chunk: %+v, %v", c.Usage, err)
	}
}
