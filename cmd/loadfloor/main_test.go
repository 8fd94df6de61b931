package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db/dbtest"
)

// model is an OpenAI-compatible model in the test: three chunks, streamed
// as OpenAI streams them, or one completion; it records what it was asked
// and, for the floor's promise, how many messages were stored by then.
type model struct {
	long   string // when not "", the content of one chunk more, after the others
	stored func() int
	asked  []string // the user message of each request
	before []int    // messages stored when each request came
	status int
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	m.before = append(m.before, m.stored())
	if len(req.Messages) > 0 {
		m.asked = append(m.asked, req.Messages[0].Content)
	}
	if m.status != 0 {
		w.WriteHeader(m.status)
		return
	}
	if !req.Stream {
		_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"word word word "}}]}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
	for range 3 {
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"word \"}}]}\n\n")
	}
	if m.long != "" {
		_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", m.long)
	}
	_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

func TestFloor(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t).Pool()
	if err := setup(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := setup(ctx, pool); err != nil { // again: the table is there already
		t.Fatal(err)
	}
	session := fmt.Sprintf("floor-%s", t.Name())
	stored := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM loadfloor_messages WHERE session_id = $1`, session).Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}
	m := &model{stored: stored}
	llm := httptest.NewServer(m)
	defer llm.Close()
	srv := httptest.NewServer(newFloor(pool, llm.URL+"/v1", llm.Client(), false))
	defer srv.Close()
	post := func(body string, agent bool) (int, string) { return postChat(t, srv, body, agent) }

	status, body := post(fmt.Sprintf(`{"message":"Hello","sessionId":%q}`, session), false)
	want := "data: {\"text\":\"word \"}\n\n"
	if status != http.StatusOK || body != strings.Repeat(want, 3)+"data: {\"done\":true}\n\n" {
		t.Fatalf("streamed: %d %q", status, body)
	}
	if len(m.before) != 1 || m.before[0] != 1 || m.asked[0] != "Hello" {
		t.Fatalf("the model was asked %v with %v messages stored, want [Hello] after 1", m.asked, m.before)
	}

	status, body = post(fmt.Sprintf(`{"message":"Hi agent","sessionId":%q}`, session), true)
	if status != http.StatusOK || body != `{"done":true,"message":"word word word "}`+"\n" {
		t.Fatalf("envelope: %d %q", status, body)
	}
	if m.before[1] != 2 {
		t.Fatalf("the agent's message was not stored before the model was asked: %v", m.before)
	}

	for _, bad := range []string{`not json`, `{"sessionId":"x"}`, `{"message":"no session"}`, `{"message":7,"sessionId":"x"}`} {
		if status, _ := post(bad, false); status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, status)
		}
	}
	if n := stored(); n != 2 {
		t.Errorf("%d messages stored, want 2 (bad requests store nothing, and no answer without -reply)", n)
	}

	// A chunk longer than the scanner's first buffer (4 KiB) is relayed
	// whole: the buffer grows, up to 1 MiB a line.
	m.long = strings.Repeat("x", 200<<10)
	if status, body := post(fmt.Sprintf(`{"message":"Long","sessionId":%q}`, session), false); status != http.StatusOK ||
		!strings.Contains(body, `data: {"text":"`+m.long+`"}`) || !strings.HasSuffix(body, "data: {\"done\":true}\n\n") {
		t.Errorf("a 200 KiB chunk: status %d, %d bytes relayed, want it whole then done", status, len(body))
	}
	m.long = ""

	m.status = http.StatusServiceUnavailable
	if status, _ := post(fmt.Sprintf(`{"message":"Down","sessionId":%q}`, session), false); status != http.StatusBadGateway {
		t.Errorf("model refusing: status %d, want 502", status)
	}
}

// postChat posts body to the floor's chat route, as an agent (its
// envelope) when agent, and returns the status and the body.
func postChat(t *testing.T, srv *httptest.Server, body string, agent bool) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/load", strings.NewReader(body))
	if agent {
		req.Header.Set("X-Agent-Model", "test-agent")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Concurrent turns reuse the floor's connections to the model, as Parley's
// do (modelClient): a second batch of eight at once dials none.
func TestFloorReusesModelConnections(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t).Pool()
	if err := setup(ctx, pool); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var (
		dialed atomic.Int32
		batch  *sync.WaitGroup // every request of a batch waits for the others, so that all are open at once
	)
	llm := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		batch.Done()
		batch.Wait()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"word \"}}]}\n\ndata: [DONE]\n\n")
	}))
	llm.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	llm.Start()
	defer llm.Close()
	srv := httptest.NewServer(newFloor(pool, llm.URL+"/v1", modelClient(), false))
	defer srv.Close()
	for round := range 2 {
		batch = &sync.WaitGroup{}
		batch.Add(n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				body := fmt.Sprintf(`{"message":"Hi","sessionId":"reuse-%d-%d"}`, round, i)
				resp, err := srv.Client().Post(srv.URL+"/chat/load", "application/json", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.HasSuffix(string(b), `{"done":true}`+"\n\n") {
					t.Errorf("status %d: %q", resp.StatusCode, b)
				}
			})
		}
		wg.Wait()
		if got := dialed.Load(); got != n {
			t.Fatalf("after round %d the floor had dialed the model %d times, want %d (one a concurrent turn, then reused)", round+1, got, n)
		}
	}
}

// With -reply the floor stores the answer it relayed, before its last
// event; a turn whose answer could not be stored ends with an error, not
// done, and a model that refuses stores no answer.
func TestFloorStoresReply(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t).Pool()
	if err := setup(ctx, pool); err != nil {
		t.Fatal(err)
	}
	rows := func(session string) []string {
		rs, _ := pool.Query(ctx, `SELECT role || ':' || content FROM loadfloor_messages WHERE session_id = $1 ORDER BY id`, session)
		out, err := pgx.CollectRows(rs, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	m := &model{stored: func() int { return 0 }}
	llm := httptest.NewServer(m)
	defer llm.Close()
	srv := httptest.NewServer(newFloor(pool, llm.URL+"/v1", llm.Client(), true))
	defer srv.Close()
	post := func(session string, agent bool) (int, string) {
		return postChat(t, srv, fmt.Sprintf(`{"message":"Hello","sessionId":%q}`, session), agent)
	}

	if status, body := post("reply-stream", false); status != http.StatusOK || !strings.HasSuffix(body, "data: {\"done\":true}\n\n") {
		t.Fatalf("streamed: %d %q", status, body)
	}
	if got := strings.Join(rows("reply-stream"), "|"); got != "user:Hello|assistant:word word word " {
		t.Errorf("stored %q, want the message then the answer relayed", got)
	}
	if status, body := post("reply-agent", true); status != http.StatusOK || body != `{"done":true,"message":"word word word "}`+"\n" {
		t.Fatalf("envelope: %d %q", status, body)
	}
	if got := strings.Join(rows("reply-agent"), "|"); got != "user:Hello|assistant:word word word " {
		t.Errorf("stored %q, want the message then the envelope's answer", got)
	}

	// An answer PostgreSQL refuses: no done.
	if _, err := pool.Exec(ctx, `ALTER TABLE loadfloor_messages ADD CONSTRAINT refuse_answers CHECK (session_id NOT LIKE 'reply-refused%' OR role = 'user')`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(ctx, `ALTER TABLE loadfloor_messages DROP CONSTRAINT refuse_answers`) })
	if status, body := post("reply-refused-stream", false); status != http.StatusOK || strings.Contains(body, `"done"`) ||
		!strings.HasSuffix(body, "data: {\"error\":\"storing the reply\"}\n\n") {
		t.Errorf("an answer not stored: %d %q, want an error event and no done", status, body)
	}
	if status, _ := post("reply-refused-agent", true); status != http.StatusInternalServerError {
		t.Errorf("an envelope's answer not stored: status %d, want 500", status)
	}

	m.status = http.StatusServiceUnavailable
	if status, _ := post("reply-down", false); status != http.StatusBadGateway {
		t.Errorf("model refusing: status %d, want 502", status)
	}
	if got := rows("reply-down"); len(got) != 1 {
		t.Errorf("stored %q when the model refused, want the message alone", got)
	}
}

// BenchmarkFloorOpenStreams is web's BenchmarkChatOpenStreams (model over
// HTTP/1.1) for the floor: the memory a streamed answer holds on the
// server while it waits for the model's next chunk, read as the growth of
// the heap and the goroutine stacks in use (after two collections) with
// 1,000 streams open through the floor, less the growth with 1,000 open
// straight to the model. Issue 41 reads Parley's figure against it.
func BenchmarkFloorOpenStreams(b *testing.B) {
	const streams = 1000
	ctx := context.Background()
	pool := dbtest.New(b).Pool()
	if err := setup(ctx, pool); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"+
			"data: {\"choices\":[{\"delta\":{\"content\":\"Hello, \"}}]}\n\n")
		w.(http.Flusher).Flush()
		select { // held open after the first chunk
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer llm.Close()
	defer close(stop)
	srv := httptest.NewServer(newFloor(pool, llm.URL+"/v1", modelClient(), false))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * streams, MaxIdleConnsPerHost: 2 * streams}}
	defer client.CloseIdleConnections()
	var seq atomic.Int64
	// open sends one request and reads its answer up to the first chunk.
	open := func(ctx context.Context, url, body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if _, err := resp.Body.Read(make([]byte, 256)); err != nil || resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("status %d, %v", resp.StatusCode, err)
		}
		return resp, nil
	}
	direct := func(ctx context.Context) (*http.Response, error) {
		return open(ctx, llm.URL+"/v1/chat/completions", `{"model":"fake","stream":true,"messages":[{"role":"user","content":"Hello"}]}`)
	}
	floor := func(ctx context.Context) (*http.Response, error) {
		return open(ctx, srv.URL+"/chat/load", fmt.Sprintf(`{"message":"Hello","sessionId":"held-%d"}`, seq.Add(1)))
	}
	for _, warm := range []func(context.Context) (*http.Response, error){direct, floor} {
		held := holdOpen(b, streams/5, warm)
		held.release()
	}
	b.ResetTimer()
	d := holdOpen(b, streams, direct)
	d.release()
	f := holdOpen(b, streams, floor)
	f.release()
	b.ReportMetric(float64(f.heap+f.stack-d.heap-d.stack)/streams/1024, "KiB/stream-server")
	b.ReportMetric(float64(f.heap-d.heap)/streams/1024, "KiB/stream-server-heap")
	b.ReportMetric(float64(f.stack-d.stack)/streams/1024, "KiB/stream-server-stack")
	b.ReportMetric(float64(f.goroutines-d.goroutines)/streams, "server-goroutines/stream")
}

// held is what holdOpen measured: the growth of the heap and stacks in use
// and of the goroutines while its streams were open; release closes them.
type held struct {
	heap, stack, goroutines int64
	release                 func()
}

// holdOpen opens n streams with open, 50 at a time, and measures the
// memory in use while all are open.
func holdOpen(b *testing.B, n int, open func(context.Context) (*http.Response, error)) held {
	b.Helper()
	settleGoroutines()
	before := memInUse()
	ctx, cancel := context.WithCancel(context.Background())
	resps := make([]*http.Response, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			resp, err := open(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			resps[i] = resp
		})
	}
	wg.Wait()
	during := memInUse()
	return held{heap: during.heap - before.heap, stack: during.stack - before.stack, goroutines: during.goroutines - before.goroutines,
		release: func() {
			cancel()
			for _, r := range resps {
				if r != nil {
					r.Body.Close()
				}
			}
		}}
}

// memInUse is the heap and the goroutine stacks in use after two
// collections (a parked goroutine's stack is halved at most once a cycle).
func memInUse() held {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return held{heap: int64(m.HeapInuse), stack: int64(m.StackInuse), goroutines: int64(runtime.NumGoroutine())}
}

// settleGoroutines waits for the goroutines of closed streams to end.
func settleGoroutines() {
	prev := -1
	for range 50 {
		n := runtime.NumGoroutine()
		if n == prev {
			return
		}
		prev = n
		time.Sleep(100 * time.Millisecond)
	}
}
