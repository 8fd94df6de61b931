package llm

import (
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// chunkSeeds are chunks as OpenAI and compatible servers stream them, and
// shapes that must go to encoding/json.
var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word "},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"quote","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"say \"hi\"\n\u00e9 \ud83d\ude00"}}]}`,
	`{"choices":[{"delta":{"content":[{"type":"text","text":"parts"}]},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":1,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}`,
	`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"Content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","content":"y"}}]}`,
	`{"choices":null}`,
	`{"choices":[{"index":null,"delta":null,"finish_reason":7}]}`,
	`{"choices":[{"index":1.5,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":-1,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":1e2,"delta":{"content":"x"}}]}`,
	` { "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } } ] } `,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"extra":{"nested":[1,{"a":"}]"}]}}`,
	`{"ch\u006fices":[{"delta":{"content":"escaped key"}}]}`,
	`[]`, `null`, `"choices"`, `{}`,
	`{"error":{"message":"overloaded","type":"server_error"}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"Error":"case"}`,
	`{"choices":[{"index":0,"delta":{"content":"bad \x escape"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tab\there\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"index":0,"delta":{"content":"x"},}]}`,
	`{"choices":[{"index":01,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"n":-0.5e+3,"t":true,"f":false,"z":[[[]]]}`,
}

// The scanner decodes exactly what the SDK's stream decodes (an error
// member, encoding/json's syntax check and its decoding), or leaves the
// chunk to it.
func FuzzOpenAIChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := ssestream.Event{Data: data}
		fast, errFast := decodeOpenAIChunk(ev)
		slow, errSlow := decodeOpenAIChunkSDK(ev)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%q: scanner's error %v, the SDK's %v", data, errFast, errSlow)
		}
		if errFast == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nscanner %+v\nthe SDK %+v", data, fast, slow)
		}
	})
}

// The usual chunks take the scanner, not encoding/json's reflection: the
// speed the scanner is for.
func TestOpenAIChunkScannerTakesTheUsualChunks(t *testing.T) {
	for _, s := range chunkSeeds[:3] {
		var c openaiChunk
		if err := c.scan([]byte(s)); err != nil {
			t.Errorf("%s: %v, want the scanner to decode it", s, err)
		}
	}
	for _, s := range []string{chunkSeeds[3], chunkSeeds[4], chunkSeeds[8], chunkSeeds[9]} {
		var c openaiChunk
		if err := c.scan([]byte(s)); err == nil {
			t.Errorf("%s: the scanner decoded it, want encoding/json", s)
		}
	}
}

func BenchmarkOpenAIChunk(b *testing.B) {
	ev := ssestream.Event{Data: []byte(chunkSeeds[1])}
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeOpenAIChunk(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeOpenAIChunkSDK(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
