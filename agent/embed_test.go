package agent

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

	"github.com/parley/parley"
	"github.com/parley/parley/agent/llmtest"
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

// Reciprocal rank fusion of the lexical order with the order by meaning,
// and the rerank variant.
func TestFuseRanking(t *testing.T) {
	t.Parallel()
	var ranked []parley.CorpusEntry // every entry a lexical hit unless said
	for i := range 10 {
		ranked = append(ranked, parley.CorpusEntry{ID: fmt.Sprintf("e%d", i)})
	}
	ids := func(es []parley.CorpusEntry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.ID)
		}
		return strings.Join(s, " ")
	}
	t.Run("NoVectors", func(t *testing.T) {
		t.Parallel()
		if got := ids(fuseRanking(ranked, len(ranked), nil, 0)); got != ids(ranked) {
			t.Errorf("%s", got)
		}
	})
	t.Run("MeaningLiftsAnEntry", func(t *testing.T) {
		t.Parallel()
		// e9 is last by words, first by meaning; the others alike by
		// meaning (their rank by meaning is then their lexical order). e5
		// has no vector: its lexical share only.
		sim := map[string]float64{"e9": 0.9}
		for i := range 9 {
			if i != 5 {
				sim[fmt.Sprintf("e%d", i)] = 0.1
			}
		}
		got := fuseRanking(ranked, len(ranked), sim, 0)
		// e9: 1/70 + 1/61 = 0.0307, after e3 (1/64 + 1/65 = 0.0310),
		// before e4 (1/65 + 1/66 = 0.0305); e5: 1/66 alone.
		if want := "e0 e1 e2 e3 e9 e4 e6 e7 e8 e5"; ids(got) != want {
			t.Errorf("order %s, want %s", ids(got), want)
		}
		if again := fuseRanking(ranked, len(ranked), sim, 0); ids(again) != ids(got) {
			t.Errorf("two orders: %s, %s", ids(got), ids(again))
		}
	})
	t.Run("MeaningAloneAfterBoth", func(t *testing.T) {
		t.Parallel()
		// Only e0 and e1 matched a word; e9 is first by meaning, the others
		// alike; e5 has no vector and matched nothing.
		sim := map[string]float64{"e9": 0.9}
		for i := range 9 {
			if i != 5 {
				sim[fmt.Sprintf("e%d", i)] = 0.1
			}
		}
		got := fuseRanking(ranked, 2, sim, 0)
		// e0 1/61 + 1/62, e1 1/62 + 1/63, e9 1/61, e2 1/64 ..., e5 nothing
		if want := "e0 e1 e9 e2 e3 e4 e6 e7 e8 e5"; ids(got) != want {
			t.Errorf("order %s, want %s", ids(got), want)
		}
	})
	t.Run("TiesKeepTheLexicalOrder", func(t *testing.T) {
		t.Parallel()
		sim := map[string]float64{}
		for _, e := range ranked {
			sim[e.ID] = 0.5
		}
		if got := ids(fuseRanking(ranked, len(ranked), sim, 0)); got != ids(ranked) {
			t.Errorf("%s", got)
		}
	})
	t.Run("Rerank", func(t *testing.T) {
		t.Parallel()
		sim := map[string]float64{"e0": 0.1, "e1": 0.9, "e2": 0.5, "e8": 1}
		got := ids(fuseRanking(ranked, len(ranked), sim, 4))
		// the first four by meaning (e3 has no vector: after them), the rest as they were
		if got != "e1 e2 e0 e3 e4 e5 e6 e7 e8 e9" {
			t.Errorf("%s", got)
		}
	})
}
