package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// Limits of the embedding client.
const (
	// EmbedBatch is how many inputs one request to the endpoint carries at
	// most: OpenAI takes 2,048, but smaller servers (Ollama, TEI, vLLM) cap
	// lower, and a failed batch costs less to retry.
	EmbedBatch = 64
	// EmbedInputChars bounds each input (in characters): an entry's content
	// may hold 50,000, past every embedding model's context (OpenAI's 8,191
	// tokens), and what decides what an entry is about is its beginning.
	EmbedInputChars = 8000
	// maxEmbedResponse bounds a response's body: 64 vectors of 3,072
	// dimensions in JSON are about 5 MB.
	maxEmbedResponse = 32 << 20
	// maxEmbedError bounds what of an error body is read for its message.
	maxEmbedError = 64 << 10
)

// EmbedderConfig configures an OpenAI-compatible embedding endpoint: the
// operator's (PARLEY_EMBEDDINGS_*) or a tenant's own (EmbedderFor).
type EmbedderConfig struct {
	// BaseURL is up to and including the version (https://api.openai.com/v1,
	// http://ollama:11434/v1): requests go to BaseURL + "/embeddings".
	BaseURL string
	// APIKey is sent as a bearer token; "" sends none (a local server).
	APIKey string
	Model  string
	// Dimensions, when not 0, asks for vectors of that length (the
	// "dimensions" parameter of OpenAI's text-embedding-3 models), and
	// refuses answers of another.
	Dimensions int
	// HTTPClient sends the requests; nil means a plain client with a
	// 30-second timeout. The operator's URL is trusted, as the managed
	// model's is: no SSRF guard; a tenant's goes through the outbound
	// guard's client (EmbedderFor).
	HTTPClient *http.Client
}

// Embedder turns texts into unit-length vectors through an
// OpenAI-compatible /embeddings endpoint. Safe for concurrent use.
type Embedder struct {
	url        string
	key        string
	model      string
	dimensions int
	client     *http.Client
	// Rerank, when above 0, makes the turn reorder the lexical ranking's
	// first Rerank candidates by meaning alone instead of fusing the two
	// rankings (agent/rank's Fuse): the variant BENCHMARKS.md measures against
	// reciprocal rank fusion. It is not read from the environment.
	Rerank int
}

// NewEmbedder builds the client of cfg's endpoint.
func NewEmbedder(cfg EmbedderConfig) *Embedder {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	return &Embedder{url: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings", key: cfg.APIKey,
		model: cfg.Model, dimensions: cfg.Dimensions, client: client}
}

// Secrets opens values sealed at rest (a tenant's embedding key);
// auth.Box satisfies it.
type Secrets interface {
	Open(sealed []byte) ([]byte, error)
}

// tenantEmbedTimeout bounds one request to a tenant's own endpoint, body
// included (the turn's wait, in agent, is shorter).
const tenantEmbedTimeout = 30 * time.Second

// EmbedderFor is the embedder of the tenant's knowledge base: its own
// endpoint's when it set one, its key opened with secrets and its requests
// sent through guard (a tenant's URL is not trusted as the operator's is);
// else operator, the operator's (nil: none). A tenant's endpoint without a
// guard to reach it through is an error, never the operator's instead: the
// two models' vectors are not comparable.
func EmbedderFor(t parley.Tenant, operator *Embedder, secrets Secrets, guard *outbound.Guard) (*Embedder, error) {
	if t.EmbeddingsURL == nil || t.EmbeddingsModel == nil {
		return operator, nil
	}
	if guard == nil || secrets == nil {
		return nil, errors.New("no outbound guard to reach the tenant's embedding endpoint through")
	}
	var key string
	if t.EmbeddingsAPIKey != nil {
		k, err := secrets.Open(t.EmbeddingsAPIKey)
		if err != nil {
			return nil, fmt.Errorf("opening the tenant's embedding key: %w", err)
		}
		key = string(k)
	}
	var dims int
	if t.EmbeddingsDimensions != nil {
		dims = *t.EmbeddingsDimensions
	}
	return NewEmbedder(EmbedderConfig{BaseURL: *t.EmbeddingsURL, APIKey: key, Model: *t.EmbeddingsModel,
		Dimensions: dims, HTTPClient: guard.Client(tenantEmbedTimeout)}), nil
}

// Model names the vectors the embedder makes, as they are stored: the
// model, and the dimensions when asked for ("text-embedding-3-small@256"),
// since one model gives vectors of several lengths.
func (e *Embedder) Model() string {
	return parley.EmbeddingModelKey(e.model, e.dimensions)
}

// embedRequest is the body of POST /embeddings.
type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// embedResponse is what is read of its answer (usage is not).
type embedResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// EmbedError is an answer of the endpoint other than 200: its status and
// the message of its OpenAI-style error body, when it has one.
type EmbedError struct {
	Status  int
	Message string
}

func (e *EmbedError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("embedding endpoint answered %d", e.Status)
	}
	return fmt.Sprintf("embedding endpoint answered %d: %s", e.Status, e.Message)
}

// Embed returns the unit-length vector of each input, in order, in
// requests of at most EmbedBatch inputs; each input is cut to
// EmbedInputChars first. Any failure fails the whole call: the caller
// (the turn, the embedding job) decides what to do without vectors.
func (e *Embedder) Embed(ctx context.Context, inputs []string) ([][]float32, error) {
	out := make([][]float32, 0, len(inputs))
	for start := 0; start < len(inputs); start += EmbedBatch {
		batch := inputs[start:min(start+EmbedBatch, len(inputs))]
		vs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs[0]) != len(out[0]) {
			return nil, fmt.Errorf("embedding endpoint: vectors of %d then %d dimensions", len(out[0]), len(vs[0]))
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, inputs []string) ([][]float32, error) {
	clipped := make([]string, len(inputs))
	for i, s := range inputs {
		clipped[i] = parley.Clip(s, EmbedInputChars)
		if strings.TrimSpace(clipped[i]) == "" {
			// OpenAI refuses an empty input; a space means the same nothing.
			clipped[i] = " "
		}
	}
	body, err := json.Marshal(embedRequest{Model: e.model, Input: clipped, EncodingFormat: "float", Dimensions: e.dimensions})
	if err != nil {
		return nil, fmt.Errorf("encoding the embedding request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedding request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// The error names the URL, never the key (a header).
		return nil, fmt.Errorf("embedding endpoint: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxEmbedError))
		return nil, &EmbedError{Status: resp.StatusCode, Message: apiErrorMessage(raw)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the embedding response: %w", err)
	}
	if len(raw) > maxEmbedResponse {
		return nil, fmt.Errorf("embedding response larger than %d MB", maxEmbedResponse>>20)
	}
	var r embedResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decoding the embedding response: %w", err)
	}
	if len(r.Data) != len(inputs) {
		return nil, fmt.Errorf("embedding response: %d vectors for %d inputs", len(r.Data), len(inputs))
	}
	out := make([][]float32, len(inputs))
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		switch {
		case i < 0 || i >= len(inputs) || out[i] != nil:
			return nil, fmt.Errorf("embedding response: index %d out of range or repeated", i)
		case len(d.Embedding) == 0:
			return nil, fmt.Errorf("embedding response: empty vector at index %d", i)
		case e.dimensions > 0 && len(d.Embedding) != e.dimensions:
			return nil, fmt.Errorf("embedding response: %d dimensions, %d asked for", len(d.Embedding), e.dimensions)
		case pos > 0 && len(d.Embedding) != len(r.Data[0].Embedding):
			return nil, fmt.Errorf("embedding response: vectors of %d and %d dimensions", len(r.Data[0].Embedding), len(d.Embedding))
		}
		v, ok := unitVector(d.Embedding)
		if !ok {
			return nil, fmt.Errorf("embedding response: vector %d is zero or not finite", i)
		}
		out[i] = v
	}
	return out, nil
}

// apiErrorMessage is the message of an OpenAI-style error body
// ({"error": {"message": ...}} or {"error": "..."}), else the body's
// beginning when it is short text.
func apiErrorMessage(raw []byte) string {
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &m) == nil && len(m.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Error, &obj) == nil {
			return parley.Clip(obj.Message, 500)
		}
		var s string
		if json.Unmarshal(m.Error, &s) == nil {
			return parley.Clip(s, 500)
		}
	}
	return parley.Clip(strings.TrimSpace(string(raw)), 200)
}

// unitVector is v scaled to length 1, as float32; false for a zero or
// non-finite vector, which has no direction.
func unitVector(v []float64) ([]float32, bool) {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsInf(norm, 0) || math.IsNaN(norm) {
		return nil, false
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out, true
}

// EmbedOne is the vector of one text.
func (e *Embedder) EmbedOne(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}
