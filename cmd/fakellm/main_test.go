package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm"
)

// TestStreamThroughParleysClient: Parley's own OpenAI provider reads the
// fake model's stream as one answer of the configured number of chunks,
// with the usage it reports, and stops.
func TestStreamThroughParleysClient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newHandler(50))
	t.Cleanup(srv.Close)
	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "fake"})
	stream, err := p.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var texts int
	var done *llm.Event
	for ev, err := range stream {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case llm.EventText:
			texts++
			text.WriteString(ev.Text)
		case llm.EventDone:
			done = &ev
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
	if texts != 50 || text.String() != Answer(50) {
		t.Errorf("%d text events %q, want 50 making %q", texts, text.String(), Answer(50))
	}
	if done == nil || done.StopReason != llm.StopEnd {
		t.Fatalf("done event %+v, want stop reason %q", done, llm.StopEnd)
	}
	if done.Usage.OutputTokens != 50 {
		t.Errorf("usage %+v, want 50 output tokens", done.Usage)
	}
}

// TestWireFormat checks the stream as OpenAI sends it: an event stream of
// data lines, each a chat.completion.chunk, ending with data: [DONE]; and a
// whole completion when no stream is asked for.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newHandler(3))
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"fake","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		data = append(data, d)
	}
	// role, 3 words, stop, [DONE]
	if len(data) != 6 || data[5] != "[DONE]" {
		t.Fatalf("events %q", data)
	}
	var content strings.Builder
	for i, d := range data[:5] {
		var c struct {
			Object  string
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("event %d %q: %v", i, d, err)
		}
		content.WriteString(c.Choices[0].Delta.Content)
		if (c.Choices[0].FinishReason != nil) != (i == 4) {
			t.Errorf("event %d finish_reason %v", i, c.Choices[0].FinishReason)
		}
	}
	if content.String() != Answer(3) {
		t.Errorf("content %q", content.String())
	}

	resp2, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"fake","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var whole struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.NewDecoder(resp2.Body).Decode(&whole); err != nil || len(whole.Choices) != 1 || whole.Choices[0].Message.Content != Answer(3) {
		t.Errorf("non-streamed answer %+v: %v", whole, err)
	}

	resp3, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{`))
	if err != nil {
		t.Fatal(err)
	}
	resp3.Body.Close()
	if resp3.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: status %d, want 400", resp3.StatusCode)
	}
}
