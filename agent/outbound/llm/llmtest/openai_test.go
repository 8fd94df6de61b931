package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	return resp, got
}

func TestOpenAI(t *testing.T) {
	t.Parallel()

	t.Run("NonStreaming", func(t *testing.T) {
		t.Parallel()
		s := NewOpenAI(t, Turn{
			Text:      []string{"Hel", "lo"},
			ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: []string{`{"a":`, `1}`}}},
		})
		resp, got := post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", resp.StatusCode, got)
		}
		choice := got["choices"].([]any)[0].(map[string]any)
		msg := choice["message"].(map[string]any)
		call := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
		if msg["content"] != "Hello" || call["arguments"] != `{"a":1}` || choice["finish_reason"] != "tool_calls" {
			t.Errorf("answer = %v", got)
		}
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Chat.Messages[0].Content != "Hi" || reqs[0].Chat.Stream {
			t.Errorf("recorded = %+v", reqs)
		}
	})

	t.Run("ScriptExhausted", func(t *testing.T) {
		t.Parallel()
		s := NewOpenAI(t)
		resp, got := post(t, s.URL+"/chat/completions", `{"model":"m","messages":[]}`)
		msg, _ := got["error"].(map[string]any)["message"].(string)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(msg, "no scripted turn left") {
			t.Errorf("status %d body %v", resp.StatusCode, got)
		}
	})

	t.Run("ErrorStatus", func(t *testing.T) {
		t.Parallel()
		s := NewOpenAI(t, Turn{Status: http.StatusTooManyRequests, ErrorMessage: "slow down"})
		resp, got := post(t, s.URL+"/chat/completions", `{"model":"m","messages":[],"stream":true}`)
		e := got["error"].(map[string]any)
		if resp.StatusCode != http.StatusTooManyRequests || e["message"] != "slow down" || e["type"] != "rate_limit_exceeded" {
			t.Errorf("status %d body %v", resp.StatusCode, got)
		}
	})
}
