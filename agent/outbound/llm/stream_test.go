package llm

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A text event says whether more text has already arrived after it
// (Event.More), so that the chat writer flushes once for chunks that came
// together, and never holds a text whose next chunk is still to come or
// that tools follow.
func TestStreamTextMore(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string) string {
			return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
		}
		// Two texts in one write: the first is followed by text in hand.
		fmt.Fprint(w, chunk(`{"role":"assistant"}`)+chunk(`{"content":"Hel"}`)+chunk(`{"content":"lo"}`))
		w.(http.Flusher).Flush()
		select { // the next text comes only once "lo" was received
		case <-next:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, chunk(`{"content":"!"}`)+
			chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"escalate","arguments":"{}"}}]}`)+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: "k", Model: "m"})
	s, err := p.Stream(t.Context(), userRequest("Hi"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != EventText {
			continue
		}
		got = append(got, fmt.Sprintf("%s:%v", ev.Text, ev.More))
		if ev.Text == "lo" {
			close(next)
		}
	}
	if want := "[Hel:true lo:false !:false]"; fmt.Sprint(got) != want {
		t.Errorf("texts %v, want %s (\"!\" is followed by a tool call, not text)", got, want)
	}
}
