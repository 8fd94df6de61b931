package web_test

// The retrieval benchmark of issue 34 (BENCHMARKS.md, "Retrieval recall"):
// which knowledge-base entry reaches the model on a visitor's first message.
//
//	make bench-retrieval
//	go test -run '^$' -bench BenchmarkRetrievalRecall -benchtime 1x ./web/
//
// The knowledge base and the labelled questions are testdata/retrieval
// (README.md there). Each phase provisions a tenant of its own, loads the
// knowledge base through POST /tenants/{slug}/corpus/bulk, then sends every
// question as the first message of a new conversation through POST
// /chat/{slug}, with a scripted model (agent/outbound/llm/llmtest) that records what it
// was sent. The phases:
//
//   - file: the entries loaded in file order, no summary (tier 1); the
//     question sent without a locale, as the widget sends it. A hit is the
//     labelled entry's title and full content in the system prompt.
//   - locale: the same tenant, the question sent with its own locale
//     (body "locale"), as an API caller or a localised widget would.
//   - shuffled: the same entries loaded in a shuffled order (seeded,
//     PARLEY_RETRIEVAL_SEED, default 1).
//   - again: loaded in file order once more, for determinism between two
//     identical loads.
//   - tier 2: every entry with its summary, in file order. The model is
//     scripted to call explore_corpus with the visitor's message word for
//     word, then answer; a summary hit is the labelled entry's title and
//     summary in the system prompt, an explore hit its title among the
//     entries the tool returned (at most 3: the tool's search limit).
//
// Determinism compares the knowledge sections of the system prompts (the
// <knowledge> blocks) that one question got in two phases.
//
// The table goes to standard output; PARLEY_RETRIEVAL_REPORT=<file> also
// writes one JSON line per question with every phase's outcome, to compare
// two versions of the code question by question.
//
// The embedding phases (retrieval_embed_bench_test.go) run after these,
// against the scripted embedding server and, when PARLEY_EMBEDDINGS_URL is
// set, a real endpoint.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// retrievalEntry is one entry of testdata/retrieval/entries.json.
type retrievalEntry struct {
	Key      string `json:"key"`
	Business string `json:"business"`
	Locale   string `json:"locale"`
	Title    string `json:"title"`
	Summary  string `json:"summary"`
	Content  string `json:"content"`
}

// retrievalQuestion is one question of testdata/retrieval/questions.json:
// Answer is the key of the one entry that answers it.
type retrievalQuestion struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Locale   string `json:"locale"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// retrievalKinds are the question kinds, in the table's order.
var retrievalKinds = []string{"own_words", "reworded", "typo", "cross_language"}

// loadRetrievalSet reads and checks the knowledge base and the questions.
func loadRetrievalSet(tb testing.TB) ([]retrievalEntry, []retrievalQuestion) {
	tb.Helper()
	var entries []retrievalEntry
	var questions []retrievalQuestion
	for name, v := range map[string]any{"entries.json": &entries, "questions.json": &questions} {
		raw, err := os.ReadFile("testdata/retrieval/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	keys := map[string]bool{}
	for _, e := range entries {
		if keys[e.Key] || e.Title == "" || e.Content == "" || e.Summary == "" {
			tb.Fatalf("entry %q: duplicate key or empty title, content or summary", e.Key)
		}
		keys[e.Key] = true
	}
	for _, q := range questions {
		if !keys[q.Answer] || !slices.Contains(retrievalKinds, q.Kind) {
			tb.Fatalf("question %s: unknown answer %q or kind %q", q.ID, q.Answer, q.Kind)
		}
	}
	return entries, questions
}

// retrievalBench is a Parley server whose managed model is a scripted
// OpenAI-compatible server.
type retrievalBench struct {
	srv    *web.Server
	ts     *httptest.Server
	llm    *llmtest.OpenAI
	store  *db.DB
	box    *auth.Box
	pws    *auth.Passwords
	client *http.Client
	seen   int // model requests already read
}

func newRetrievalBench(b *testing.B) *retrievalBench {
	b.Helper()
	store := dbtest.New(b)
	llm := llmtest.NewOpenAI(b)
	cfg := webtest.Config(b, webtest.ChatEnv(llm.URL))
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Echo)
	b.Cleanup(ts.Close)
	key, _ := auth.ParseKey(webtest.SecretKey)
	box, _ := auth.NewBox(key)
	return &retrievalBench{srv: srv, ts: ts, llm: llm, store: store, box: box, pws: srv.Base.Passwords, client: ts.Client()}
}

// tenant provisions a scale-plan tenant and loads entries into its
// knowledge base in the given order, 50 to a bulk request (the endpoint's
// maximum), with their summaries when summaries is set.
func (rb *retrievalBench) tenant(b *testing.B, entries []retrievalEntry, summaries bool) string {
	b.Helper()
	ctx := context.Background()
	slug := fmt.Sprintf("retrieval%d-%d", time.Now().UnixNano()%1_000_000_000, webtest.TenantSeq.Add(1))
	p, err := auth.Provision(ctx, rb.store, rb.box, rb.pws, parley.NewTenantInput{Slug: slug, Name: "Harbourside Collective", Plan: "scale"})
	if err != nil {
		b.Fatal(err)
	}
	tok, nt := auth.NewToken(p.ID, "retrieval", []string{auth.ScopeCorpusWrite}, false)
	if _, err := rb.store.CreateToken(ctx, nt); err != nil {
		b.Fatal(err)
	}
	for chunk := range slices.Chunk(entries, 50) {
		items := make([]map[string]any, len(chunk))
		for i, e := range chunk {
			items[i] = map[string]any{"externalId": e.Key, "title": e.Title, "content": e.Content, "locale": e.Locale}
			if summaries {
				items[i]["summary"] = e.Summary
			}
		}
		body, _ := json.Marshal(map[string]any{"entries": items})
		req, _ := http.NewRequest("POST", rb.ts.URL+"/tenants/"+slug+"/corpus/bulk", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := rb.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Created int `json:"created"`
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := json.Unmarshal(raw, &out); resp.StatusCode != 200 || err != nil || out.Created != len(chunk) {
			b.Fatalf("bulk load: %d %s", resp.StatusCode, raw)
		}
	}
	// The lexicon the background scan builds within
	// jobs.LexiconInterval of a load.
	if err := rb.store.RefreshCorpusLexicon(ctx, p.ID); err != nil {
		b.Fatal(err)
	}
	return slug
}

// retrievalTurn is what the model received for one first message.
type retrievalTurn struct {
	system string // the system prompt of the first model request
	tools  []string
	tool   string // the tool message of the second model request (explore)
}

// ask sends q as the first message of a new conversation, the model
// scripted to answer at once or, with explore, to call explore_corpus with
// the question word for word first.
func (rb *retrievalBench) ask(b *testing.B, slug string, q retrievalQuestion, withLocale, explore bool) retrievalTurn {
	b.Helper()
	if explore {
		args, _ := json.Marshal(map[string]string{"query": q.Question})
		rb.llm.Push(llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_explore", Name: "explore_corpus", Arguments: []string{string(args)}}}},
			llmtest.Turn{Text: []string{"OK."}})
	} else {
		rb.llm.Push(llmtest.Turn{Text: []string{"OK."}})
	}
	body := map[string]any{"message": q.Question, "sessionId": fmt.Sprintf("retrieval-%s-%d", q.ID, webtest.TenantSeq.Add(1))}
	if withLocale {
		body["locale"] = q.Locale
	}
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", rb.ts.URL+"/chat/"+slug, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", webtest.NewChatAddr())
	resp, err := rb.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = data
		}
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(last, `"done":true`) {
		b.Fatalf("%s: chat answered %d, last event %s", q.ID, resp.StatusCode, last)
	}
	reqs := rb.llm.Requests()
	got := reqs[rb.seen:]
	rb.seen = len(reqs)
	want := 1
	if explore {
		want = 2
	}
	if len(got) != want || len(got[0].Chat.Messages) == 0 || got[0].Chat.Messages[0].Role != "system" {
		b.Fatalf("%s: the model got %d requests, want %d, the first with a system prompt", q.ID, len(got), want)
	}
	t := retrievalTurn{system: string(got[0].Chat.Messages[0].Content)}
	for _, tool := range got[0].Chat.Tools {
		t.tools = append(t.tools, tool.Function.Name)
	}
	if explore {
		for _, m := range got[1].Chat.Messages {
			if m.Role == "tool" {
				t.tool = string(m.Content)
			}
		}
	}
	return t
}

// wholeIn says whether the entry is in the prompt with its full content
// (tier 1), summaryIn whether with its summary (tier 2), as BuildPrompt
// renders them. Both fail the benchmark when the entry's title is there
// but not the text expected under it: the rendering changed, and the
// benchmark must follow, rather than count misses.
func wholeIn(b *testing.B, system string, e retrievalEntry) bool {
	b.Helper()
	hit := strings.Contains(system, "]\">\n# "+e.Title+"\n"+e.Content+"\n</entry>")
	if !hit && strings.Contains(system, "]\">\n# "+e.Title+"\n") {
		b.Fatalf("entry %q is in the prompt, but not with its content as the benchmark expects it", e.Key)
	}
	return hit
}

func summaryIn(b *testing.B, system string, e retrievalEntry) bool {
	b.Helper()
	hit := strings.Contains(system, "\n# "+e.Title+"\n"+e.Summary+"\n</entry>")
	if !hit && strings.Contains(system, "\">\n# "+e.Title+"\n") {
		b.Fatalf("entry %q is in the prompt, but not with its summary as the benchmark expects it", e.Key)
	}
	return hit
}

// entryTitles are the titles of the entries in knowledge blocks, sorted:
// two prompts with the same entries in another order have the same.
func entryTitles(knowledge string) string {
	var titles []string
	for _, part := range strings.Split(knowledge, "\n# ")[1:] {
		title, _, _ := strings.Cut(part, "\n")
		titles = append(titles, title)
	}
	slices.Sort(titles)
	return strings.Join(titles, "\n")
}

// exploreRank is the 1-based position of the entry among those the
// explore_corpus result holds, 0 when absent.
func exploreRank(b *testing.B, toolMessage string, e retrievalEntry) int {
	b.Helper()
	var m struct {
		Success bool `json:"success"`
		Result  struct {
			Entries []struct {
				Title string `json:"title"`
			} `json:"entries"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(toolMessage), &m); err != nil || !m.Success {
		b.Fatalf("explore_corpus did not run: %q", toolMessage)
	}
	for i, x := range m.Result.Entries {
		if x.Title == e.Title {
			return i + 1
		}
	}
	return 0
}

// retrievalOutcome is one question's results across the phases.
type retrievalOutcome struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Answer      string `json:"answer"`
	File        bool   `json:"file"`
	Locale      bool   `json:"locale"`
	Shuffled    bool   `json:"shuffled"`
	Again       bool   `json:"again"`
	Summary     bool   `json:"tier2Summary"`
	Tier2Whole  bool   `json:"tier2Whole"`
	ExploreRank int    `json:"exploreRank"`
	Offered     bool   `json:"exploreOffered"`
	DiffersShuf bool   `json:"differsShuffled"` // the knowledge blocks' text differs from phase file's
	DiffersSame bool   `json:"differsAgain"`
	SetShuf     bool   `json:"entriesDifferShuffled"` // the entries themselves differ, not only their order
	SetSame     bool   `json:"entriesDifferAgain"`
	InPrompt    int    `json:"entriesInPrompt"` // phase file: entries whole in the prompt
	KnowChars   int    `json:"knowledgeChars"`  // phase file
	Summaries   int    `json:"tier2Summaries"`  // phase tier 2: entries by their summary
	// Embeddings is the hit of each embedding phase, by name.
	Embeddings map[string]bool `json:"embeddings,omitempty"`
}

// BenchmarkRetrievalRecall runs the phases described at the top of this
// file once per b.N (run it with -benchtime 1x) and prints the table.
func BenchmarkRetrievalRecall(b *testing.B) {
	entries, questions := loadRetrievalSet(b)
	byKey := map[string]retrievalEntry{}
	for _, e := range entries {
		byKey[e.Key] = e
	}
	seed := uint64(1)
	if s := os.Getenv("PARLEY_RETRIEVAL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			b.Fatalf("PARLEY_RETRIEVAL_SEED: %v", err)
		}
		seed = n
	}
	shuffled := slices.Clone(entries)
	rand.New(rand.NewPCG(seed, 34)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	rb := newRetrievalBench(b)
	var out []retrievalOutcome
	distinct := 0 // knowledge sections in phase file, across the questions
	b.ResetTimer()
	for range b.N {
		out = make([]retrievalOutcome, len(questions))
		for i, q := range questions {
			out[i] = retrievalOutcome{ID: q.ID, Kind: q.Kind, Answer: q.Answer}
		}
		start := time.Now()
		file := rb.tenant(b, entries, false)
		prompts := make([]string, len(questions))
		for i, q := range questions {
			t := rb.ask(b, file, q, false, false)
			prompts[i] = webtest.KnowledgeBlocks(t.system)
			out[i].File = wholeIn(b, t.system, byKey[q.Answer])
			out[i].InPrompt = strings.Count(prompts[i], "<entry ref=") - strings.Count(prompts[i], "]\" id=\"")
			out[i].KnowChars = len([]rune(prompts[i]))
		}
		seen := map[string]bool{}
		for _, k := range prompts {
			seen[k] = true
		}
		distinct = len(seen)
		for i, q := range questions {
			out[i].Locale = wholeIn(b, rb.ask(b, file, q, true, false).system, byKey[q.Answer])
		}
		shuf := rb.tenant(b, shuffled, false)
		for i, q := range questions {
			t := rb.ask(b, shuf, q, false, false)
			out[i].Shuffled = wholeIn(b, t.system, byKey[q.Answer])
			k := webtest.KnowledgeBlocks(t.system)
			out[i].DiffersShuf, out[i].SetShuf = k != prompts[i], entryTitles(k) != entryTitles(prompts[i])
		}
		again := rb.tenant(b, entries, false)
		for i, q := range questions {
			t := rb.ask(b, again, q, false, false)
			out[i].Again = wholeIn(b, t.system, byKey[q.Answer])
			k := webtest.KnowledgeBlocks(t.system)
			out[i].DiffersSame, out[i].SetSame = k != prompts[i], entryTitles(k) != entryTitles(prompts[i])
		}
		tier2 := rb.tenant(b, entries, true)
		for i, q := range questions {
			t := rb.ask(b, tier2, q, false, true)
			e := byKey[q.Answer]
			out[i].Summary = summaryIn(b, t.system, e)
			out[i].Tier2Whole = wholeIn(b, t.system, e)
			out[i].Offered = slices.Contains(t.tools, "explore_corpus")
			out[i].ExploreRank = exploreRank(b, t.tool, e)
			out[i].Summaries = strings.Count(webtest.KnowledgeBlocks(t.system), "]\" id=\"")
		}
		embeddingPhases(b, rb, entries, questions, byKey, out)
		b.Logf("%d entries, %d questions, 5 phases and the embeddings' in %s", len(entries), len(questions), time.Since(start).Round(time.Millisecond))
	}
	b.StopTimer()
	reportRetrieval(b, entries, questions, out, seed, distinct)
}

// reportRetrieval prints the table and reports the metrics.
func reportRetrieval(b *testing.B, entries []retrievalEntry, questions []retrievalQuestion, out []retrievalOutcome, seed uint64, distinct int) {
	if path := os.Getenv("PARLEY_RETRIEVAL_REPORT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for _, o := range out {
			_ = enc.Encode(o)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	type measure struct {
		name, metric string
		hit          func(o retrievalOutcome) bool
	}
	measures := []measure{
		{"prompt, file order", "file", func(o retrievalOutcome) bool { return o.File }},
		{"prompt, shuffled load", "shuffled", func(o retrievalOutcome) bool { return o.Shuffled }},
		{"prompt, file order again", "again", func(o retrievalOutcome) bool { return o.Again }},
		{"prompt, file order, visitor's locale sent", "locale", func(o retrievalOutcome) bool { return o.Locale }},
		{"tier 2: summary in prompt", "tier2-summary", func(o retrievalOutcome) bool { return o.Summary }},
		{"tier 2: explore_corpus top 3", "explore-top3", func(o retrievalOutcome) bool { return o.ExploreRank >= 1 && o.ExploreRank <= 3 }},
		{"tier 2: explore_corpus first", "explore-top1", func(o retrievalOutcome) bool { return o.ExploreRank == 1 }},
	}
	for _, m := range embeddingMeasures(out) {
		measures = append(measures, m)
	}
	kinds := append(slices.Clone(retrievalKinds), "all")
	of := func(kind string) []retrievalOutcome {
		var s []retrievalOutcome
		for _, o := range out {
			if kind == "all" || o.Kind == kind {
				s = append(s, o)
			}
		}
		return s
	}
	cell := func(n, of int) string {
		if of == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d (%.0f %%)", n, of, 100*float64(n)/float64(of))
	}
	count := func(s []retrievalOutcome, f func(retrievalOutcome) bool) int {
		n := 0
		for _, o := range s {
			if f(o) {
				n++
			}
		}
		return n
	}
	w := os.Stdout
	fr := 0
	for _, e := range entries {
		if e.Locale == "fr" {
			fr++
		}
	}
	fmt.Fprintf(w, "\nRetrieval recall: %d entries (%d in French), %d questions; shuffle seed %d\n\n", len(entries), fr, len(questions), seed)
	fmt.Fprint(w, "| measure |")
	for _, k := range kinds {
		fmt.Fprintf(w, " %s (%d) |", k, len(of(k)))
	}
	fmt.Fprint(w, "\n|---|")
	for range kinds {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, m := range measures {
		fmt.Fprintf(w, "| %s |", m.name)
		for _, k := range kinds {
			s := of(k)
			n := count(s, m.hit)
			fmt.Fprintf(w, " %s |", cell(n, len(s)))
			if len(s) > 0 {
				b.ReportMetric(100*float64(n)/float64(len(s)), "%"+m.metric+"-"+k)
			}
		}
		fmt.Fprintln(w)
	}
	for _, d := range []struct {
		name, metric string
		f            func(retrievalOutcome) bool
	}{
		{"prompt's knowledge differs: shuffled load vs file order", "differ-shuffled", func(o retrievalOutcome) bool { return o.DiffersShuf }},
		{"… in its entries, not only their order", "differ-entries-shuffled", func(o retrievalOutcome) bool { return o.SetShuf }},
		{"prompt's knowledge differs: file order, loaded twice", "differ-again", func(o retrievalOutcome) bool { return o.DiffersSame }},
		{"… in its entries, not only their order", "differ-entries-again", func(o retrievalOutcome) bool { return o.SetSame }},
	} {
		fmt.Fprintf(w, "| %s |", d.name)
		for _, k := range kinds {
			s := of(k)
			fmt.Fprintf(w, " %s |", cell(count(s, d.f), len(s)))
		}
		fmt.Fprintln(w)
		b.ReportMetric(float64(count(out, d.f)), d.metric+"-questions")
	}
	minMax := func(f func(retrievalOutcome) int) (lo, hi int, mean float64) {
		lo = int(^uint(0) >> 1)
		for _, o := range out {
			v := f(o)
			lo, hi, mean = min(lo, v), max(hi, v), mean+float64(v)
		}
		return lo, hi, mean / float64(max(len(out), 1))
	}
	lo, hi, mean := minMax(func(o retrievalOutcome) int { return o.InPrompt })
	fmt.Fprintf(w, "\nFile order: %.1f entries whole in the prompt per turn (%d–%d) of %d", mean, lo, hi, len(entries))
	lo, hi, _ = minMax(func(o retrievalOutcome) int { return o.KnowChars })
	fmt.Fprintf(w, ", knowledge blocks of %d–%d characters; %d distinct knowledge sections across the %d questions.\n", lo, hi, distinct, len(out))
	lo, hi, mean = minMax(func(o retrievalOutcome) int { return o.Summaries })
	whole := count(out, func(o retrievalOutcome) bool { return o.Tier2Whole })
	offered := count(out, func(o retrievalOutcome) bool { return o.Offered })
	fmt.Fprintf(w, "Tier 2: %.1f summaries in the prompt per turn (%d–%d), labelled entry's content in it %d times; explore_corpus offered on %d of %d turns.\n",
		mean, lo, hi, whole, offered, len(out))
	fmt.Fprintln(w, embeddingNote(out))
	b.ReportMetric(mean, "summaries/turn")
}
