package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
)

// The embedding client against the scripted server, in OpenAI's wire
// format (issue 34).
func TestEmbedder(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, key string, dims int) (*Embedder, *llmtest.Embeddings) {
		srv := llmtest.NewEmbeddings(t)
		srv.Key = key
		return NewEmbedder(EmbedderConfig{BaseURL: srv.URL + "/", APIKey: key, Model: "embed-test", Dimensions: dims}), srv
	}
	t.Run("BatchesInOrder", func(t *testing.T) {
		t.Parallel()
		e, srv := setup(t, "", 0)
		inputs := make([]string, 150)
		for i := range inputs {
			inputs[i] = fmt.Sprintf("entry %d about bike repair", i)
		}
		vs, err := e.Embed(context.Background(), inputs)
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for _, r := range srv.Requests() {
			sizes = append(sizes, len(r.Input))
			if r.Model != "embed-test" || r.Dimensions != 0 {
				t.Errorf("request model %q dimensions %d", r.Model, r.Dimensions)
			}
		}
		if fmt.Sprint(sizes) != "[64 64 22]" {
			t.Errorf("batches of %v, want [64 64 22]", sizes)
		}
		if len(vs) != len(inputs) {
			t.Fatalf("%d vectors for %d inputs", len(vs), len(inputs))
		}
		for i, v := range vs {
			want, _ := unitVector(llmtest.ConceptVector(inputs[i], llmtest.EmbeddingDims))
			if len(v) != len(want) || math.Abs(dot(v, want)-1) > 1e-5 {
				t.Fatalf("vector %d is not its input's (the server answers last first: read by index)", i)
			}
			if math.Abs(dot(v, v)-1) > 1e-5 {
				t.Errorf("vector %d is not of unit length: %f", i, dot(v, v))
			}
		}
	})
	t.Run("Meaning", func(t *testing.T) {
		t.Parallel()
		e, _ := setup(t, "", 0)
		vs, err := e.Embed(context.Background(), []string{"How much does a bicycle cost?", "Bike prices", "Opening hours"})
		if err != nil {
			t.Fatal(err)
		}
		if near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2]); near < 0.5 || far > 0.1 {
			t.Errorf("synonyms %.2f apart, unrelated %.2f", near, far)
		}
	})
	t.Run("BearerKey", func(t *testing.T) {
		t.Parallel()
		e, srv := setup(t, "sk-secret-1", 0)
		if _, err := e.EmbedOne(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-secret-1" {
			t.Errorf("Authorization %q", got)
		}
		wrong := NewEmbedder(EmbedderConfig{BaseURL: srv.URL, APIKey: "sk-wrong-2", Model: "m"})
		_, err := wrong.EmbedOne(context.Background(), "hello")
		var ee *EmbedError
		if !errors.As(err, &ee) || ee.Status != 401 || !strings.Contains(err.Error(), "Incorrect API key provided") {
			t.Errorf("wrong key: %v", err)
		}
		if strings.Contains(err.Error(), "sk-wrong-2") {
			t.Errorf("the error shows the key: %v", err)
		}
	})
	t.Run("NoKeyNoHeader", func(t *testing.T) {
		t.Parallel()
		e, srv := setup(t, "", 0)
		if _, err := e.EmbedOne(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		if got, ok := srv.Requests()[0].Header["Authorization"]; ok {
			t.Errorf("Authorization %q sent without a key", got)
		}
	})
	t.Run("Dimensions", func(t *testing.T) {
		t.Parallel()
		e, srv := setup(t, "", 32)
		v, err := e.EmbedOne(context.Background(), "hello")
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 32 || srv.Requests()[0].Dimensions != 32 || e.Model() != "embed-test@32" {
			t.Errorf("%d dimensions, asked %d, model %q", len(v), srv.Requests()[0].Dimensions, e.Model())
		}
	})
	t.Run("ClipsLongInputs", func(t *testing.T) {
		t.Parallel()
		e, srv := setup(t, "", 0)
		if _, err := e.Embed(context.Background(), []string{strings.Repeat("é", 20_000), "   "}); err != nil {
			t.Fatal(err)
		}
		in := srv.Requests()[0].Input
		if utf8.RuneCountInString(in[0]) != EmbedInputChars || in[1] != " " {
			t.Errorf("inputs of %d characters and %q sent", utf8.RuneCountInString(in[0]), in[1])
		}
	})
	t.Run("StatusErrors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			status  int
			message string
		}{
			{400, "This model's maximum context length is 8192 tokens"},
			{404, "The model `nope` does not exist"},
			{429, "Rate limit reached for requests"},
			{500, "The server had an error while processing your request."},
			{503, ""},
		} {
			e, srv := setup(t, "", 0)
			srv.Fail(tc.status, tc.message)
			_, err := e.EmbedOne(context.Background(), "hello")
			var ee *EmbedError
			if !errors.As(err, &ee) || ee.Status != tc.status || ee.Message != tc.message {
				t.Errorf("%d: %v", tc.status, err)
				continue
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.status)) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("%d: error %q lacks the status or the message", tc.status, err)
			}
		}
	})
	t.Run("NonJSONErrorBody", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>Bad gateway</html>", http.StatusBadGateway)
		}))
		defer ts.Close()
		_, err := NewEmbedder(EmbedderConfig{BaseURL: ts.URL, Model: "m"}).EmbedOne(context.Background(), "hello")
		if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "Bad gateway") {
			t.Errorf("%v", err)
		}
	})
	t.Run("MalformedAnswers", func(t *testing.T) {
		t.Parallel()
		for name, body := range map[string]string{
			"NotJSON":      `{"data": [`,
			"WrongCount":   `{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			"IndexOutside": `{"data": [{"index": 3, "embedding": [1, 0]}]}`,
			"EmptyVector":  `{"data": [{"index": 0, "embedding": []}]}`,
			"ZeroVector":   `{"data": [{"index": 0, "embedding": [0, 0, 0]}]}`,
			"NotNumbers":   `{"data": [{"index": 0, "embedding": "AAAA"}]}`,
			"NoData":       `{"object": "list"}`,
		} {
			e, srv := setup(t, "", 0)
			srv.Raw(body)
			if v, err := e.EmbedOne(context.Background(), "hello"); err == nil {
				t.Errorf("%s: no error, vector %v", name, v)
			}
		}
		e, srv := setup(t, "", 0)
		srv.Raw(`{"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [1, 0, 0]}]}`)
		if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "dimensions") {
			t.Errorf("vectors of two lengths: %v", err)
		}
	})
	t.Run("BoundedResponse", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data": [{"index": 0, "embedding": [`))
			chunk := []byte(strings.Repeat("0.125, ", 1<<14))
			for n := 0; n <= maxEmbedResponse; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		defer ts.Close()
		_, err := NewEmbedder(EmbedderConfig{BaseURL: ts.URL, Model: "m"}).EmbedOne(context.Background(), "hello")
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := NewEmbedder(EmbedderConfig{BaseURL: ts.URL, Model: "m"}).EmbedOne(ctx, "hello")
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Errorf("%v after %s", err, time.Since(start))
		}
	})
}

// dot is the dot product of two vectors of one length.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
