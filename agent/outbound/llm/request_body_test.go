package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A model request's body goes with its length (not chunked), once; its
// GetBody encodes it again for the transport's retry; read to the end, it
// holds no bytes.
func TestSentBody(t *testing.T) {
	t.Parallel()
	type seen struct {
		length  int64
		chunked []string
		body    []byte
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{length: r.ContentLength, chunked: r.TransferEncoding, body: b})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			for _, ev := range []anthropicWire{anthropicToolTurn[0], anthropicToolTurn[1], anthropicToolTurn[3], anthropicToolTurn[len(anthropicToolTurn)-1]} {
				_, _ = io.WriteString(w, "event: "+ev.name+"\ndata: "+ev.data+"\n\n")
			}
			return
		}
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	req := userRequest(strings.Repeat("A long question. ", 500)) // past the transport's 1 KiB write buffer
	for _, p := range []Provider{
		NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testLLMKey, Model: "m", HTTPClient: srv.Client()}),
		NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "m", HTTPClient: srv.Client()}),
	} {
		s, err := p.Stream(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if r := collectStream(s); r.err != nil || r.text() == "" {
			t.Fatalf("%s: text %q, error %v", p.Name(), r.text(), r.err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for i, g := range got {
		var body struct {
			Stream bool `json:"stream"`
		}
		if err := json.Unmarshal(g.body, &body); err != nil || !body.Stream || !bytes.Contains(g.body, []byte("A long question. A long")) {
			t.Errorf("request %d: body %.80q (%v), want a streamed request's JSON", i, g.body, err)
		}
		if g.length != int64(len(g.body)) || len(g.chunked) != 0 {
			t.Errorf("request %d: Content-Length %d, Transfer-Encoding %v; want %d, not chunked", i, g.length, g.chunked, len(g.body))
		}
	}

	// The body itself, and the length and GetBody the middleware gives an
	// attempt.
	encoded := 0
	rc, sent, err := sentBodyRequest(func() ([]byte, error) { encoded++; return []byte(`{"a":1}`), nil })
	if err != nil {
		t.Fatal(err)
	}
	b := rc.(*sentBody)
	r, _ := http.NewRequest(http.MethodPost, "http://model.test", b)
	if _, err := sent(r, func(*http.Request) (*http.Response, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r.Body); string(got) != `{"a":1}` || b.b != nil || r.ContentLength != 7 {
		t.Errorf("sent %q, left %q, length %d; want the body once, nothing kept, 7", got, b.b, r.ContentLength)
	}
	again, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := io.ReadAll(again); !bytes.Equal(a, []byte(`{"a":1}`)) || encoded != 2 {
		t.Errorf("GetBody gave %q after %d encodings, want the body encoded again (2)", a, encoded)
	}
	// An encoding that fails is the request's error, nothing sent.
	if _, _, err := sentBodyRequest(func() ([]byte, error) { return nil, io.ErrUnexpectedEOF }); err != io.ErrUnexpectedEOF {
		t.Errorf("a failed encoding: %v, want its error", err)
	}
	if n, err := b.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Errorf("a body read to the end: %d, %v; want 0, EOF", n, err)
	}
}
