package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// Embeddings is a scripted OpenAI-compatible embedding server (POST
// /embeddings, OpenAI's wire format), so that tests and the retrieval
// benchmark run the real client. Its vectors carry a little meaning: a
// text is a bag of concepts, where a small table of synonyms (English and
// French) maps words of one meaning to one concept ("price", "cost",
// "prix"; "bike", "bicycle", "vélo") and any other word is a concept of
// its own; each concept is hashed to one of the vector's dimensions. It is
// not a model: texts sharing no concept are orthogonal.
type Embeddings struct {
	// URL is the base URL to configure, up to the version (…/v1).
	URL string
	// Key, when set, is the bearer token required of every request.
	Key string

	mu       sync.Mutex
	requests []EmbeddingsReceived
	status   int
	message  string
	raw      string
}

// EmbeddingsReceived is a request the embedding server got.
type EmbeddingsReceived struct {
	Header http.Header
	Model  string   `json:"model"`
	Input  []string `json:"input"`
	// Dimensions is the request's "dimensions", 0 when absent.
	Dimensions int `json:"dimensions"`
}

// EmbeddingDims is the length of the server's vectors when a request asks
// for none.
const EmbeddingDims = 256

// NewEmbeddings starts a scripted embedding server for the test's life.
func NewEmbeddings(tb testing.TB) *Embeddings {
	tb.Helper()
	s := &Embeddings{}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(ts.Close)
	s.URL = ts.URL + "/v1"
	return s
}

// Fail makes every request answer status with an OpenAI-style error body
// carrying message, until Fail(0, "").
func (s *Embeddings) Fail(status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.message = status, message
}

// Raw makes every request answer 200 with body as it is (malformed JSON,
// a wrong count of vectors...), until Raw("").
func (s *Embeddings) Raw(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = body
}

// Requests is what the server received so far, in order.
func (s *Embeddings) Requests() []EmbeddingsReceived {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]EmbeddingsReceived(nil), s.requests...)
}

// Inputs is every input the server was asked to embed so far, in order.
func (s *Embeddings) Inputs() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Input...)
	}
	return out
}

func (s *Embeddings) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		fail(http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req EmbeddingsReceived
	if err := json.Unmarshal(body, &req); err != nil {
		fail(http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	status, message, raw, key := s.status, s.message, s.raw, s.Key
	s.mu.Unlock()
	switch {
	case key != "" && r.Header.Get("Authorization") != "Bearer "+key:
		fail(http.StatusUnauthorized, "Incorrect API key provided.")
		return
	case status != 0:
		fail(status, message)
		return
	case raw != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, raw)
		return
	case req.Model == "":
		fail(http.StatusBadRequest, "you must provide a model parameter")
		return
	case len(req.Input) == 0 || len(req.Input) > 2048:
		fail(http.StatusBadRequest, "'input' must hold 1 to 2048 strings")
		return
	}
	dims := EmbeddingDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	data := make([]datum, len(req.Input))
	tokens := 0
	for i, in := range req.Input {
		// Last first: a client must read each vector's index.
		data[len(data)-1-i] = datum{Object: "embedding", Index: i, Embedding: ConceptVector(in, dims)}
		tokens += len(strings.Fields(in))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// ConceptVector is the server's vector of text, of dims dimensions, not
// normalised: each concept's count on the dimension its name hashes to,
// and a small constant on the first, so that no text is the zero vector.
func ConceptVector(text string, dims int) []float64 {
	v := make([]float64, dims)
	v[0] = 0.01
	for _, c := range Concepts(text) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(c))
		v[h.Sum32()%uint32(dims)]++
	}
	return v
}

// Concepts is the concepts of text: its words, lower case, without their
// plural s, stop words dropped, each synonym of the table read as its
// concept.
func Concepts(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) {
			if c, ok := conceptOf[w+" "+words[i+1]]; ok {
				out = append(out, c)
				i++
				continue
			}
		}
		if stopWords[w] {
			continue
		}
		if c, ok := conceptOf[w]; ok {
			out = append(out, c)
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
			if c, ok := conceptOf[w]; ok {
				out = append(out, c)
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// synonyms are the concepts the server knows, each with its words (two
// words at most, such as "how much").
var synonyms = map[string][]string{
	"price":     {"price", "cost", "how much", "fee", "charge", "rate", "prix", "coût", "cout", "tarif", "combien", "coûte", "coute"},
	"bike":      {"bike", "bicycle", "cycle", "vélo", "velo", "bicyclette"},
	"repair":    {"repair", "fix", "mend", "service", "réparation", "reparation", "réparer", "reparer", "entretien"},
	"puncture":  {"puncture", "flat", "crevaison", "crevé", "creve"},
	"tyre":      {"tyre", "tire", "tube", "pneu", "chambre"},
	"hours":     {"hours", "opening", "open", "close", "closed", "horaire", "ouvert", "fermé", "ferme", "ouverture"},
	"saddle":    {"saddle", "seat", "selle"},
	"delivery":  {"delivery", "deliver", "shipping", "ship", "livraison", "livrer", "livrez", "livrons"},
	"warranty":  {"warranty", "guarantee", "garantie"},
	"battery":   {"battery", "batterie", "charger", "chargeur"},
	"booking":   {"booking", "appointment", "book", "reserve", "reservation", "rendez", "réserver", "reserver", "réservation"},
	"tooth":     {"tooth", "teeth", "dent", "dental", "dentaire", "dentist", "dentiste"},
	"pain":      {"pain", "hurt", "hurts", "ache", "douleur", "mal"},
	"bread":     {"bread", "loaf", "baguette", "sourdough", "levain"},
	"cake":      {"cake", "gâteau", "gateau", "pastry", "pâtisserie", "patisserie"},
	"refund":    {"refund", "return", "money back", "remboursement", "rembourser", "retour"},
	"payment":   {"payment", "pay", "card", "paiement", "payer", "carte"},
	"children":  {"child", "children", "kid", "kids", "enfant", "enfants"},
	"weekend":   {"weekend", "saturday", "sunday", "samedi", "dimanche"},
	"website":   {"website", "site", "web", "page"},
	"software":  {"software", "app", "application", "logiciel"},
	"developer": {"developer", "programmer", "développeur", "developpeur"},
	"quote":     {"quote", "estimate", "devis", "estimation"},
	"cancel":    {"cancel", "cancellation", "annuler", "annulation"},
	"allergy":   {"allergy", "allergen", "gluten", "allergie", "allergène"},
	"order":     {"order", "commande", "commander"},
	"rent":      {"rent", "rental", "hire", "location", "louer"},
	"insurance": {"insurance", "insurer", "assurance", "mutuelle"},
	"emergency": {"emergency", "urgent", "urgence"},
	"clean":     {"clean", "cleaning", "whitening", "nettoyage", "détartrage", "detartrage", "blanchiment"},
}

var conceptOf = func() map[string]string {
	m := map[string]string{}
	for c, words := range synonyms {
		for _, w := range words {
			m[w] = "#" + c
		}
	}
	return m
}()

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or of to in on at for by with from is are be do does did can
		could would will i you we my your our it this that what which who how when where there here me us
		le la les un une des et ou de du au aux en sur pour par avec est sont je vous nous mon ma mes votre vos
		notre nos il elle ce cette que qui quoi quand où comment y a-t-il`) {
		m[w] = true
	}
	return m
}()
